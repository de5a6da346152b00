"""The mathematics of explorer/explain on cases worked by hand, and on the tiny fixture model."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.explain.agreement import ranks, spearman
from explorer.explain.attribution import attribute
from explorer.explain.minimal_pairs import common_slots, head_changes, pattern_distance
from explorer.explain.sinks import HeadSink, is_sink_piece, sink_shares
from explorer.explain.value_weighted import transformed_value_norms, value_weighted, weight_by_values
from explorer.inference import translate

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def words(words_checkpoint):
    checkpoint = load_checkpoint(words_checkpoint)
    translation = translate(checkpoint.model, checkpoint.tokenizer, ["a man rides a bicycle ."], with_attention=True)
    return checkpoint, translation[0]


# ---- value weighting -------------------------------------------------------------------------------------


def test_value_weighting_on_two_tokens_by_hand():
    # One head, d_v = 1, d_model = 2: v = (1, 2), W^O = (3, 4)ᵀ, so f(x_0) = (3, 4), f(x_1) = (6, 8), ‖f‖ = 5, 10.
    value = torch.tensor([[[1.0], [2.0]]])  # (heads, k, d_v)
    w_o = torch.tensor([[3.0], [4.0]])  # (d_model, heads · d_v)
    norms = transformed_value_norms(value, w_o)
    np.testing.assert_allclose(norms.numpy(), [[5.0, 10.0]])
    # α = (0.8, 0.2): ‖α f‖ = (4, 2); as shares of the row 2/3 and 1/3, though the weights say 0.8 and 0.2.
    weighted = weight_by_values(np.array([[[0.8, 0.2]]]), norms.numpy())
    np.testing.assert_allclose(weighted, [[[4.0, 2.0]]])


def test_value_norms_use_each_heads_own_slice_of_the_output_projection():
    # Two heads, d_v = 1: head 0 reads column 0 of W^O, head 1 column 1.
    value = torch.tensor([[[1.0]], [[1.0]]])  # (heads=2, k=1, d_v=1)
    w_o = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(transformed_value_norms(value, w_o).numpy(), [[1.0], [2.0]])


def test_value_weighted_raw_weights_are_the_models_attention(words):
    checkpoint, translation = words
    explained = value_weighted(checkpoint.model, translation.source_ids, translation.output_ids)
    config = checkpoint.config
    for family in ("encoder_self", "decoder_self", "cross"):
        np.testing.assert_allclose(explained.raw.family(family), translation.attention.family(family), atol=1e-5)
        norms = explained.norms[family]
        assert norms.shape == explained.raw.family(family).shape and (norms >= 0).all()
        assert norms.shape[1] == config.n_heads
        np.testing.assert_allclose(explained.weighted(family).sum(-1), 1.0, atol=1e-6)
    assert explained.norms["encoder_self"].shape[0] == config.n_encoder_layers


# ---- sinks -----------------------------------------------------------------------------------------------


def test_sink_pieces():
    assert all(is_sink_piece(p) for p in ("</s>", "<s>", "▁.", ",", "!?"))
    assert not any(is_sink_piece(p) for p in ("▁dog", "▁", "a.", "s"))


def test_a_head_that_looks_at_the_end_but_moves_little_from_it_is_a_sink():
    raw = np.array([[[[0.9, 0.1], [0.7, 0.3]]]])  # (layers, heads, q, k); key 0 is "</s>"
    weighted = np.array([[[[0.2, 0.8], [0.1, 0.9]]]])
    raw_share, weighted_share = sink_shares(raw, weighted, [True, False])
    np.testing.assert_allclose(raw_share, [[0.8]])
    np.testing.assert_allclose(weighted_share, [[0.15]])
    assert HeadSink("cross", 0, 0, 0.8, 0.15).is_sink
    assert not HeadSink("cross", 0, 0, 0.8, 0.6).is_sink, "moves most of what it looks at"
    assert not HeadSink("cross", 0, 0, 0.3, 0.0).is_sink, "most of its weight is elsewhere"


# ---- attribution -----------------------------------------------------------------------------------------


def test_integrated_gradients_are_complete_and_the_function_is_the_models(words):
    checkpoint, translation = words
    found = attribute(checkpoint.model, translation.source_ids, translation.output_ids, n_steps=64)
    assert [a.position for a in found] == list(range(len(translation.output_ids)))
    # F(e) is the model's own log-probability: the tokens' sum is the translation's.
    assert sum(a.log_prob for a in found) == pytest.approx(translation.log_prob, abs=1e-4)
    for a in found:
        assert a.integrated_gradients.shape == a.gradient_x_input.shape == (len(translation.source_ids),)
        # Completeness (Sundararajan et al., Proposition 1): Σ IG = F(e) − F(0), up to the quadrature.
        assert float(a.integrated_gradients.sum()) == pytest.approx(a.delta, abs=0.02 * abs(a.delta) + 1e-3)
        assert a.completeness_error == pytest.approx(float(a.integrated_gradients.sum()) - a.delta, abs=1e-3)
    assert all(p.grad is None for p in checkpoint.model.parameters()), "the shared model's .grad stays empty"


def test_attribution_of_chosen_positions_equals_that_of_all(words):
    checkpoint, translation = words
    every = attribute(checkpoint.model, translation.source_ids, translation.output_ids, n_steps=8)
    one = attribute(checkpoint.model, translation.source_ids, translation.output_ids, [2], n_steps=8)[0]
    np.testing.assert_allclose(one.integrated_gradients, every[2].integrated_gradients, atol=1e-4)
    np.testing.assert_allclose(one.gradient_x_input, every[2].gradient_x_input, atol=1e-4)


# ---- rank correlation ------------------------------------------------------------------------------------


def test_spearman_by_hand():
    np.testing.assert_allclose(ranks(np.array([3.0, 1.0, 3.0])), [2.5, 1.0, 2.5])
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0])) == pytest.approx(1.0)
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == pytest.approx(-1.0)
    # Ranks (1, 2, 3) against (1, 3, 2): 1 − 6·Σd²/(n(n²−1)) = 1 − 6·2/24 = 0.5.
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])) == pytest.approx(0.5)
    assert math.isnan(spearman(np.ones(3), np.array([1.0, 2.0, 3.0])))


# ---- minimal pairs ---------------------------------------------------------------------------------------


def test_common_slots_pair_shared_pieces_and_group_what_differs():
    a, b = common_slots(["A", "dog", "runs", "."], ["Two", "dogs", "run", "."])
    assert a == [[0, 1, 2], [3]] and b == [[0, 1, 2], [3]]
    a, b = common_slots(["a", "dog"], ["a", "big", "dog"])
    assert a == [[0], [], [1]] and b == [[0], [1], [2]]


def test_pattern_distance_by_hand():
    pieces = (["x", "y"], ["x", "y"])
    same = np.array([[[[1.0, 0.0], [0.0, 1.0]]]])
    swapped = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])
    half = np.array([[[[0.5, 0.5], [0.0, 1.0]]]])
    np.testing.assert_allclose(pattern_distance(same, same, pieces, pieces), [[0.0]])
    np.testing.assert_allclose(pattern_distance(same, swapped, pieces, pieces), [[1.0]])
    np.testing.assert_allclose(pattern_distance(same, half, pieces, pieces), [[0.25]])  # (0.5 + 0) / 2


def test_identical_sentences_change_no_head(words):
    _, translation = words
    changes = head_changes(translation, translation)
    assert changes and all(c.distance == 0.0 for c in changes)
