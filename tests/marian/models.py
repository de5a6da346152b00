"""Tiny random Marian models in the Hugging Face layout, built in the tests: a transformers `MarianMTModel` (d_model
16, 2+2 layers, 2 heads) over a SentencePiece model trained here on a few sentences, saved with the tokenizer files
`MarianTokenizer` reads (source.spm, target.spm, vocab.json, target_vocab.json).

Weights are drawn wider than transformers' default (init_std 0.02 makes every next-token distribution nearly flat,
where one rounding step could swap two candidates); `final_logits_bias` lifts `</s>` so outputs end within a few
tokens, not at the length limit (without a bias: the last layer norm's bias, along `</s>`'s output row).
"""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

transformers = pytest.importorskip(
    "transformers", reason="the Marian exactness tests need transformers: pip install -e '.[test]'"
)
import sentencepiece as spm  # noqa: E402
import torch  # noqa: E402

WORDS = [
    *("the", "a", "cat", "dog", "sees", "runs", "on", "under", "house", "big", "small", "red", "green", "man"),
    *("woman", "child", "eats", "bread", "water", "today", "tomorrow", "quickly", "slowly", "and", "but", "with"),
]
LANGUAGES = (">>deu<<", ">>kor<<", ">>fra<<")


def sentences(count: int, seed: int = 0) -> list[str]:
    """`count` short sentences of 2 to 7 words (some with an accent or Hangul, for the pieces)."""
    rng = random.Random(seed)
    extra = ["café", "naïve", "한국어", "사람"]
    return [" ".join(rng.choice(WORDS + extra) for _ in range(rng.randint(2, 7))) for _ in range(count)]


def _sentencepiece(vocab_size: int, seed: int) -> bytes:
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences(400, seed)),
        model_writer=writer,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
    )
    return writer.getvalue()


def _vocab(proto: bytes, languages: tuple[str, ...]) -> dict[str, int]:
    """Marian's vocab.json: </s> = 0, <unk> = 1, the language tokens, the pieces, <pad> last."""
    processor = spm.SentencePieceProcessor(model_proto=proto)
    pieces = ["</s>", "<unk>", *languages]
    pieces += [
        processor.id_to_piece(i)
        for i in range(processor.get_piece_size())
        if processor.id_to_piece(i) not in ("<unk>", "<s>", "</s>")
    ]
    pieces.append("<pad>")
    return {piece: i for i, piece in enumerate(pieces)}


@dataclass(frozen=True)
class MarianFolder:
    path: Path
    model: object  # transformers.MarianMTModel, eval mode
    pad_id: int


def build_marian(
    folder: Path,
    *,
    activation: str = "swish",
    shared: bool = True,
    logits_bias: bool = True,
    languages: tuple[str, ...] = (),
    seed: int = 0,
    bin_weights: bool = False,
    layers: int = 2,
    heads: int = 2,
    d_model: int = 16,
) -> MarianFolder:
    """Save a random tiny Marian model with these switches into `folder` (the Hugging Face layout); `layers`,
    `heads` and `d_model` give other shapes (6 layers x 16 heads: the big model's grid at a tiny width)."""
    source_proto = _sentencepiece(60, seed)
    target_proto = source_proto if shared else _sentencepiece(50, seed + 1)
    source_vocab = _vocab(source_proto, languages)
    target_vocab = source_vocab if shared else _vocab(target_proto, ())
    torch.manual_seed(seed)
    config = transformers.MarianConfig(
        vocab_size=len(source_vocab),
        decoder_vocab_size=len(target_vocab),
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=2 * d_model,
        decoder_ffn_dim=2 * d_model,
        activation_function=activation,
        max_position_embeddings=64,
        scale_embedding=True,
        init_std=0.3,
        pad_token_id=len(target_vocab) - 1,
        eos_token_id=0,
        decoder_start_token_id=len(target_vocab) - 1,
        forced_eos_token_id=None,
        share_encoder_decoder_embeddings=shared,
        tie_word_embeddings=True,
    )
    model = transformers.MarianMTModel(config).eval()
    with torch.no_grad():
        if logits_bias:
            bias = torch.randn(1, len(target_vocab)) * 0.5
            bias[0, 0] = 2.5  # </s>: most outputs end after a few tokens
            model.final_logits_bias.copy_(bias)
        else:  # the same lift through the weights: the last norm's bias points along </s>'s output row
            direction = torch.randn(config.d_model)
            model.model.decoder.layers[-1].final_layer_norm.bias.copy_(direction)
            model.get_output_embeddings().weight[0] += 3.5 * direction / direction.dot(direction)
    model.generation_config.bad_words_ids = [[config.pad_token_id]]
    model.generation_config.num_beams = 4
    model.generation_config.length_penalty = 1.0
    model.generation_config.max_length = 40
    model.generation_config.forced_eos_token_id = None
    model.save_pretrained(folder, safe_serialization=not bin_weights)
    if bin_weights:  # the older uploads' layout: a pickle of tensors only
        weights = folder / "model.safetensors"
        weights.unlink(missing_ok=True)
        torch.save(model.state_dict(), folder / "pytorch_model.bin")
    (folder / "source.spm").write_bytes(source_proto)
    (folder / "target.spm").write_bytes(target_proto)
    (folder / "vocab.json").write_text(json.dumps(source_vocab, ensure_ascii=False), encoding="utf-8")
    if not shared:
        (folder / "target_vocab.json").write_text(json.dumps(target_vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"separate_vocabs": not shared}), encoding="utf-8")
    (folder / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n# tiny test model\n", encoding="utf-8")
    return MarianFolder(folder, model, config.pad_token_id)


def marian_tokenizer(folder: Path) -> object:
    """transformers' MarianTokenizer over the folder (its ids are the reference for ours)."""
    separate = (folder / "target_vocab.json").is_file()
    return transformers.MarianTokenizer.from_pretrained(str(folder), separate_vocabs=separate)
