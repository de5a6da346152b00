"""The tokenizer of an imported Marian model: two SentencePiece models (source and target) over a vocabulary file.

A Marian model's ids are not SentencePiece's: `vocab.json` maps each piece to the model's id (`</s>` = 0,
`<unk>` = 1, `<pad>` last), and the SentencePiece models only cut text into pieces. Models with separate source and
target vocabularies have a second map, `target_vocab.json`. Multi-target models read a target-language token
(`>>kor<<`) first: a sentence that starts with one keeps it as one piece, and a sentence without one gets the
model's default (`ModelConfig.target_prefix`), so every page can type plain text.

This follows transformers' `MarianTokenizer` (what an imported model was trained and published with), without its
optional Moses punctuation normalisation (sacremoses), which changes only unusual punctuation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import sentencepiece as spm

from explorer.tokenizer import UNK_PIECE, WORD_START, Tokenizer, _read_model_type

if TYPE_CHECKING:
    from explorer.config import ModelConfig

SOURCE_SPM, TARGET_SPM = "source.spm", "target.spm"
VOCAB_FILE, TARGET_VOCAB_FILE = "vocab.json", "target_vocab.json"
EOS_PIECE, PAD_PIECE = "</s>", "<pad>"
MAX_VOCAB_BYTES = 64 * 1024 * 1024  # opus-mt's vocab.json is about 1.5 MB


def vocabulary(data: object, source: str) -> list[str]:
    """The pieces of a vocab.json ({piece: id}) by id; ids must be 0 .. n-1, each once."""
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{source} must be a JSON object of piece -> id")
    pieces: list[str | None] = [None] * len(data)
    for piece, index in data.items():
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(data) or pieces[index]:
            raise ValueError(f"{source}: the ids must be 0 to {len(data) - 1}, each once; {piece!r} has {index!r}")
        pieces[index] = piece
    return [p for p in pieces if p is not None]


def language_code(text: str) -> tuple[str | None, str]:
    """(`>>xx<<`, the rest) when `text` starts with a target-language token, else (None, text); as transformers'
    MarianTokenizer.remove_language_code."""
    if text.startswith(">>") and (end := text.find("<<")) != -1:
        return text[: end + 2], text[end + 2 :]
    return None, text


class VocabTokenizer(Tokenizer):
    """An imported model's tokenizer, with the `Tokenizer` API the engine and the pages use.

    `pieces`/`id_to_piece`/`piece_to_id`/`encode` are the source side; `target_pieces` and `decode` the target
    side (the same vocabulary unless the model has separate ones).
    """

    def __init__(
        self,
        source_model: bytes,
        target_model: bytes,
        source_vocab: Sequence[str],
        target_vocab: Sequence[str] | None = None,
        prefix: str | None = None,
    ) -> None:
        # No call to Tokenizer.__init__: that one checks the paper model's fixed special ids.
        self._source_model, self._target_model = bytes(source_model), bytes(target_model)
        self._source = spm.SentencePieceProcessor(model_proto=self._source_model)
        self._target = spm.SentencePieceProcessor(model_proto=self._target_model)
        self.model_type = _read_model_type(self._source_model)
        self.source_vocab = list(source_vocab)
        self.target_vocab = list(target_vocab) if target_vocab is not None else None
        self._source_ids = {piece: i for i, piece in enumerate(self.source_vocab)}
        for piece in (UNK_PIECE, EOS_PIECE):
            if piece not in self._source_ids:
                raise ValueError(f"the vocabulary has no {piece} piece")
        self.unk_id = self._source_ids[UNK_PIECE]
        self.eos_id = self._source_ids[EOS_PIECE]
        if prefix is not None and prefix not in self._source_ids:
            raise ValueError(f"the target-language token {prefix!r} is not in the vocabulary")
        self.prefix = prefix
        target = self.target_vocab if self.target_vocab is not None else self.source_vocab
        self._target_ids = {piece: i for i, piece in enumerate(target)}
        self._target_unk = self._target_ids.get(UNK_PIECE, self.unk_id)
        # Never in an output's text: end of sentence, padding (the decoder's start), unknown (transformers'
        # skip_special_tokens).
        self._silent = {i for i, piece in enumerate(target) if piece in (EOS_PIECE, PAD_PIECE, UNK_PIECE)}

    # ----------------------------------------------------------------------------------- serialisation
    @classmethod
    def read(cls, folder: Path, config: ModelConfig) -> VocabTokenizer:
        """The tokenizer files of an imported checkpoint in `folder`, checked against `config`'s vocabularies."""

        def json_file(name: str) -> list[str]:
            file = folder / name
            if file.stat().st_size > MAX_VOCAB_BYTES:
                raise ValueError(f"{name} is larger than {MAX_VOCAB_BYTES:,} bytes")
            return vocabulary(json.loads(file.read_text(encoding="utf-8")), name)

        source = json_file(VOCAB_FILE)
        target = json_file(TARGET_VOCAB_FILE) if (folder / TARGET_VOCAB_FILE).is_file() else None
        if len(source) != config.vocab_size or len(target or source) != config.output_vocab_size:
            raise ValueError(
                f"the vocabularies have {len(source)} and {len(target or source)} pieces but the model expects "
                f"{config.vocab_size} and {config.output_vocab_size}"
            )
        try:
            tokenizer = cls(
                (folder / SOURCE_SPM).read_bytes(), (folder / TARGET_SPM).read_bytes(), source, target, None
            )
        except RuntimeError as error:  # sentencepiece on a file that is not a model
            raise ValueError(f"{SOURCE_SPM} or {TARGET_SPM} is not a SentencePiece model ({error})") from None
        return tokenizer.with_prefix(config.target_prefix)

    def with_prefix(self, prefix: str | None) -> VocabTokenizer:
        return VocabTokenizer(self._source_model, self._target_model, self.source_vocab, self.target_vocab, prefix)

    def files(self) -> dict[str, bytes]:
        def ids(pieces: Sequence[str]) -> bytes:
            return json.dumps({p: i for i, p in enumerate(pieces)}, ensure_ascii=False, indent=1).encode("utf-8")

        found = {SOURCE_SPM: self._source_model, TARGET_SPM: self._target_model, VOCAB_FILE: ids(self.source_vocab)}
        if self.target_vocab is not None:
            found[TARGET_VOCAB_FILE] = ids(self.target_vocab)
        return found

    def to_bytes(self) -> bytes:
        """Every file in one deterministic blob: what equality, hashing and caches key on."""
        return b"\0".join(name.encode() + b"\0" + data for name, data in sorted(self.files().items())) + (
            (self.prefix or "").encode()
        )

    def save(self, path: str | Path) -> None:
        raise NotImplementedError("an imported tokenizer is several files: save it with its checkpoint")

    def __getstate__(self) -> dict[str, bytes]:
        # The SentencePiece processors are C++ objects; rebuilt from the bytes (as Tokenizer's state).
        state = {"source": self._source_model, "target": self._target_model, "prefix": (self.prefix or "").encode()}
        state["source_vocab"] = json.dumps(self.source_vocab).encode()
        state["target_vocab"] = json.dumps(self.target_vocab).encode()
        return state

    def __setstate__(self, state: dict[str, bytes]) -> None:
        VocabTokenizer.__init__(
            self,
            state["source"],
            state["target"],
            json.loads(state["source_vocab"]),
            json.loads(state["target_vocab"]),
            state["prefix"].decode() or None,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VocabTokenizer) and other.to_bytes() == self.to_bytes()

    def __hash__(self) -> int:
        return hash(self.to_bytes())

    def __repr__(self) -> str:
        sizes = f"{len(self.source_vocab)}" + (f"/{len(self.target_vocab)}" if self.target_vocab is not None else "")
        return f"VocabTokenizer(vocab_size={sizes}, prefix={self.prefix!r})"

    # ---------------------------------------------------------------------------------------- encoding
    @property
    def vocab_size(self) -> int:
        return len(self.source_vocab)

    def _source_pieces(self, text: str) -> list[str]:
        code, rest = language_code(text)
        code = code if code is not None else self.prefix
        return ([code] if code is not None else []) + self._source.encode(rest, out_type=str)

    def encode(self, text: str) -> list[int]:
        """Model ids of `text` (its language token first), without the final `</s>` (batching adds it)."""
        return [self._source_ids.get(piece, self.unk_id) for piece in self._source_pieces(text)]

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.encode(text) for text in texts]

    def encode_target_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Target-side ids (what the decoder reads and is trained to write): the target SentencePiece model over
        the target vocabulary, no language token (MarianTokenizer's `text_target`), without the final `</s>`."""
        return [
            [self._target_ids.get(piece, self._target_unk) for piece in self._target.encode(text, out_type=str)]
            for text in texts
        ]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of target `ids`, without `</s>`, `<pad>` and `<unk>` (transformers' skip_special_tokens)."""
        ids = [int(i) for i in ids]
        kept = [piece for i, piece in zip(ids, self.target_pieces(ids), strict=True) if i not in self._silent]
        return self._target.decode_pieces(kept).replace(WORD_START, " ").strip()

    def id_to_piece(self, piece_id: int) -> str:
        return self.source_vocab[int(piece_id)]

    def piece_to_id(self, piece: str) -> int:
        return self._source_ids.get(piece, self.unk_id)

    def pieces(self, ids: Iterable[int]) -> list[str]:
        return [self.source_vocab[int(i)] for i in ids]

    def target_pieces(self, ids: Iterable[int]) -> list[str]:
        vocab = self.target_vocab if self.target_vocab is not None else self.source_vocab
        return [vocab[int(i)] for i in ids]
