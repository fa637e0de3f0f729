"""Catalogs, schedules as action lists, PyTorch's CSV and compare(), against the program."""

import json

import pytest

import pipewright
from conftest import ASSETS, cli, cli_json


@pytest.mark.parametrize("name", ["schedules", "devices", "layers"])
def test_catalogs_equal_the_command_line(name):
    assert getattr(pipewright, name)() == cli_json(name, "--json")


SIMULATED = [("gpipe", 2, 4), ("1f1b", 2, 8), ("zb-h1", 2, 4)]


@pytest.mark.parametrize("name,stages,microbatches", SIMULATED)
def test_schedule_equals_what_simulate_exports(tmp_path, name, stages, microbatches):
    path = ASSETS / "examples" / "dummy-2gpu.json"
    assert len(pipewright.load(path).placement) == stages
    for csv_format in ("compute-only", "compute-comms"):
        out = tmp_path / f"{csv_format}.csv"
        cli("simulate", path, "--schedule", name, "-m", microbatches, "--export-csv", out,
            "--csv-format", csv_format)
        actions = pipewright.schedule(name, stages, microbatches)
        assert pipewright.schedule_to_csv(actions, csv_format) == out.read_text()


def test_schedule_is_action_lists_in_torch_notation():
    actions = pipewright.schedule("gpipe", 2, 3)
    assert actions == [["0F0", "0F1", "0F2", "0B0", "0B1", "0B2"],
                       ["1F0", "1F1", "1F2", "1B0", "1B1", "1B2"]]
    interleaved = pipewright.schedule("interleaved-1f1b", 4, 4, stage_ranks=[0, 1, 0, 1])
    assert len(interleaved) == 2
    assert {cell[0] for cell in interleaved[0]} == {"0", "2"}


def test_csv_round_trip(tmp_path):
    actions = pipewright.schedule("zbv", 4, 4, stage_ranks=[0, 1, 1, 0])
    text = pipewright.schedule_to_csv(actions)
    assert pipewright.schedule_from_csv(text) == actions
    path = tmp_path / "zbv.csv"
    pipewright.save_schedule_csv(actions, path)
    assert pipewright.load_schedule_csv(path) == actions
    # The file simulates as the generator's own schedule does.
    project = pipewright.load(ASSETS / "examples" / "dummy-2gpu.json")
    gpipe = tmp_path / "gpipe.csv"
    pipewright.save_schedule_csv(pipewright.schedule("gpipe", 2, 4), gpipe)
    from_file = project.simulate(schedule_csv=gpipe, microbatches=4)
    generated = project.simulate(schedule="gpipe", microbatches=4)
    assert from_file.iteration_time_s == pytest.approx(generated.iteration_time_s)


def test_bad_schedules_are_value_errors():
    with pytest.raises(ValueError, match="no schedule is called"):
        pipewright.schedule("gpipes", 2, 4)
    with pytest.raises(ValueError):
        pipewright.schedule("1f1b", 4, 2)  # fewer micro-batches than stages
    with pytest.raises(ValueError, match="stage_ranks"):
        pipewright.schedule("gpipe", 2, 4, stage_ranks=[0])
    with pytest.raises(ValueError, match="row 1"):
        pipewright.schedule_from_csv("0F0,0X1\n")
    with pytest.raises(ValueError, match="format"):
        pipewright.schedule_to_csv([["0F0", "0B0"]], "torch")


def test_compare_equals_the_command_line(tmp_path):
    path = ASSETS / "examples" / "dummy-2gpu.json"
    result = pipewright.load(path).simulate()
    simulated = tmp_path / "simulated.json"
    result.save(timeline=simulated)
    # A "measured" timeline: the same actions, each a tenth longer.
    measured = json.loads(simulated.read_text())
    measured["source"] = "measured"
    for event in measured["events"]:
        event["start_s"] *= 1.1
        event["end_s"] *= 1.1
    measured_path = tmp_path / "measured.json"
    measured_path.write_text(json.dumps(measured))
    expected = cli_json("compare", simulated, measured_path, "--json")
    assert pipewright.compare(simulated, measured_path) == expected
    assert pipewright.compare(result, measured_path) == dict(expected, simulated=None)


def test_commands_that_need_torch_are_refused_in_process():
    from pipewright import _core
    with pytest.raises(ValueError, match="LibTorch"):
        _core.run_command(["run", str(ASSETS / "examples" / "mlp-cpu.json")])
