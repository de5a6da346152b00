"""Switching heads off in the app: the layer × head grid (kept in the URL as ?heads=cross.2.0,…), the
translation re-decoded with the same search, the changed words marked, and the remaining heads redrawn.

Reusable: the Translate and Compare pages can call `head_mask_grid` and `ablated_translation` too.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.config import ModelConfig
from explorer.explain.value_weighted import ValueWeighted
from explorer.figures.heads import layer_heads
from explorer.figures.theme import NARROW_TITLE_PX, wrap_words
from explorer.inference import EXTRA_OUTPUT_TOKENS, Translation, translate
from explorer.model import HeadMask, HeadMeans, HeadNameError
from explorer.model.head_mask import family_layers, head_name
from explorer.paper import FAMILY_FIELDS, HEAD_FAMILIES, HEAD_FAMILY_TITLES
from ui.attention_controls import number_picker
from ui.attention_view import attention_view, example_sentences
from ui.figures import show_figure
from ui.heads.numbering import numbering_note, shown_name
from ui.i18n import current_language, t
from ui.layout import fit_height
from ui.markdown import ERROR_CHARS, md_escape, shown_value
from ui.model_cache import cached
from ui.model_picker import Selection

URL_KEY = "heads"
MODES = {"zero": "Zero (Michel et al.)", "mean": "Mean output"}
MEAN_REFERENCE_SENTENCES = 50
# Tokens a re-decoding with heads off may run past the translation with every head on: a model missing heads
# may never produce </s> ("Gewächsssss…"), and running to input + 50 filled the figure's axes with repeats.
ABLATION_MARGIN = 10
FIGURE_PX = 380  # the remaining heads' figure: on the first screen under the two translations


def _key(family: str, layer: int, head: int, prefix: str = "hm") -> str:
    return f"{prefix}_{family}_{layer}_{head}"


def _seed_from_url(config: ModelConfig, url_key: str, prefix: str) -> None:
    """Once per session: the link's ?heads= switches those heads off (a bad name is shown, not fatal)."""
    if f"{prefix}_seeded" in st.session_state:
        return
    st.session_state[f"{prefix}_seeded"] = True
    raw = st.query_params.get(url_key)
    if not raw:
        return
    try:
        mask = HeadMask.parse(raw, config)
    except HeadNameError as error:
        st.warning(
            t(
                "The link's {key}={value} was ignored: {error}",
                key=url_key,
                value=shown_value(raw),
                error=shown_value(error, ERROR_CHARS),  # quotes the link's head name
            ),
            icon=":material/link_off:",
        )
        return
    for name in mask.off():
        family, layer, head = name.split(".")
        st.session_state[_key(family, int(layer), int(head), prefix)] = False


def _all_on(config: ModelConfig, prefix: str) -> None:
    for name in [
        head_name(f, layer, h)
        for f in HEAD_FAMILIES
        for layer in range(family_layers(config, f))
        for h in range(config.n_heads)
    ]:
        family, layer, head = name.split(".")
        st.session_state[_key(family, int(layer), int(head), prefix)] = True


def head_mask_grid(
    config: ModelConfig, *, url_key: str = URL_KEY, prefix: str = "hm", placed: Mapping[str, Any] | None = None
) -> HeadMask:
    """One checkbox per head, a row per layer, a block per family; unticked = switched off. Returns the mask
    and writes it to the URL as ?{url_key}=. `prefix` names the checkboxes' keys (`hm_cross_1_0`), so two
    pages keep separate grids. `placed`: a container for some families' blocks (beside a figure, without the
    head names on hover, which would break a narrow row); the others go side by side here."""
    _seed_from_url(config, url_key, prefix)
    placed = placed or {}
    rest = [f for f in HEAD_FAMILIES if f not in placed]
    blocks = dict(zip(rest, st.columns(len(rest), gap="medium", border=True), strict=True)) if rest else {}
    off = []
    for family in HEAD_FAMILIES:
        narrow = family in placed
        with placed[family] if narrow else blocks[family]:
            st.markdown(f"**{t(HEAD_FAMILY_TITLES[family])}** · `{family}`")
            for layer in range(family_layers(config, family)):
                row = st.container(horizontal=True, gap="small", vertical_alignment="center")
                row.caption(t("Layer {layer}", layer=layer + 1))
                for head in range(config.n_heads):
                    key = _key(family, layer, head, prefix)
                    if key not in st.session_state:
                        st.session_state[key] = True
                    name = head_name(family, layer, head)
                    if not row.checkbox(str(head + 1), key=key, help=None if narrow else name):
                        off.append(name)
    st.caption(numbering_note(config))
    st.button(
        t("Switch every head back on"),
        on_click=_all_on,
        args=(config, prefix),
        icon=":material/restart_alt:",
        key=f"{prefix}_all_on",
    )
    if off:
        st.query_params[url_key] = ",".join(off)
    elif url_key in st.query_params:
        del st.query_params[url_key]
    return HeadMask.from_names(off, config)


def _reference_sources(checkpoint: Checkpoint, n: int) -> list[str]:
    from explorer.analysis.importance import validation_pairs

    try:
        return validation_pairs(checkpoint.metadata, n, 0)[0]
    except (ValueError, OSError):
        return list(example_sentences(checkpoint.metadata))


def _means(checkpoint: Checkpoint) -> HeadMeans:
    """Mean head outputs over reference sentences, teacher-forced on the model's own greedy translations."""
    from explorer.analysis.importance import head_means

    sources = _reference_sources(checkpoint, MEAN_REFERENCE_SENTENCES)
    outputs = [o.output for o in translate(checkpoint.model, checkpoint.tokenizer, sources)]
    return head_means(checkpoint.model, checkpoint.tokenizer, sources, outputs)


def ablation_extra_tokens(original: Translation) -> int:
    """`max_extra_tokens` (beyond the input's length) for re-decoding `original`'s sentence with heads off:
    `ABLATION_MARGIN` tokens past `original`'s output, within the page's input + 50 (Section 6.1). With no head
    off the re-decoding is `original` again."""
    past_original = len(original.output_ids) + ABLATION_MARGIN - len(original.source_ids)
    return max(1, min(EXTRA_OUTPUT_TOKENS, past_original))


def mask_in_mode(selection: Selection, mask: HeadMask, mode: str) -> HeadMask:
    """`mask` as the model applies it in `mode` (a key of `MODES`): "mean" fills a switched-off head with its mean
    output over reference sentences (computed once per checkpoint), "zero" removes it."""
    if mode == "mean" and not mask.is_empty:
        return mask.with_means(cached("head_means", selection, MEAN_REFERENCE_SENTENCES, _means))
    return mask


def ablated_translation(
    selection: Selection, original: Translation, mask: HeadMask, mode: str, *, beam_size: int = 1, alpha: float = 0.6
) -> Translation:
    """`original`'s sentence decoded again with the same search (beam, length penalty α), `mask`'s heads off
    (`mode`: a key of `MODES`), at most `ablation_extra_tokens(original)` past the input's length; cached."""
    sentence, max_extra_tokens = original.source, ablation_extra_tokens(original)

    def compute(checkpoint: Checkpoint) -> Translation:
        return translate(
            checkpoint.model,
            checkpoint.tokenizer,
            [sentence],
            head_mask=mask_in_mode(selection, mask, mode),
            beam_size=beam_size,
            alpha=alpha,
            with_attention=True,
            max_extra_tokens=max_extra_tokens,
        )[0]

    key = (sentence, beam_size, alpha, mode, tuple(mask.off()), max_extra_tokens)
    return cached("ablate", selection, key, compute)


def marked_changes(original: str, ablated: str) -> tuple[str, int]:
    """Markdown of `ablated` with words that differ from `original` highlighted, and how many words changed."""
    before, after = original.split(), ablated.split()
    parts, changed = [], 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if op == "equal":
            parts += [md_escape(w) for w in after[j1:j2]]
            continue
        changed += max(i2 - i1, j2 - j1)
        parts += [f":orange-background[**{md_escape(w)}**]" for w in after[j1:j2]]
        if op == "delete":
            parts.append(":gray[~~" + " ".join(md_escape(w) for w in before[i1:i2]) + "~~]")
    return " ".join(parts), changed


def _off_caption(names: list[str]) -> str:
    """ "1 head off: …", "3 heads off: …" (one msgid a form: Korean counts without a plural)."""
    shown = ", ".join(shown_name(name) for name in names)
    if len(names) == 1:
        return t("1 head off: {names}", names=shown)
    return t("{n} heads off: {names}", n=len(names), names=shown)


def _changed_caption(changed: int) -> str:
    if changed == 0:
        return t("Same translation")
    return t("1 word changed") if changed == 1 else t("{n} words changed", n=changed)


def show_side_by_side(original: Translation, ablated: Translation, mask: HeadMask) -> None:
    left, right = st.columns(2, gap="large", border=True)
    with left:
        st.caption(t("Every head on"))
        st.markdown(f"### {md_escape(original.output) or t('(empty)')}")
    with right:
        off = mask.off()
        st.caption(_off_caption(off) if off else t("No head off yet: untick one to switch it off"))
        marked, changed = marked_changes(original.output, ablated.output)
        st.markdown(f"### {marked or t('(empty)')}")
        st.caption(_changed_caption(changed))


def remaining_heads(
    translation: Translation,
    mask: HeadMask,
    family: str,
    layer: int,
    *,
    key: str = "heads_remaining",
    width: int = NARROW_TITLE_PX,
    explained: ValueWeighted | None = None,
) -> None:
    """The ablated translation's attention in one layer (0-based `layer`), switched-off heads blanked, in a
    column at least `width` px wide; `explained`: its value-weighted attention, drawn instead of the weights."""
    view = attention_view(translation, FAMILY_FIELDS[family], "pieces", explained=explained)
    gates = getattr(mask, family)
    off = [bool(gates is not None and gates[layer, h] == 0) for h in range(view.weights.shape[1])]
    if all(off):  # four empty panels said nothing
        st.info(
            t(
                "Every head of {family}, layer {layer} is switched off: this layer's attention passes nothing on, "
                "so there are no weights to draw. Tick a head to see it.",
                family=t(HEAD_FAMILY_TITLES[family]),
                layer=layer + 1,
            ),
            icon=":material/visibility_off:",
        )
        return
    # Wrapped here, where the theme gives the extra line its room above the panels' own titles.
    title = wrap_words(
        t("{family}, layer {layer}, after switching heads off", family=t(HEAD_FAMILY_TITLES[family]), layer=layer + 1)
        + (" · " + t("value-weighted") if explained is not None else "")
    )
    height = min(FIGURE_PX, max(360, 30 * len(view.query_labels) + 220))
    figure = _remaining_figure(
        view.weights[layer], tuple(off), tuple(view.query_labels), tuple(view.key_labels), title, current_language(),
        height, width,
    )  # fmt: skip
    show_figure(figure, f"heads {family} layer {layer + 1} ablated", key=key)


@st.cache_resource(max_entries=16, show_spinner=False)
def _remaining_figure(
    weights: np.ndarray,
    off: tuple[bool, ...],
    query_labels: tuple[str, ...],
    key_labels: tuple[str, ...],
    title: str,
    lang: str,
    height: int,
    width: int,
) -> go.Figure:
    """The remaining heads' figure (`layer_heads`, weights (heads, q, k)) fitted to its column, one object shared
    by every rerun and session that draws the same: a head toggle and a visit redraw it unchanged, and the copy
    `layer_heads` hands out (the figure revalidated through plotly's object model) cost a third of the section's
    time. Never changed after it is built: `show_figure` only reads it."""
    figure = layer_heads(weights, off, query_labels, key_labels, title=title, lang=lang, height=height, width=width)
    return fit_height(figure, FIGURE_PX, width=width)


# On the Translate and Compare pages the head view's ?heads= (1-based head numbers) is taken, so the mask
# has its own parameter there.
PAGE_URL_KEY = "ablate"


def ablation_expander(
    selection: Selection,
    config: ModelConfig,
    original: Translation,
    *,
    prefix: str = "am",
    beam_size: int = 1,
    alpha: float = 0.6,
) -> None:
    """ "Ablate heads", below a page's main figure: the head grid, and `original` re-decoded with the same
    search and the unticked heads off, beside it with the changed words marked. Mask in ?ablate=; `prefix`
    keeps each page's checkboxes apart."""
    with st.expander(
        t("Ablate heads"), icon=":material/content_cut:", expanded=bool(st.query_params.get(PAGE_URL_KEY))
    ):
        st.markdown(
            t(
                "Untick a head to switch it off (its output is removed before W^O, Michel et al., 2019); the "
                "sentence is translated again with the same search. The link keeps the choice."
            )
        )
        mask = head_mask_grid(config, url_key=PAGE_URL_KEY, prefix=prefix)
        if mask.is_empty:
            show_side_by_side(original, original, mask)
            return
        changed = ablated_translation(selection, original, mask, "zero", beam_size=beam_size, alpha=alpha)
        show_side_by_side(original, changed, mask)
        # The attention of the heads left on, in the family and layer chosen here.
        family = st.segmented_control(
            t("Attention family"),
            HEAD_FAMILIES,
            key=f"{prefix}_family",
            default="cross",
            required=True,
            format_func=lambda f: t(HEAD_FAMILY_TITLES[f]),
        )
        layers = family_layers(config, family)
        layer = number_picker("Layer", f"{prefix}_layer", layers, default=layers) - 1
        remaining_heads(changed, mask, family, layer, key=f"{prefix}_remaining")
