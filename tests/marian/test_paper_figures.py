"""The paper's Figures 3–5 on any model: every encoder head ranked by the attention "making" puts on "more
difficult" and "its" on "Law", on the shipped model, on random weights, and on the Heads page in both languages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.analysis.paper_figures import FIGURE3_SENTENCE, FIGURE45_SENTENCE, LINKS, FigureFinding, find_all
from explorer.checkpoint import load_checkpoint
from explorer.marian.importer import import_marian
from explorer.model import Transformer
from tests.apptest_helpers import open_page
from tests.marian.models import build_marian

REPO = Path(__file__).resolve().parents[2]
SHIPPED = "multi30k-en-de"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(REPO / "checkpoints" / SHIPPED)


def check_finding(found: FigureFinding, layers: int, heads: int) -> None:
    """Every head ranked once, best first, by the mass the query word's pieces put on the target words' pieces."""
    assert found.scores.shape == (layers, heads)
    assert len(found.ranked) == layers * heads
    assert len({(h.layer, h.head) for h in found.ranked}) == layers * heads
    scores = [h.score for h in found.ranked]
    assert scores == sorted(scores, reverse=True) and scores[-1] >= 0 and scores[0] <= 1 + 1e-6
    best = found.best
    rows = found.encoder_self[best.layer, best.head][found.query_pieces]
    assert best.score == pytest.approx(rows[:, found.target_pieces].sum(axis=-1).mean())
    assert found.chance == pytest.approx(len(found.target_pieces) / len(found.pieces))
    assert [found.words[i] for i in range(len(found.words)) if found.link.query in found.words[i].lower()]


def test_the_shipped_model_ranks_its_heads_for_both_figures(shipped):
    config = shipped.config
    found = find_all(shipped.model, shipped.tokenizer)
    assert set(found) == {"3", "4-5"}
    for finding in found.values():
        assert isinstance(finding, FigureFinding)
        check_finding(finding, config.n_encoder_layers, config.n_heads)
    assert found["3"].link.sentence == FIGURE3_SENTENCE and found["4-5"].link.sentence == FIGURE45_SENTENCE
    # What the shipped caption model does: its best head for Figure 3 looks from "making" to "difficult".
    assert found["3"].best.hits and found["3"].best.strongest.startswith("difficult")


def test_random_weights_are_ranked_too(shipped):
    torch.manual_seed(0)
    model = Transformer(shipped.config.replace(dropout=0.0)).eval()
    found = find_all(model, shipped.tokenizer)
    for finding in found.values():
        assert isinstance(finding, FigureFinding)
        check_finding(finding, shipped.config.n_encoder_layers, shipped.config.n_heads)
    assert not np.allclose(found["3"].scores, find_all(shipped.model, shipped.tokenizer)["3"].scores)


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory):
    root = tmp_path_factory.mktemp("checkpoints")
    built = build_marian(tmp_path_factory.mktemp("hf") / "hf", seed=2)
    import_marian(built.path, root / "opus-mt-tiny")
    return root


def test_a_model_without_the_words_says_which_are_missing(tiny_marian):
    ck = load_checkpoint(tiny_marian / "opus-mt-tiny")
    found = find_all(ck.model, ck.tokenizer)
    assert "making" in found["3"] and "law" in found["4-5"], found


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_heads_page_shows_the_figures_on_the_shipped_model(lang, monkeypatch):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(REPO / "checkpoints"))
    at = open_page("pages/heads.py", model=SHIPPED, lang=lang, h_view="paper")
    header = {"en": "The paper's Figures 3–5 on this model", "ko": "이 모델에서 본 논문의 그림 3–5"}[lang]
    assert any(h.value == header for h in at.header)
    tables = [d.value for d in at.dataframe if len(d.value.columns) == 5]
    assert tables and len(tables[-1]) == 8
    strongest = {"en": "Strongest link: **layer", "ko": "가장 강한 연결: **레이어"}[lang]
    assert any(m.value.startswith(strongest) for m in at.markdown)
    # Figures 4–5 by the link's ?paper_figure=, as a shared link opens it.
    at = open_page("pages/heads.py", model=SHIPPED, lang=lang, paper_figure=LINKS[1].figure, h_view="paper")
    assert any("its application" in c.value for c in at.caption)
    assert any(m.value.startswith(strongest) for m in at.markdown)


def test_the_heads_page_says_why_a_model_cannot_show_a_figure(tiny_marian, monkeypatch):
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(tiny_marian))
    at = open_page("pages/heads.py", model="opus-mt-tiny", lang="en", h_view="paper")
    assert any("do not form the words" in i.value and "making" in i.value for i in at.info)
