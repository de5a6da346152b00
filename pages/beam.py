"""Beam search (Section 6.1): the search as a tree, step by step, the n-best list beside greedy decoding, and the
cross-attention of any hypothesis."""

from __future__ import annotations

from functools import partial

import streamlit as st

from explorer.analysis.beam import nbest_rows, node_tokens, step_rows
from explorer.analysis.words import average_heads
from explorer.figures.attention import attention_heatmap
from explorer.figures.beam_tree import beam_tree_figure
from explorer.inference import EXTRA_OUTPUT_TOKENS, attention_for
from explorer.model.transformer import SentenceAttention
from ui.figures import show_figure
from ui.state import load_model, require_model, translate_for
from ui.translate_view import md_escape, number_picker, sentence_input, show_translation
from ui.urlstate import sync_to_url, url_default
from ui.frame import ensure_frame

ensure_frame()

TREE_KEY = "beam_tree"
PICKED_NODE = "beam_picked_node"  # node id clicked in the tree; None: follow the n-best selectbox
ALPHAS = [round(0.1 * i, 1) for i in range(21)]


@st.cache_data(show_spinner=False, max_entries=128)
def hypothesis_attention(path: str, device: str, version: float, source_ids: tuple[int, ...],
                         tokens: tuple[int, ...]) -> SentenceAttention:
    """Cross-attention (and the rest) of one hypothesis, by a teacher-forced pass over its tokens."""
    return attention_for(load_model(path, device, version).model, [list(source_ids)], [list(tokens)])[0]


def remember_tree_click(search: tuple) -> None:
    """on_select of the tree: keep the clicked node's id with the search it belongs to (ids restart at 0
    in every search, so a node is only looked up in the search it was clicked in)."""
    points = st.session_state[TREE_KEY].selection.get("points", [])
    st.session_state[PICKED_NODE] = (search, int(points[0]["customdata"][0])) if points else None


def forget_tree_click() -> None:
    st.session_state[PICKED_NODE] = None


def picked_node(search: tuple) -> int | None:
    picked = st.session_state.get(PICKED_NODE)
    return picked[1] if picked is not None and picked[0] == search else None


selection, checkpoint = require_model()
config, tokenizer = checkpoint.config, checkpoint.tokenizer

st.title("Beam search")
st.markdown(
    "Greedy decoding keeps the single most probable next token. Beam search keeps the **k** best partial "
    "translations at every step, extends each by every token, ranks the 2k best continuations by total "
    "log-probability and keeps k of them; a continuation ending in </s> is set aside as finished. The paper "
    "used k = 4, a length penalty α = 0.6 and a maximum output length of input length + 50 (Section 6.1). "
    "Finished hypotheses are ranked by their length-normalised score (GNMT's penalty):"
)
st.latex(r"\mathrm{score}(Y) = \frac{\log P(Y \mid X)}{lp(Y)}, \qquad lp(Y) = \left(\frac{5 + |Y|}{6}\right)^{\alpha}")

sentence = sentence_input("beam_sentence", checkpoint.metadata)
left, middle, right = st.columns(3)
url_default("beam_k", 4, int, allowed=range(1, 11))
url_default("beam_alpha", 0.6, lambda raw: round(float(raw), 1), allowed=ALPHAS)
url_default("beam_extra", EXTRA_OUTPUT_TOKENS, int, allowed=range(1, 201))
beam_size = left.slider("Beam size k", min_value=1, max_value=10, key="beam_k", on_change=forget_tree_click)
alpha = middle.slider("Length penalty α", min_value=0.0, max_value=2.0, step=0.1, key="beam_alpha",
                      on_change=forget_tree_click, help="0: no normalisation (favours short outputs).")
extra = right.slider("Maximum length: input length +", min_value=1, max_value=200, key="beam_extra",
                     on_change=forget_tree_click,
                     help=f"Tokens beyond the input's length; also capped by the model's {config.max_len} positions.")
sync_to_url("beam_sentence", "beam_k", "beam_alpha", "beam_extra")
if not sentence:
    st.info("Type a sentence to run the search.")
    st.stop()

beam = translate_for(selection, [sentence], beam_size=beam_size, alpha=alpha, with_attention=False, with_trace=True,
                     n_best=beam_size, max_extra_tokens=extra)[0]
greedy = translate_for(selection, [sentence], beam_size=1, alpha=alpha, with_attention=False,
                       max_extra_tokens=extra)[0]
trace = beam.trace
assert trace is not None, "translate(with_trace=True) returns the trace"

left, right = st.columns(2)
with left:
    show_translation(beam, config.max_len, how=f"beam search, k = {beam_size}, α = {alpha:g}")
with right:
    show_translation(greedy, config.max_len, how="greedy search (k = 1), for comparison")
if beam.output_ids == greedy.output_ids:
    st.caption("Here beam search finds the same output as greedy decoding.")
else:
    st.caption(f"Beam search found a different output: log-probability {beam.log_prob:.3f} against greedy's "
               f"{greedy.log_prob:.3f}.")

# ---- the tree ------------------------------------------------------------------------------------------
st.header("The search, step by step")
last = len(trace.steps) - 1  # steps are 0-based in the trace, 1-based on screen
url_default("beam_step", last + 1, int, allowed=range(1, last + 2))
if last > 0:
    upto = st.slider("Show steps up to", min_value=1, max_value=last + 1, key="beam_step",
                     help="Walk through the search one decoding step at a time.") - 1
else:
    upto = 0
sync_to_url("beam_step")

hypotheses = beam.nbest
rows = nbest_rows(hypotheses, tokenizer, alpha)
url_default("beam_hyp", 0, int, allowed=range(len(rows)))
tokens_of = node_tokens(trace)
search = (selection.path, selection.version, sentence, beam_size, alpha, extra)
picked = picked_node(search)
if picked is not None and picked in tokens_of:
    chosen_tokens = tokens_of[picked]
else:
    chosen_tokens = tuple(hypotheses[st.session_state["beam_hyp"]].tokens)

figure = beam_tree_figure(trace, lambda token: tokenizer.pieces([token])[0], upto_step=upto,
                          highlight=chosen_tokens)
show_figure(figure, f"Beam search tree k={beam_size}", key=TREE_KEY, on_select=partial(remember_tree_click, search))
st.caption("Click a node to see that (partial) hypothesis' cross-attention below; hover for log-probabilities. "
           "Blue: kept in the beam; grey: pruned; green stars: finished with </s>.")

st.subheader(f"Step {upto + 1}: the {len(trace.steps[upto].candidates)} best continuations")
st.dataframe(step_rows(trace, upto, tokenizer), hide_index=True, width="stretch", key="beam_step_table",
             column_config={name: st.column_config.NumberColumn(format="%.3f")
                            for name in ("log p(token)", "log p(prefix + token)", "score")})
if upto == last and trace.stop_reason:
    st.caption(f"The search stopped after step {last + 1}: {trace.stop_reason}.")

# ---- n-best ---------------------------------------------------------------------------------------------
st.header(f"The {len(rows)}-best list")
st.dataframe(rows, hide_index=True, width="stretch", key="beam_nbest",
             column_config={name: st.column_config.NumberColumn(format="%.4f")
                            for name in ("log p", "lp(length)", "score")})

# ---- attention of a hypothesis ----------------------------------------------------------------------------
st.header("Cross-attention of a hypothesis")
st.selectbox("Hypothesis", options=list(range(len(rows))), key="beam_hyp", on_change=forget_tree_click,
             format_func=lambda i: f"#{i + 1}: {rows[i]['translation'] or '(empty)'} (score {rows[i]['score']:.3f})")
sync_to_url("beam_hyp")
if picked is not None and picked in tokens_of:
    st.caption(f"Showing the node picked in the tree: {md_escape(' '.join(tokenizer.pieces(chosen_tokens)) or '<s>')}. "
               "Choose a hypothesis above to go back to the n-best list.")
if not chosen_tokens:
    st.info("The start node has produced nothing yet: pick another node.")
    st.stop()
attention = hypothesis_attention(selection.path, selection.device, selection.version, tuple(beam.source_ids),
                                 tuple(chosen_tokens))
left, right = st.columns((1, 1))
with left:
    layer = number_picker("Decoder layer", "beam_layer", config.n_decoder_layers)
with right:
    url_default("beam_head", "mean", allowed=["mean"] + [str(h) for h in range(1, config.n_heads + 1)])
    head = st.segmented_control("Head", ["mean"] + [str(h) for h in range(1, config.n_heads + 1)], key="beam_head",
                                required=True, format_func=lambda h: "mean of heads" if h == "mean" else h)
sync_to_url("beam_layer", "beam_head")
weights = (average_heads(attention.cross)[layer - 1] if head == "mean"
           else attention.cross[layer - 1, int(head) - 1])
which = "mean over heads" if head == "mean" else f"head {head}"
show_figure(attention_heatmap(weights, tokenizer.pieces(chosen_tokens), beam.source_pieces,
                              title=f"Cross-attention · layer {layer} · {which}", zmax=None,
                              x_title="source (key)", y_title="hypothesis token produced (query)"),
            f"Beam hypothesis cross-attention layer {layer} {which}", key="beam_attention")
st.caption("Each row is a token of the hypothesis, each column a source token; colours run up to the largest "
           "weight shown, so faint structure stays visible.")
