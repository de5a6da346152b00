"""Head roles with evidence: what each head does, measured over many sentences, with the examples that show it.

Every role is a rule "for these queries, look at that key"; its score is the share of the queries it applies
to, over all sentences, that follow it (so every score is in [0, 1] and scores are comparable). A head gets:

1. among the roles whose score reaches its threshold, the one with the highest score, except that a
   positional role (self, previous/next token, diagonal/anti-diagonal, sentence start/end) within
   `POSITIONAL_MARGIN` of the best is preferred: position alone is the simpler explanation;
2. "mixed" when no role reaches its threshold.

A query follows a rule when its strongest key is where the rule points (Voita et al., 2019, who call a
head positional when it does so for most queries); scores are the share of queries that do.

Alignment has no dictionary: an output piece is anchored to a source piece when the same text occurs
exactly once on each side (names, numbers, cognates such as "in", and every symbol of a toy task), and
punctuation is left out so the anchors are words. Rare words: a word the subword model splits into two or
more pieces, since frequent words keep a piece of their own (Sennrich et al., 2016).

Shapes follow `SentenceAttention`: encoder_self (L, H, src, src), decoder_self (L, H, tgt, tgt) with rows
"<s> y1 …", cross (L, H, tgt, src) with rows "y1 … </s>".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.analysis.heads import PATTERN_THRESHOLD
from explorer.analysis.words import merge_attention_to_words
from explorer.model.head_mask import head_name
from explorer.model.transformer import SentenceAttention, Transformer
from explorer.paper import FAMILY_FIELDS
from explorer.tokenizer import WORD_START, Tokenizer, word_groups, word_labels

if TYPE_CHECKING:  # imported where it is used: explorer.inference brings in the decoders
    from explorer.inference import Translation

SPECIAL = ("<s>", "</s>", "<pad>", "<unk>")

# Thresholds, in one place (the page explains them from here): the share of attention a role must get.
ROLE_THRESHOLDS: dict[str, float] = {
    "self": PATTERN_THRESHOLD,
    "previous token": PATTERN_THRESHOLD,
    "next token": PATTERN_THRESHOLD,
    "diagonal": PATTERN_THRESHOLD,
    "anti-diagonal": PATTERN_THRESHOLD,
    "sentence start": PATTERN_THRESHOLD,
    "sentence end": PATTERN_THRESHOLD,
    # Punctuation and rare pieces are few in a sentence, so a head that gives them 40% seeks them out.
    "punctuation": 0.4,
    "rare words": 0.4,
    "alignment": PATTERN_THRESHOLD,
}
POSITIONAL_ROLES = (
    "self",
    "previous token",
    "next token",
    "diagonal",
    "anti-diagonal",
    "sentence start",
    "sentence end",
)
CONTENT_ROLES = ("punctuation", "rare words", "alignment")
ROLE_RULES = {
    "self": "each token looks at itself",
    "previous token": "each token looks at the token before it",
    "next token": "each token looks at the token after it",
    "diagonal": "output word i looks at source word i (monotone order)",
    "anti-diagonal": "output word i looks at source word n−1−i (reversed order)",
    "sentence start": "looks at <s>, the start of the sentence",
    "sentence end": "looks at </s>, the end of the source sentence",
    "punctuation": "looks at punctuation marks",
    "rare words": "looks at rare words (split into several pieces)",
    "alignment": "an output word looks at the identical source word",
    "mixed": "no single rule explains most of its attention",
}
# Among roles over their thresholds the highest score wins, but a positional role within this margin of the
# best is preferred: position alone is the simpler explanation (in the reverse task the alignment *is* the
# anti-diagonal, and both score ~1).
POSITIONAL_MARGIN = 0.05
MIN_ROWS = 5  # a role needs this many queries it applies to, over all sentences, before it can be given
EXAMPLES_PER_HEAD = 2
PAIRS_PER_EXAMPLE = 4


@dataclass(frozen=True)
class SentencePieces:
    """One translated sentence's tokens (pieces or words) with its attention over the same tokens."""

    source: list[str]  # ending in </s>
    target_input: list[str]  # "<s> y1 … y(n-1)"
    target_output: list[str]  # "y1 … yn", ending in </s> when finished
    attention: SentenceAttention
    text: str = ""
    # Word level: which words are rare / hold punctuation (None: read from the pieces themselves).
    source_rare: list[bool] | None = None
    target_input_rare: list[bool] | None = None
    source_punctuation: list[bool] | None = None
    target_input_punctuation: list[bool] | None = None


@dataclass(frozen=True)
class RoleExample:
    sentence: str
    score: float  # the role's share in this sentence
    pairs: list[tuple[str, str, float]]  # (query piece, key piece the rule points to, weight)


@dataclass(frozen=True)
class HeadRole:
    name: str  # FAMILY.LAYER.HEAD
    role: str
    score: float  # the role's share of attention (the best positional score for "mixed")
    scores: dict[str, float]  # every applicable role's share
    examples: list[RoleExample] = field(default_factory=list)


def is_punctuation(piece: str) -> bool:
    text = piece.replace(WORD_START, "")
    return bool(text) and piece not in SPECIAL and all(unicodedata.category(c).startswith("P") for c in text)


def rare_pieces(pieces: Sequence[str]) -> np.ndarray:
    """(n,) bool: pieces of words that the subword model split into >= 2 non-punctuation pieces."""
    rare = np.zeros(len(pieces), dtype=bool)
    for group in word_groups(pieces):
        words = [i for i in group if not is_punctuation(pieces[i]) and pieces[i] not in SPECIAL]
        if len(words) >= 2:
            rare[words] = True
    return rare


def _plain(piece: str) -> str:
    return piece.replace(WORD_START, "").lower()


def _offset_rule(q: int, k: int, offset: int, first_row: int = 0) -> tuple[np.ndarray, np.ndarray]:
    target = np.eye(q, k, offset)
    valid = target.sum(-1) > 0
    valid[:first_row] = False
    return target, valid


def _column_rule(q: int, k: int, column: int, first_row: int = 0) -> tuple[np.ndarray, np.ndarray]:
    target = np.zeros((q, k))
    target[:, column] = 1
    valid = np.ones(q, dtype=bool)
    valid[:first_row] = False
    return target, valid


def _keys_rule(q: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    target = np.tile(keys.astype(float), (q, 1))
    return target, np.full(q, bool(keys.any()))


def _rules(family: str, s: SentencePieces) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """role -> (target (q, k) 0/1: where the rule says to look; valid (q,) bool: queries it applies to)."""
    src, tgt_in, tgt_out = s.source, s.target_input, s.target_output
    rules: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if family == "enc":
        n = len(src)
        rules["self"] = _offset_rule(n, n, 0)
        rules["previous token"] = _offset_rule(n, n, -1)
        rules["next token"] = _offset_rule(n, n, 1)
        rules["sentence end"] = _column_rule(n, n, n - 1)
        keys = src
    elif family == "dec":
        n = len(tgt_in)
        # Row 0 (<s>) can only see itself under the causal mask: it is evidence of nothing.
        rules["self"] = _offset_rule(n, n, 0, first_row=1)
        rules["previous token"] = _offset_rule(n, n, -1)
        rules["sentence start"] = _column_rule(n, n, 0, first_row=1)
        keys = tgt_in
    else:
        q, k = len(tgt_out), len(src)
        words_out = q - 1 if tgt_out and tgt_out[-1] == "</s>" else q
        words_src = k - 1  # the source always ends in </s>
        diagonal, anti = np.zeros((q, k)), np.zeros((q, k))
        for i in range(min(words_out, words_src)):
            diagonal[i, i] = 1
            anti[i, words_src - 1 - i] = 1
        rules["diagonal"] = (diagonal, diagonal.sum(-1) > 0)
        rules["anti-diagonal"] = (anti, anti.sum(-1) > 0)
        rules["sentence end"] = _column_rule(q, k, k - 1)
        anchors = np.zeros((q, k))
        source_text = [_plain(p) for p in src]
        output_text = [_plain(p) for p in tgt_out]
        for i, (piece, text) in enumerate(zip(tgt_out, output_text, strict=True)):
            if piece in SPECIAL or is_punctuation(piece) or not text or output_text.count(text) != 1:
                continue
            if source_text.count(text) == 1:
                anchors[i, source_text.index(text)] = 1
        rules["alignment"] = (anchors, anchors.sum(-1) > 0)
        keys = src
    q = len(tgt_out) if family == "cross" else len(keys)
    known_punct = s.target_input_punctuation if family == "dec" else s.source_punctuation
    punct = known_punct if known_punct is not None else [is_punctuation(p) for p in keys]
    rules["punctuation"] = _keys_rule(q, np.array(punct, dtype=bool))
    known_rare = s.target_input_rare if family == "dec" else s.source_rare
    rare = np.array(known_rare, dtype=bool) if known_rare is not None else rare_pieces(keys)
    rules["rare words"] = _keys_rule(q, rare)
    return rules


def _queries(family: str, s: SentencePieces) -> list[str]:
    return s.source if family == "enc" else (s.target_input if family == "dec" else s.target_output)


def _keys(family: str, s: SentencePieces) -> list[str]:
    return s.target_input if family == "dec" else s.source


def head_roles(
    sentences: Sequence[SentencePieces],
    families: Sequence[str] = ("enc", "dec", "cross"),
    thresholds: dict[str, float] | None = None,
) -> list[HeadRole]:
    """One `HeadRole` per head of the given families, layer-major, from the sentences' attention."""
    thresholds = {**ROLE_THRESHOLDS, **(thresholds or {})}
    result = []
    for family in families:
        mass: dict[str, np.ndarray] = {}
        rows: dict[str, float] = {}
        per_sentence: dict[str, list[np.ndarray]] = {}  # role -> per sentence (L, H) share, NaN when n/a
        for s in sentences:
            w = np.asarray(s.attention.family(FAMILY_FIELDS[family]), dtype=np.float64)  # (L, H, q, k)
            for role, (target, valid) in _rules(family, s).items():
                assert target.shape == w.shape[-2:], f"{role}: rule {target.shape} vs attention {w.shape}"
                # Voita et al. (2019): a query follows the rule when its strongest key is where the rule points.
                share = np.take_along_axis(np.broadcast_to(target, w.shape), w.argmax(-1)[..., None], -1)[..., 0]
                counted = valid.sum()
                mass[role] = mass.get(role, 0.0) + (share * valid).sum(-1)
                rows[role] = rows.get(role, 0.0) + counted
                per = (share * valid).sum(-1) / counted if counted else np.full(w.shape[:2], np.nan)
                per_sentence.setdefault(role, []).append(per)
        if not mass:
            continue
        layers, heads = next(iter(mass.values())).shape
        for layer in range(layers):
            for head in range(heads):
                scores = {role: float(mass[role][layer, head] / rows[role]) for role in mass if rows[role] >= MIN_ROWS}
                role, score = _choose(scores, thresholds)
                examples = _examples(family, role, sentences, per_sentence, layer, head) if role != "mixed" else []
                result.append(HeadRole(head_name(family, layer, head), role, score, scores, examples))
    return result


def _choose(scores: dict[str, float], thresholds: dict[str, float]) -> tuple[str, float]:
    passing = {r: s for r, s in scores.items() if s >= thresholds[r]}
    if not passing:
        return "mixed", max(scores.values(), default=0.0)
    best = max(passing.values())
    positional = {r: s for r, s in passing.items() if r in POSITIONAL_ROLES and s >= best - POSITIONAL_MARGIN}
    chosen = positional or passing
    role = max(chosen, key=lambda r: chosen[r])
    return role, chosen[role]


def _examples(
    family: str,
    role: str,
    sentences: Sequence[SentencePieces],
    per_sentence: dict[str, list[np.ndarray]],
    layer: int,
    head: int,
) -> list[RoleExample]:
    shares = np.array([p[layer, head] for p in per_sentence[role]])
    order = [i for i in np.argsort(-np.nan_to_num(shares, nan=-1.0)) if not np.isnan(shares[i])]
    examples = []
    for index in order[:EXAMPLES_PER_HEAD]:
        s = sentences[index]
        w = np.asarray(s.attention.family(FAMILY_FIELDS[family]), dtype=np.float64)[layer, head]
        target, valid = _rules(family, s)[role]
        queries, keys = _queries(family, s), _keys(family, s)
        followed = w * target
        rows = [r for r in np.argsort(-followed.sum(-1)) if valid[r]][:PAIRS_PER_EXAMPLE]
        pairs = [(queries[r], keys[int(followed[r].argmax())], float(followed[r].max())) for r in sorted(rows)]
        examples.append(RoleExample(s.text or " ".join(s.source), float(shares[index]), pairs))
    return examples


def _rare_words(pieces: Sequence[str]) -> list[bool]:
    rare = rare_pieces(pieces)
    return [bool(rare[group].any()) for group in word_groups(pieces)]


def _punctuation_words(pieces: Sequence[str]) -> list[bool]:
    """A word holds punctuation when one of its pieces is punctuation ("street." is one word)."""
    return [any(is_punctuation(pieces[i]) for i in group) for group in word_groups(pieces)]


def _words(pieces: list[str]) -> tuple[list[str], list[list[int]]]:
    return word_labels(pieces), word_groups(pieces)


def pieces_of(translations: Sequence[Translation], level: str = "word") -> list[SentencePieces]:
    """`explorer.inference.Translation`s translated with_attention=True -> role inputs.

    level "word" (default) merges pieces into words first (`merge_attention_to_words`): a continuation
    piece looking at its own word's first piece is then "self", not "previous token", which is what a
    reader of the sentence means by position. "piece" keeps the pieces the model sees.
    """
    assert level in ("word", "piece"), f"level must be 'word' or 'piece', got {level!r}"
    out = []
    for t in translations:
        assert t.attention is not None, "translate with with_attention=True to measure head roles"
        if level == "piece":
            out.append(
                SentencePieces(t.source_pieces, t.target_input_pieces, t.target_output_pieces, t.attention, t.source)
            )
            continue
        (src, g_src), (tin, g_in), (tout, g_out) = (
            _words(t.source_pieces),
            _words(t.target_input_pieces),
            _words(t.target_output_pieces),
        )
        a = t.attention
        merged = SentenceAttention(
            merge_attention_to_words(a.encoder_self, g_src, g_src),
            merge_attention_to_words(a.decoder_self, g_in, g_in),
            merge_attention_to_words(a.cross, g_out, g_src),
        )
        out.append(
            SentencePieces(
                src,
                tin,
                tout,
                merged,
                t.source,
                _rare_words(t.source_pieces),
                _rare_words(t.target_input_pieces),
                _punctuation_words(t.source_pieces),
                _punctuation_words(t.target_input_pieces),
            )
        )
    return out


def measure_roles(
    model: Transformer, tokenizer: Tokenizer, sentences: Sequence[str], *, level: str = "word", beam_size: int = 1
) -> list[HeadRole]:
    """Translate `sentences` (greedy by default) and give every head its role, with evidence."""
    from explorer.inference import translate

    translations = translate(model, tokenizer, list(sentences), beam_size=beam_size, with_attention=True)
    return head_roles(pieces_of(translations, level))


def roles_table(roles: Sequence[HeadRole]) -> list[dict[str, Any]]:
    """Rows for a table/CSV: head, role, score, the rule, and the best example's pairs."""
    rows = []
    for r in roles:
        example = r.examples[0] if r.examples else None
        rows.append(
            {
                "head": r.name,
                "role": r.role,
                "score": round(r.score, 3),
                "rule": ROLE_RULES[r.role],
                "example": example.sentence if example else "",
                "evidence": "; ".join(f"{q} → {k} ({w:.0%})" for q, k, w in example.pairs) if example else "",
                **{f"score: {role}": round(v, 3) for role, v in r.scores.items()},
            }
        )
    return rows
