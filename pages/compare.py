"""Compare heads: two to four attention heads side by side on one colour scale — different heads on one
sentence, one head in two checkpoints, or one head on two sentences."""

from __future__ import annotations

import streamlit as st

from explorer.analysis.heads import head_summary
from explorer.figures.compare import Panel, compare_heads
from explorer.inference import Translation
from ui.attention_view import FAMILY_SHORT, UNITS, attention_view
from ui.figures import show_figure
from ui.state import Selection, checkpoint_choices, current_model, require_model, translate_for, weights_version
from ui.translate_view import PERSIST, family_picker, number_picker, sentence_input, show_translation
from ui.frame import ensure_frame
from ui.urlstate import sync_to_url, url_default

ensure_frame()

COMPARE = {"heads": "Heads on one sentence", "checkpoints": "One head, two checkpoints",
           "sentences": "One head, two sentences"}
SCALES = {"fixed": "0 to 1", "shared": "0 to the largest weight shown"}
PANEL_COUNTS = (2, 3, 4)

selection, checkpoint = require_model()

st.title("Compare heads")
st.markdown(
    "Put attention heads next to each other on the **same colour scale**: do two heads of one layer split "
    "the work (Section 3.2.2: *multi-head attention allows the model to jointly attend to information from "
    "different representation subspaces*)? Does a head look the same in a toy model and in a translator, "
    "or early and late in training? Does it do the same on another sentence?"
)

url_default("c_compare", "heads", allowed=tuple(COMPARE))
url_default("c_scale", "fixed", allowed=tuple(SCALES))
url_default("c_units", "pieces", allowed=UNITS)
what = st.segmented_control("Compare", tuple(COMPARE), key="c_compare", required=True, format_func=COMPARE.get,
                            persist_state=PERSIST)
second, third = st.columns((3, 2), gap="large")
scale = second.segmented_control("Colour scale", tuple(SCALES), key="c_scale", required=True, persist_state=PERSIST,
                                 format_func=SCALES.get,
                                 help="Either way every panel uses the same scale, so equal colours mean equal "
                                      "weights.")
units = third.segmented_control("Tokens", UNITS, key="c_units", required=True, format_func=str.capitalize,
                                persist_state=PERSIST,
                                help="Sub-word pieces, or whole words (summed over a word's pieces as keys, "
                                     "averaged as queries).")
sync_to_url("c_compare", "c_scale", "c_units")


def panel(translation: Translation, family: str, layer: int, head: int, prefix: str = "") -> tuple[Panel, str]:
    """One head as a figure panel, plus the caption that says what it does."""
    view = attention_view(translation, family, units)
    info = head_summary(view.weights[layer - 1: layer, head - 1: head])[0]
    title = f"{prefix}{FAMILY_SHORT[family]} \u00b7 layer {layer} \u00b7 head {head}"
    return (Panel(view.weights[layer - 1, head - 1], view.query_labels, view.key_labels, title,
                  view.query_title, view.key_title),
            f"**{title}** {info['caption'].removeprefix('Layer 1, head 1 ')}")


def layers_of(family: str, n_encoder: int, n_decoder: int) -> int:
    return n_encoder if family == "encoder_self" else n_decoder


def show(panels: list[tuple[Panel, str]], name: str) -> None:
    figure = compare_heads([p for p, _ in panels], zmax=1.0 if scale == "fixed" else None)
    show_figure(figure, name, key="compare_figure")
    for _, caption in panels:
        st.markdown(caption)


config = checkpoint.config
# The translate page's sentence, when there is one, is the natural one to compare heads on.
translate_sentence = st.session_state.get("sentence")
if what == "heads":
    sentence = sentence_input("c_sentence", checkpoint.metadata, default=translate_sentence)
    url_default("c_n", 2, int, allowed=PANEL_COUNTS)
    count = st.segmented_control("How many heads", PANEL_COUNTS, key="c_n", required=True, persist_state=PERSIST)
    sync_to_url("c_sentence", "c_n")
    if not sentence:
        st.info("Type a sentence above, or click an example.", icon=":material/keyboard:")
        st.stop()
    translation = translate_for(selection, [sentence], with_attention=True)[0]
    show_translation(translation, config.max_len, how=f"{selection.name}, greedy decoding")
    chosen = []
    for i, column in enumerate(st.columns(count, gap="medium", border=True)):
        with column:
            family = family_picker(f"c_f{i}", label=f"View {i + 1}", short=True, help=None)
            n_layers = layers_of(family, config.n_encoder_layers, config.n_decoder_layers)
            # Defaults walk through the heads of the last layer, then the layer before.
            layer = number_picker("Layer", f"c_l{i}", n_layers, default=n_layers - i // config.n_heads)
            head = number_picker("Head", f"c_h{i}", config.n_heads, default=i % config.n_heads + 1)
        sync_to_url(f"c_f{i}", f"c_l{i}", f"c_h{i}")
        chosen.append(panel(translation, family, layer, head))
    show(chosen, f"compare {count} heads")

elif what == "checkpoints":
    choices = checkpoint_choices()
    here = st.session_state.get("checkpoint_label", selection.name)
    others = [label for label in choices if label != here]
    if not others:
        st.info("There is only one checkpoint. Train another on the **Train** page, or upload one in the sidebar, "
                "to compare the same head in two models.", icon=":material/info:")
        st.stop()
    url_default("c_model2", others[0], allowed=others)
    left, right = st.columns(2, gap="large")
    left.markdown(f"First checkpoint (chosen in the sidebar)  \n**{here}**")
    other_label = right.selectbox("Second checkpoint", others, key="c_model2", persist_state=PERSIST)
    other_path = choices[other_label]
    other = current_model(Selection(other_path, selection.device, weights_version(other_path)))
    if other is None:
        st.stop()
    other_selection = Selection(other_path, selection.device, weights_version(other_path))
    sentence = sentence_input("c_sentence", checkpoint.metadata, default=translate_sentence)
    family = family_picker("c_family")
    sync_to_url("c_model2", "c_sentence", "c_family")
    if not sentence:
        st.info("Type a sentence above, or click an example.", icon=":material/keyboard:")
        st.stop()
    chosen = []
    models = ((selection, checkpoint, here), (other_selection, other, other_label))
    for i, (column, (sel, ckpt, label)) in enumerate(zip(st.columns(2, gap="large", border=True), models)):
        with column:
            translation = translate_for(sel, [sentence], with_attention=True)[0]
            show_translation(translation, ckpt.config.max_len, how=f"{label}, greedy decoding")
            n_layers = layers_of(family, ckpt.config.n_encoder_layers, ckpt.config.n_decoder_layers)
            layer = number_picker("Layer", f"c_l{i}", n_layers, default=n_layers)
            head = number_picker("Head", f"c_h{i}", ckpt.config.n_heads)
        sync_to_url(f"c_l{i}", f"c_h{i}")
        chosen.append(panel(translation, family, layer, head, prefix=f"{label}: "))
    show(chosen, f"compare {here} {other_label}")

else:
    left, right = st.columns(2, gap="large", border=True)
    with left:
        sentence = sentence_input("c_sentence", checkpoint.metadata, label="First sentence",
                                  default=translate_sentence)
    with right:
        sentence2 = sentence_input("c_sentence2", checkpoint.metadata, label="Second sentence", example=1)
    family = family_picker("c_family")
    n_layers = layers_of(family, config.n_encoder_layers, config.n_decoder_layers)
    left, right = st.columns((1, 2), gap="large")
    with left:
        layer = number_picker("Layer", "c_layer", n_layers, default=n_layers)
    with right:
        head = number_picker("Head", "c_head", config.n_heads)
    sync_to_url("c_sentence", "c_sentence2", "c_family", "c_layer", "c_head")
    if not sentence or not sentence2:
        st.info("Type both sentences, or click examples.", icon=":material/keyboard:")
        st.stop()
    translations = translate_for(selection, [sentence, sentence2], with_attention=True)
    chosen = []
    for i, (column, translation) in enumerate(zip(st.columns(2, gap="large"), translations)):
        with column:
            show_translation(translation, config.max_len, how=f"sentence {i + 1}, greedy decoding")
        chosen.append(panel(translation, family, layer, head, prefix=f"Sentence {i + 1}: "))
    show(chosen, f"compare sentences layer {layer} head {head}")
