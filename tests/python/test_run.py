"""pipewright.run(): a real run through the pipewright program, its summary
back as a RunResult, and its failures as RunError in the program's words."""

import json
import os
import pathlib

import pytest

import pipewright
from conftest import ASSETS, cli_path

MLP = ASSETS / "examples" / "mlp-cpu.json"


@pytest.fixture(autouse=True)
def backend_built():
    # The front end hands `run` to pipewright-backend beside it; a build
    # without LibTorch has none.
    backend = pathlib.Path(cli_path()).with_name("pipewright-backend")
    if not backend.exists():
        pytest.skip("no pipewright-backend beside the pipewright program (built without LibTorch)")


def test_a_project_file_trains_and_its_outputs_are_written(tmp_path):
    out = tmp_path / "run"
    result = pipewright.run(MLP, steps=2, out=out)
    assert result.out_dir == str(out)
    assert len(result.losses) == 2
    assert result.iteration_time_s > 0
    assert result["schedule"] == "1f1b"
    assert (out / "timeline.json").exists()
    assert "RunResult 1f1b · 2 steps" in repr(result)
    # Beside the simulation, as the command line's compare does.
    comparison = pipewright.compare(pipewright.load(MLP).simulate(), out)
    assert comparison


def test_an_edited_project_runs_as_edited_and_leaves_no_file_behind(tmp_path):
    project = pipewright.Project.from_dict(json.loads(MLP.read_text()), base_dir=tmp_path)
    project.training.microbatches = 2
    result = pipewright.run(project, steps=1, out=tmp_path / "run")
    assert result["microbatches"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_run_that_cannot_start_raises_in_the_programs_words(tmp_path):
    project = pipewright.load(MLP)
    with pytest.raises(pipewright.RunError) as raised:
        pipewright.run(project, steps=1, out=tmp_path / "run", device="cuda")
    assert raised.value.exit_code != 0
    assert "cuda" in raised.value.message.lower() or "gpu" in raised.value.message.lower(), \
        raised.value.stderr


def test_a_missing_program_is_said_plainly(tmp_path):
    with pytest.raises(FileNotFoundError, match="pipewright program was not found"):
        pipewright.run(MLP, cli=tmp_path / "no-such-program")
