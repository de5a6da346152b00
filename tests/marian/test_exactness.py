"""An imported Marian model computes what transformers' MarianMTModel computes: teacher-forced logits within 1e-5,
and greedy and beam outputs identical to `generate` on 100 sentences, for each configuration switch (activation,
shared or separate vocabularies, logits bias, a target-language token), with the length normalisation the model
declares (score / length^α); its tokenizer gives MarianTokenizer's ids."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from explorer.checkpoint import Checkpoint, load_checkpoint
from explorer.inference import translate
from explorer.marian.importer import import_marian
from tests.marian.models import build_marian, marian_tokenizer, sentences

SWITCHES = {
    "swish, shared, bias": {},
    "gelu": {"activation": "gelu"},
    "relu, no bias": {"activation": "relu", "logits_bias": False},
    "separate vocabularies": {"shared": False, "seed": 7},
    "language prefix": {"languages": (">>deu<<", ">>kor<<", ">>fra<<"), "seed": 3},
}
SENTENCES = 100


@dataclass(frozen=True)
class Imported:
    model: object  # transformers.MarianMTModel
    tokenizer: object  # transformers.MarianTokenizer
    checkpoint: Checkpoint  # ours, imported from the same folder
    texts: list[str]
    generated: dict[int, list[list[int]]]  # beam size -> transformers' outputs for `texts`


@pytest.fixture(scope="module", params=list(SWITCHES), ids=list(SWITCHES))
def imported(request, tmp_path_factory, one_torch_thread) -> Imported:
    """One switch's model, imported, with the first 100 of 300 sentences whose `generate` outputs (greedy and
    beam 4) end before the length limit: there transformers lets outputs cut at the limit compete with finished
    ones while our search ranks finished ones first, a difference of policy, not of the model."""
    switches = SWITCHES[request.param]
    folder = tmp_path_factory.mktemp("marian")
    built = build_marian(folder / "hf", **switches)
    language = "kor" if "languages" in switches else None
    import_marian(folder / "hf", folder / "ours", target_language=language)
    checkpoint = load_checkpoint(folder / "ours")
    texts = sentences(3 * SENTENCES, seed=11)
    if language is not None:  # half typed with their own token, half taking the model's default
        texts = [f">>deu<< {t}" if i % 2 else t for i, t in enumerate(texts)]
    generated = {beam: _generated(built.model, checkpoint, texts, beam) for beam in (1, 4)}
    eos = checkpoint.config.eos_id
    ended = [i for i in range(len(texts)) if all(out[i][-1:] == [eos] for out in generated.values())]
    assert len(ended) >= SENTENCES, f"only {len(ended)} outputs end before the limit"
    keep = ended[:SENTENCES]
    return Imported(
        built.model,
        marian_tokenizer(folder / "hf"),
        checkpoint,
        [texts[i] for i in keep],
        {beam: [out[i] for i in keep] for beam, out in generated.items()},
    )


def _their_inputs(checkpoint: Checkpoint, texts: list[str]) -> list[str]:
    """The texts as transformers sees them: with the target-language token ours adds by default."""
    prefix = checkpoint.config.target_prefix
    return [t if prefix is None or t.startswith(">>") else f"{prefix} {t}" for t in texts]


def _batch(ids: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(row) for row in ids)
    tokens = torch.tensor([row + [pad] * (width - len(row)) for row in ids])
    return tokens, tokens != pad


def test_tokenizer_gives_marian_ids(imported):
    checkpoint, texts = imported.checkpoint, imported.texts
    theirs = imported.tokenizer(_their_inputs(checkpoint, texts))["input_ids"]
    ours = [checkpoint.tokenizer.encode(t) + [checkpoint.config.eos_id] for t in texts]
    assert ours == theirs


def test_teacher_forced_logits_within_1e_5(imported):
    model, checkpoint, texts = imported.model, imported.checkpoint, imported.texts
    config = checkpoint.config
    source = [checkpoint.tokenizer.encode(t) + [config.eos_id] for t in texts[:16]]
    src, src_mask = _batch(source, config.pad_id)
    target = torch.randint(0, config.output_vocab_size - 1, (len(source), 9))
    target[:, 0] = config.bos_id  # the decoder's start token: <pad>
    with torch.no_grad():
        theirs = model(input_ids=src, attention_mask=src_mask, decoder_input_ids=target).logits
        ours = checkpoint.model(src, target).logits
    assert ours.shape == theirs.shape
    assert (ours - theirs).abs().max().item() <= 1e-5


def _generated(model, checkpoint: Checkpoint, texts: list[str], beam: int) -> list[list[int]]:
    config = checkpoint.config
    src, src_mask = _batch([checkpoint.tokenizer.encode(t) + [config.eos_id] for t in texts], config.pad_id)
    with torch.no_grad():
        rows = model.generate(
            input_ids=src,
            attention_mask=src_mask,
            num_beams=beam,
            do_sample=False,
            length_penalty=1.0,
            early_stopping=True,
            max_length=31,  # 30 tokens after the start: below our limit (the source length + 50)
        ).tolist()
    out = []
    for row in rows:
        body = row[1:]  # after the start token
        out.append(body[: body.index(config.eos_id) + 1] if config.eos_id in body else body)
    return out


@pytest.mark.parametrize("beam", [1, 4], ids=["greedy", "beam 4"])
def test_search_identical_to_generate(imported, beam):
    checkpoint = imported.checkpoint
    assert checkpoint.config.ban_pad and checkpoint.config.length_normalisation == "power"
    ours = translate(checkpoint.model, checkpoint.tokenizer, imported.texts, beam_size=beam, alpha=1.0)
    assert [t.output_ids for t in ours] == imported.generated[beam]
    assert len({len(t.output_ids) for t in ours}) > 1  # outputs of several lengths, not one degenerate answer


def test_output_text_is_marian_decoding(imported):
    checkpoint = imported.checkpoint
    for translation in translate(checkpoint.model, checkpoint.tokenizer, imported.texts[:20]):
        expected = imported.tokenizer.decode(translation.output_ids, skip_special_tokens=True)
        assert translation.output == expected


def test_language_token_is_one_source_piece(tmp_path: Path):
    built = build_marian(tmp_path / "hf", languages=(">>deu<<", ">>kor<<"), seed=3)
    import_marian(built.path, tmp_path / "ours", target_language="kor")
    tokenizer = load_checkpoint(tmp_path / "ours").tokenizer
    assert tokenizer.pieces(tokenizer.encode("the cat"))[0] == ">>kor<<"
    assert tokenizer.pieces(tokenizer.encode(">>deu<< the cat"))[0] == ">>deu<<"
    assert ">>" not in "".join(tokenizer.pieces(tokenizer.encode("the cat"))[1:])
