"""The heads page: untick heads in the grid and the translation is re-decoded without them (changed words
marked, the mask in the URL); the importance tab shows a shipped table without computing anything."""

from __future__ import annotations

import threading

import numpy as np

from explorer.analysis.importance import (
    SHIPPED_FILE,
    HeadScore,
    ImportanceSettings,
    ImportanceTable,
    PruningStep,
    checkpoint_hash,
)
from explorer.checkpoint import read_config
from explorer.model.head_mask import all_head_names
from tests.apptest_helpers import chart, charts, open_page, plotly_array, query_value
from ui.markdown import md_escape

PAGE = "pages/heads.py"
SENTENCE = "a b c d e f g"


def translations(at) -> list[str]:
    """The two '###' translations: every head on, then with heads off."""
    return [m.value.removeprefix("### ") for m in at.main.markdown if m.value.startswith("### ")]


def table_with(at, column: str):
    """The one dataframe on the page that has `column`."""
    (found,) = [d.value for d in at.dataframe if column in d.value.columns]
    return found


def test_unticking_heads_changes_the_translation_and_the_link(checkpoint_root, one_torch_thread):
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE)
    before = translations(at)
    assert len(before) == 2 and before[0] == before[1], "nothing switched off yet"
    assert query_value(at, "heads") is None
    for name in ("hm_cross_0_0", "hm_cross_0_1", "hm_cross_1_0", "hm_cross_1_1"):
        at.checkbox(key=name).uncheck()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    original, ablated = translations(at)
    assert original == before[0]
    # Changed words are marked: replaced or added ones highlighted, dropped ones struck through.
    assert ablated != original
    assert ":orange-background[" in ablated or ":gray[~~" in ablated, ablated
    assert query_value(at, "heads") == "cross.0.0,cross.0.1,cross.1.0,cross.1.1"
    assert any("4 heads off" in c.value for c in at.caption)
    # Every head of the chosen layer is off: said in words, not drawn as empty panels.
    assert any("is switched off" in i.value for i in at.info), [i.value for i in at.info]
    assert not charts(at, "heads_remaining")


def test_a_link_switches_heads_off_and_a_bad_one_says_why(checkpoint_root, one_torch_thread):
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, heads="enc.1.0")
    assert at.checkbox(key="hm_enc_1_0").value is False
    assert at.checkbox(key="hm_enc_1_1").value is True
    bad = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, heads="cross.7.0")
    warnings = " ".join(w.value for w in bad.warning)
    assert md_escape("cross.7.0") in warnings and md_escape("enc.0-1.0-1, dec.0-1.0-1, cross.0-1.0-1") in warnings


def test_importance_tab_shows_the_shipped_table_without_computing(
    checkpoint_root, one_torch_thread, tmp_path, monkeypatch
):
    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path))  # an empty cache: only the shipped file can answer
    folder = checkpoint_root / "words-fixture"
    config, _ = read_config(folder)
    names = all_head_names(config)
    heads = [HeadScore(name, 40.0 - i, float(i), 0.1 * i, 0.05 * i) for i, name in enumerate(names)]
    pruning = {"cross": [PruningStep(0, "", 40.0), PruningStep(1, "cross.0.0", 38.5)]}
    table = ImportanceTable(checkpoint_hash(folder), ImportanceSettings(sentences=7), 40.0, "sig", heads, pruning)
    (folder / SHIPPED_FILE).write_text(table.to_json())
    try:
        at = open_page(PAGE, model="words-fixture", h_sentence="a dog sees the man .", h_view="importance")
        assert not [t for t in threading.enumerate() if t.name == "head-importance"], "nothing was computed"
        assert not [b for b in at.button if b.key == "heads_importance_start"]
        shown = table_with(at, "BLEU drop")
        assert len(shown) == len(names) and shown.iloc[3, 2] == 3.0
        heat = chart(at, "heads_importance")
        assert [trace["meta"]["family"] for trace in heat["data"]] == ["enc", "dec", "cross"]
        curve = chart(at, "heads_pruning")
        assert list(plotly_array(curve["data"][0]["y"])) == [40.0, 38.5]
        assert any("on 7 validation sentences" in c.value for c in at.caption)
        # One view runs at a time: the rollout and roles views are not drawn until chosen.
        assert not charts(at, "heads_rollout") and not charts(at, "heads_remaining")
        at.segmented_control(key="h_view").set_value("flow").run()
        assert chart(at, "heads_rollout")["data"][0]["name"] == "rollout"
        assert not charts(at, "heads_importance")
        at.segmented_control(key="h_view").set_value("roles").run()
        assert len(table_with(at, "evidence")) == len(names)
    finally:
        (folder / SHIPPED_FILE).unlink()


def test_without_a_table_the_tab_offers_a_background_run(checkpoint_root, one_torch_thread, tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path))
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, h_view="importance")
    assert [b for b in at.button if b.key == "heads_importance_start"]
    assert any("No importance table" in i.value for i in at.info)


def test_an_idle_importance_tab_polls_nothing(checkpoint_root, one_torch_thread, tmp_path, monkeypatch):
    """The progress fragment reruns every 3 s: only while a run goes, not on every Heads page without a table."""
    import ui.heads.importance as importance

    polled: list[object] = []
    monkeypatch.setattr(importance, "_progress", polled.append)
    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path))
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE, h_view="importance")
    assert [b for b in at.button if b.key == "heads_importance_start"] and not polled


def test_replay_plays_the_snapshots_with_the_step_marked(checkpoint_root, one_torch_thread):
    from explorer.training.callbacks import SampleTranslation
    from explorer.training.snapshots import SNAPSHOT_JSON, SNAPSHOT_NPZ, AttentionSnapshot, save_snapshots

    folder = checkpoint_root / "words-fixture"
    config, _ = read_config(folder)
    shape = (config.n_decoder_layers, config.n_heads, 3, 4)
    early, late = np.full(shape, 0.25), np.zeros(shape)
    late[..., [0, 1, 2], [1, 2, 3]] = 1.0
    sample = lambda w: SampleTranslation(  # noqa: E731
        "a dog",
        "ein Hund",
        ["▁a", "▁dog", ".", "</s>"],
        ["▁ein", "▁Hund", "</s>"],
        w,
    )
    save_snapshots(folder, [AttentionSnapshot(10, (sample(early),)), AttentionSnapshot(200, (sample(late),))])
    try:
        at = open_page(PAGE, model="words-fixture", h_sentence="a dog sees the man .", h_view="replay")
        frame = chart(at, "heads_replay")
        assert frame["data"][0]["meta"]["step"] == 200, "opens on the last snapshot"
        assert np.array_equal(plotly_array(frame["data"][0]["z"]), late[-1, 0])
        at.select_slider(key="hr_step").set_value(10).run()
        frame = chart(at, "heads_replay")
        assert frame["data"][0]["meta"]["step"] == 10
        assert np.allclose(plotly_array(frame["data"][0]["z"]), 0.25)
        assert frame["layout"]["shapes"][0]["x0"] == 10, "the loss curve marks the step"
    finally:
        (folder / SNAPSHOT_NPZ).unlink()
        (folder / SNAPSHOT_JSON).unlink()


# --- numbering: the page counts layers and heads from 1 like every other page --------------------------


def test_the_grid_and_the_figure_count_layers_and_heads_from_one(checkpoint_root, one_torch_thread):
    at = open_page(PAGE, model="reverse-fixture", h_sentence=SENTENCE)
    config, _ = read_config(checkpoint_root / "reverse-fixture")
    assert [at.checkbox(key=f"hm_cross_0_{h}").label for h in range(config.n_heads)] == [
        str(h + 1) for h in range(config.n_heads)
    ]
    rows = [c.value for c in at.caption if c.value.startswith("Layer ")]
    assert rows[: config.n_decoder_layers] == [f"Layer {n + 1}" for n in range(config.n_decoder_layers)], rows
    # The remaining heads of the layer picked (the last, by default) are titled 1-based too.
    figure = chart(at, "heads_remaining")
    assert f"layer {config.n_decoder_layers}," in figure["layout"]["title"]["text"]
    subplot_titles = [note["text"] for note in figure["layout"]["annotations"]]
    assert subplot_titles == [f"Head {h + 1}" for h in range(config.n_heads)]
    # Where 0-based names (links, the command line) sit beside 1-based labels, a caption says which is which.
    at.checkbox(key="hm_cross_1_0").uncheck().run()
    captions = " ".join(c.value for c in at.caption)
    assert "cross.1.0" in captions and "layer 2, head 1" in captions, captions


def test_importance_and_replay_count_from_one(checkpoint_root, one_torch_thread, tmp_path, monkeypatch):
    from explorer.training.callbacks import SampleTranslation
    from explorer.training.snapshots import SNAPSHOT_JSON, SNAPSHOT_NPZ, AttentionSnapshot, save_snapshots

    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path))
    folder = checkpoint_root / "words-fixture"
    config, _ = read_config(folder)
    names = all_head_names(config)
    heads = [HeadScore(name, 40.0 - i, float(i), 0.1 * i, 0.05 * i) for i, name in enumerate(names)]
    table = ImportanceTable(checkpoint_hash(folder), ImportanceSettings(sentences=7), 40.0, "sig", heads, {})
    (folder / SHIPPED_FILE).write_text(table.to_json())
    shape = (config.n_decoder_layers, config.n_heads, 3, 4)
    pieces = (["▁a", "▁dog", ".", "</s>"], ["▁ein", "▁Hund", "</s>"])
    sample = SampleTranslation("a dog", "ein Hund", *pieces, np.ones(shape))
    save_snapshots(folder, [AttentionSnapshot(10, (sample,))])
    try:
        at = open_page(PAGE, model="words-fixture", h_sentence="a dog sees the man .", h_view="importance")
        heat = chart(at, "heads_importance")
        for name in ("xaxis", "yaxis"):
            assert heat["layout"][name]["ticktext"][0] == "1", heat["layout"][name]
        note = f"`cross.{config.n_decoder_layers - 1}.0` is layer {config.n_decoder_layers}, head 1"
        assert any("from 0" in c.value and note in c.value for c in at.caption), "the table's names explained"
        at.segmented_control(key="h_view").set_value("replay").run()
        assert query_value(at, "h_view") == "replay", "the view is kept in the link"
        layer = at.selectbox(key="hr_layer")
        assert layer.options == [str(n + 1) for n in range(config.n_decoder_layers)]
        assert at.selectbox(key="hr_head").options == [str(h + 1) for h in range(config.n_heads)]
        title = chart(at, "heads_replay")["layout"]["title"]["text"]
        assert f"layer {config.n_decoder_layers}" in title and "head 1" in title, title
    finally:
        for file in (SHIPPED_FILE, SNAPSHOT_NPZ, SNAPSHOT_JSON):
            (folder / file).unlink()
