"""SentencePiece tokenizer with a joint source/target vocabulary.

The paper encodes sentences with "byte-pair encoding, which has a shared source-target vocabulary of about
37000 tokens" (Section 5.1). We train one SentencePiece model on both sides in memory, so a checkpoint can
carry the model as bytes and needs no separate file. Special ids are fixed so that batching, decoding and
the model agree without asking the tokenizer:

    PAD_ID = 0, UNK_ID = 1, BOS_ID = 2, EOS_ID = 3

The attention views show pieces, and can merge a word's pieces into one row/column; `word_groups` and
`word_labels` say which pieces belong together.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import sentencepiece as spm

PAD_ID = 0
UNK_ID = 1
BOS_ID = 2
EOS_ID = 3

PAD_PIECE = "<pad>"
UNK_PIECE = "<unk>"
BOS_PIECE = "<s>"
EOS_PIECE = "</s>"

TOKENIZER_FILE = "tokenizer.model"  # the SentencePiece model, in a checkpoint

WORD_START = "\u2581"  # '▁', SentencePiece's marker for "a space came before this piece"

MODEL_TYPES = ("unigram", "bpe", "char", "word")

# Pieces that are never part of a word: each forms its own group in `word_groups`.
_STANDALONE = frozenset({PAD_PIECE, BOS_PIECE, EOS_PIECE})

# Enough for any corpus this app trains on (Multi30k has 58k sentences across both sides); above it,
# SentencePiece samples sentences, which keeps training time bounded for large uploads.
_MAX_TRAIN_SENTENCES = 200_000


def unknown_share(pieces: Sequence[str]) -> float:
    """The share of the text-bearing pieces of `pieces` that are unknown to the vocabulary (UNK_PIECE): special
    pieces and a bare word-start marker carry no text and are not counted; 0.0 when nothing is left.

    Input in a language the model never saw is mostly unknown pieces (Korean into an English→German model:
    every character), so its translation means nothing; the app and the command line say so above a share.
    """
    texts = [piece for piece in pieces if piece not in _STANDALONE and piece != WORD_START]
    return sum(piece == UNK_PIECE for piece in texts) / len(texts) if texts else 0.0


class Tokenizer:
    """A trained SentencePiece model plus the conventions the engine relies on (fixed special ids)."""

    def __init__(self, model_proto: bytes) -> None:
        self._proto = bytes(model_proto)
        self._sp = spm.SentencePieceProcessor(model_proto=self._proto)
        expected = {PAD_ID: PAD_PIECE, UNK_ID: UNK_PIECE, BOS_ID: BOS_PIECE, EOS_ID: EOS_PIECE}
        found = {i: self._sp.id_to_piece(i) for i in expected}
        assert found == expected, f"special pieces must be {expected}, this model has {found}"
        self.model_type = _read_model_type(self._proto)

    # ----------------------------------------------------------------------------------------- training
    @classmethod
    def train(
        cls,
        sentences: Iterable[str],
        vocab_size: int,
        model_type: str = "unigram",
        character_coverage: float = 1.0,
    ) -> Tokenizer:
        """Train a joint vocabulary on `sentences` (pass both languages) in memory, in seconds.

        `vocab_size` is an upper bound: SentencePiece is run with `hard_vocab_limit=False`, so a corpus too
        small for the requested size gives a smaller vocabulary (read `.vocab_size` for the real one) rather
        than failing. A size too small to hold every character (plus the 4 special pieces) is a ValueError.
        `model_type="word"` splits on spaces only; the synthetic tasks use it for their symbols.
        """
        if model_type not in MODEL_TYPES:
            raise ValueError(f"model_type must be one of {MODEL_TYPES}, got {model_type!r}")
        texts = [s.strip() for s in sentences]
        texts = [s for s in texts if s]
        if not texts:
            raise ValueError("cannot train a tokenizer on no sentences (all were empty)")
        if vocab_size < 5:
            raise ValueError(f"vocab_size must be at least 5 (4 special pieces + 1), got {vocab_size}")
        writer = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(texts),
                model_writer=writer,
                vocab_size=vocab_size,
                model_type=model_type,
                character_coverage=character_coverage,
                pad_id=PAD_ID,
                unk_id=UNK_ID,
                bos_id=BOS_ID,
                eos_id=EOS_ID,
                pad_piece=PAD_PIECE,
                unk_piece=UNK_PIECE,
                bos_piece=BOS_PIECE,
                eos_piece=EOS_PIECE,
                hard_vocab_limit=False,
                input_sentence_size=_MAX_TRAIN_SENTENCES,
                shuffle_input_sentence=True,
                num_threads=2,
                minloglevel=2,
            )
        except RuntimeError as err:
            message = str(err)
            if "smaller than required_chars" in message:
                raise ValueError(
                    f"vocab_size={vocab_size} is too small for this corpus: it cannot even hold every "
                    f"character. Increase vocab_size or lower character_coverage ({character_coverage}). "
                    f"SentencePiece said: {message.split('] ', 1)[-1]}"
                ) from err
            raise ValueError(f"SentencePiece training failed: {message}") from err
        return cls(writer.getvalue())

    # ----------------------------------------------------------------------------------- serialisation
    @classmethod
    def from_bytes(cls, data: bytes) -> Tokenizer:
        return cls(data)

    def to_bytes(self) -> bytes:
        return self._proto

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self._proto)

    def files(self) -> dict[str, bytes]:
        """File name -> bytes of everything a checkpoint holds for this tokenizer (explorer.checkpoint)."""
        return {TOKENIZER_FILE: self._proto}

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        return cls(Path(path).read_bytes())

    def __getstate__(self) -> dict[str, bytes]:
        # The SentencePiece processor is a C++ object; the model bytes are all that is needed to rebuild it.
        return {"proto": self._proto}

    def __setstate__(self, state: dict[str, bytes]) -> None:
        Tokenizer.__init__(self, state["proto"])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokenizer) and other._proto == self._proto

    def __hash__(self) -> int:
        return hash(self._proto)

    def __repr__(self) -> str:
        return f"Tokenizer(model_type={self.model_type!r}, vocab_size={self.vocab_size})"

    # ---------------------------------------------------------------------------------------- encoding
    @property
    def vocab_size(self) -> int:
        return self._sp.get_piece_size()

    def encode(self, text: str) -> list[int]:
        """Piece ids of `text`, without BOS/EOS (batching adds those)."""
        return self._sp.encode(text)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self._sp.encode(list(texts))

    def encode_target_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Ids of target-side `texts` for training: one vocabulary on both sides here; an imported model's target
        side may have its own (explorer.marian.tokenizer)."""
        return self.encode_batch(texts)

    def decode(self, ids: Iterable[int]) -> str:
        """Text of `ids`; PAD, BOS and EOS are skipped wherever they appear.

        Never with leading or trailing whitespace: a model may end an output on a lone '▁' piece (a barely
        trained one often does), which SentencePiece decodes to a trailing space. Every text the engine returns
        (`translate`, the n-best lists, the command line, so the app too) is made here, so it is normalised once.
        """
        return self._sp.decode([int(i) for i in ids if int(i) not in (PAD_ID, BOS_ID, EOS_ID)]).strip()

    def id_to_piece(self, piece_id: int) -> str:
        return self._sp.id_to_piece(int(piece_id))

    def piece_to_id(self, piece: str) -> int:
        """Id of `piece`; UNK_ID for a piece that is not in the vocabulary."""
        return self._sp.piece_to_id(piece)

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """Display strings for `ids`, one per id, keeping the '▁' word-start marker.

        Special ids show as '<pad>', '<s>', '</s>'. An unknown piece shows as '<unk>', except in a word-level
        model, where every piece is a whole word: there it shows as '▁<unk>' so that `word_groups` starts a
        new word at it (in subword models an unknown piece is usually a rare character inside a word).
        """
        unk = WORD_START + UNK_PIECE if self.model_type == "word" else UNK_PIECE
        return [unk if int(i) == UNK_ID else self._sp.id_to_piece(int(i)) for i in ids]

    def target_pieces(self, ids: Iterable[int]) -> list[str]:
        """`pieces` of target ids (what the decoder reads and writes): the same vocabulary here; an imported
        model's may be its own (explorer.marian.tokenizer)."""
        return self.pieces(ids)


# The numbers of sentencepiece_model.proto that `_read_model_type` needs.
_TRAINER_SPEC_FIELD = 2  # ModelProto.trainer_spec
_MODEL_TYPE_FIELD = 3  # TrainerSpec.model_type, enum ModelType
_UNIGRAM = 1  # ModelType's default
_MODEL_TYPE_NAMES = {_UNIGRAM: "unigram", 2: "bpe", 3: "word", 4: "char"}


def _read_model_type(proto: bytes) -> str:
    """Model type ('unigram', 'bpe', 'word', 'char') stored in a serialized SentencePiece model.

    Reads the protobuf wire format directly, so the protobuf package (which sentencepiece's generated
    `sentencepiece_model_pb2` needs) is not a dependency: ModelProto field 2 is `trainer_spec`, TrainerSpec
    field 3 is `model_type`. As protobuf parses it, the last value wins and an absent one means UNIGRAM.
    """
    model_type = _UNIGRAM
    for field, value in _proto_fields(proto):
        if field == _TRAINER_SPEC_FIELD and isinstance(value, memoryview):
            for inner, number in _proto_fields(value):
                if inner == _MODEL_TYPE_FIELD and isinstance(number, int):
                    model_type = number
    if model_type not in _MODEL_TYPE_NAMES:
        raise ValueError(f"unknown SentencePiece model type {model_type}, expected one of {_MODEL_TYPE_NAMES}")
    return _MODEL_TYPE_NAMES[model_type]


def _proto_fields(data: bytes | memoryview) -> Iterator[tuple[int, int | memoryview | None]]:
    """(field number, value) of each field of one serialized protobuf message, in order.

    Wire format: https://protobuf.dev/programming-guides/encoding/. Varints come as int, length-delimited
    fields (strings, sub-messages) as a memoryview of their bytes (no copy), fixed-width fields as None.
    Groups (deprecated, unused by SentencePiece) and malformed data are a ValueError.
    """
    view = memoryview(data)
    position = 0
    while position < len(view):
        key, position = _varint(view, position)
        field, wire_type = key >> 3, key & 7
        value: int | memoryview | None = None
        if wire_type == 0:  # varint
            value, position = _varint(view, position)
        elif wire_type == 2:  # length-delimited
            length, position = _varint(view, position)
            value, position = view[position : position + length], position + length
        elif wire_type in (1, 5):  # fixed64, fixed32
            position += 8 if wire_type == 1 else 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire_type} (field {field})")
        if position > len(view):
            raise ValueError(f"protobuf field {field} runs past the end of the data")
        yield field, value


def _varint(data: memoryview, position: int) -> tuple[int, int]:
    """The base-128 varint starting at `position`, and the position after it."""
    result = shift = 0
    while True:
        if position >= len(data):
            raise ValueError("protobuf data ends inside a varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7
        if shift >= 70:
            raise ValueError("protobuf varint longer than 10 bytes")


# --------------------------------------------------------------------------------------- word grouping
def word_groups(pieces: Sequence[str]) -> list[list[int]]:
    """Indices of `pieces` grouped into words, in order; every index appears in exactly one group.

    A word starts at a piece beginning with '▁'. Special pieces (<s>, </s>, <pad>) are groups of their own,
    and a piece right after one starts a new group even without '▁'. Used to merge attention over a word's
    pieces, e.g. ['<s>', '▁Ein', '▁Hund', 'e', '.', '</s>'] -> [[0], [1], [2, 3, 4], [5]].
    """
    groups: list[list[int]] = []
    open_word = False  # whether the last group may take more pieces
    for index, piece in enumerate(pieces):
        if piece in _STANDALONE:
            groups.append([index])
            open_word = False
        elif piece.startswith(WORD_START) or not open_word:
            groups.append([index])
            open_word = True
        else:
            groups[-1].append(index)
    return groups


def word_labels(pieces: Sequence[str]) -> list[str]:
    """The word of each group from `word_groups`, with the '▁' markers removed ('▁Hund','e' -> 'Hunde')."""
    labels = []
    for group in word_groups(pieces):
        text = "".join(pieces[i] for i in group)
        if text not in _STANDALONE:
            text = text.replace(WORD_START, "") or WORD_START
        labels.append(text)
    return labels
