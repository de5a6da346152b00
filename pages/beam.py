"""Beam search (Section 6.1): the search as a tree, step by step, the n-best list beside greedy decoding, and the
cross-attention of any hypothesis."""

from __future__ import annotations

from functools import partial

import streamlit as st

from explorer.analysis.beam import nbest_rows, node_tokens, step_rows
from explorer.analysis.words import average_heads
from explorer.decoding.search import normalized_score
from explorer.figures.attention import attention_heatmap
from explorer.figures.beam_tree import beam_tree_figure, stop_reason_text
from explorer.inference import EXTRA_OUTPUT_TOKENS, attention_for
from explorer.model.transformer import SentenceAttention
from ui.attention_controls import number_picker, sentence_input, show_translation
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import controls, main_area_px, page_header
from ui.markdown import md_escape
from ui.model_cache import cached, require_model, translate_for
from ui.model_picker import Selection
from ui.urlstate import bound_slider, sync_to_url, url_default

TREE_KEY = "beam_tree"
PICKED_NODE = "beam_picked_node"  # node id clicked in the tree; None: follow the n-best selectbox


def hypothesis_attention(
    selection: Selection, source_ids: tuple[int, ...], tokens: tuple[int, ...]
) -> SentenceAttention:
    """Cross-attention (and the rest) of one hypothesis, by a teacher-forced pass over its tokens."""
    return cached(
        "beam_attention",
        selection,
        (source_ids, tokens),
        lambda ck: attention_for(ck.model, [list(source_ids)], [list(tokens)])[0],
    )


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

page_header(
    t("Beam search"),
    t(
        "Greedy decoding keeps the single most probable next token. Beam search keeps the **k** best partial "
        "translations at every step, extends each by every token, ranks the 2k best continuations by total "
        "log-probability and keeps k of them; a continuation ending in </s> is set aside as finished. The paper "
        "used k = 4, a length penalty α = 0.6 and a maximum output length of input length + 50 (Section 6.1). "
        "Finished hypotheses are ranked by their length-normalised score (GNMT's penalty):"
    ),
    formula=r"\mathrm{score}(Y) = \frac{\log P(Y \mid X)}{lp(Y)}, \qquad "
    r"lp(Y) = \left(\frac{5 + |Y|}{6}\right)^{\alpha}",
)

side = controls()
with side:
    sentence = sentence_input("beam_sentence", checkpoint.metadata)
beam_size = bound_slider(side, t("Beam size k"), "beam_k", 1, 10, 4, on_change=forget_tree_click)
alpha = bound_slider(
    side,
    t("Length penalty α"),
    "beam_alpha",
    0.0,
    2.0,
    0.6,
    step=0.1,
    on_change=forget_tree_click,
    help=t("0: no normalisation (favours short outputs)."),
)
extra = bound_slider(
    side,
    t("Maximum length: input length +"),
    "beam_extra",
    1,
    200,
    EXTRA_OUTPUT_TOKENS,
    on_change=forget_tree_click,
    help=t("Tokens beyond the input's length; also capped by the model's {max_len} positions.", max_len=config.max_len),
)
if not sentence:
    st.info(t("Type a sentence to run the search."))
    st.stop()

beam = translate_for(
    selection,
    [sentence],
    beam_size=beam_size,
    alpha=alpha,
    with_attention=False,
    with_trace=True,
    n_best=beam_size,
    max_extra_tokens=extra,
)[0]
greedy = translate_for(selection, [sentence], beam_size=1, alpha=alpha, with_attention=False, max_extra_tokens=extra)[0]
trace = beam.trace
assert trace is not None, "translate(with_trace=True) returns the trace"

# The search ranks finished hypotheses by the α-normalised score, so beam and greedy are compared by that
# score at the α on screen (greedy's own search ignores α).
greedy_score = normalized_score(greedy.log_prob, len(greedy.output_ids), alpha)
left, right = st.columns(2)
with left:
    show_translation(beam, config.max_len, how=t("beam search, k = {k}, α = {alpha:g}", k=beam_size, alpha=alpha))
with right:
    show_translation(greedy, config.max_len, how=t("greedy search (k = 1), for comparison"))
numbers = t(
    "score at α = {alpha:g}: beam {beam:.3f}, greedy {greedy:.3f} (log-probability: beam {beam_lp:.3f}, "
    "greedy {greedy_lp:.3f})",
    alpha=alpha,
    beam=beam.score,
    greedy=greedy_score,
    beam_lp=beam.log_prob,
    greedy_lp=greedy.log_prob,
)
# ---- the tree ------------------------------------------------------------------------------------------
last = len(trace.steps) - 1  # steps are 0-based in the trace, 1-based on screen
if st.session_state.get("beam_step") is not None and not 1 <= st.session_state["beam_step"] <= last + 1:
    st.session_state["beam_step"] = last + 1  # another search with fewer steps
if last > 0:
    upto = (
        bound_slider(
            side,
            t("Show steps up to"),
            "beam_step",
            1,
            last + 1,
            last + 1,
            help=t("Walk through the search one decoding step at a time."),
        )
        - 1
    )
else:
    upto = 0

hypotheses = beam.nbest
rows = nbest_rows(hypotheses, tokenizer, alpha)
url_default("beam_hyp", 0, int, allowed=range(len(rows)))  # hand-kept: its labels are translations
tokens_of = node_tokens(trace)
search = (selection.path, selection.version, sentence, beam_size, alpha, extra)
picked = picked_node(search)
if picked is not None and picked in tokens_of:
    chosen_tokens = tokens_of[picked]
else:
    chosen_tokens = tuple(hypotheses[st.session_state["beam_hyp"]].tokens)

figure = beam_tree_figure(
    trace,
    lambda token: tokenizer.pieces([token])[0],
    upto_step=upto,
    highlight=chosen_tokens,
    lang=current_language(),
    max_height=470,
    width=main_area_px(),
)
show_figure(
    figure,
    f"Beam search tree k={beam_size}",
    key=TREE_KEY,
    on_select=partial(remember_tree_click, search),
)
st.caption(
    t(
        "Click a node to see that (partial) hypothesis' cross-attention below; hover for log-probabilities. "
        "Blue: kept in the beam; grey: pruned; green stars: finished with </s>."
    )
)

if beam.output_ids == greedy.output_ids:
    st.caption(t("Here beam search finds the same output as greedy decoding; {numbers}.", numbers=numbers))
elif beam.score >= greedy_score:
    st.caption(
        t(
            "Beam search found a different output that ranks higher by the score the search uses; {numbers}.",
            numbers=numbers,
        )
    )
else:
    st.caption(
        t(
            "Greedy's output ranks higher by the score the search uses: beam search pruned its path early; {numbers}.",
            numbers=numbers,
        )
    )

st.subheader(t("Step {step}: the {n} best continuations", step=upto + 1, n=len(trace.steps[upto].candidates)))
# The tables' headers and statuses in the page's language; the formula headers (log p, lp) stay.
STATUS = {"kept": t("kept in the beam"), "pruned": t("pruned"), "finished": t("finished (EOS)")}
HEADERS = {
    "rank": t("rank"),
    "prefix": t("prefix"),
    "token": t("token"),
    "status": t("status"),
    "translation": t("translation"),
    "pieces": t("pieces"),
    "length": t("length"),
    "finished": t("finished"),
}
st.dataframe(
    [{**row, "status": STATUS.get(row["status"], row["status"])} for row in step_rows(trace, upto, tokenizer)],
    hide_index=True,
    width="stretch",
    key="beam_step_table",
    column_config={
        **{name: st.column_config.Column(label) for name, label in HEADERS.items()},
        "log p(token)": st.column_config.NumberColumn(format="%.3f"),
        "log p(prefix + token)": st.column_config.NumberColumn(format="%.3f"),
        "score": st.column_config.NumberColumn(t("score"), format="%.3f"),
    },
)
if upto == last and trace.stop_reason:
    st.caption(
        t(
            "The search stopped after step {step}: {reason}.",
            step=last + 1,
            reason=stop_reason_text(trace.stop_reason, current_language()),
        )
    )

# ---- n-best ---------------------------------------------------------------------------------------------
st.header(t("The {n}-best list", n=len(rows)))
st.dataframe(
    rows,
    hide_index=True,
    width="stretch",
    key="beam_nbest",
    column_config={
        **{name: st.column_config.Column(label) for name, label in HEADERS.items()},
        "log p": st.column_config.NumberColumn(format="%.4f"),
        "lp(length)": st.column_config.NumberColumn(format="%.4f"),
        "score": st.column_config.NumberColumn(t("score"), format="%.4f"),
    },
)

# ---- attention of a hypothesis ----------------------------------------------------------------------------
st.header(t("Cross-attention of a hypothesis"))
st.selectbox(
    t("Hypothesis"),
    options=list(range(len(rows))),
    key="beam_hyp",
    on_change=forget_tree_click,
    format_func=lambda i: t(
        "#{n}: {text} (score {score:.3f})", n=i + 1, text=rows[i]["translation"] or t("(empty)"), score=rows[i]["score"]
    ),
)
sync_to_url("beam_hyp")
if picked is not None and picked in tokens_of:
    st.caption(
        t(
            "Showing the node picked in the tree: {node}. Choose a hypothesis above to go back to the n-best list.",
            node=md_escape(" ".join(tokenizer.pieces(chosen_tokens)) or "<s>"),
        )
    )
if not chosen_tokens:
    st.info(t("The start node has produced nothing yet: pick another node."))
    st.stop()
attention = hypothesis_attention(selection, tuple(beam.source_ids), tuple(chosen_tokens))
# Side by side where they fit, one under the other where not (columns would break the head row in two).
with st.container(horizontal=True, gap="large"):
    layer = number_picker("Decoder layer", "beam_layer", config.n_decoder_layers)
    url_default("beam_head", "mean", allowed=["mean"] + [str(h) for h in range(1, config.n_heads + 1)])
    head = st.segmented_control(
        t("Head"),
        ["mean"] + [str(h) for h in range(1, config.n_heads + 1)],
        key="beam_head",
        required=True,
        format_func=lambda h: t("mean of heads") if h == "mean" else h,
    )
sync_to_url("beam_head")
weights = average_heads(attention.cross)[layer - 1] if head == "mean" else attention.cross[layer - 1, int(head) - 1]
which = t("mean over heads") if head == "mean" else t("head {head}", head=head)
show_figure(
    attention_heatmap(
        weights,
        tokenizer.pieces(chosen_tokens),
        beam.source_pieces,
        title=t("Cross-attention · layer {layer} · {which}", layer=layer, which=which),
        zmax=None,
        x_title=t("source (key)"),
        y_title=t("hypothesis token produced (query)"),
        lang=current_language(),
    ),
    f"Beam hypothesis cross-attention layer {layer} {which}",
    key="beam_attention",
)
st.caption(
    t(
        "Each row is a token of the hypothesis, each column a source token; colours run up to the largest "
        "weight shown, so faint structure stays visible."
    )
)
