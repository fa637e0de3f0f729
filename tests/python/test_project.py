"""Projects in Python: load, from_dict, to_dict, save, ProjectError and edits."""

import copy
import json

import pytest

import pipewright
from conftest import ASSETS, cli, cli_json

SMALL = ASSETS / "examples" / "resnet50-2gpu-pipelined.json"


def test_round_trip_is_lossless(example):
    project = pipewright.load(example)
    document = project.to_dict()
    again = pipewright.Project.from_dict(document, base_dir=example.parent)
    assert again.to_dict() == document
    assert again == project


def test_to_dict_is_what_save_writes(example, tmp_path):
    # Defaults the file leaves out are spelt out, as the studio saves them.
    project = pipewright.load(example)
    project.save(tmp_path / "saved.json")
    with open(tmp_path / "saved.json", encoding="utf-8") as file:
        assert json.load(file) == project.to_dict()


def test_save_then_load_gives_the_same_project(tmp_path):
    project = pipewright.load(SMALL)
    project.training.microbatch_size = 10
    target = tmp_path / "edited.json"
    project.save(target)
    assert project.path == str(target)
    again = pipewright.load(target)
    assert again.to_dict() == project.to_dict()
    assert again.training.microbatch_size == 10
    assert not list(tmp_path.glob("*.tmp*")), "the atomic save left its temporary file"


def test_save_into_a_missing_folder_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        pipewright.load(SMALL).save(tmp_path / "no" / "such" / "folder" / "p.json")


def broken_documents():
    base = json.loads(SMALL.read_text(encoding="utf-8"))
    wrong_type = copy.deepcopy(base)
    wrong_type["training"]["batch_size"] = "many"
    unknown_key = copy.deepcopy(base)
    unknown_key["training"]["speed"] = 11
    semantic = copy.deepcopy(base)
    semantic["placement"][1]["layers"].append("no-such-layer")
    semantic["model"]["layers"][0]["out_channels"] = -3
    device = copy.deepcopy(base)
    device["placement"][0]["device"] = "node9/c0/gpu0"
    return {"wrong_type": wrong_type, "unknown_key": unknown_key, "semantic": semantic,
            "device": device}


@pytest.mark.parametrize("name", sorted(broken_documents()))
def test_problems_are_those_of_validate(tmp_path, name):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(broken_documents()[name]), encoding="utf-8")
    expected = cli_json("validate", path, "--json", check=False)
    assert not expected["valid"]
    wanted = [(p["path"], p["message"]) for p in expected["problems"]]

    with pytest.raises(pipewright.ProjectError) as loaded:
        pipewright.load(path)
    assert loaded.value.problems == wanted
    assert loaded.value.what == str(path)
    assert wanted[0][0] in str(loaded.value)

    with pytest.raises(pipewright.ProjectError) as from_dict:
        pipewright.Project.from_dict(broken_documents()[name], base_dir=tmp_path)
    assert from_dict.value.problems == wanted


def test_an_unchecked_project_lists_its_problems_later(tmp_path):
    document = broken_documents()["semantic"]
    project = pipewright.Project.from_dict(document, base_dir=tmp_path, check=False)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    wanted = [(p["path"], p["message"])
              for p in cli_json("validate", path, "--json", check=False)["problems"]]
    assert project.validate() == wanted
    with pytest.raises(pipewright.ProjectError) as simulated:
        project.simulate()
    assert simulated.value.problems == wanted


def test_a_file_that_is_not_json_is_a_project_error(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{ not json", encoding="utf-8")
    code, _, err = cli("validate", path, check=False)
    assert code == 1
    with pytest.raises(pipewright.ProjectError) as raised:
        pipewright.load(path)
    assert raised.value.problems
    assert raised.value.problems[0][1] in err


def test_a_missing_file_is_a_project_error(tmp_path):
    with pytest.raises(pipewright.ProjectError):
        pipewright.load(tmp_path / "missing.json")


@pytest.mark.parametrize("value", [{1, 2}, float("nan"), 2**70, object()])
def test_values_json_cannot_hold_are_refused(value):
    document = pipewright.load(SMALL).to_dict()
    document["training"]["batch_size"] = value
    with pytest.raises((TypeError, ValueError)) as raised:
        pipewright.Project.from_dict(document)
    assert "training.batch_size" in str(raised.value)


def test_sections_read_and_write_as_attributes():
    project = pipewright.load(SMALL)
    assert project.training.schedule == "gpipe"
    assert project.model.layers[0].name == "conv1"
    assert project.model.layers[-1]["type"] == project.to_dict()["model"]["layers"][-1]["type"]
    assert project.topology.nodes[0].containers[0].devices[1].spec == "A100-40GB"
    assert len(project.placement) == 2

    project.training.schedule = "1f1b"
    project.model.layers[0].out_channels = 32
    project.model.layers[1]["num_features"] = 32
    assert project.to_dict()["training"]["schedule"] == "1f1b"
    assert project.to_dict()["model"]["layers"][0]["out_channels"] == 32
    # The next block still expects 64 channels: the project says so where.
    assert [path for path, _ in project.validate()] == ["model.layers[4]"]
    project.model.layers[0].out_channels = 64
    project.model.layers[1].num_features = 64
    assert project.validate() == []


def test_a_refused_edit_leaves_the_project_as_it_was():
    project = pipewright.load(SMALL)
    before = project.to_dict()
    with pytest.raises(pipewright.ProjectError) as raised:
        project.training.microbatch_size = "twenty"
    assert raised.value.paths == ["training.microbatch_size"]
    with pytest.raises(pipewright.ProjectError):
        project.training.no_such_field = 1
    assert project.to_dict() == before


def test_lists_edit_like_lists():
    project = pipewright.load(SMALL)
    layers = project.model.layers
    count = len(layers)
    layers.append({"name": "extra", "type": "relu"})
    assert len(project.model.layers) == count + 1
    # The placement does not hold the new layer yet: the project says so...
    assert any("extra" in message for _, message in project.validate())
    project.placement[1].layers.append("extra")
    # ...and is whole again once it does.
    assert project.validate() == []
    del project.model.layers[-1]
    project.placement[1].layers.remove("extra")
    assert project.to_dict() == pipewright.load(SMALL).to_dict()


def test_a_view_assigned_elsewhere_is_copied():
    project = pipewright.load(SMALL)
    project.training.optimizer = project.training.optimizer
    project.model.layers[2] = project.model.layers[2]
    assert project.to_dict() == pipewright.load(SMALL).to_dict()


def test_unknown_attributes_name_what_exists():
    project = pipewright.load(SMALL)
    with pytest.raises(AttributeError, match="schedule"):
        project.training.shedule  # noqa: B018 (the misspelling is the test)
    with pytest.raises(AttributeError):
        project.modle  # noqa: B018


def test_repr_says_what_the_project_is():
    text = repr(pipewright.load(SMALL))
    assert "resnet50" in text and "gpipe" in text and "2 stages" in text
