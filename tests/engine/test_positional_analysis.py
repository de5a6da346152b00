"""Positional-encoding analysis (explorer/analysis/positional.py): the table, similarity, the shift as a
rotation, and the norms of the token and position terms of a model's input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.analysis.positional import (
    dims_for_wavelengths,
    embedding_norms,
    learned_table,
    offset_spread,
    pair_wavelengths,
    shift_linearity,
    similarity,
    sinusoid_table,
)
from explorer.config import ModelConfig
from explorer.model.positional import shift_matrix
from explorer.model.transformer import Transformer


def reference_table(n: int, d: int) -> np.ndarray:
    """Section 3.5 written out independently of the model code."""
    pe = np.zeros((n, d))
    for pos in range(n):
        for dim in range(d):
            angle = pos / 10000 ** (2 * (dim // 2) / d)
            pe[pos, dim] = np.sin(angle) if dim % 2 == 0 else np.cos(angle)
    return pe


@pytest.mark.parametrize("d_model", [8, 33, 64])
def test_sinusoid_table_is_the_papers_formula_in_float64(d_model):
    table = sinusoid_table(50, d_model)
    assert table.dtype == np.float64 and table.shape == (50, d_model)
    np.testing.assert_allclose(table, reference_table(50, d_model), atol=1e-12)


def test_wavelengths_run_from_two_pi_towards_10000_two_pi_geometrically():
    lengths = pair_wavelengths(512)
    assert lengths.shape == (256,)
    assert lengths[0] == pytest.approx(2 * np.pi)
    assert 2 * np.pi * 9000 < lengths[-1] < 2 * np.pi * 10000
    ratios = lengths[1:] / lengths[:-1]
    np.testing.assert_allclose(ratios, 10000 ** (2 / 512))


@pytest.mark.parametrize("offset", [1, 7, 40, -3])
@pytest.mark.parametrize("d_model", [16, 512])
def test_shift_is_one_rotation_for_every_position(offset, d_model):
    check = shift_linearity(offset, d_model, positions=120)
    assert check.max_abs_error < 1e-10
    assert check.max_rotation_error < 1e-12
    assert check.matrix.shape == (d_model, d_model)
    # Block-diagonal: nothing outside the 2 × 2 blocks.
    outside = check.matrix.copy()
    for i in range(0, d_model, 2):
        outside[i : i + 2, i : i + 2] = 0
    assert np.abs(outside).max() == 0


def test_shift_check_detects_a_wrong_matrix():
    table = sinusoid_table(60, 32)
    wrong = shift_matrix(4, 32).numpy()  # rotation for k = 4 used for k = 5
    assert np.abs(table[:50] @ wrong - table[5:55]).max() > 1e-2


def test_cosine_similarity_depends_only_on_offset_for_sinusoids():
    sim = similarity(sinusoid_table(80, 64), "cosine")
    np.testing.assert_allclose(np.diag(sim), 1.0)
    np.testing.assert_allclose(sim, sim.T)
    assert offset_spread(sim).max() < 1e-10
    # PE(p)·PE(p+k) = Σ cos(k ω_i): check one offset against the closed form.
    omega = 1 / 10000 ** (np.arange(0, 64, 2) / 64)
    dot = similarity(sinusoid_table(80, 64), "dot")
    np.testing.assert_allclose(np.diagonal(dot, offset=9), np.cos(9 * omega).sum(), atol=1e-9)


def test_offset_spread_is_large_for_random_positions():
    rng = np.random.default_rng(0)
    assert offset_spread(similarity(rng.standard_normal((30, 16)), "cosine"))[1:].max() > 0.5
    with pytest.raises(ValueError):
        similarity(np.ones((3, 4)), "euclid")


def tiny_model(positional: str = "sinusoidal") -> Transformer:
    torch.manual_seed(0)
    config = ModelConfig(
        vocab_size=40,
        d_model=16,
        n_heads=2,
        d_ff=32,
        n_encoder_layers=1,
        n_decoder_layers=1,
        dropout=0.0,
        max_len=20,
        positional=positional,
    )
    return Transformer(config).eval()


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_embedding_norms_are_the_terms_the_model_adds(positional):
    model = tiny_model(positional)
    ids = [5, 9, 5, 3]
    norms = embedding_norms(model, ids, ["a", "b", "a", "</s>"])
    weights = model.embedding.weight.detach().double()
    expected_token = [float(torch.linalg.norm(weights[i]) * 4.0) for i in ids]  # √16 = 4
    np.testing.assert_allclose(norms.token, expected_token, rtol=1e-6)
    assert norms.scale == pytest.approx(4.0)
    with torch.no_grad():
        model_input = model._embed(torch.tensor([ids]), model.embedding, 0, "source")[0].double()
    np.testing.assert_allclose(norms.total, torch.linalg.norm(model_input, dim=1).numpy(), rtol=1e-5)
    if positional == "sinusoidal":
        np.testing.assert_allclose(norms.position, np.sqrt(16 / 2), rtol=1e-6)
        assert learned_table(model, 10) is None
    else:
        table = learned_table(model, 10)
        np.testing.assert_allclose(table, model.source_positions.weight.detach()[:10].double().numpy())
        np.testing.assert_allclose(norms.position, np.linalg.norm(table[:4], axis=1), rtol=1e-6)
    rows = norms.rows()
    assert [r["token"] for r in rows] == ["a", "b", "a", "</s>"]
    assert rows[1]["‖E·√d‖"] == pytest.approx(expected_token[1])
    assert min(norms.cosine) >= -1 and max(norms.cosine) <= 1
    assert norms.token_to_position == pytest.approx(float(np.mean(norms.token / norms.position)))
    assert norms.mean_cosine == pytest.approx(float(np.mean(norms.cosine)))


def test_embedding_norms_reject_mismatched_labels_and_long_input():
    model = tiny_model()
    with pytest.raises(AssertionError):
        embedding_norms(model, [4, 5], ["only one"])
    with pytest.raises(AssertionError):
        embedding_norms(model, [4] * 21, ["x"] * 21)


def test_default_curves_show_fast_medium_and_slow_waves():
    for d_model in (32, 512):
        dims = dims_for_wavelengths(d_model, (12.0, 50.0, 200.0))
        assert dims[0] % 2 == 0 and dims[1] == dims[0] + 1  # a sin/cos pair
        lengths = [pair_wavelengths(d_model)[d // 2] for d in dims]
        assert lengths[0] == pytest.approx(12.0, rel=0.3) and lengths[-1] == pytest.approx(200.0, rel=0.3)
        assert lengths == sorted(lengths)
