"""Beam's tree: the search drawn as a tree up to a chosen step (a node clicked there picks the hypothesis shown
below), and the table of the step's 2k continuations."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from explorer.analysis.beam import node_tokens, step_rows
from explorer.decoding.hypotheses import BeamTrace
from explorer.figures.beam_tree import beam_tree_figure, stop_reason_text
from explorer.tokenizer import Tokenizer
from ui.beam.search import PICKED_NODE, Searched
from ui.figures import show_figure
from ui.i18n import current_language, t
from ui.layout import main_area_px
from ui.urlstate import bound_slider

TREE_KEY = "beam_tree"


def _headers() -> dict[str, str]:
    """Column labels of the step and n-best tables in the page's language; the formula headers (log p, lp) stay."""
    return {
        "rank": t("rank"),
        "prefix": t("prefix"),
        "token": t("token"),
        "status": t("status"),
        "translation": t("translation"),
        "length": t("length"),
        "finished": t("finished"),
    }


# Each table's columns in order with their width in px: together they fit the main area's least width (600 px
# at 1024 and 1280 beside the sidebar, less a scroll bar), so the score and status columns are never off the
# edge. Texts longer than their column end in "…" in the cell and show whole on hover.
TABLE_PX = 580
STEP_COLUMNS = (
    ("rank", 48),
    ("prefix", 150),
    ("token", 90),
    ("status", 84),
    ("score", 64),
    ("log p(token)", 72),
    ("log p(prefix + token)", 72),
)
# The pieces column is left out: the tree above shows the pieces, and the hypothesis picker the text.
NBEST_COLUMNS = (
    ("rank", 48),
    ("translation", 198),
    ("score", 64),
    ("log p", 64),
    ("lp(length)", 72),
    ("length", 60),
    ("finished", 70),
)


def beam_table(
    rows: list[dict[str, Any]],
    *,
    key: str,
    columns: Sequence[tuple[str, int]],
    number_columns: Sequence[str],
    decimals: int,
) -> None:
    """A table of the search (a step's continuations, the n-best list): `columns` in order at their widths,
    labelled in the page's language, the `number_columns` (log probabilities, the length penalty) and the score
    at `decimals` decimals."""
    number = f"%.{decimals}f"
    headers = _headers()
    config: dict[str, Any] = {}
    for name, px in columns:
        if name in number_columns or name == "score":
            label = t("score") if name == "score" else None
            config[name] = st.column_config.NumberColumn(label, format=number, width=px)
        else:
            config[name] = st.column_config.Column(headers[name], width=px)
    st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        key=key,
        column_order=[name for name, _ in columns],
        column_config=config,
    )


def _remember_click(search: tuple[Any, ...]) -> None:
    """on_select of the tree: keep the clicked node's id with the search it belongs to (ids restart at 0
    in every search, so a node is only looked up in the search it was clicked in)."""
    points = st.session_state[TREE_KEY].selection.get("points", [])
    st.session_state[PICKED_NODE] = (search, int(points[0]["customdata"][0])) if points else None


def picked_tokens(searched: Searched) -> tuple[int, ...] | None:
    """The tokens of the node clicked in this search's tree; None when none was (or it was in another)."""
    picked = st.session_state.get(PICKED_NODE)
    if picked is None or picked[0] != searched.key:
        return None
    return node_tokens(searched.trace).get(picked[1])


@st.fragment
def step_view(
    searched: Searched, tokenizer: Tokenizer, highlight: tuple[int, ...], clicked: tuple[int, ...] | None
) -> None:
    """The tree up to the step chosen on the slider above it, and that step's table: a fragment, so a step reruns
    these three and not the page. `highlight`: the path the page marks (`clicked`, the tokens of the node clicked
    in the tree when the page ran, else the n-best pick). A click on another node (or off a node) reruns the page:
    the hypothesis picker's note and the attention section below follow the click."""
    if picked_tokens(searched) != clicked:
        st.rerun()
    upto = step_slider(st, searched)  # above the tree: on the projector's first screen with it
    tree_section(searched, tokenizer, upto, highlight)
    step_section(searched, tokenizer, upto)


def step_slider(side: Any, searched: Searched) -> int:
    """The last step shown (0-based; the slider counts from 1), kept in the URL; none for a one-step search."""
    last = len(searched.trace.steps) - 1
    if st.session_state.get("beam_step") is not None and not 1 <= st.session_state["beam_step"] <= last + 1:
        st.session_state["beam_step"] = last + 1  # another search with fewer steps
    if last == 0:
        return 0
    shown = bound_slider(
        side,
        t("Show steps up to"),
        "beam_step",
        1,
        last + 1,
        last + 1,
        help=t("Walk through the search one decoding step at a time."),
    )
    return int(shown) - 1


def trace_pieces(trace: BeamTrace, tokenizer: Tokenizer) -> list[str]:
    """The target pieces indexed by token id, for the ids in `trace` (the others empty): the tree's labels as a
    plain list, so the tree figure is remembered by value; its length is the largest id in the trace + 1."""
    ids = sorted({n.token for s in trace.steps for n in s.live} | {c.token for s in trace.steps for c in s.candidates})
    pieces = [""] * (ids[-1] + 1)
    for token, piece in zip(ids, tokenizer.target_pieces(ids), strict=True):
        pieces[token] = piece
    return pieces


def tree_section(searched: Searched, tokenizer: Tokenizer, upto: int, highlight: tuple[int, ...]) -> None:
    """The tree up to step `upto`, the path of `highlight` marked; clicking a node picks it."""
    figure = _tree_figure(searched.key, upto, highlight, current_language(), main_area_px(), searched, tokenizer)
    show_figure(
        figure,
        f"Beam search tree k={searched.choice.beam_size}",
        key=TREE_KEY,
        on_select=partial(_remember_click, searched.key),
    )
    st.caption(
        t(
            "Click a node to see that (partial) hypothesis' cross-attention below; hover for log-probabilities. "
            "Blue: kept in the beam; grey: pruned; green stars: finished with </s>."
        )
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def _tree_figure(
    search: tuple[Any, ...],
    upto: int,
    highlight: tuple[int, ...],
    lang: str,
    width: int,
    _searched: Searched,
    _tokenizer: Tokenizer,
) -> go.Figure:
    """The tree of the search named `search` (`_searched`, its result: not hashed, the name stands for it), one
    object shared by every rerun and session that draws the same: a step and a visit redraw mostly drawn trees, and
    the copy `beam_tree_figure` hands out (revalidated through plotly's object model) costs as much as the rest of
    the fragment. Never changed after it is built: `show_figure` only reads it."""
    trace = _searched.trace
    return beam_tree_figure(
        trace, trace_pieces(trace, _tokenizer), upto_step=upto, highlight=highlight, lang=lang, max_height=470,
        width=width,
    )  # fmt: skip


def step_section(searched: Searched, tokenizer: Tokenizer, upto: int) -> None:
    """The continuations of step `upto`, and why the search stopped when it is the last."""
    trace = searched.trace
    st.subheader(t("Step {step}: the {n} best continuations", step=upto + 1, n=len(trace.steps[upto].candidates)))
    status = {"kept": t("kept"), "pruned": t("pruned"), "finished": t("finished")}
    beam_table(
        [{**row, "status": status.get(row["status"], row["status"])} for row in step_rows(trace, upto, tokenizer)],
        key="beam_step_table",
        columns=STEP_COLUMNS,
        number_columns=("log p(token)", "log p(prefix + token)"),
        decimals=3,
    )
    last = len(trace.steps) - 1
    if upto == last and trace.stop_reason:
        st.caption(
            t(
                "The search stopped after step {step}: {reason}.",
                step=last + 1,
                reason=stop_reason_text(trace.stop_reason, current_language()),
            )
        )
