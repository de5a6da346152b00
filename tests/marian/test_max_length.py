"""The model's own maximum output length (Marian's `max_length`, which counts the decoder's start token) is stored
at import and limits every output of the imported model, as `generate` does; our checkpoints keep input + 50."""

from __future__ import annotations

import json

import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.cli import main
from explorer.config import ModelConfig
from explorer.inference import translate
from explorer.marian.importer import import_marian
from tests.marian.models import build_marian, sentences

MAX_LENGTH = 3  # the start token and two more: </s> included, an output has at most 2 tokens


@pytest.fixture(scope="module")
def short_model(tmp_path_factory, one_torch_thread):
    folder = tmp_path_factory.mktemp("short")
    built = build_marian(folder / "hf", logits_bias=False, seed=5)
    settings_file = built.path / "generation_config.json"
    settings = json.loads(settings_file.read_text())
    settings["max_length"] = MAX_LENGTH
    settings_file.write_text(json.dumps(settings))
    built.model.generation_config.max_length = MAX_LENGTH  # what transformers reads from the saved folder
    return built, load_checkpoint(import_marian(built.path, folder / "ours"))


@pytest.mark.parametrize("beam", [1, 4], ids=["greedy", "beam 4"])
def test_decoding_stops_at_the_models_max_length(short_model, beam):
    built, checkpoint = short_model
    assert checkpoint.config.max_output_len == MAX_LENGTH - 1
    texts = sentences(30, seed=7)
    ours = [t.output_ids for t in translate(checkpoint.model, checkpoint.tokenizer, texts, beam_size=beam, alpha=1.0)]
    assert max(len(ids) for ids in ours) <= MAX_LENGTH - 1
    if beam > 1:  # how a hypothesis cut at the limit ranks against finished ones is each search's own
        return
    config = checkpoint.config
    eos, pad = config.eos_id, config.pad_id
    rows = [checkpoint.tokenizer.encode(text) + [eos] for text in texts]
    width = max(map(len, rows))
    src = torch.tensor([row + [pad] * (width - len(row)) for row in rows])
    with torch.no_grad():
        generated = built.model.generate(input_ids=src, attention_mask=(src != pad).long(), num_beams=1).tolist()
    theirs = [[token for token in row[1:] if token != pad] for row in generated]  # after the start token
    assert ours == [row[: row.index(eos) + 1] if eos in row else row for row in theirs]


def test_our_checkpoints_keep_input_plus_50():
    config = ModelConfig(max_len=256)
    assert config.max_output_len is None and "max_output_len" not in config.to_dict()
    assert config.output_limit(10, 50) == 60 and config.output_limit(250, 50) == 256
    with pytest.raises(ValueError, match="max_output_len"):
        ModelConfig(max_len=64, max_output_len=65)


def test_info_states_the_models_own_limit(short_model, capsys):
    _, checkpoint = short_model
    assert main(["info", "--checkpoint", str(checkpoint.path)]) == 0
    assert json.loads(capsys.readouterr().out)["decoding"]["max_output_tokens"] == MAX_LENGTH - 1
