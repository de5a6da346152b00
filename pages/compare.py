"""Compare heads: two to four attention heads side by side on one colour scale — different heads on one
sentence, one head in two checkpoints, or one head on two sentences."""

from __future__ import annotations

import streamlit as st

from explorer.analysis.heads import head_summary
from explorer.figures.compare import Panel, compare_heads
from explorer.inference import Translation
from explorer.paper import FAMILY_SHORT
from ui.attention_controls import choice_list, family_picker, number_picker, sentence_input, show_translation
from ui.attention_view import UNITS, attention_view
from ui.figures import show_figure
from ui.heads_ablation import ablation_expander
from ui.i18n import current_language, t
from ui.layout import controls, fit_height, page_header
from ui.linked_heads import show_linked_heads
from ui.model_cache import current_model, require_model, translate_for
from ui.model_picker import MODEL_KEY, Selection, checkpoint_choices, weights_version
from ui.presenter import step_buttons, stepper
from ui.urlstate import note_link_value, sync_to_url, url_default

COMPARE = {
    "heads": "Heads on one sentence",
    "checkpoints": "One head, two checkpoints",
    "sentences": "One head, two sentences",
}
SCALES = {"fixed": "0 to 1", "shared": "0 to the largest weight shown"}
PANEL_COUNTS = (2, 3, 4)

selection, checkpoint = require_model()

page_header(
    t("Compare heads"),
    t(
        "Put attention heads next to each other on the **same colour scale**: do two heads of one layer split "
        "the work (Section 3.2.2: *multi-head attention allows the model to jointly attend to information from "
        "different representation subspaces*)? Does a head look the same in a toy model and in a translator, "
        "or early and late in training? Does it do the same on another sentence?"
    ),
)

url_default("c_compare", "heads", allowed=tuple(COMPARE))
url_default("c_scale", "fixed", allowed=tuple(SCALES))
url_default("c_units", "pieces", allowed=UNITS)
side = controls()
what = choice_list(t("Compare"), COMPARE, "c_compare", where=side)
scale = choice_list(
    t("Colour scale"),
    SCALES,
    "c_scale",
    help=t("Either way every panel uses the same scale, so equal colours mean equal weights."),
    where=side,
)
units = side.segmented_control(
    t("Tokens"),
    UNITS,
    key="c_units",
    required=True,
    format_func=lambda u: t(u.capitalize()),
    help=t("Sub-word pieces, or whole words (summed over a word's pieces as keys, averaged as queries)."),
)
sync_to_url("c_compare", "c_scale", "c_units")
note_link_value("c_linked", lambda raw: raw.lower() in ("true", "false"), "true")
linked = side.toggle(
    t("Link the heads on hover"),
    value=True,
    key="c_linked",
    bind="query-params",
    help=t(
        "On: pointing at a query's row in one head highlights the same query in every head (in the browser, "
        "no rerun). Off: the plotly figure, with PNG and SVG downloads."
    ),
)


def panel(translation: Translation, family: str, layer: int, head: int, prefix: str = "") -> tuple[Panel, str]:
    """One head as a figure panel, plus the caption that says what it does."""
    view = attention_view(translation, family, units)
    info = head_summary(view.weights[layer - 1 : layer, head - 1 : head], current_language())[0]
    title = f"{prefix}{t(FAMILY_SHORT[family])} · {t('layer')} {layer} · {t('head')} {head}"
    return (
        Panel(
            view.weights[layer - 1, head - 1],
            view.query_labels,
            view.key_labels,
            title,
            view.query_title,
            view.key_title,
        ),
        f"**{title}** {info['behaviour']}",
    )


def step_all_heads(count: int, n_heads: int):
    """Presenter mode: the remote moves every panel to its next (or previous) head."""
    steps = [stepper(f"c_h{i}", n_heads) for i in range(count)]
    return lambda direction: [step(direction) for step in steps]


def layers_of(family: str, n_encoder: int, n_decoder: int) -> int:
    return n_encoder if family == "encoder_self" else n_decoder


def show(panels: list[tuple[Panel, str]], name: str) -> None:
    zmax = 1.0 if scale == "fixed" else None
    if linked:
        show_linked_heads([p for p, _ in panels], key="compare_linked", zmax=zmax)
    else:
        figure = compare_heads([p for p, _ in panels], zmax=zmax, lang=current_language())
        show_figure(fit_height(figure, width=900), name, key="compare_figure")
    for _, caption in panels:
        st.markdown(caption)


config = checkpoint.config
# The translate page's sentence, when there is one, is the natural one to compare heads on.
translate_sentence = st.session_state.get("sentence")
if what == "heads":
    with side:
        sentence = sentence_input("c_sentence", checkpoint.metadata, default=translate_sentence)
    note_link_value("c_n", [str(n) for n in PANEL_COUNTS], 2)
    count = side.segmented_control(
        t("How many heads"),
        PANEL_COUNTS,
        key="c_n",
        required=True,
        bind="query-params",
        default=None if "c_n" in st.session_state else 2,
    )
    if not sentence:
        st.info(t("Type a sentence above, or click an example."), icon=":material/keyboard:")
        st.stop()
    translation = translate_for(selection, [sentence], with_attention=True)[0]
    show_translation(translation, config.max_len, how=t("{name}, greedy decoding", name=selection.name))
    chosen = []
    for i in range(count):
        with side.container(border=True):
            family = family_picker(f"c_f{i}", label=t("View {n}", n=i + 1), short=True, help=None, vertical=True)
            n_layers = layers_of(family, config.n_encoder_layers, config.n_decoder_layers)
            # Defaults walk through the heads of the last layer, then the layer before.
            layer = number_picker("Layer", f"c_l{i}", n_layers, default=n_layers - i // config.n_heads)
            head = number_picker("Head", f"c_h{i}", config.n_heads, default=i % config.n_heads + 1)
        chosen.append(panel(translation, family, layer, head))
    show(chosen, f"compare {count} heads")
    step_buttons(step_all_heads(count, config.n_heads))
    ablation_expander(selection, config, translation, prefix="cm")

elif what == "checkpoints":
    choices = checkpoint_choices()
    here = st.session_state.get(MODEL_KEY, selection.name)
    others = [label for label in choices if label != here]
    if not others:
        st.info(
            t(
                "There is only one checkpoint. Train another on the **Train** page, or upload one in the sidebar, "
                "to compare the same head in two models."
            ),
            icon=":material/info:",
        )
        st.stop()
    note_link_value("c_model2", others, others[0])
    if st.session_state.get("c_model2") not in (None, *others):
        st.session_state["c_model2"] = others[0]
    left, right = st.columns(2, gap="large")
    left.markdown(t("First checkpoint (chosen in the sidebar)  \n**{name}**", name=here))
    other_label = right.selectbox(t("Second checkpoint"), others, key="c_model2", bind="query-params")
    other_path = choices[other_label]
    other_selection = Selection(other_path, selection.device, weights_version(other_path))
    other = current_model(other_selection)
    if other is None:
        st.stop()
    sentence = sentence_input("c_sentence", checkpoint.metadata, default=translate_sentence)
    family = family_picker("c_family")
    if not sentence:
        st.info(t("Type a sentence above, or click an example."), icon=":material/keyboard:")
        st.stop()
    chosen = []
    models = ((selection, checkpoint, here), (other_selection, other, other_label))
    for i, (column, (sel, ckpt, label)) in enumerate(zip(st.columns(2, gap="large", border=True), models, strict=True)):
        with column:
            translation = translate_for(sel, [sentence], with_attention=True)[0]
            show_translation(translation, ckpt.config.max_len, how=t("{name}, greedy decoding", name=label))
            n_layers = layers_of(family, ckpt.config.n_encoder_layers, ckpt.config.n_decoder_layers)
            layer = number_picker("Layer", f"c_l{i}", n_layers, default=n_layers)
            head = number_picker("Head", f"c_h{i}", ckpt.config.n_heads)
        chosen.append(panel(translation, family, layer, head, prefix=f"{label}: "))
    show(chosen, f"compare {here} {other_label}")

else:
    left, right = st.columns(2, gap="large", border=True)
    with left:
        sentence = sentence_input("c_sentence", checkpoint.metadata, label="First sentence", default=translate_sentence)
    with right:
        sentence2 = sentence_input("c_sentence2", checkpoint.metadata, label="Second sentence", example=1)
    family = family_picker("c_family")
    n_layers = layers_of(family, config.n_encoder_layers, config.n_decoder_layers)
    left, right = st.columns((1, 2), gap="large")
    with left:
        layer = number_picker("Layer", "c_layer", n_layers, default=n_layers)
    with right:
        head = number_picker("Head", "c_head", config.n_heads)
    if not sentence or not sentence2:
        st.info(t("Type both sentences, or click examples."), icon=":material/keyboard:")
        st.stop()
    translations = translate_for(selection, [sentence, sentence2], with_attention=True)
    chosen = []
    for i, (column, translation) in enumerate(zip(st.columns(2, gap="large"), translations, strict=True)):
        with column:
            show_translation(translation, config.max_len, how=t("sentence {n}, greedy decoding", n=i + 1))
        chosen.append(panel(translation, family, layer, head, prefix=t("Sentence {n}: ", n=i + 1)))
    show(chosen, f"compare sentences layer {layer} head {head}")
