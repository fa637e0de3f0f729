"""project.plan() against `pipewright plan --json`, and Ctrl-C."""

import json
import os
import signal
import threading
import time

import pytest

import pipewright
from conftest import ASSETS, cli

PLANNED = ["resnet50-2gpu-naive", "seven-layers-two-nodes", "mlp-cpu"]


def without_clock(report):
    # The one figure that is wall-clock time, not simulated time.
    report = dict(report)
    report["search"] = {k: v for k, v in report["search"].items() if k != "elapsed_s"}
    return report


@pytest.mark.parametrize("name", PLANNED)
def test_plan_equals_the_command_line(tmp_path, name):
    path = ASSETS / "examples" / f"{name}.json"
    import json
    applied = tmp_path / "applied.json"
    _, out, _ = cli("plan", path, "--json", "--apply", applied)
    expected = json.loads(out)
    plan = pipewright.load(path).plan()
    assert without_clock(plan.to_dict()) == without_clock(expected)
    # The planned project is what --apply writes.
    assert plan.project.to_dict() == pipewright.load(applied).to_dict()
    assert plan.project.validate() == []


def test_plan_options_are_those_of_the_command_line():
    import json
    path = ASSETS / "examples" / "resnet50-2gpu-pipelined.json"
    _, out, _ = cli("plan", path, "--json", "--schedule", "1f1b", "-m", "6")
    plan = pipewright.load(path).plan(schedule="1f1b", microbatches=6)
    assert without_clock(plan.to_dict()) == without_clock(json.loads(out))
    assert plan.schedule == "1f1b" and plan.microbatches == 6


def test_recompute_every_block_is_that_of_the_command_line(tmp_path):
    # Llama 3.1 8B on eight H100s held to 28 GiB: the plan recomputes, and
    # narrows it to the fewest blocks that fit unless told not to.
    document = json.loads((ASSETS / "examples" / "llama3.1-8b-h100-node.json").read_text())
    document["training"]["activation_checkpointing"] = True
    for device in document["topology"]["nodes"][0]["containers"][0]["devices"]:
        device["memory_GiB"] = 28
    path = tmp_path / "tight.json"
    path.write_text(json.dumps(document))
    _, out, _ = cli("plan", path, "--json")
    plan = pipewright.load(path).plan()
    assert without_clock(plan.to_dict()) == without_clock(json.loads(out))
    assert plan.to_dict()["recomputation"].startswith("the first ")
    assert plan.project.to_dict()["training"]["recompute_blocks"] >= 1
    _, out, _ = cli("plan", path, "--json", "--recompute-every-block")
    whole = pipewright.load(path).plan(recompute_every_block=True)
    assert without_clock(whole.to_dict()) == without_clock(json.loads(out))
    assert "recomputation" not in whole.to_dict()
    assert "recompute_blocks" not in whole.project.to_dict()["training"]


def test_memory_margin_is_that_of_the_command_line():
    # Llama 3.1 8B at 131,072 tokens without context parallelism: 2 GiB kept
    # free on every GPU, as `--memory-margin 2` keeps it.
    path = ASSETS / "examples" / "llama3.1-8b-h100-128k.json"
    project = pipewright.load(path)
    whole = project.simulate(context_parallel=1, memory_margin=2)
    _, out, _ = cli("simulate", path, "--context-parallel", "1", "--memory-margin", "2", "--json")
    assert whole.to_dict()["all_fit"] == json.loads(out)["all_fit"] is False
    assert "2.00 GiB kept free on each GPU" in str(whole)
    assert project.simulate(context_parallel=1).all_fit
    _, out, _ = cli("plan", path, "--context-parallel", "1", "--data-parallel", "auto",
                    "--memory-margin", "2", "--json")
    plan = project.plan(context_parallel=1, data_parallel="auto", memory_margin=2)
    assert without_clock(plan.to_dict()) == without_clock(json.loads(out))
    with pytest.raises(ValueError, match="memory_margin must be a number of GiB from 0 to 1024"):
        project.simulate(memory_margin=-1)


def test_table_and_explanation():
    plan = pipewright.load(ASSETS / "examples" / "resnet50-2gpu-naive.json").plan()
    assert plan.feasible
    table = plan.table
    assert [row["stage"] for row in table] == list(range(len(plan.placement)))
    assert all(row["fits"] for row in table)
    assert table[0]["first"] == plan.placement[0]["layers"][0]
    assert plan.schedule in plan.explanation
    assert "Gain" in plan.explanation
    assert "<table>" in plan._repr_html_()
    assert plan.schedule in repr(plan)


def test_nothing_fits_is_a_result_not_a_crash():
    project = pipewright.load(ASSETS / "examples" / "resnet50-2gpu-pipelined.json")
    for node in project.topology.nodes:
        for container in node.containers:
            for device in container.devices:
                device.memory_GiB = 0.01
    plan = project.plan()
    assert not plan.feasible
    assert plan.reason and plan.project is None
    assert "Nothing fits" in plan.explanation


def test_bad_plan_options_are_value_errors():
    project = pipewright.load(ASSETS / "examples" / "mlp-cpu.json")
    with pytest.raises(ValueError, match="data_parallel"):
        project.plan(data_parallel="some")
    with pytest.raises(ValueError, match="tensor_parallel"):
        project.plan(tensor_parallel=0)
    with pytest.raises(ValueError, match="expert_parallel"):
        project.plan(expert_parallel=0)
    with pytest.raises(ValueError, match="context_parallel"):
        project.plan(context_parallel="all")
    with pytest.raises(pipewright.ProjectError):
        project.plan(schedule="no-such-schedule")


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach Python's main thread only")
def test_ctrl_c_stops_a_long_plan():
    # This search takes about 9 s here: it cannot end on its own before the
    # interrupt lands, and must end soon after it (within one simulation).
    project = pipewright.load(ASSETS / "examples" / "gpt3-175b-a100-1024.json")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            project.plan(data_parallel="auto", tensor_parallel="auto")
    finally:
        timer.cancel()
    assert time.monotonic() - started < 4
    # The module stays usable.
    assert project.simulate().iteration_time_s > 0


def test_expert_and_context_sizes_are_searched():
    # As `plan --expert-parallel auto` and `--context-parallel auto` do.
    mixtral = pipewright.load(ASSETS / "examples" / "mixtral-8x7b-h100.json")
    plan = mixtral.plan(expert_parallel="auto")
    assert plan.feasible
    assert [o["expert_parallel"] for o in plan["data_parallel"]["options"]] == [1, 2, 4]
    llama = pipewright.load(ASSETS / "examples" / "llama3.1-8b-h100-128k.json")
    plan = llama.plan(context_parallel="auto")
    assert plan.feasible
    assert [o["context_parallel"] for o in plan["data_parallel"]["options"]] == [1, 2]


def test_a_planned_layout_whose_cpu_ranks_outnumber_the_calibrated_cores_is_warned_about(tmp_path):
    dims = (64, 1024)
    calibration = tmp_path / "two-cores.json"
    calibration.write_text(json.dumps({
        "format": "pipewright-device-calibration", "version": 1, "spec": "cpu",
        "device_kind": "cpu", "device_name": "CPU", "dtype": "float32", "launch_seconds": 2e-6,
        "gemms": [{"m": m, "n": n, "k": k, "seconds": 2.0 * m * n * k / 50e9}
                  for m in dims for n in dims for k in dims],
        "copies": [{"bytes": 1 << 26, "seconds": 2.0 * (1 << 26) / 20e9}],
        "machine": {"cores": 2, "threads": 1},
    }))
    project = pipewright.load(ASSETS / "examples" / "mixtral-tiny-e2-cpu.json")
    with pytest.warns(UserWarning, match="the planned layout: the calibration was measured on a "
                                         "machine of 2 cores"):
        project.plan(calibration=calibration)


def test_a_planned_layout_paced_by_its_host_is_warned_about():
    project = pipewright.load(ASSETS / "examples" / "resnet50-2gpu-pipelined.json")
    with pytest.warns(UserWarning, match="the planned layout: the kernels of stage "):
        project.plan()
