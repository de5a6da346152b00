"""Figure 1's labels under the embeddings, as the paper draws them: "Inputs" under the encoder's and
"Outputs (shifted right)" under the decoder's, each above its stack's name, in English and Korean."""

from __future__ import annotations

import pytest

from explorer.figures.architecture import DECODER_X, ENCODER_X, HEIGHT, architecture_figure
from explorer.tour import numbers

EXPECTED = {
    "en": {"Inputs": ENCODER_X, "Outputs (shifted right)": DECODER_X},
    "ko": {"입력": ENCODER_X, "출력 (한 칸 오른쪽으로 이동)": DECODER_X},
}
STACKS = {"en": ("Encoder", "Decoder"), "ko": ("인코더", "디코더")}


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_embeddings_are_labelled_inputs_and_outputs_shifted_right(lang: str) -> None:
    fig = architecture_figure(numbers.ENCODER_BLOCKS, numbers.DECODER_BLOCKS, {}, n_encoder=6, n_decoder=6, lang=lang)
    notes = {a.text: a for a in fig.layout.annotations if a.text}
    stacks = [notes[f"<b>{name}</b>"] for name in STACKS[lang]]
    bottom = fig.layout.yaxis.range[0]
    for text, x in EXPECTED[lang].items():
        feed = notes[text]
        stack = next(s for s in stacks if s.x == x)
        # Centred under its embedding (whose box ends at -HEIGHT / 2), above the stack's name, inside the plot.
        assert feed.x == x
        assert stack.y < feed.y < -HEIGHT / 2
        assert bottom < stack.y
