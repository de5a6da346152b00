"""Attention step by step (explorer/analysis/step_by_step.py and explorer/figures/step_by_step.py): every
stage of one head and query matches the model, and the √d_k demo shows what Section 3.2.1 says."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.analysis.step_by_step import (
    decoder_input,
    head_steps,
    inspect_translation,
    scaling_example,
    scaling_series,
    scaling_table,
    softmax,
    sqrt_dk_demo,
    stage_rows,
)
from explorer.config import ModelConfig
from explorer.figures.step_by_step import (
    query_row_figure,
    scaling_figure,
    softmax_comparison,
    stage_matrices,
    values_heatmap,
)
from explorer.inference import Translation, attention_for
from explorer.model.transformer import Transformer
from explorer.paper import FAMILIES

SOURCE = [7, 12, 9, 15, 3]  # ends with EOS
OUTPUT = [20, 21, 8, 3]


@pytest.fixture(scope="module")
def model() -> Transformer:
    torch.manual_seed(1)
    config = ModelConfig(
        vocab_size=30, d_model=24, n_heads=3, d_ff=48, n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=16
    )
    return Transformer(config).eval()


@pytest.fixture(scope="module")
def translation() -> Translation:
    return Translation(
        source="s",
        output="o",
        source_ids=SOURCE,
        output_ids=OUTPUT,
        source_pieces=[f"s{i}" for i in SOURCE],
        target_input_pieces=["<s>", "t20", "t21", "t8"],
        target_output_pieces=["t20", "t21", "t8", "</s>"],
        score=0.0,
        log_prob=0.0,
        finished=True,
        truncated=False,
    )


@pytest.fixture(scope="module")
def reference(model):
    """The attention maps the rest of the app shows (need_weights path), for the same pair."""
    return attention_for(model, [SOURCE], [OUTPUT])[0]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("layer", [0, 1])
def test_every_softmax_row_equals_the_models_attention(model, translation, reference, family, layer):
    view = inspect_translation(model, translation, family, layer)
    expected = reference.family(family)[layer]  # (heads, q, k)
    assert view.weights.shape == expected.shape
    for head in range(3):
        for query in range(expected.shape[1]):
            steps = head_steps(view, head, query)
            np.testing.assert_allclose(steps.weights, expected[head, query], atol=1e-6)
            assert steps.recomputed_error < 1e-5
            np.testing.assert_allclose(steps.weights.sum(), 1.0, atol=1e-6)


def test_labels_follow_the_inference_conventions(model, translation):
    assert inspect_translation(model, translation, "encoder_self", 0).query_pieces == translation.source_pieces
    decoder = inspect_translation(model, translation, "decoder_self", 0)
    assert decoder.query_pieces == decoder.key_pieces == ["<s>", "t20", "t21", "t8"]
    cross = inspect_translation(model, translation, "cross", 1)
    assert cross.query_pieces == ["t20", "t21", "t8", "</s>"] and cross.key_pieces == translation.source_pieces
    assert decoder_input(OUTPUT, 2, 16) == [2, 20, 21, 8]


def test_decoder_self_attention_is_causally_masked(model, translation):
    view = inspect_translation(model, translation, "decoder_self", 1)
    steps = head_steps(view, 2, 1)
    assert steps.allowed.tolist() == [True, True, False, False]
    assert np.isneginf(steps.masked[2:]).all() and np.isfinite(steps.masked[:2]).all()
    assert (steps.weights[2:] == 0).all()
    rows = stage_rows(steps)
    assert [r["mask"] for r in rows] == ["allowed", "allowed", "masked (−∞)", "masked (−∞)"]
    assert rows[0]["÷ √d_k"] == pytest.approx(rows[0]["q·k"] / math.sqrt(8))
    assert steps.n_masked == 2
    visible, terms = steps.weighted_terms(3)
    assert visible.tolist() == [0, 1] and terms.shape == (3, 3)
    np.testing.assert_allclose(terms[:2], steps.weighted_values[:2, :3])
    np.testing.assert_allclose(terms[-1], terms[:2].sum(axis=0), atol=1e-12)
    assert steps.difference_from(steps.weights) == 0.0
    assert steps.difference_from(np.zeros_like(steps.weights)) == pytest.approx(steps.weights.max())


def test_stages_compose_as_eq_1(model, translation):
    view = inspect_translation(model, translation, "cross", 0)
    steps = head_steps(view, 1, 2)
    assert steps.d_k == 8 and steps.q.shape == (8,) and steps.keys.shape == (5, 8)
    np.testing.assert_allclose(steps.scores, steps.keys @ steps.q, atol=1e-5)
    np.testing.assert_allclose(steps.weights, softmax(steps.scaled), atol=1e-6)
    np.testing.assert_allclose(steps.head_output, steps.weighted_values.sum(axis=0), atol=1e-6)
    np.testing.assert_allclose(steps.concatenated, steps.all_head_outputs.reshape(-1), atol=1e-6)
    np.testing.assert_allclose(steps.output, view.w_o @ steps.concatenated + view.b_o, atol=1e-5)
    # the module output is what the model computed in its forward pass
    module = model.decoder_layers[0].cross_attention
    with torch.no_grad():
        again = module.w_o(torch.tensor(steps.concatenated, dtype=torch.float32)).double().numpy()
    np.testing.assert_allclose(steps.output, again, atol=1e-5)


def test_bad_choices_raise_clear_errors(model, translation):
    with pytest.raises(ValueError, match="family"):
        inspect_translation(model, translation, "encoder", 0)
    with pytest.raises(ValueError, match="layer"):
        inspect_translation(model, translation, "cross", 2)
    view = inspect_translation(model, translation, "cross", 0)
    with pytest.raises(ValueError, match="head"):
        head_steps(view, 3, 0)
    with pytest.raises(ValueError, match="query"):
        head_steps(view, 0, 4)


# ---- why √d_k ------------------------------------------------------------------------------------------------


def test_sqrt_dk_demo_shows_variance_growth_saturation_and_vanishing_gradient():
    rows = sqrt_dk_demo([1, 16, 256, 1024], n_keys=10, samples=800, seed=0)
    for r in rows:
        assert r.variance_unscaled == pytest.approx(r.d_k, rel=0.15)
        assert r.variance_scaled == pytest.approx(1.0, rel=0.15)
        assert 0.25 < r.max_weight_scaled < 0.4  # stays spread out at every d_k
    unscaled_max = [r.max_weight_unscaled for r in rows]
    gradients = [r.gradient_unscaled for r in rows]
    assert unscaled_max == sorted(unscaled_max) and unscaled_max[-1] > 0.9
    assert gradients == sorted(gradients, reverse=True) and gradients[-1] < 0.25 * rows[-1].gradient_scaled
    assert rows[0].gradient_unscaled == pytest.approx(rows[0].gradient_scaled)  # d_k = 1: no difference
    assert [r.entropy_unscaled < r.entropy_scaled for r in rows[1:]] == [True] * 3
    assert sqrt_dk_demo([1, 16], n_keys=10, samples=800, seed=0)[1] == rows[1]
    table = scaling_table(rows)
    assert table[2]["d_k"] == 256 and table[2]["Var(q·k)"] == rows[2].variance_unscaled
    d_ks, unscaled, scaled = scaling_series(rows)
    assert d_ks == [1, 16, 256, 1024] and unscaled["largest weight"] == unscaled_max


def test_softmax_jacobian_norm_matches_autograd():
    logits = torch.tensor([[2.0, -1.0, 0.5, 3.0]], dtype=torch.float64)
    jacobian = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), logits[0])
    p = softmax(logits.numpy())
    s2, s3 = (p**2).sum(), (p**3).sum()
    assert math.sqrt(s2 - 2 * s3 + s2**2) == pytest.approx(float(torch.linalg.norm(jacobian)), rel=1e-9)


def test_scaling_example_is_two_distributions():
    unscaled, scaled = scaling_example(256, n_keys=6, seed=3)
    assert unscaled.shape == scaled.shape == (6,)
    np.testing.assert_allclose([unscaled.sum(), scaled.sum()], 1.0)
    assert unscaled.max() > scaled.max()


# ---- figures -------------------------------------------------------------------------------------------------


def test_values_heatmap_writes_the_numbers_and_centres_colours():
    fig = values_heatmap(np.array([[0.5, -2.0], [1.0, 0.25]]), ["<s>", "b"], title="K")
    trace = fig.data[0]
    assert trace.zmin == -2.0 and trace.zmax == 2.0 and trace.texttemplate == "%{z:.2f}"
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt;", "b"]
    assert fig.layout.title.text == "K"
    with pytest.raises(AssertionError):
        values_heatmap(np.zeros((2, 2)), ["only one"])


def test_stage_matrices_blank_masked_cells_and_frame_the_query():
    scores = np.array([[1.0, 2.0], [3.0, 4.0]])
    masked = np.array([[0.5, -np.inf], [1.5, 2.0]])
    weights = np.array([[1.0, 0.0], [0.4, 0.6]])
    fig = stage_matrices(scores, scores / 2, masked, weights, ["a", "b"], ["a", "b"], 1, title="stages")
    assert len(fig.data) == 4 and [t.coloraxis for t in fig.data] == ["coloraxis"] * 3 + ["coloraxis2"]
    assert np.isnan(fig.data[2].z[0][1]) and fig.data[2].z[0][0] == 0.5  # -inf is drawn blank
    shapes = fig.layout.shapes
    assert len(shapes) == 4 and all(shape.y0 == 0.5 and shape.y1 == 1.5 for shape in shapes)
    assert fig.layout.coloraxis.cmax == 4.0


def test_query_row_and_scaling_figures():
    fig = query_row_figure(
        np.array([1.0, -0.5, 0.0]), np.array([True, True, False]), np.array([0.8, 0.2, 0.0]), ["a", "b", "c"]
    )
    bars = [t for t in fig.data if t.type == "bar"]
    assert list(bars[0].x) == [0, 1] and list(bars[1].y) == [0.8, 0.2, 0.0]
    assert [t.name for t in fig.data if t.type == "scatter"] == ["masked (−∞)"]
    rows = sqrt_dk_demo([1, 4, 16], samples=50)
    fig = scaling_figure(*scaling_series(rows), title="why")
    assert len(fig.data) == 6 and fig.layout.xaxis.type == "log"
    fig = softmax_comparison(*scaling_example(64), d_k=64)
    assert "d_k = 64" in fig.layout.title.text and len(fig.data) == 2
