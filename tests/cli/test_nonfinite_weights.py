"""A checkpoint whose weights are NaN, infinite or integers is refused at loading with one sentence that names
the tensor, the same in the Python API and in every command (`train --init-from` included); a model that
yields no hypothesis at all ends the search with a sentence, never an IndexError."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from explorer.checkpoint import CheckpointError, average_weights, load_checkpoint
from explorer.cli import main
from explorer.decoding.search import beam_search
from explorer.inference import NoTranslationError, translate

BROKEN = "decoder_layers.0.feed_forward.w_1.weight"


def _crafted(source: Path, target: Path, change) -> Path:
    """A copy of `source` whose model.safetensors has one tensor replaced by change(tensor)."""
    shutil.copytree(source, target)
    weights = load_file(str(target / "model.safetensors"))
    weights[BROKEN] = change(weights[BROKEN])
    save_file(weights, str(target / "model.safetensors"))
    return target


def _with_nan(tensor: torch.Tensor) -> torch.Tensor:
    tensor = tensor.clone()
    tensor.view(-1)[3] = float("nan")
    return tensor


def _with_inf(tensor: torch.Tensor) -> torch.Tensor:
    tensor = tensor.clone()
    tensor.view(-1)[0] = float("-inf")
    return tensor


@pytest.fixture(params=["nan", "inf", "int32"])
def broken(request, reverse_checkpoint, tmp_path) -> tuple[Path, str]:
    change, expected = {
        "nan": (_with_nan, "holds NaN values"),
        "inf": (_with_inf, "holds infinite values"),
        "int32": (lambda t: t.to(torch.int32), "is stored as I32, but model weights must be floating point"),
    }[request.param]
    return _crafted(reverse_checkpoint, tmp_path / request.param, change), expected


def test_loading_refuses_it_naming_the_tensor(broken):
    path, expected = broken
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    sentence = str(caught.value)
    assert expected in sentence and repr(BROKEN) in sentence, sentence
    assert "does not fit the file" not in sentence
    assert "\n" not in sentence
    with pytest.raises(CheckpointError, match=expected):
        average_weights([path])  # `explorer export --average` reads the weights its own way


def test_every_command_says_the_same_sentence_with_status_2(broken, tmp_path, capsys, reversal_pairs):
    path, _ = broken
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    (tmp_path / "src.txt").write_text("a b c\n")
    (tmp_path / "ref.txt").write_text("c b a\n")
    commands = [
        ["translate", "-c", str(path), "--beam", "4", "a b c"],
        ["evaluate", "-c", str(path), "--source", str(tmp_path / "src.txt"), "--reference", str(tmp_path / "ref.txt")],
        ["train", "--data", reversal_pairs, "--init-from", str(path), "--out", str(tmp_path / "run"), "--steps", "1",
         "--quiet"],
    ]  # fmt: skip
    for args in commands:
        assert main(args) == 2, args
        assert capsys.readouterr().err == f"error: {caught.value}\n", args
    assert not (tmp_path / "run" / "latest").exists()


@pytest.mark.parametrize("beam", [1, 4])
def test_a_search_that_finds_nothing_says_so(reverse_checkpoint, beam):
    loaded = load_checkpoint(reverse_checkpoint)
    with torch.no_grad():
        for parameter in loaded.model.parameters():
            parameter.fill_(float("nan"))
    with pytest.raises(NoTranslationError, match="found no translation for 'a b c'"):
        translate(loaded.model, loaded.tokenizer, ["a b c"], beam_size=beam)
    with pytest.raises(NoTranslationError):
        translate(loaded.model, loaded.tokenizer, ["a b c"], beam_size=beam, with_attention=True, with_trace=True)


class _Hopeless:
    """A scorer under which every token is impossible (-inf) or not a number."""

    def __init__(self, value: float) -> None:
        self.value = value

    def step(self, last_tokens: torch.Tensor, step: int) -> torch.Tensor:
        return torch.full((last_tokens.shape[0], 6), self.value)

    def reorder(self, rows: torch.Tensor) -> None:
        pass


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_beam_search_returns_an_empty_list_instead_of_raising(value):
    found = beam_search(_Hopeless(value), 2, 3, bos_id=1, eos_id=2, max_len=5, trace=True)
    assert [r.hypotheses for r in found] == [[], []]
    assert all(r.trace is not None and r.trace.finished == [] for r in found)
