"""The Heads page's ablation view follows the one raw / value-weighted switch: with a head off and the switch on
value-weighted, the remaining heads are drawn as the ablated translation's value-weighted shares, computed with the
same heads off as it was decoded with (not the full model's)."""

from __future__ import annotations

import numpy as np

from explorer.checkpoint import load_checkpoint
from explorer.explain.value_weighted import value_weighted
from explorer.inference import translate
from explorer.model import HeadMask
from tests.apptest_helpers import chart, open_page, plotly_array

SENTENCE = "a b c d e f g"


def test_the_ablation_view_draws_the_ablated_models_value_weighted_shares(checkpoint_root, one_torch_thread):
    at = open_page(
        "pages/heads.py", model="reverse-fixture", h_sentence=SENTENCE, heads="cross.0.0", weighting="value_weighted"
    )
    assert not at.exception, [e.message for e in at.exception]
    figure = chart(at, "heads_remaining")
    assert "value-weighted" in figure["layout"]["title"]["text"]

    checkpoint = load_checkpoint(checkpoint_root / "reverse-fixture")
    mask = HeadMask.parse("cross.0.0", checkpoint.config)  # a head below the layer drawn
    ablated = translate(checkpoint.model, checkpoint.tokenizer, [SENTENCE], head_mask=mask, with_attention=True)[0]
    expected = value_weighted(checkpoint.model, ablated.source_ids, ablated.output_ids, mask).weighted("cross")
    unmasked = value_weighted(checkpoint.model, ablated.source_ids, ablated.output_ids).weighted("cross")
    layer = checkpoint.config.n_decoder_layers - 1  # the page opens on the last layer
    drawn = plotly_array(figure["data"][0]["z"])
    np.testing.assert_allclose(drawn, expected[layer, 0], atol=1e-6)
    assert not np.allclose(expected[layer, 0], unmasked[layer, 0], atol=1e-6), "the mask changes what is drawn"
