"""examples/python/: the sweep script against `pipewright simulate --json`, and
the notebook run cell by cell (run_notebook.py, Jupyter's Python kernel's
way) with its outputs written to walkthrough.executed.ipynb in ctest's
working folder."""

import base64
import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import ASSETS, cli_json

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
SWEEP = EXAMPLES / "sweep.py"
NOTEBOOK = EXAMPLES / "walkthrough.ipynb"
PROJECT = ASSETS / "examples" / "resnet50-2gpu-pipelined.json"

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run_notebook  # noqa: E402


def sweep(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SWEEP), *map(str, arguments)],
                          capture_output=True, text=True, timeout=120)


def test_sweep_rows_are_the_command_line_simulations():
    done = sweep(PROJECT, "--json", "-s", "gpipe,1f1b,zbv", "-m", "2,4,7")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # 7 does not divide the batch of 120; zbv needs two stages per device.
    assert [(r["schedule"], r["microbatches"]) for r in report["rows"]] == \
        [("gpipe", 2), ("gpipe", 4), ("1f1b", 2), ("1f1b", 4)]
    assert list(report["skipped"]) == ["zbv"]
    assert "two stages on every device" in report["skipped"]["zbv"]
    for row in report["rows"]:
        expected = cli_json("simulate", PROJECT, "--json", "--schedule", row["schedule"],
                            "--microbatches", row["microbatches"])
        assert row["iteration_time_s"] == expected["iteration_time_s"]
        assert row["bubble"] == expected["bubble_fraction"]
        assert row["throughput"] == expected["throughput_samples_per_s"]
        assert row["all_fit"] == expected["all_fit"]


def test_sweep_table_marks_the_fastest_layout():
    rows = json.loads(sweep("--json").stdout)["rows"]  # the default project and counts
    assert len(rows) > 20
    best = min(rows, key=lambda r: r["iteration_time_s"])
    done = sweep()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"fastest: {best['schedule']} with {best['microbatches']} micro-batches, " \
           f"{best['iteration_time_s'] * 1e3:.2f} ms" in done.stdout
    start = next(i for i, line in enumerate(lines) if line.startswith("schedule "))
    columns = [int(c) for c in lines[start].split()[1:]]
    table = lines[start + 1:lines.index("", start)]
    assert len(table) == len({r["schedule"] for r in rows})
    marked = [line for line in table if "*" in line]
    assert len(marked) == 1 and marked[0].split()[0] == best["schedule"]
    cells = marked[0].split()[1:]
    assert cells[columns.index(best["microbatches"])] == f"{best['iteration_time_s'] * 1e3:.2f}*"
    assert any(line.startswith("skipped: interleaved-1f1b needs") for line in lines)


def test_sweep_fails_on_a_project_that_does_not_load(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "broken"}')
    done = sweep(broken)
    assert done.returncode == 1
    assert done.stderr.startswith(f"sweep.py: {broken}: ")
    assert "Traceback" not in done.stderr


def test_notebook_is_committed_without_outputs():
    """Its outputs come from running it, here, not from an editor's session."""
    notebook = json.loads(NOTEBOOK.read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert len(code) >= 8
    for cell in code:
        assert cell["outputs"] == [] and cell["execution_count"] is None, "".join(cell["source"])


def outputs_of(cell, kind):
    return [o for o in cell["outputs"] if o["output_type"] == kind]


def text(output) -> str:
    return "".join(output["text"] if "text" in output else output["data"]["text/plain"])


def test_notebook_runs_from_load_to_the_plotted_plan():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pytest.fail("the notebook plots with matplotlib: scripts/setup-debian.sh installs "
                    "python3-matplotlib")
    executed = run_notebook.execute(json.loads(NOTEBOOK.read_text()), NOTEBOOK.parent)
    pathlib.Path("walkthrough.executed.ipynb").write_text(json.dumps(executed, indent=1))
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
    shown = "\n".join(text(o) for c in code for o in c["outputs"] if "image/png" not in
                      o.get("data", {}))

    simulated = cli_json("simulate", PROJECT, "--json")
    assert f"iteration {simulated['iteration_time_s'] * 1e3:.2f} ms" in shown
    one_f_one_b = cli_json("simulate", PROJECT, "--json", "--schedule", "1f1b",
                           "--microbatches", 12)
    assert f"{one_f_one_b['iteration_time_s'] * 1e3:.2f} ms" in shown
    plan = cli_json("plan", PROJECT, "--json")
    assert f"<PlanResult {plan['schedule']} · {plan['microbatches']} micro-batches" in shown

    # Results show as HTML tables in Jupyter.
    html = [o for c in code for o in outputs_of(c, "execute_result") if "text/html" in o["data"]]
    assert len(html) >= 3 and all("<table>" in "".join(o["data"]["text/html"]) for o in html)

    figures = [o for c in code for o in outputs_of(c, "display_data")]
    assert len(figures) == 1, "the notebook plots the planned timeline once"
    png = base64.b64decode(figures[0]["data"]["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000


def test_notebook_runner_reports_the_failing_cell(tmp_path):
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "source": ["x = 1\n", "print(x)"], "outputs": [],
         "execution_count": None, "metadata": {}},
        {"cell_type": "code", "source": ["import pipewright\n",
                                         "pipewright.load('no-such-project.json')"],
         "outputs": [], "execution_count": None, "metadata": {}},
    ]}
    with pytest.raises(run_notebook.CellError, match="code cell 2 raised"):
        run_notebook.execute(notebook, tmp_path)
    path = tmp_path / "failing.ipynb"
    path.write_text(json.dumps(notebook))
    done = subprocess.run([sys.executable, run_notebook.__file__, str(path),
                           str(tmp_path / "out.ipynb")], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ))
    assert done.returncode == 1 and "code cell 2 raised" in done.stderr
    assert not (tmp_path / "out.ipynb").exists()
