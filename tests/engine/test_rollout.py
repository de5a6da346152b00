"""Attention rollout (Abnar & Zuidema, 2020) and output-to-source attribution: distributions, and equal
to a computation done by hand on a 2-layer example."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.analysis.rollout import (
    disagreements,
    encoder_rollout,
    last_layer_cross,
    output_attribution,
    residual_attention,
)

# Layer 1: one head (duplicated so both layers have 2 heads); layer 2: two heads that average to uniform.
ENCODER = np.array(
    [
        [[[1.0, 0.0], [0.5, 0.5]], [[1.0, 0.0], [0.5, 0.5]]],
        [[[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]],
    ]
)  # (layers, heads, src, src)
DECODER_SELF = np.array([[[[1.0, 0.0], [1.0, 0.0]]], [[[1.0, 0.0], [0.0, 1.0]]]])  # (layers, 1, tgt, tgt)
CROSS = np.array([[[[1.0, 0.0], [0.0, 1.0]]], [[[0.0, 1.0], [0.0, 1.0]]]])  # (layers, 1, tgt, src)


def test_encoder_rollout_equals_the_hand_computation():
    # Â1 = 0.5 I + 0.5 A1 = [[1, 0], [.25, .75]]; Â2 = 0.5 I + 0.5 [[.5, .5], [.5, .5]] = [[.75, .25], [.25, .75]]
    # R = Â2 Â1 = [[.75 + .0625, .1875], [.25 + .1875, .5625]]
    rolled = encoder_rollout(ENCODER)
    assert np.allclose(rolled[0], [[1.0, 0.0], [0.25, 0.75]])
    assert np.allclose(rolled[1], [[0.8125, 0.1875], [0.4375, 0.5625]])


def test_output_attribution_equals_the_hand_computation():
    # Decoder layer 1: self mix [[1, 0], [.5, .5]] carries no source yet; cross reads C1·R = R, half of it kept:
    #   source part = 0.5 R = [[.40625, .09375], [.21875, .28125]].
    # Layer 2: self mix = I; cross reads C2·R = [[.4375, .5625]] for both rows:
    #   source part = 0.5·previous + 0.5·reads = [[.421875, .328125], [.328125, .421875]], rows sum to .75,
    #   renormalised: [[.5625, .4375], [.4375, .5625]].
    attribution = output_attribution(ENCODER, DECODER_SELF, CROSS)
    assert np.allclose(attribution, [[0.5625, 0.4375], [0.4375, 0.5625]])
    plain = last_layer_cross(CROSS)
    assert np.allclose(plain, [[0.0, 1.0], [0.0, 1.0]])
    # Output 0: the plain top layer points at source 1, the flow through all layers at source 0.
    assert disagreements(attribution, plain) == [(0, 0, 1)]


def test_residual_attention_renormalises_rows():
    assert np.allclose(residual_attention(np.array([[2.0, 0.0], [0.0, 0.0]])), [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(AssertionError, match="square"):
        residual_attention(np.ones((2, 3)))


def test_rows_are_distributions_on_a_real_model(words_checkpoint, one_torch_thread):
    from explorer.checkpoint import load_checkpoint
    from explorer.inference import translate

    loaded = load_checkpoint(words_checkpoint)
    result = translate(loaded.model, loaded.tokenizer, ["the small dog sees a red bicycle ."], with_attention=True)[0]
    att = result.attention
    rolled = encoder_rollout(att.encoder_self)
    assert np.allclose(rolled.sum(-1), 1.0) and rolled.min() >= 0
    attribution = output_attribution(att.encoder_self, att.decoder_self, att.cross)
    assert attribution.shape == (len(result.target_output_pieces), len(result.source_pieces))
    assert np.allclose(attribution.sum(-1), 1.0) and attribution.min() >= 0
