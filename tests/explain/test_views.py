"""The explain page's views under AppTest, on the shipped Multi30k model (3 layers, 4 heads) and on the
words fixture (2 layers, 2 heads): figures built from the live model, tables of every head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.data.multi30k import multi30k_available
from explorer.explain.value_weighted import value_weighted
from explorer.inference import translate
from tests.apptest_helpers import chart, charts, open_page, plotly_array

PAGE = "pages/explain.py"
REPO = Path(__file__).resolve().parents[2]
MODELS = {
    "multi30k-en-de": "A man in a blue shirt is walking his dog down the street.",
    "words-fixture": "a man rides a bicycle .",
}


@pytest.fixture(params=sorted(MODELS))
def model(request, checkpoint_root, monkeypatch) -> tuple[str, Path]:
    name = request.param
    root = REPO / "checkpoints" if name == "multi30k-en-de" else checkpoint_root
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    return name, root / name


@pytest.mark.usefixtures("one_torch_thread")
def test_every_view_runs_on_the_model(model):
    name, folder = model
    sentence = MODELS[name]
    checkpoint = load_checkpoint(folder)
    config = checkpoint.config
    layers, heads = config.n_decoder_layers, config.n_heads
    expected = translate(checkpoint.model, checkpoint.tokenizer, [sentence], with_attention=True)[0]
    explained = value_weighted(checkpoint.model, expected.source_ids, expected.output_ids)

    # Value-weighted beside raw: the default is the cross-attention of the last layer, head 1.
    at = open_page(PAGE, model=name, x_view="values", x_sentence=sentence, x_steps="8")
    panels = chart(at, "explain_values")["data"]
    assert len(panels) == 2
    np.testing.assert_allclose(plotly_array(panels[0]["z"]), expected.attention.cross[-1, 0], atol=1e-5)
    np.testing.assert_allclose(plotly_array(panels[1]["z"]), explained.weighted("cross")[-1, 0], atol=1e-5)
    (sinks,) = at.dataframe
    assert len(sinks.value) == layers * heads

    # Attribution of output token 1 against every kind of attention.
    at.radio(key="x_view").set_value("attribution").run()
    assert not at.exception, [e.message for e in at.exception]
    bars = chart(at, "explain_bars")["data"]
    assert len(bars) == 5 and all(
        len(b["x"] if isinstance(b["x"], list) else plotly_array(b["x"])) == len(expected.source_ids) for b in bars
    )
    grids = chart(at, "explain_agreement")["data"]
    assert [plotly_array(g["z"]).shape for g in grids] == [(layers, heads + 1)] * 2
    (table,) = at.dataframe
    assert len(table.value) == 2 * layers * (heads + 1) + 1
    assert any("integrated gradients must sum to delta" in c.value for c in at.caption)

    # Minimal pairs: the first prepared pair, the heads ranked, the most changed one's two heatmaps.
    at.radio(key="x_view").set_value("pairs").run()
    assert not at.exception, [e.message for e in at.exception]
    total = (config.n_encoder_layers + 2 * config.n_decoder_layers) * heads
    ranked = plotly_array(chart(at, "explain_pair_bars")["data"][0]["x"])
    assert len(ranked) == min(10, total) and (np.diff(ranked) <= 0).all()
    assert len(chart(at, "explain_pair_heads")["data"]) == 2

    # The exercise waits for a guess; ablation meets beam search draws both trees.
    at.radio(key="x_view").set_value("exercise").run()
    assert not at.exception, [e.message for e in at.exception]
    assert not charts(at, "x_reveal") and any("Which source token" in m.value for m in at.markdown)
    at.radio(key="x_view").set_value("beam").run()
    assert not at.exception, [e.message for e in at.exception]
    assert len(charts(at, "x_tree_full")) == len(charts(at, "x_tree_ablated")) == 1

    # Heads as word aligners: AER of every head on 20 test2016 pairs (the shipped model), or why not (the fixture).
    at.radio(key="x_view").set_value("alignment").run()
    assert not at.exception, [e.message for e in at.exception]
    if name == "words-fixture":
        assert any("translates English into German" in i.value for i in at.info)
        return
    if not multi30k_available():
        pytest.skip("Multi30k test2016 not found")
    at.select_slider(key="x_align_n").set_value(20).run()
    grids = chart(at, "explain_alignment")["data"]
    aer = [plotly_array(g["z"]) for g in grids]
    assert [a.shape for a in aer] == [(layers, heads + 1)] * 2 and all(((a >= 0) & (a <= 1)).all() for a in aer)
    assert any("Best aligner: **cross." in m.value for m in at.markdown)
