"""Is attention explanation? The evidence beside the attention weights, on the live model: what each head
moves (value-weighted attention, sinks), what the output owes to each source piece (attribution, and which
attention agrees with it), and which heads change between two sentences that differ in one word."""

from __future__ import annotations

from ui.attention_controls import choice_list, sentence_input, show_translation
from ui.explain.alignment import alignment_section
from ui.explain.attribution import attribution_section
from ui.explain.beam import ablated_beam_section
from ui.explain.exercise import exercise_section
from ui.explain.pairs import pairs_section
from ui.explain.values import values_section
from ui.i18n import t
from ui.layout import controls, page_header
from ui.model_cache import require_model, translate_for

VIEWS = {
    "values": "Value-weighted attention and sinks",
    "attribution": "Attribution against attention",
    "pairs": "Minimal pairs",
    "alignment": "Heads as word aligners",
    "exercise": "Exercise: what does a head looking at “.” take?",
    "beam": "Ablation meets beam search",
}

selection, checkpoint = require_model()

page_header(
    t("Is attention explanation?"),
    t(
        "A heatmap shows where a head looks. Does that say why the model produced a word? Four kinds of evidence, "
        "computed from the loaded model: what a head actually moves from each token (the weight times the length "
        "of the transformed value, Kobayashi et al., 2020), what the output owes to each source word by "
        "attribution (gradient × input and integrated gradients, Sundararajan et al., 2017) and how well each "
        "kind of attention agrees with it, which heads change between two sentences that differ in one word, and "
        "how well each cross-attention head aligns words."
    ),
)

side = controls()
view = choice_list(t("Show"), VIEWS, "x_view", "values", where=side)
if view == "pairs":
    pairs_section(side, selection, checkpoint)
elif view == "alignment":
    alignment_section(side, selection, checkpoint)
else:
    with side:
        sentence = sentence_input("x_sentence", checkpoint.metadata)
    if sentence:
        translation = translate_for(selection, [sentence], with_attention=True)[0]
        show_translation(translation, checkpoint.config.max_len, how=t("{name}, greedy decoding", name=selection.name))
        if view == "values":
            values_section(side, selection, checkpoint, translation)
        elif view == "exercise":
            exercise_section(selection, translation)
        elif view == "beam":
            ablated_beam_section(side, selection, checkpoint, sentence)
        else:
            attribution_section(side, selection, translation)
