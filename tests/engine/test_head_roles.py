"""Head roles with evidence: hand-made attention patterns get the right role; the shipped toy-reverse model's
anti-diagonal cross-attention and a positional encoder head of the Multi30k model are found."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.analysis.roles import (
    ROLE_RULES,
    ROLE_THRESHOLDS,
    SentencePieces,
    head_roles,
    is_punctuation,
    measure_roles,
    rare_pieces,
    roles_table,
)
from explorer.model import SentenceAttention

ROOT = Path(__file__).resolve().parents[2]


def sentence(enc_heads: list[np.ndarray], n: int = 6) -> SentencePieces:
    """A source of n pieces (ending in </s>), and a tiny decoder side; encoder heads given per head."""
    source = ["▁a", "▁big", "▁dog", "▁runs", "▁.", "</s>"][-n:]
    target_in, target_out = ["<s>", "▁x", "▁y"], ["▁x", "▁y", "</s>"]
    enc = np.stack(enc_heads)[None]  # (1, H, n, n)
    dec = np.tile(np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None], (1, len(enc_heads), 1, 1))
    cross = np.full((1, len(enc_heads), 3, n), 1 / n)
    return SentencePieces(source, target_in, target_out, SentenceAttention(enc, dec, cross), " ".join(source))


def test_hand_made_heads_get_their_roles():
    n = 6
    previous = np.eye(n, k=-1)
    previous[0, 0] = 1  # the first token has no previous one
    uniform = np.full((n, n), 1 / n)
    end = np.zeros((n, n))
    end[:, -1] = 1
    punct = np.zeros((n, n))
    punct[:, 4] = 1  # "▁." is punctuation
    roles = head_roles([sentence([previous, uniform, end, punct])] * 2, families=["enc"])
    assert [r.name for r in roles] == ["enc.0.0", "enc.0.1", "enc.0.2", "enc.0.3"]
    assert [r.role for r in roles] == ["previous token", "mixed", "sentence end", "punctuation"]
    assert roles[0].score == pytest.approx(1.0)
    example = roles[0].examples[0]
    assert ("▁big", "▁a", 1.0) in example.pairs and ("▁dog", "▁big", 1.0) in example.pairs
    assert roles[1].examples == [], "a mixed head has no rule to show evidence for"


def test_threshold_decides_between_role_and_mixed():
    n = 6
    # Rows 0-2 look at the next token, rows 3-4 at the previous one, </s> spreads evenly: next token 3 of 5.
    half = np.vstack([np.eye(n, k=1)[:3], np.eye(n, k=-1)[3:5], np.full((1, n), 1 / n)])
    role = head_roles([sentence([half])], families=["enc"])[0]
    assert (role.role, role.score) == ("next token", pytest.approx(0.6))
    higher = {"next token": 0.7}
    assert head_roles([sentence([half])], families=["enc"], thresholds=higher)[0].role == "mixed"
    assert set(ROLE_RULES) >= set(ROLE_THRESHOLDS) | {"mixed"}


def test_pieces_helpers():
    assert is_punctuation("▁.") and is_punctuation(",") and not is_punctuation("</s>") and not is_punctuation("▁a")
    assert rare_pieces(["▁Ein", "▁Hund", "e", "▁läuft", "."]).tolist() == [False, True, True, False, False]


def test_toy_reverse_shows_its_anti_diagonal_heads(one_torch_thread):
    from explorer.checkpoint import load_checkpoint
    from explorer.data import make_splits

    loaded = load_checkpoint(ROOT / "checkpoints" / "toy-reverse")
    _, val = make_splits("reverse", 1, 30, 0)
    roles = {r.name: r for r in measure_roles(loaded.model, loaded.tokenizer, val.source)}
    # The model card: all four heads of decoder layer 2 are exact anti-diagonals.
    for head in range(4):
        role = roles[f"cross.1.{head}"]
        assert role.role == "anti-diagonal" and role.score > 0.9, role
        assert role.examples and all(q == k for q, k, _ in role.examples[0].pairs), "reversal copies each symbol"
    rows = roles_table(list(roles.values()))
    assert rows[0]["head"] == "enc.0.0" and "score: self" in rows[0]


def test_multi30k_has_a_positional_encoder_head(multi30k_root, one_torch_thread):
    from explorer.checkpoint import load_checkpoint
    from explorer.data import load_multi30k

    loaded = load_checkpoint(ROOT / "checkpoints" / "multi30k-en-de")
    sources = load_multi30k("val", multi30k_root).source[:60]
    roles = measure_roles(loaded.model, loaded.tokenizer, sources)
    positional = [r for r in roles if r.name.startswith("enc.") and r.role in ("previous token", "next token")]
    assert positional, [(r.name, r.role, round(r.score, 2)) for r in roles if r.name.startswith("enc.")]
    assert any(r.role == "alignment" for r in roles if r.name.startswith("cross."))
