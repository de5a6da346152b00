"""Translate & attention: translate a sentence (or a file of them) and look at every layer and head of the
three attention families the paper's Transformer uses (Section 3.2.3)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.analysis.heads import head_summary
from explorer.analysis.words import average_heads
from explorer.checkpoint import decoding_settings
from explorer.figures.attention import attention_heatmap, head_view
from explorer.inference import Translation
from explorer.text.sentences import join_sentences, split_sentences
from ui.attention_controls import (
    choice_list,
    family_picker,
    number_picker,
    sentence_input,
    sentence_picker,
    show_translations,
)
from ui.attention_view import (
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_LINES,
    UNITS,
    attention_view,
    checkpoint_examples,
    head_title,
    rows_to_delimited,
    with_examples,
)
from ui.figures import file_stem, show_figure
from ui.heads.ablation import ablation_expander
from ui.i18n import current_language, t
from ui.layout import COLUMN_GAP_PX, FIRST_SCREEN_FIGURE_PX, controls, figure_column_px, fit_height, page_header
from ui.linked_heads import show_linked_grid
from ui.markdown import md_escape
from ui.model_cache import require_model, translate_for
from ui.model_picker import decoding_note
from ui.presenter import step_buttons, stepper
from ui.translate.batch import batch_rows, int8_toggle, read_upload, translate_batch, warn_truncated
from ui.urlstate import note_link_value, sync_to_url, url_default

INPUTS = {"type": "Type a sentence", "file": "Upload a text file"}
MODES = {"head": "One head", "grid": "All layers and heads", "mean": "Mean over heads", "lines": "Head view"}
BEAM_SIZES = list(range(1, 11))
ALPHA = 0.6  # Section 6.1: beam size 4, length penalty alpha = 0.6
ALPHAS = [round(0.1 * i, 1) for i in range(21)]
NO_REPEAT = (0, 2, 3, 4)  # 0: off, the search as the paper's

selection, checkpoint = require_model()
config = checkpoint.config
# The beam and α stored with the model (chosen on its validation set) are the defaults; without them the page
# starts greedy, the quickest view of the attention.
stored = decoding_settings(checkpoint.metadata)
default_beam, default_alpha = (stored.beam, stored.alpha) if stored else (1, ALPHA)
beam_sizes = sorted({*BEAM_SIZES, default_beam})
alphas = sorted({*ALPHAS, default_alpha})

page_header(
    t("Translate & attention"),
    t(
        "Type a sentence and the model translates it; then look inside. Every layer has several attention "
        "**heads**, each a matrix of weights: row *i* says how much the token at position *i* (the **query**) "
        "looks at every other token (the **keys**); each row sums to 1 (Eq. 1, softmax(QKᵀ/√dₖ)V)."
    ),
)

url_default("input", "type", allowed=tuple(INPUTS))
note_link_value("beam", [str(b) for b in beam_sizes], default_beam)
note_link_value("alpha", [str(a) for a in alphas], default_alpha)
side = controls()
source = side.segmented_control(
    t("Input"), tuple(INPUTS), key="input", required=True, format_func=lambda k: t(INPUTS[k])
)
sync_to_url("input")
beam = side.select_slider(
    t("Beam size"),
    beam_sizes,
    value=None if "beam" in st.session_state else default_beam,
    key="beam",
    bind="query-params",
    help=t(
        "1 is greedy decoding. The paper uses beam search with 4 beams and length penalty α = {alpha} (Section 6.1).",
        alpha=ALPHA,
    ),
)
alpha = side.select_slider(
    t("Length penalty α"),
    alphas,
    value=None if "alpha" in st.session_state else default_alpha,
    key="alpha",
    bind="query-params",
    disabled=beam == 1,
    help=t(
        "Beam search ranks finished translations by log-probability / ((5 + length) / 6)^α (Section 6.1): a "
        "larger α favours longer outputs. Greedy decoding does not use it."
    ),
)
if stored is not None:
    # Under the sliders it sets, to compare a choice of one's own with; not in the main area, whose height the
    # attention figure needs at 1024x768 (the translation's own line says the beam and α in use).
    side.caption(decoding_note(stored))
url_default("no_repeat", 0, int, allowed=NO_REPEAT)  # labelled options: the URL keeps the number (ui/urlstate.py)
no_repeat = side.segmented_control(
    t("Forbid repeating n pieces"),
    NO_REPEAT,
    key="no_repeat",
    required=True,
    format_func=lambda n: t("Off") if n == 0 else str(n),
    help=t(
        "Off by default. When set to n, the search may not produce any n pieces in a row that the output "
        "already holds: it cannot loop, but it also cannot repeat a phrase that should repeat."
    ),
)
sync_to_url("no_repeat")
options: dict[str, Any] = dict(beam_size=beam, alpha=alpha)
if no_repeat:  # left out when off, so the search (and the cache key) stay as without the constraint
    options["no_repeat_ngram"] = no_repeat
how = t("greedy decoding") if beam == 1 else t("beam search, {beam} beams, α = {alpha}", beam=beam, alpha=alpha)

if source == "type":
    examples = checkpoint_examples(checkpoint.path, checkpoint.metadata, current_language())
    if examples.problem:
        st.warning(examples.problem, icon=":material/warning:")
    with side:
        sentence = sentence_input("sentence", with_examples(checkpoint.metadata, examples))
    if not sentence:
        st.info(
            t("Type a sentence above, or click an example, to see its translation and its attention."),
            icon=":material/keyboard:",
        )
        st.stop()
else:
    upload = st.file_uploader(t("A text file, one sentence per line (UTF-8)"), key="upload")
    st.caption(
        t(
            "At most {lines} sentences and {kb} KB. Blank lines are skipped; sentences longer than the model "
            "reads ({max_len} tokens) are cut.",
            lines=MAX_UPLOAD_LINES,
            kb=MAX_UPLOAD_BYTES // 1024,
            max_len=config.max_len,
        )
    )
    int8 = int8_toggle(selection)
    if upload is None:
        st.info(t("Upload a .txt file to translate it as a batch."), icon=":material/upload_file:")
        st.stop()
    lines, problem = read_upload(upload.getvalue(), upload.name)
    if lines is None:
        st.error(t("Not translated: {problem}", problem=problem), icon=":material/error:")
        st.stop()
    batch = translate_batch(selection, lines, with_attention=False, int8=int8, **options)
    warn_truncated(batch, config.max_len)
    rows = batch_rows(lines, batch, int8=int8)
    st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        height=min(420, 38 * len(rows) + 40),
        column_config={"#": st.column_config.NumberColumn(width="small")},
    )
    stem = file_stem(upload.name.rsplit(".", 1)[0] + "-translated")
    row = st.container(horizontal=True, gap="small")
    row.download_button(
        t("Download CSV"),
        rows_to_delimited(rows, ","),
        file_name=f"{stem}.csv",
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
        width="content",
    )
    row.download_button(
        t("Download TSV"),
        rows_to_delimited(rows, "\t"),
        file_name=f"{stem}.tsv",
        mime="text/tab-separated-values",
        icon=":material/download:",
        on_click="ignore",
        width="content",
    )
    if st.session_state.get("row", 0) >= len(lines):
        st.session_state["row"] = 0
    pick = st.selectbox(
        t("Sentence to look at"),
        range(len(lines)),
        key="row",
        format_func=lambda i: f"{i + 1}. {lines[i][:100]}",
    )
    sentence = lines[pick]

# A line of several sentences: each is translated on its own (one batch) and the translations are joined.
parts = split_sentences(sentence) or [sentence]
translations = translate_for(selection, parts, with_attention=True, **options)
show_translations(translations, config.max_len, how=how)
if no_repeat:
    plain = translate_for(selection, parts, with_attention=False, beam_size=beam, alpha=alpha)
    before = join_sentences(tr.output for tr in plain)
    if before != join_sentences(tr.output for tr in translations):
        st.info(
            t("Without the constraint the search gives: {output}", output=md_escape(before)),
            icon=":material/compare_arrows:",
        )
    else:
        st.caption(t("The constraint changes nothing here: the search without it gives the same translation."))
translation = translations[sentence_picker("part", parts)] if len(parts) > 1 else translations[0]


url_default("mode", "head", allowed=tuple(MODES))
url_default("units", "pieces", allowed=UNITS)
with side:
    mode = choice_list(t("View"), MODES, "mode")
    units = st.segmented_control(
        t("Tokens"),
        UNITS,
        key="units",
        required=True,
        format_func=lambda u: t(u.capitalize()),
        help=t(
            "Sub-word pieces as the model reads them, or whole words: a word's attention is summed over its "
            "pieces on the key side and averaged over them on the query side."
        ),
    )
    sync_to_url("mode", "units")
    note_link_value("stretch", lambda raw: raw.lower() in ("true", "false"), "false")
    stretch = mode in ("head", "mean") and st.toggle(
        t("Stretch the colours to this view's largest weight"),
        key="stretch",
        bind="query-params",
        help=t(
            "Off: 0 to 1, the same scale for every head. On: 0 to the largest weight shown, which brings out "
            "the structure of heads that spread their attention."
        ),
    )


# A caption line and the gap under it at 1024 px: the decoding note took it above the figure, which now has it.
_NOTE_PX = 40
_FIGURE_SHARE = 3 / 4.35  # the figure column beside the pickers (`attention_section`)


@st.fragment
def attention_section(translation: Translation, mode: str, units: str, stretch: bool) -> None:
    """The pickers (family, layer, head) in a narrow column beside the chosen view; a fragment, so changing a
    head, a layer or the family reruns only this part, never the translation."""
    # 1.35 : 3 leaves the pickers room for four head buttons on one row at 1024 px (at 1 : 3 the fourth
    # wrapped onto a row of its own); the heatmap is sized by its height and still fits its column.
    pickers, shown = st.columns((1.35, 3), gap="medium")  # shown: _FIGURE_SHARE of the width
    with pickers:
        family = family_picker("family", vertical=True)
    view = attention_view(translation, family, units, current_language())
    summary = head_summary(view.weights, current_language())
    title = t(view.title)

    if mode == "grid":
        with shown:
            # Linked heads (issue 15.6): pointing at a query row in one head highlights it in every head.
            show_linked_grid(
                view.weights,
                view.query_labels,
                view.key_labels,
                key="translate_grid",
                title=t("{family}: all layers and heads", family=title),
                share=0.75,  # the figure column beside the pickers
            )
        st.caption(
            t(
                "Every head of every layer ({layers} × {heads}), all on the same colour scale 0–1. Hover a cell "
                "for the exact weight.",
                layers=view.n_layers,
                heads=view.n_heads,
            )
        )
        with st.expander(t("What each head does"), expanded=True):
            st.dataframe(
                [
                    {
                        t("Layer"): s["layer"],
                        t("Head"): s["head"],
                        t("Pattern"): s["pattern"],
                        t("Entropy (nats)"): round(s["entropy"], 2),
                        t("Caption"): s["caption"],
                    }
                    for s in summary
                ],
                hide_index=True,
                width="stretch",
            )
        return

    with pickers:
        # The top layer first: there cross-attention aligns words most clearly (see the model card).
        layer = number_picker("Layer", "layer", view.n_layers, default=view.n_layers)
    zmax = None if stretch else 1.0
    lang = current_language()
    # The decoding note is drawn in the sidebar, not above the figure: its line goes to the figure.
    limit = FIRST_SCREEN_FIGURE_PX + _NOTE_PX
    if mode == "head":
        with pickers:
            head = number_picker("Head", "head", view.n_heads)
            step_buttons(stepper("head", view.n_heads))
        info = summary[(layer - 1) * view.n_heads + head - 1]
        with shown:
            show_figure(
                fit_height(
                    attention_heatmap(
                        view.weights[layer - 1, head - 1],
                        view.query_labels,
                        view.key_labels,
                        title=head_title(family, layer, head, lang),
                        x_title=view.key_title,
                        y_title=view.query_title,
                        zmax=zmax,
                        show_values=len(view.key_labels) <= 12,
                        lang=lang,
                    ),
                    limit,
                    figure_column_px(_FIGURE_SHARE, COLUMN_GAP_PX),
                ),
                head_title(family, layer, head),
                key="translate_head",
            )
        st.markdown(f"**{info['caption']}**")
        st.caption(
            t(
                "Entropy {entropy:.2f} nats · mean distance {distance:.1f} tokens · mean peak weight {peak:.2f}. "
                "Rows are queries, columns are keys.",
                entropy=info["entropy"],
                distance=info["mean_distance"],
                peak=info["max_weight"],
            )
        )
    elif mode == "mean":
        with shown:
            show_figure(
                fit_height(
                    attention_heatmap(
                        average_heads(view.weights)[layer - 1],
                        view.query_labels,
                        view.key_labels,
                        title=head_title(family, layer, None, lang),
                        x_title=view.key_title,
                        y_title=view.query_title,
                        zmax=zmax,
                        lang=lang,
                    ),
                    limit,
                    figure_column_px(_FIGURE_SHARE, COLUMN_GAP_PX),
                ),
                head_title(family, layer, None),
                key="translate_mean",
            )
        st.caption(
            t(
                "The mean of the {heads} heads of layer {layer}; each row is still a distribution.",
                heads=view.n_heads,
                layer=layer,
            )
        )
    else:
        all_heads = list(range(1, view.n_heads + 1))
        note_link_value("heads", lambda raw: all(h.strip() in map(str, all_heads) for h in raw.split(",")), "all")
        if "heads" in st.session_state:
            st.session_state["heads"] = [h for h in st.session_state["heads"] if h in all_heads]
        with pickers:
            heads = st.pills(
                t("Heads"),
                all_heads,
                selection_mode="multi",
                key="heads",
                bind="query-params",
                default=None if "heads" in st.session_state else all_heads,
                help=t("Toggle heads on and off."),
            )
        if not heads:
            shown.info(t("Switch on at least one head above."), icon=":material/toggle_on:")
            return
        with shown:
            show_figure(
                fit_height(
                    head_view(
                        view.weights[layer - 1],
                        view.query_labels,
                        view.key_labels,
                        heads=[h - 1 for h in sorted(heads)],
                        title=f"{title} · {t('layer')} {layer}",
                        query_title=view.query_title,
                        key_title=view.key_title,
                        lang=lang,
                    )
                ),
                f"{view.title} layer {layer} head view",
                key="translate_lines",
            )
        st.caption(
            t(
                "Lines join each query (left) to the keys it attends to (right); thicker and more opaque means "
                "more weight. Hover a token on the left for its strongest keys; click a head in the legend to "
                "hide it."
            )
        )


attention_section(translation, mode, units, stretch)
ablation_expander(selection, config, translation, beam_size=beam, alpha=alpha)
