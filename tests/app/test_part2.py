"""The positional-encoding, beam-search and step-by-step pages, run through app.py on the fixture checkpoints.

Every number checked here is recomputed independently: the beam page's n-best list against the
`explorer translate --beam --json` command line, the step-by-step softmax row against the model's attention
maps, the positional page's shift error and norms against the engine.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.cli import main as cli_main
from explorer.inference import attention_for, translate
from explorer.text.pieces import shown_pieces
from tests import apptest_helpers as helpers
from tests.apptest_helpers import chart, plotly_array
from ui.model_picker import weights_version

REPO = Path(__file__).resolve().parents[2]
WORDS_SENTENCE = "a small child sees the red dog ."
REVERSE_SENTENCE = "a b c d e f"


def open_page(page: str, model: str, part: str | None = None, **state):
    """The frame switched to pages/`page`.py with checkpoint `model`, on its tab `part` (the Positional page's
    ?pe_part=) where given; `state` seeds widget keys."""
    tab = {} if part is None else {"pe_part": part}
    return helpers.open_page(f"pages/{page}.py", model=model, state=state, **tab)


def table_with(at, column: str):
    found = [d.value for d in at.dataframe if column in d.value.columns]
    assert found, f"no table with a {column!r} column"
    return found[0]


def metric(at, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert len(values) == 1, f"expected one metric {label!r}, found {[m.label for m in at.metric]}"
    return values[0]


# --- positional encoding ---------------------------------------------------------------------------------------


def test_positional_page_shows_the_shift_error_and_model_norms(words_checkpoint):
    at = open_page("positional", "words-fixture", pe_length=60, pe_offset=7, pe_sentence=WORDS_SENTENCE)
    ck = load_checkpoint(words_checkpoint)
    d = ck.config.d_model
    assert any(f"d_model = **{d}**" in m.value for m in at.markdown)
    heatmap = chart(at, "pe_heatmap")
    assert f"60 positions × d_model = {d}" in heatmap["layout"]["title"]["text"]
    assert metric(at, "Shortest wavelength (pair 0)") == "6.28 positions"

    at = open_page("positional", "words-fixture", "similarity", pe_length=60, pe_offset=7)
    error = float(metric(at, "max |PE(pos+k) − PE(pos)·M_k|"))
    assert 0 <= error < 1e-5
    assert at.success and "error" in at.success[0].value
    assert "k = 7" in chart(at, "pe_shift_matrix")["layout"]["title"]["text"]
    # another offset and the cosine/dot switch rerun only their sections, with new numbers
    at.slider(key="pe_offset").set_value(-20).run()
    assert not at.exception
    assert "k = -20" in chart(at, "pe_shift_matrix")["layout"]["title"]["text"]
    assert float(metric(at, "max |PE(pos+k) − PE(pos)·M_k|")) < 1e-5

    at = open_page("positional", "words-fixture", "input", pe_sentence=WORDS_SENTENCE)
    norms = table_with(at, "‖E·√d‖")
    pieces = ck.tokenizer.pieces(ck.tokenizer.encode(WORDS_SENTENCE) + [ck.config.eos_id])
    assert list(norms["token"]) == shown_pieces(pieces)  # as a reader sees them, no "▁"
    ids = ck.tokenizer.encode(WORDS_SENTENCE) + [ck.config.eos_id]
    expected = np.linalg.norm(ck.model.embedding.weight.detach().numpy()[ids], axis=1) * np.sqrt(d)
    np.testing.assert_allclose(norms["‖E·√d‖"], expected, rtol=1e-5)
    np.testing.assert_allclose(norms["‖PE‖"], np.sqrt(d / 2), rtol=1e-5)


def test_positional_page_handles_an_empty_sentence(checkpoint_root):
    at = open_page("positional", "reverse-fixture", "input", pe_sentence="   ")
    assert any("Type a sentence" in i.value for i in at.info)
    assert not at.exception


# --- beam search -----------------------------------------------------------------------------------------------


def cli_nbest(checkpoint: Path, sentence: str, beam: int, alpha: float, capsys) -> dict:
    capsys.readouterr()
    code = cli_main(
        [
            "translate",
            "--checkpoint",
            str(checkpoint),
            "--beam",
            str(beam),
            "--n-best",
            str(beam),
            "--alpha",
            str(alpha),
            "--json",
            sentence,
        ]
    )
    assert code == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(lines) == 1
    return json.loads(lines[0])


@pytest.mark.parametrize(
    "model, sentence, beam, alpha",
    [("words-fixture", WORDS_SENTENCE, 3, 0.6), ("reverse-fixture", REVERSE_SENTENCE, 4, 1.0)],
)
def test_beam_page_nbest_equals_the_command_line(checkpoint_root, capsys, model, sentence, beam, alpha):
    at = open_page("beam", model, beam_sentence=sentence, beam_k=beam, beam_alpha=alpha)
    expected = cli_nbest(checkpoint_root / model, sentence, beam, alpha, capsys)
    shown = table_with(at, "lp(length)")
    assert list(shown["translation"]) == [h["translation"] for h in expected["nbest"]]
    np.testing.assert_allclose(shown["score"], [h["score"] for h in expected["nbest"]], rtol=1e-6)
    np.testing.assert_allclose(shown["log p"], [h["log_prob"] for h in expected["nbest"]], rtol=1e-6)
    assert shown["score"].is_monotonic_decreasing or not shown["finished"].all()
    # the beam's best is shown as the translation, greedy beside it
    ck = load_checkpoint(checkpoint_root / model)
    greedy = translate(ck.model, ck.tokenizer, [sentence])[0]
    headings = [m.value.removeprefix("## ").replace("\\", "") for m in at.markdown if m.value.startswith("## ")]
    assert headings[:2] == [expected["translation"] or "(empty)", greedy.output or "(empty)"]
    tree = chart(at, "beam_tree")
    assert f"beam size {beam}, α = {alpha:g}" in tree["layout"]["title"]["text"]


def test_beam_page_walks_steps_and_shows_a_hypothesis_attention(words_checkpoint):
    at = open_page("beam", "words-fixture", beam_sentence=WORDS_SENTENCE, beam_k=3)
    steps = at.slider(key="beam_step")
    n_steps = int(steps.max)
    assert steps.value == n_steps and n_steps >= 2
    assert "stopped:" in chart(at, "beam_tree")["layout"]["title"]["text"]
    steps.set_value(1).run()
    assert not at.exception
    assert f"step 1 of {n_steps}" in chart(at, "beam_tree")["layout"]["title"]["text"]
    step_table = table_with(at, "log p(prefix + token)")
    assert list(step_table["prefix"]) == ["<s>"] * len(step_table) and len(step_table) == 6  # 2k candidates

    ck = load_checkpoint(words_checkpoint)
    result = translate(ck.model, ck.tokenizer, [WORDS_SENTENCE], beam_size=3, n_best=3)[0]
    second = result.nbest[1]
    at.selectbox(key="beam_hyp").set_value(1).run()
    assert not at.exception
    heat = chart(at, "beam_attention")
    pieces = shown_pieces(ck.tokenizer.pieces(second.tokens))  # as a reader sees them, no "▁"
    assert [t.replace("&lt;", "<").replace("&gt;", ">") for t in heat["layout"]["yaxis"]["ticktext"]] == pieces
    # The page opens on the last layer, as Translate does.
    reference = attention_for(ck.model, [result.source_ids], [list(second.tokens)])[0].cross[-1].mean(axis=0)
    np.testing.assert_allclose(plotly_array(heat["data"][0]["z"]), reference, atol=1e-5)


def test_beam_page_node_picked_in_the_tree_drives_the_attention(words_checkpoint):
    """Clicking a tree node stores its id (the on_select callback); the attention then follows that node."""
    from explorer.analysis.beam import node_tokens

    ck = load_checkpoint(words_checkpoint)
    result = translate(ck.model, ck.tokenizer, [WORDS_SENTENCE], beam_size=2, n_best=2, with_trace=True)[0]
    tokens = node_tokens(result.trace)
    node = next(c.id for c in result.trace.steps[1].candidates if c.status == "pruned")
    search = (str(words_checkpoint), weights_version(str(words_checkpoint)), WORDS_SENTENCE, 2, 0.6, 50)
    at = open_page("beam", "words-fixture", beam_sentence=WORDS_SENTENCE, beam_k=2, beam_picked_node=(search, node))
    heat = chart(at, "beam_attention")
    assert len(heat["layout"]["yaxis"]["ticktext"]) == len(tokens[node]) == 2
    assert any("node picked in the tree" in c.value for c in at.caption)
    # the same node id clicked in another search (another beam size) is not applied to this one
    at = open_page("beam", "words-fixture", beam_sentence=WORDS_SENTENCE, beam_k=3, beam_picked_node=(search, node))
    assert not any("node picked in the tree" in c.value for c in at.caption)
    assert len(chart(at, "beam_attention")["layout"]["yaxis"]["ticktext"]) > 2


# --- attention step by step -------------------------------------------------------------------------------------


def open_step_page(family: str, layer: int, head: int, query: int):
    """Step by step on the words fixture, following `query` of head `head` in `layer` of `family`."""
    return open_page(
        "step_by_step",
        "words-fixture",
        sbs_sentence=WORDS_SENTENCE,
        sbs_family=family,
        sbs_layer=layer,
        sbs_head=head,
        sbs_query=query,
    )


@pytest.mark.parametrize(
    "family, layer, head, query", [("decoder_self", 2, 2, 3), ("cross", 1, 1, 2), ("encoder_self", 2, 1, 4)]
)
def test_step_by_step_softmax_row_is_the_models_attention(words_checkpoint, family, layer, head, query):
    at = open_step_page(family, layer, head, query)
    ck = load_checkpoint(words_checkpoint)
    t = translate(ck.model, ck.tokenizer, [WORDS_SENTENCE], with_attention=True)[0]
    expected = t.attention.family(family)[layer - 1, head - 1, query]
    stages = table_with(at, "softmax")
    np.testing.assert_allclose(stages["softmax"], expected, atol=1e-6)
    keys = t.target_input_pieces if family == "decoder_self" else t.source_pieces
    assert list(stages["key"]) == shown_pieces(keys)  # as a reader sees them, no "▁"
    d_k = ck.config.d_model // ck.config.n_heads
    np.testing.assert_allclose(stages["÷ √d_k"], stages["q·k"] / np.sqrt(d_k), rtol=1e-5)
    masked = [m == "masked (−∞)" for m in stages["mask"]]
    if family == "decoder_self":
        assert masked == [j > query for j in range(len(keys))]
        assert (stages["softmax"][query + 1 :] == 0).all()
    else:
        assert not any(masked)
    drawn = helpers.chart_keys(at)
    assert "why" not in drawn
    assert not any(key.startswith("sbs_demo") for key in drawn), "the √d_k tab is drawn only when opened"
    assert not any(key.startswith(("sbs_weighted", "sbs_heads", "sbs_output")) for key in drawn), "Eq. 1's 2nd tab"
    state = dict(sbs_sentence=WORDS_SENTENCE, sbs_family=family, sbs_layer=layer, sbs_head=head, sbs_query=query)
    output = helpers.open_page("pages/step_by_step.py", model="words-fixture", state=state, sbs_part="output")
    assert output.success and "match the model's own" in output.success[0].value


def test_step_by_step_demo_numbers_follow_the_sliders(words_checkpoint):
    state = {"sbs_sentence": WORDS_SENTENCE, "sbs_demo_dk": 256}
    at = helpers.open_page("pages/step_by_step.py", model="words-fixture", state=state, sbs_part="scaling")
    assert chart(at, "sbs_demo_curves")["data"]
    variance = float(metric(at, "Var(q·k)"))
    assert 200 < variance < 320  # Var(q·k) ≈ d_k
    at.select_slider(key="sbs_demo_dk").set_value(4).run()
    assert not at.exception
    assert 3 < float(metric(at, "Var(q·k)")) < 5
    demo = table_with(at, "Var ÷√d")
    assert list(demo["d_k"])[:3] == [1, 2, 4]
    np.testing.assert_allclose(demo["Var ÷√d"], 1.0, atol=0.2)


def test_positional_page_shows_learned_positions_beside_the_sinusoids(words_checkpoint, tmp_path):
    """A checkpoint with learned position embeddings (Table 3, row E), uploaded in the sidebar."""
    import torch

    from explorer.checkpoint import save_checkpoint
    from explorer.model.transformer import Transformer

    words = load_checkpoint(words_checkpoint)
    torch.manual_seed(0)
    model = Transformer(words.config.replace(positional="learned", max_len=40)).eval()
    save_checkpoint(tmp_path / "learned", model, words.tokenizer, metadata={"fixture": "words"})
    at = open_page("positional", "words-fixture", pe_length=60, pe_sentence=WORDS_SENTENCE)
    helpers.upload_checkpoint(at, tmp_path / "learned")
    assert at.selectbox(key="model").value.startswith("uploaded: ")
    assert any("**learned** position embeddings" in m.value for m in at.markdown)
    side = chart(at, "pe_side_by_side")
    assert [a["text"] for a in side["layout"]["annotations"]][:2] == ["sinusoidal (Section 3.5)", "learned"]
    learned = plotly_array(side["data"][1]["z"])
    assert learned.shape == (40, words.config.d_model)  # cut at the model's 40 positions
    np.testing.assert_allclose(learned, model.source_positions.weight.detach().numpy(), atol=1e-6)
    # The other tabs, in the same session (the uploaded model stays chosen): the tab is in the URL.
    at.query_params["pe_part"] = "similarity"
    at.run()
    assert not at.exception
    assert chart(at, "pe_learned_similarity")["data"]
    at.query_params["pe_part"] = "input"
    at.run()
    assert not at.exception
    norms = table_with(at, "‖PE‖")
    ids = words.tokenizer.encode(WORDS_SENTENCE) + [words.config.eos_id]
    expected = np.linalg.norm(model.source_positions.weight.detach().numpy()[: len(ids)], axis=1)
    np.testing.assert_allclose(norms["‖PE‖"], expected, rtol=1e-5)


@pytest.mark.parametrize("family, layer, head, query", [("cross", 2, 2, 2), ("decoder_self", 1, 1, 3)])
def test_step_by_step_shows_the_heads_q_k_and_v(words_checkpoint, family, layer, head, query):
    """q, K and V are tables since they held the tab's figures back as heat maps (explorer/figures/matrix_table.py):
    the same numbers (first 8 dimensions, 2 decimals) and token labels as the heat maps showed."""
    from explorer.analysis.step_by_step import head_steps, inspect_translation

    at = open_step_page(family, layer, head, query)
    ck = load_checkpoint(words_checkpoint)
    translation = translate(ck.model, ck.tokenizer, [WORDS_SENTENCE], with_attention=True)[0]
    steps = head_steps(inspect_translation(ck.model, translation, family, layer - 1), head - 1, query)
    tables = helpers.matrix_tables(at)
    keys = shown_pieces(translation.target_input_pieces if family == "decoder_self" else translation.source_pieces)
    queries = shown_pieces(
        translation.target_input_pieces if family == "decoder_self" else translation.target_output_pieces
    )
    for name, expected, rows in (
        ("q", steps.q[None, :8], [queries[query]]),
        ("K", steps.keys[:, :8], keys),
        ("V", steps.values[:, :8], keys),
    ):
        columns, labels, shown = tables[name]
        assert columns == [str(i) for i in range(8)] and labels == rows, name
        np.testing.assert_allclose(shown, expected, atol=0.005 + 1e-9, err_msg=name)
