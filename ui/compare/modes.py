"""Compare's three comparisons: heads on one sentence, one head in two checkpoints, one head on two
sentences. Each draws its pickers, translates, and shows the panels (ui/compare/panels.py)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.checkpoint import Checkpoint
from ui.attention_controls import drawn_values, family_picker, number_picker, sentence_input, show_translation
from ui.compare.panels import CompareChoice, layers_of, panel, show_panels, step_all_heads
from ui.heads.ablation import ablation_expander
from ui.i18n import t
from ui.markdown import shown_value
from ui.model_cache import current_model, translate_for
from ui.model_picker import MODEL_KEY, Selection, checkpoint_choices, weights_version
from ui.presenter import step_buttons
from ui.urlstate import bound_buttons, bound_choice

PANEL_COUNTS = (2, 3, 4)


def _translate_page_sentence() -> str | None:
    """The translate page's sentence, when there is one: the natural one to compare heads on."""
    return st.session_state.get("sentence")


def _type_hint(message: str) -> None:
    st.info(message, icon=":material/keyboard:")


def heads_section(side: Any, selection: Selection, checkpoint: Checkpoint, choice: CompareChoice) -> None:
    """Two to four heads of one translation, each with its own (family, layer, head) in the sidebar."""
    config = checkpoint.config
    with side:
        sentence = sentence_input("c_sentence", checkpoint.metadata, default=_translate_page_sentence())
    count = bound_buttons(side.segmented_control, t("How many heads"), PANEL_COUNTS, "c_n", 2, required=True)
    if not sentence:
        _type_hint(t("Type a sentence above, or click an example."))
        return
    translation = translate_for(selection, [sentence], with_attention=True)[0]
    show_translation(translation, config.max_len, how=t("{name}, greedy decoding", name=selection.name))
    explained = drawn_values(selection, translation, choice.weighting)
    chosen = []
    for i in range(count):
        with side.container(border=True):
            family = family_picker(f"c_f{i}", label=t("View {n}", n=i + 1), short=True, help=None, vertical=True)
            n_layers = layers_of(family, config.n_encoder_layers, config.n_decoder_layers)
            # Defaults walk through the heads of the last layer, then the layer before.
            layer = number_picker("Layer", f"c_l{i}", n_layers, default=n_layers - i // config.n_heads)
            head = number_picker("Head", f"c_h{i}", config.n_heads, default=i % config.n_heads + 1)
        chosen.append(panel(translation, family, layer, head, choice.units, explained=explained))
    show_panels(chosen, choice, f"compare {count} heads")
    step_buttons(step_all_heads(count, config.n_heads))
    ablation_expander(selection, config, translation, prefix="cm")


def checkpoints_section(selection: Selection, checkpoint: Checkpoint, choice: CompareChoice) -> None:
    """The same head (family, layer, head) in the sidebar's checkpoint and in a second one."""
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
        return
    left, right = st.columns(2, gap="large")
    left.markdown(t("First checkpoint (chosen in the sidebar)  \n**{name}**", name=shown_value(here)))
    # Kept in the URL by its label: checkpoint names are not translated.
    other_label = bound_choice(right.selectbox, t("Second checkpoint"), others, "c_model2", others[0])
    other_path = choices[other_label]
    other_selection = Selection(other_path, selection.device, weights_version(other_path))
    other = current_model(other_selection)
    if other is None:
        return
    sentence = sentence_input("c_sentence", checkpoint.metadata, default=_translate_page_sentence())
    family = family_picker("c_family")
    if not sentence:
        _type_hint(t("Type a sentence above, or click an example."))
        return
    chosen = []
    models = ((selection, checkpoint, here), (other_selection, other, other_label))
    for i, (column, (sel, ckpt, label)) in enumerate(zip(st.columns(2, gap="large", border=True), models, strict=True)):
        with column:
            translation = translate_for(sel, [sentence], with_attention=True)[0]
            show_translation(translation, ckpt.config.max_len, how=t("{name}, greedy decoding", name=label))
            n_layers = layers_of(family, ckpt.config.n_encoder_layers, ckpt.config.n_decoder_layers)
            layer = number_picker("Layer", f"c_l{i}", n_layers, default=n_layers)
            head = number_picker("Head", f"c_h{i}", ckpt.config.n_heads)
        explained = drawn_values(sel, translation, choice.weighting)
        chosen.append(panel(translation, family, layer, head, choice.units, f"{label}: ", explained=explained))
    show_panels(chosen, choice, f"compare {here} {other_label}")


def sentences_section(selection: Selection, checkpoint: Checkpoint, choice: CompareChoice) -> None:
    """One head (family, layer, head) on two sentences."""
    config = checkpoint.config
    left, right = st.columns(2, gap="large", border=True)
    with left:
        sentence = sentence_input(
            "c_sentence", checkpoint.metadata, label="First sentence", default=_translate_page_sentence()
        )
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
        _type_hint(t("Type both sentences, or click examples."))
        return
    translations = translate_for(selection, [sentence, sentence2], with_attention=True)
    chosen = []
    for i, (column, translation) in enumerate(zip(st.columns(2, gap="large"), translations, strict=True)):
        with column:
            show_translation(translation, config.max_len, how=t("sentence {n}, greedy decoding", n=i + 1))
        explained = drawn_values(selection, translation, choice.weighting)
        prefix = t("Sentence {n}: ", n=i + 1)
        chosen.append(panel(translation, family, layer, head, choice.units, prefix, explained=explained))
    show_panels(chosen, choice, f"compare sentences layer {layer} head {head}")
