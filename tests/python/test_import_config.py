"""pipewright.import_config: a Hugging Face config as the project `pipewright import` writes."""

import json

import pytest

import pipewright
from conftest import ASSETS, cli, cli_json

MODELS = ASSETS / "models"


def test_the_project_is_the_one_the_command_line_writes(tmp_path):
    # The same config, cluster and batch: the same project, to the byte.
    target = tmp_path / "cli.json"
    cli("import", MODELS / "llama-3.1-8b.json", "--devices", "4", "--nodes", "2",
        "--seq-len", "2048", "-b", "16", "--out", target)
    made = pipewright.import_config(MODELS / "llama-3.1-8b.json", devices=4, nodes=2,
                                    seq_len=2048, batch_size=16)
    with open(target, encoding="utf-8") as file:
        assert made.project.to_dict() == json.load(file)
    summary = cli_json("import", MODELS / "llama-3.1-8b.json", "--devices", "4", "--nodes", "2",
                       "--seq-len", "2048", "-b", "16", "--dry-run", "--json")
    assert made.parameters == summary["parameters"] == 8_030_261_248
    assert made.architecture == "LlamaForCausalLM"
    assert made.notes == []
    assert made.project.simulate().all_fit


def test_a_dict_serves_as_the_file_does():
    # What AutoConfig.from_pretrained(...).to_dict() gives: the config's dict.
    with open(MODELS / "gpt-oss-20b.json", encoding="utf-8") as file:
        config = json.load(file)
    made = pipewright.import_config(config, devices=8, device_spec="h100-sxm")
    assert made.device_spec == "H100-SXM"
    assert made.architecture == "GptOssForCausalLM"
    # OpenAI's model card: 20.91 B, 3.61 B active without the embedding.
    embedding = 201_088 * 2_880
    assert made.parameters == pytest.approx(20.91e9, abs=0.005e9)
    assert made.active_parameters - embedding == pytest.approx(3.61e9, abs=0.005e9)
    assert any("attention sinks" in note for note in made.notes)
    blocks = [l for l in made.project.model.layers if l.type == "transformer_block"]
    assert [b.to_dict().get("sliding_window") for b in blocks[:4]] == [128, None, 128, None]


def test_what_cannot_be_described_raises_with_its_field(tmp_path):
    with open(MODELS / "llama-3.1-8b.json", encoding="utf-8") as file:
        config = json.load(file)
    config["architectures"] = ["FalconForCausalLM"]
    with pytest.raises(pipewright.ProjectError) as raised:
        pipewright.import_config(config)
    assert any(path == "architectures" for path, _ in raised.value.problems)
    config = dict(config, architectures=["LlamaForCausalLM"])
    del config["hidden_size"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(pipewright.ProjectError) as raised:
        pipewright.import_config(path)
    assert str(path) in str(raised.value)
    assert any(p == "hidden_size" for p, _ in raised.value.problems)
    with pytest.raises(ValueError, match="no device \"Z80\" in the catalog"):
        pipewright.import_config(MODELS / "llama-3.2-1b.json", device_spec="Z80")
    with pytest.raises(ValueError, match="devices must be from 1 to 4096, not 0"):
        pipewright.import_config(MODELS / "llama-3.2-1b.json", devices=0)
    with pytest.raises(TypeError):
        pipewright.import_config(42)
