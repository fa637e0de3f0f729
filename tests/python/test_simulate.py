"""project.simulate() and compare_schedules() against `pipewright simulate --json`."""

import json
import warnings

import pytest

import pipewright
from conftest import ASSETS, cli, cli_json

SMALL = ASSETS / "examples" / "resnet50-2gpu-pipelined.json"
MLP = ASSETS / "examples" / "mlp-cpu.json"


def test_simulate_equals_the_command_line(example):
    expected = cli_json("simulate", example, "--json")
    assert pipewright.load(example).simulate().to_dict() == expected


@pytest.mark.parametrize("options,arguments", [
    ({"schedule": "1f1b", "microbatches": 12}, ["--schedule", "1f1b", "-m", "12"]),
    ({"batch_size": 60}, ["--batch-size", "60"]),
    ({"efficiency": 0.5}, ["--efficiency", "0.5"]),
])
def test_options_are_those_of_the_command_line(options, arguments):
    expected = cli_json("simulate", SMALL, "--json", *arguments)
    assert pipewright.load(SMALL).simulate(**options).to_dict() == expected


@pytest.mark.parametrize("name,options,arguments", [
    ("resnet50-4gpu-2x2", {"data_parallel": 1}, ["--data-parallel", "1"]),
    ("llama-tiny-t2p2-cpu", {"tensor_parallel": 1}, ["--tensor-parallel", "1"]),
    ("gpt-tiny-t2p2-cpu", {"sequence_parallel": True}, ["--sequence-parallel"]),
    ("mixtral-8x7b-h100", {"expert_parallel": 4}, ["--expert-parallel", "4"]),
    ("llama3.1-8b-h100-128k", {"context_parallel": 1}, ["--context-parallel", "1"]),
    ("llama3.1-8b-h100-128k", {"context_exchange": "all_gather"},
     ["--context-exchange", "all-gather"]),
])
def test_parallel_options_are_those_of_the_command_line(name, options, arguments):
    path = ASSETS / "examples" / f"{name}.json"
    expected = cli_json("simulate", path, "--json", *arguments)
    assert pipewright.load(path).simulate(**options).to_dict() == expected


def gpipe_bubble(stages, microbatches):
    return (stages - 1) / (microbatches + stages - 1)


def test_more_microbatches_shrink_the_gpipe_bubble():
    project = pipewright.load(MLP)
    stages = len(project.placement)
    assert stages >= 2
    project.training.schedule = "gpipe"
    bubbles = []
    for microbatches in (2, 4, 8):
        project.training.microbatches = microbatches
        result = project.simulate()
        assert result.microbatches == microbatches
        bubbles.append(result.bubble)
    assert bubbles[0] > bubbles[1] > bubbles[2]
    # The edit is what changed the simulation, not an option of it.
    assert project.simulate().to_dict() == project.simulate(microbatches=8).to_dict()


def test_gpipe_bubble_matches_the_formula_on_equal_stages():
    stages, microbatches = 4, 8
    # Wide enough that the loss on the last stage (a few microseconds) is
    # small beside each stage's product.
    layers = [{"name": f"fc{i}", "type": "linear", "in_features": 4096,
               "out_features": 4096} for i in range(stages)]
    document = {
        "format": "pipewright-project", "version": 1,
        "model": {"name": "equal", "input": {"shape": [4096]}, "layers": layers},
        "topology": {"nodes": [{"name": "n0", "containers": [{"name": "c0", "devices": [
            {"name": f"gpu{i}", "spec": "A100-40GB"} for i in range(stages)]}]}]},
        "placement": [{"device": f"n0/c0/gpu{i}", "layers": [f"fc{i}"]} for i in range(stages)],
        "training": {"batch_size": 64 * microbatches, "microbatch_size": 64,
                     "schedule": "gpipe"},
    }
    project = pipewright.Project.from_dict(document)
    result = project.simulate()
    # Transfers between the stages and the optimizer step lengthen the
    # iteration a little beyond the formula's.
    assert result.bubble == pytest.approx(gpipe_bubble(stages, microbatches), abs=0.05)
    more = project.simulate(microbatches=32)
    assert more.bubble == pytest.approx(gpipe_bubble(stages, 32), abs=0.05)
    assert more.bubble < result.bubble


def test_figures_are_attributes():
    result = pipewright.load(SMALL).simulate()
    report = result.to_dict()
    assert result.iteration_time_s == report["iteration_time_s"] > 0
    assert result.bubble == report["bubble_fraction"]
    assert result.throughput == report["throughput_samples_per_s"]
    assert [d["name"] for d in result.devices] == ["node0/c0/gpu0", "node0/c0/gpu1"]
    assert all(d["fits"] for d in result.devices)
    assert result.links and result.links[0]["transfers"] == 6
    assert len(result.stages) == 2


def test_timeline_lists_every_action():
    result = pipewright.load(SMALL).simulate()
    events = result.timeline
    forwards = [e for e in events if e["type"] == "F"]
    assert len(forwards) == 2 * result.microbatches
    assert {e["device"] for e in events} == {d["name"] for d in result.devices}
    assert max(e["end_s"] for e in events) <= result.iteration_time_s + 1e-12
    assert all(e["end_s"] >= e["start_s"] for e in events)
    first = forwards[0]
    assert first["action"] == f"{first['stage']}F{first['microbatch']}"
    sends = [e for e in events if e["type"] == "SEND_F"]
    assert sends and all(e["bytes"] > 0 and e["peer_rank"] is not None for e in sends)
    assert set(result.memory) == {d["name"] for d in result.devices}


def test_saved_outputs_are_those_of_the_command_line(tmp_path):
    cli("simulate", SMALL, "--timeline", tmp_path / "cli.json", "--export-csv",
        tmp_path / "cli.csv")
    result = pipewright.load(SMALL).simulate()
    result.save(timeline=tmp_path / "py.json", schedule_csv=tmp_path / "py.csv",
                trace=tmp_path / "trace.json")
    assert json.loads((tmp_path / "py.json").read_text()) == \
        json.loads((tmp_path / "cli.json").read_text())
    assert (tmp_path / "py.csv").read_text() == (tmp_path / "cli.csv").read_text()
    assert json.loads((tmp_path / "trace.json").read_text())


def test_text_and_html_say_what_the_command_line_says():
    result = pipewright.load(SMALL).simulate()
    _, out, _ = cli("simulate", SMALL)
    # The summary's first line names the file the way it was given.
    assert str(result).splitlines()[1:] == out.splitlines()[1:]
    assert "gpipe" in repr(result) and "bubble" in repr(result)
    assert "<table>" in result._repr_html_() and "node0/c0/gpu1" in result._repr_html_()


def test_bad_options_raise_clear_errors():
    project = pipewright.load(SMALL)
    with pytest.raises(pipewright.ProjectError) as unknown:
        project.simulate(schedule="no-such-schedule")
    assert unknown.value.problems
    with pytest.raises(pipewright.ProjectError):
        project.simulate(microbatches=7)  # does not divide the batch of 120
    with pytest.raises(ValueError, match="microbatches"):
        project.simulate(microbatches=0)
    with pytest.raises(ValueError, match="efficiency"):
        project.simulate(efficiency=3.0)
    with pytest.raises(ValueError, match="either"):
        project.simulate(schedule="gpipe", schedule_csv="x.csv")
    with pytest.raises(pipewright.ProjectError):
        project.simulate(profile="/no/such/profile.json")


def test_compare_schedules_equals_the_command_line():
    expected = cli_json("simulate", SMALL, "--compare-schedules", "--json")
    comparison = pipewright.load(SMALL).compare_schedules()
    assert comparison.to_dict() == expected
    _, out, _ = cli("simulate", SMALL, "--compare-schedules")
    assert str(comparison) in out
    assert comparison.fastest["schedule"] in {row["schedule"] for row in expected}


def test_to_pandas():
    pandas = pytest.importorskip("pandas")
    frame = pipewright.load(SMALL).simulate().to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert {"device", "action", "start_s", "end_s"} <= set(frame.columns)


def test_plot():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    axes = pipewright.load(SMALL).simulate().plot()
    assert axes.get_yticklabels()


def test_simulations_run_in_threads():
    # Two threads simulating at once (the GIL is released meanwhile) finish,
    # each with its own result.
    import threading
    project = pipewright.load(SMALL)
    results = {}

    def run(m):
        results[m] = project.simulate(microbatches=m).microbatches

    threads = [threading.Thread(target=run, args=(m,)) for m in (6, 12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {6: 6, 12: 12}


def _calibration(tmp_path, name, seconds_per_flop, spec="H100-SXM"):
    """A device calibration whose GEMMs ran at 1 / seconds_per_flop FLOP/s."""
    dims = (1024, 16384)
    calibration = {
        "format": "pipewright-device-calibration", "version": 1, "spec": spec,
        "device_name": "NVIDIA H100 80GB HBM3", "dtype": "bfloat16", "launch_seconds": 5e-6,
        "gemms": [{"m": m, "n": n, "k": k, "seconds": 2.0 * m * n * k * seconds_per_flop}
                  for m in dims for n in dims for k in dims],
        "copies": [{"bytes": 1 << 30, "seconds": 1e-3}],
    }
    path = tmp_path / name
    path.write_text(json.dumps(calibration))
    return path


def test_a_calibration_prices_as_the_command_line_does(tmp_path):
    project = ASSETS / "examples" / "llama3.1-8b-h100-node.json"
    slow = _calibration(tmp_path, "slow.json", 1 / 200e12)
    expected = cli_json("simulate", project, "--json", "--calibration", slow)
    loaded = pipewright.load(project)
    calibrated = loaded.simulate(calibration=slow)
    assert calibrated.to_dict() == expected
    assert calibrated.iteration_time_s > loaded.simulate().iteration_time_s
    assert "H100-SXM kernels as measured on NVIDIA H100 80GB HBM3" in str(calibrated)
    # A list of them, one per device type, as --calibration repeated.
    assert loaded.simulate(calibration=[slow]).to_dict() == expected
    plan = loaded.plan(calibration=slow)
    assert plan.to_dict() == {**cli_json("plan", project, "--json", "--calibration", slow),
                              "search": plan.to_dict()["search"]}


def test_a_calibration_that_cannot_be_used_raises_naming_its_file(tmp_path):
    project = pipewright.load(ASSETS / "examples" / "llama3.1-8b-h100-node.json")
    unknown = _calibration(tmp_path, "z.json", 1 / 200e12, spec="Z9000")
    with pytest.raises(pipewright.ProjectError) as raised:
        project.simulate(calibration=unknown)
    assert any(str(unknown) in path and "is not a device of the catalog" in message
               for path, message in raised.value.problems), raised.value.problems
    twice = [_calibration(tmp_path, "a.json", 1e-15), _calibration(tmp_path, "b.json", 2e-15)]
    with pytest.raises(pipewright.ProjectError, match="both calibrate H100-SXM"):
        project.simulate(calibration=twice)


def test_cpu_ranks_that_outnumber_the_calibrated_cores_are_warned_about(tmp_path):
    """A CPU calibration of 2 cores, 4 ranks of 1 thread: they take turns."""
    def cpu_calibration(name, cores):
        dims = (64, 1024)
        path = tmp_path / name
        path.write_text(json.dumps({
            "format": "pipewright-device-calibration", "version": 1, "spec": "cpu",
            "device_kind": "cpu", "device_name": "CPU", "dtype": "float32",
            "launch_seconds": 2e-6,
            "gemms": [{"m": m, "n": n, "k": k, "seconds": 2.0 * m * n * k / 50e9}
                      for m in dims for n in dims for k in dims],
            "copies": [{"bytes": 1 << 26, "seconds": 2.0 * (1 << 26) / 20e9}],
            "machine": {"cores": cores, "threads": 1},
        }))
        return path

    project = pipewright.load(ASSETS / "examples" / "mixtral-tiny-e2-cpu.json")
    with pytest.warns(UserWarning, match="the calibration was measured on a machine of 2 cores, "
                                         "and this layout runs 4 CPU ranks"):
        shared = project.simulate(calibration=cpu_calibration("two.json", 2))
    many = cpu_calibration("many.json", 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alone = project.simulate(calibration=many)
    assert shared.iteration_time_s > 1.3 * alone.iteration_time_s


def test_kernels_shorter_than_a_host_issues_them_are_warned_about():
    """ResNet-50 in micro-batches of 20 on A100s: a warning, as `simulate` gives it."""
    with pytest.warns(UserWarning, match=r"the kernels of stage 1 \(node0/c0/gpu1\) take .* "
                                         r"likely paced by its host"):
        result = pipewright.load(SMALL).simulate()
    assert result.to_dict()["kernel_pace"]["likely_host_bound"] is True
    # Llama 3.1 8B's kernels are long, and the flat model prices none.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipewright.load(ASSETS / "examples" / "llama3.1-8b-h100-node.json").simulate()
        pipewright.load(SMALL).simulate(efficiency=0.5)
