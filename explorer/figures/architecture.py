"""Figure 1 of the paper as a clickable plotly diagram: encoder and decoder stacks, sub-layers, residuals.

Each block is a rectangle with a marker at its centre; the marker's customdata is the block id, so a click
(st.plotly_chart on_select) tells the page which tensor to show. Pure: block ids, shapes and labels in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from explorer.figures.theme import FONT_SIZE, PALETTE, apply_theme, rgba
from explorer.i18n import translate

WIDTH, HEIGHT = 2.1, 0.62  # block size in data units
ENCODER_X, DECODER_X = 1.0, 3.75
INPUT_Y, STACK_Y = -0.6, -1.25  # the labels under the embeddings (whose bottom edge is at -HEIGHT / 2)
KIND_COLOURS = {
    "embedding": PALETTE[7],
    "attention": PALETTE[1],
    "norm": PALETTE[6],
    "ffn": PALETTE[0],
    "output": PALETTE[3],
}


def _arrow(fig: go.Figure, tail: tuple[float, float], head: tuple[float, float], *, width: float, colour: str) -> None:
    """An arrow from `tail` to `head` in data coordinates, without text."""
    fig.add_annotation(
        x=head[0],
        y=head[1],
        ax=tail[0],
        ay=tail[1],
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        showarrow=True,
        arrowhead=2,
        arrowwidth=width,
        arrowcolor=colour,
        text="",
    )


def _kind(block: str) -> str:
    if "embedding" in block:
        return "embedding"
    if "attention" in block:
        return "attention"
    if "norm" in block:
        return "norm"
    if "ffn" in block:
        return "ffn"
    return "output"


def _positions(encoder: Sequence[str], decoder: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Block centres: the embedding at the bottom, then one row per sub-layer, the output on top."""
    places = {}
    for x, blocks in ((ENCODER_X, encoder), (DECODER_X, decoder)):
        for row, block in enumerate(blocks):
            places[block] = (x, row * 0.9 + (0.3 if row else 0.0))
    return places


def _shape_text(shape: tuple[int, ...] | None) -> str:
    """'1 \u00d7 7 \u00d7 512', or a dash for a block without a tensor."""
    return " \u00d7 ".join(map(str, shape)) if shape else "\u2013"


def architecture_figure(
    encoder_blocks: Sequence[tuple[str, str]],
    decoder_blocks: Sequence[tuple[str, str]],
    shapes: Mapping[str, tuple[int, ...]],
    *,
    n_encoder: int,
    n_decoder: int,
    selected: str | None = None,
    lang: str = "en",
    height: int = 440,
) -> go.Figure:
    """The diagram. *_blocks: (id, English label) bottom to top; shapes: id -> tensor shape for this sentence.

    Per-layer blocks (everything but embeddings and the output) sit inside an "N×" frame, as in Figure 1.
    """
    labels = dict(list(encoder_blocks) + list(decoder_blocks))
    places = _positions([b for b, _ in encoder_blocks], [b for b, _ in decoder_blocks])
    fig = go.Figure()
    for block, (x, y) in places.items():
        hue = KIND_COLOURS[_kind(block)]
        chosen = block == selected
        fig.add_shape(
            type="rect",
            x0=x - WIDTH / 2,
            x1=x + WIDTH / 2,
            y0=y - HEIGHT / 2,
            y1=y + HEIGHT / 2,
            fillcolor=rgba(hue, 0.85 if chosen else 0.35),
            line=dict(color=hue, width=5 if chosen else 2),
            layer="below",
        )
    for stack, x, count in (("enc", ENCODER_X, n_encoder), ("dec", DECODER_X, n_decoder)):
        inner = [places[b] for b in places if b.startswith(stack)]
        top, bottom = max(y for _, y in inner) + HEIGHT / 2 + 0.12, min(y for _, y in inner) - HEIGHT / 2 - 0.12
        fig.add_shape(
            type="rect",
            x0=x - WIDTH / 2 - 0.15,
            x1=x + WIDTH / 2 + 0.15,
            y0=bottom,
            y1=top,
            line=dict(color="rgba(128,128,128,0.8)", width=2, dash="dash"),
            layer="below",
        )
        side = x - WIDTH / 2 - 0.3 if stack == "enc" else x + WIDTH / 2 + 0.3
        fig.add_annotation(
            x=side,
            y=(top + bottom) / 2,
            text=f"{count}\u00d7",
            showarrow=False,
            font=dict(size=FONT_SIZE + 4),
            xanchor="right" if stack == "enc" else "left",
        )
    # Data flow: up each stack, and the encoder output into every decoder layer's cross-attention.
    for blocks in (encoder_blocks, decoder_blocks):
        ids = [b for b, _ in blocks]
        for lower, upper in zip(ids, ids[1:], strict=False):
            (x0, y0), (x1, y1) = places[lower], places[upper]
            _arrow(fig, (x0, y0 + HEIGHT / 2), (x1, y1 - HEIGHT / 2), width=2, colour="gray")
    if "enc_norm_2" in places and "dec_cross_attention" in places:
        (x0, y0), (x1, y1) = places["enc_norm_2"], places["dec_cross_attention"]
        _arrow(
            fig, (x0 + WIDTH / 2, y0 + HEIGHT / 2), (x1 - WIDTH / 2, y1), width=2.5, colour=KIND_COLOURS["attention"]
        )
    # Residual connections: from below each sub-layer, around it, into its Add & Norm (Section 3.1).
    for blocks, x, side in ((encoder_blocks, ENCODER_X, -1), (decoder_blocks, DECODER_X, 1)):
        ids = [b for b, _ in blocks]
        for sub, norm in zip(ids, ids[1:], strict=False):
            if "norm" not in norm or "norm" in sub:
                continue
            (_, y0), (_, y1) = places[sub], places[norm]
            edge = x + side * (WIDTH / 2 + 0.1)
            start = y0 - HEIGHT / 2 - 0.12
            fig.add_trace(
                go.Scatter(
                    x=[x, edge, edge, x + side * WIDTH / 2],
                    y=[start, start, y1, y1],
                    mode="lines",
                    line=dict(color="gray", width=1.5),
                    hoverinfo="skip",
                    showlegend=False,
                )
            )
    # The blocks' names, each with its tensor's shape on hover; the click selects the block by its id.
    shown = {block: translate(labels[block], lang) for block in places}
    tensor = translate("tensor", lang)
    hover = [f"{shown[block]}<br>{tensor} ({_shape_text(shapes.get(block))})" for block in places]
    fig.add_trace(
        go.Scatter(
            x=[x for x, _ in places.values()],
            y=[y for _, y in places.values()],
            mode="markers+text",
            text=list(shown.values()),
            textfont=dict(size=14),
            customdata=list(places),
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            marker=dict(size=40, symbol="square", opacity=0.01),
            showlegend=False,
        )
    )
    # Under each embedding, what feeds it, in Figure 1's words (the decoder reads the target shifted right,
    # <s> first); below those, the stack's name, one text line lower so the two never touch.
    for x, feed, name in ((ENCODER_X, "Inputs", "Encoder"), (DECODER_X, "Outputs (shifted right)", "Decoder")):
        fig.add_annotation(x=x, y=INPUT_Y, text=translate(feed, lang), showarrow=False, font=dict(size=FONT_SIZE - 2))
        fig.add_annotation(
            x=x, y=STACK_Y, text=f"<b>{translate(name, lang)}</b>", showarrow=False, font=dict(size=FONT_SIZE)
        )
    top = max(y for _, y in places.values()) + 0.6
    fig.update_xaxes(visible=False, range=[-0.75, 5.35], fixedrange=True)
    fig.update_yaxes(visible=False, range=[STACK_Y - 0.4, top], fixedrange=True)
    apply_theme(fig, height=height)
    fig.update_layout(margin=dict(l=10, r=10, t=10, b=10), dragmode=False, clickmode="event+select")
    return fig
