"""Sentences that state a computed fact, worded from the value they state.

A sentence such as "the two are nearly orthogonal" is true for some values and false for others, so it is
chosen here from the value, against thresholds written down beside it, and never fixed in the page. Each
function returns the whole sentence in `lang` (English msgid, Korean from the catalogue), so a translation
never glues fragments together.
"""

from __future__ import annotations

import math

from explorer.config import ModelConfig
from explorer.i18n import translate
from explorer.paper import TABLE3

# The paper's base model (Table 3, "base"): what the tour shows beside the loaded model's sizes.
PAPER_LAYERS, PAPER_D_MODEL, PAPER_HEADS = 6, 512, 8

# |cos| below this is "nearly orthogonal": an angle within 90° ± 5.7°.
ORTHOGONAL_COSINE = 0.1
# |cos| from this on is "mostly" the same or the opposite direction: an angle under 60° or over 120°.
ALIGNED_COSINE = 0.5
# Two lengths whose ratio lies within [1 / SAME_LENGTH, SAME_LENGTH] are "about as long" as each other.
SAME_LENGTH = 1.25


def angle_degrees(cosine: float) -> float:
    """The angle (degrees) whose cosine is `cosine` (clipped to [-1, 1])."""
    return math.degrees(math.acos(max(-1.0, min(1.0, cosine))))


def token_and_position_cosine(cosine: float, lang: str = "en") -> str:
    """The Positional page's sentence on the mean cosine between the token term and the position term."""
    fields = dict(cosine=f"{cosine:+.2f}", angle=f"{angle_degrees(cosine):.0f}")
    if abs(cosine) < ORTHOGONAL_COSINE:
        return translate(
            "Mean cosine between the two: **{cosine}** (an angle of {angle}°) — nearly orthogonal, so the sum "
            "keeps both.",
            lang,
            **fields,
        )
    if cosine <= -ALIGNED_COSINE:
        return translate(
            "Mean cosine between the two: **{cosine}** (an angle of {angle}°) — they point mostly against each "
            "other, so the sum cancels much of both.",
            lang,
            **fields,
        )
    if cosine < 0:
        return translate(
            "Mean cosine between the two: **{cosine}** (an angle of {angle}°) — not orthogonal: they point "
            "partly against each other, so the sum cancels part of both.",
            lang,
            **fields,
        )
    if cosine >= ALIGNED_COSINE:
        return translate(
            "Mean cosine between the two: **{cosine}** (an angle of {angle}°) — they point mostly the same way, "
            "so in the sum they reinforce each other.",
            lang,
            **fields,
        )
    return translate(
        "Mean cosine between the two: **{cosine}** (an angle of {angle}°) — not orthogonal: they point "
        "partly the same way.",
        lang,
        **fields,
    )


def embedding_scale(scale: float, scaled_median: float, positional_median: float, lang: str = "en") -> str:
    """Stop 4's sentence on what ×√d_model does to the embeddings' length beside the positional vectors'."""
    ratio = scaled_median / positional_median if positional_median else math.inf
    fields = dict(
        scale=f"{scale:.1f}",
        scaled=f"{scaled_median:.1f}",
        positional=f"{positional_median:.1f}",
        ratio=f"{ratio:.1f}" if ratio >= 1 else f"{1 / ratio:.1f}",
        paper=f"{PAPER_D_MODEL**0.5:.1f}",
    )
    if 1 / SAME_LENGTH <= ratio <= SAME_LENGTH:
        return translate(
            "\u00d7\u221ad_model = \u00d7{scale} (the paper: \u00d7{paper}) makes the embeddings about as long as "
            "the positional vectors they are added to: median length {scaled} against {positional}.",
            lang,
            **fields,
        )
    if ratio > SAME_LENGTH:
        return translate(
            "\u00d7\u221ad_model = \u00d7{scale} (the paper: \u00d7{paper}) makes the embeddings {ratio} times as "
            "long as the positional vectors they are added to: median length {scaled} against {positional}.",
            lang,
            **fields,
        )
    return translate(
        "\u00d7\u221ad_model = \u00d7{scale} (the paper: \u00d7{paper}) leaves the embeddings shorter than the "
        "positional vectors they are added to ({ratio} times shorter): median length {scaled} against "
        "{positional}.",
        lang,
        **fields,
    )


def model_beside_paper(config: ModelConfig, lang: str = "en") -> str:
    """This model's sizes beside the paper's base model's (N, d_model, h)."""
    return translate(
        "This model: N = {layers} layers, d_model = {d_model}, h = {heads} heads; the paper's base model: "
        "N = {paper_layers}, d_model = {paper_d_model}, h = {paper_heads}.",
        lang,
        layers=config.n_encoder_layers,
        d_model=config.d_model,
        heads=config.n_heads,
        paper_layers=PAPER_LAYERS,
        paper_d_model=PAPER_D_MODEL,
        paper_heads=PAPER_HEADS,
    )


def attention_cost(n: int, d: int, lang: str = "en") -> str:
    """Stop 6's sentence on how self-attention's n²·d compares with recurrence's n·d² for this sentence."""
    ratio = max(n, d) / min(n, d)
    fields = dict(n=n, ratio=f"{ratio:.1f}" if ratio < 10 else f"{ratio:.0f}")
    if n < d:
        return translate(
            "This sentence has n = {n} tokens, so self-attention is {ratio} times cheaper here.", lang, **fields
        )
    if n > d:
        return translate(
            "This sentence has n = {n} tokens, so self-attention costs {ratio} times more here.", lang, **fields
        )
    return translate("This sentence has n = {n} tokens: the two cost the same here.", lang, **fields)


def depth_in_table3(lang: str = "en") -> str:
    """Stop 9's sentence on what Table 3's (C) rows say about depth, read from the table: every depth the paper
    tried with its BLEU, and whether more layers than the base's helped."""
    base = next(r for r in TABLE3 if r.group == "base")
    depths = sorted(
        [(PAPER_LAYERS, base.bleu)]
        + [(int(r.change.removeprefix("N=")), r.bleu) for r in TABLE3 if r.group == "(C)" and r.change.startswith("N=")]
    )
    listed = ", ".join(f"N = {n}: {bleu}" for n, bleu in depths)
    fewest = depths[0]
    deeper = [(n, bleu) for n, bleu in depths if n > PAPER_LAYERS]
    fields = dict(depths=listed, fewest=fewest[0], loss=f"{base.bleu - fewest[1]:.1f}")
    if deeper and all(bleu < base.bleu for _, bleu in deeper):
        return translate(
            "Too few layers cost most ({depths}): N = {fewest} loses {loss} BLEU, and more layers than the base "
            "model's six scored lower, not higher.",
            lang,
            **fields,
        )
    return translate("Too few layers cost most ({depths}): N = {fewest} loses {loss} BLEU.", lang, **fields)


def heads_in_table3(lang: str = "en") -> str:
    """Stop 9's sentence on Table 3's row (A): one head, and the most heads, against the base model's eight."""
    base = next(r for r in TABLE3 if r.group == "base")
    rows = [r for r in TABLE3 if r.group == "(A)"]
    one = next(r for r in rows if r.change.startswith("h=1,"))
    most = max(rows, key=lambda r: int(r.change.split(",")[0].removeprefix("h=")))
    return translate(
        "One head instead of eight costs {one} BLEU, and {heads} heads cost {most}: too many heads hurt too.",
        lang,
        one=f"{base.bleu - one.bleu:.1f}",
        heads=most.change.split(",")[0].removeprefix("h="),
        most=f"{base.bleu - most.bleu:.1f}",
    )
