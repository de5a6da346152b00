"""Tokenizer: fixed special ids, round trips, serialisation, and grouping pieces into words."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.tokenizer import (
    BOS_ID,
    EOS_ID,
    MODEL_TYPES,
    PAD_ID,
    UNK_ID,
    Tokenizer,
    _read_model_type,
    word_groups,
    word_labels,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO_ROOT / "checkpoints").glob("*/tokenizer.model"))

SENTENCES = [
    "A man in a blue shirt is standing on a ladder.",
    "Two dogs are playing in the snow.",
    "A little girl climbs into a wooden playhouse.",
    "Ein Mann in einem blauen Hemd steht auf einer Leiter.",
    "Zwei Hunde spielen im Schnee.",
    "Ein kleines Mädchen klettert in ein Spielhaus aus Holz.",
] * 20


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(SENTENCES, vocab_size=120)


def test_special_ids_are_fixed(tokenizer: Tokenizer) -> None:
    assert [tokenizer.id_to_piece(i) for i in (PAD_ID, UNK_ID, BOS_ID, EOS_ID)] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert tokenizer.piece_to_id("</s>") == EOS_ID
    assert tokenizer.piece_to_id("no-such-piece") == UNK_ID


def test_encode_decode_round_trip(tokenizer: Tokenizer) -> None:
    for text in ("Zwei Hunde spielen im Schnee.", "A man is standing in the snow."):
        ids = tokenizer.encode(text)
        assert ids and all(i > EOS_ID for i in ids), "encode must not add BOS/EOS"
        assert tokenizer.decode(ids) == text
        assert tokenizer.decode([BOS_ID, *ids, EOS_ID, PAD_ID, PAD_ID]) == text
    assert tokenizer.encode_batch(["Zwei Hunde", "A man"]) == [
        tokenizer.encode("Zwei Hunde"),
        tokenizer.encode("A man"),
    ]


def test_decoded_text_has_no_leading_or_trailing_whitespace(tokenizer: Tokenizer) -> None:
    """A lone '▁' piece at either end (what a barely trained model may emit last) decodes to no space."""
    space = tokenizer.piece_to_id("\u2581")
    assert tokenizer.id_to_piece(space) == "\u2581", "the test tokenizer should have the lone word-start piece"
    ids = tokenizer.encode("Zwei Hunde")
    assert tokenizer.decode(ids + [space]) == "Zwei Hunde"
    assert tokenizer.decode([space] + ids + [space, space, EOS_ID]) == "Zwei Hunde"
    assert tokenizer.decode([space]) == ""


def test_pieces_keep_word_start_marker(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode("Zwei Hunde")
    pieces = tokenizer.pieces([BOS_ID, *ids, EOS_ID])
    assert pieces[0] == "<s>" and pieces[-1] == "</s>"
    assert pieces[1].startswith("\u2581")
    assert "".join(pieces[1:-1]).replace("\u2581", " ").strip() == "Zwei Hunde"


def test_vocab_size_is_an_upper_bound_for_small_corpora() -> None:
    tok = Tokenizer.train(["a b c", "c b a"], vocab_size=5000)
    assert 4 < tok.vocab_size < 5000
    assert tok.decode(tok.encode("a b c")) == "a b c"


def test_too_small_vocab_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="too small"):
        Tokenizer.train(SENTENCES, vocab_size=10)


def test_bytes_file_and_pickle_round_trip(tokenizer: Tokenizer, tmp_path) -> None:
    again = Tokenizer.from_bytes(tokenizer.to_bytes())
    assert again == tokenizer and again.vocab_size == tokenizer.vocab_size
    tokenizer.save(tmp_path / "spm.model")
    loaded = Tokenizer.load(tmp_path / "spm.model")
    text = "Ein Mann steht auf einer Leiter."
    assert loaded.encode(text) == tokenizer.encode(text)
    assert pickle.loads(pickle.dumps(tokenizer)).encode(text) == tokenizer.encode(text)


def test_word_model_one_token_per_symbol() -> None:
    tok = Tokenizer.train(["a b c d", "d c b a", "e f g h"] * 5, vocab_size=50, model_type="word")
    assert tok.model_type == "word"
    assert tok.vocab_size == 4 + 8
    ids = tok.encode("a c e")
    assert len(ids) == 3 and tok.decode(ids) == "a c e"
    pieces = tok.pieces(tok.encode("a zz b"))
    assert pieces == ["\u2581a", "\u2581<unk>", "\u2581b"]
    assert word_labels(pieces) == ["a", "<unk>", "b"]


def test_word_groups_merge_subword_pieces() -> None:
    pieces = ["<s>", "\u2581Ein", "\u2581Hund", "e", ".", "</s>", "<pad>"]
    assert word_groups(pieces) == [[0], [1], [2, 3, 4], [5], [6]]
    assert word_labels(pieces) == ["<s>", "Ein", "Hunde.", "</s>", "<pad>"]


def test_word_groups_edge_cases() -> None:
    # A piece without '▁' at the start, or right after a special token, still opens a word.
    assert word_groups(["ab", "c", "\u2581d"]) == [[0, 1], [2]]
    assert word_groups(["<s>", "ab", "c"]) == [[0], [1, 2]]
    # SentencePiece writes a lone '▁' before a piece it cannot join; they form one word.
    assert word_groups(["\u2581", "<unk>", "\u2581x"]) == [[0, 1], [2]]
    assert word_labels(["\u2581", "<unk>", "\u2581x"]) == ["<unk>", "x"]
    assert word_groups([]) == []


def test_groups_cover_every_piece_once(tokenizer: Tokenizer) -> None:
    pieces = tokenizer.pieces([BOS_ID, *tokenizer.encode("Ein kleines Mädchen klettert."), EOS_ID])
    groups = word_groups(pieces)
    assert [i for g in groups for i in g] == list(range(len(pieces)))
    assert word_labels(pieces) == ["<s>", "Ein", "kleines", "Mädchen", "klettert.", "</s>"]


# ------------------------------------------------------------------------------ model type without protobuf
def _protobuf_model_type(proto: bytes) -> str:
    """The model type as sentencepiece's generated protobuf module reads it: the reference to match."""
    pytest.importorskip("google.protobuf")
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    model = model_pb2.ModelProto()
    model.ParseFromString(proto)
    return model_pb2.TrainerSpec.ModelType.Name(model.trainer_spec.model_type).lower()


def test_shipped_tokenizers_model_type_matches_protobuf() -> None:
    assert {path.parent.name for path in SHIPPED} >= {"multi30k-en-de", "toy-reverse"}
    found = {path.parent.name: _read_model_type(path.read_bytes()) for path in SHIPPED}
    assert found["multi30k-en-de"] == "unigram" and found["toy-reverse"] == "word"
    for path in SHIPPED:
        assert found[path.parent.name] == _protobuf_model_type(path.read_bytes()), path


@pytest.mark.parametrize("model_type", MODEL_TYPES)
def test_trained_model_type_is_read_back(model_type: str) -> None:
    tok = Tokenizer.train(SENTENCES, vocab_size=60, model_type=model_type)
    assert tok.model_type == model_type
    assert Tokenizer.from_bytes(tok.to_bytes()).model_type == model_type
    assert _read_model_type(tok.to_bytes()) == _protobuf_model_type(tok.to_bytes())


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n >= 0x80 else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number: int, value: int | bytes) -> bytes:
    """One protobuf field: a varint for an int, length-delimited for bytes."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def test_model_type_read_from_the_wire_format() -> None:
    bpe = _field(3, 2)
    assert _read_model_type(b"") == "unigram"  # no trainer spec: the enum's default
    assert _read_model_type(_field(2, _field(1, b"input.txt"))) == "unigram"  # spec without model_type
    # Pieces before the spec (as SentencePiece writes them), a fixed32 float in the spec, a long piece whose
    # length needs a two-byte varint.
    piece = _field(1, _field(1, b"x" * 300) + _varint(2 << 3 | 5) + b"\x00\x00\x80\x3f")
    spec = _field(2, _field(1, b"corpus") + _varint(10 << 3 | 5) + b"\x00\x00\x80\x3f" + bpe)
    assert _read_model_type(piece * 3 + spec + _field(3, b"")) == "bpe"
    # Protobuf semantics: the last value of a field wins, also across repeated sub-messages.
    assert _read_model_type(_field(2, _field(3, 3) + _field(3, 4))) == "char"
    assert _read_model_type(_field(2, _field(3, 3)) + _field(2, _field(1, b"x"))) == "word"
    assert _read_model_type(_field(2, _field(3, 3)) + _field(2, bpe)) == "bpe"
    with pytest.raises(ValueError, match="unknown SentencePiece model type 9"):
        _read_model_type(_field(2, _field(3, 9)))
    with pytest.raises(ValueError, match="past the end"):
        _read_model_type(_field(2, bpe)[:-1])
    with pytest.raises(ValueError, match="inside a varint"):
        _read_model_type(b"\x12\x80")
    with pytest.raises(ValueError, match="wire type 3"):
        _read_model_type(_varint(7 << 3 | 3))


def test_tokenizer_loads_without_protobuf() -> None:
    # protobuf is not a dependency: reading a model, including its type, must work without it.
    code = (
        "import sys; sys.modules['google.protobuf'] = None\n"
        "from pathlib import Path\n"
        "from explorer.tokenizer import Tokenizer\n"
        f"for path in {[str(p) for p in SHIPPED]!r}:\n"
        "    tok = Tokenizer.load(path)\n"
        "    print(Path(path).parent.name, tok.model_type, len(tok.encode('A man is standing.')) > 0)\n"
        "assert not any(name.startswith('google') for name in sys.modules if sys.modules[name] is not None)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "multi30k-en-de unigram True" in done.stdout and "toy-reverse word True" in done.stdout
