"""The paper's claims the app now shows live, checked in numbers on the shipped Multi30k model: attention is
blind to word order without positional encoding (Section 3.5), the FFN is two kernel-1 convolutions (3.3),
the additive score (3.2.1) by hand, Table 2's cost method (6.1), and what the checkpoint records of its recipe."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from explorer.analysis.additive import (
    AdditiveWeights,
    additive_scores,
    compare_query,
    saturation_curve,
    time_scores,
)
from explorer.analysis.ffn_conv import conv_equivalence
from explorer.analysis.word_order import DEFAULT_PAIR, piece_permutation, word_order
from explorer.checkpoint import Checkpoint, load_checkpoint
from explorer.paper import BIG_EN_FR_IN_TEXT, GPU_FLOPS, PAPER_GPUS, PAPER_TRAINING_S, TABLE2, training_flops
from explorer.tour.recipe import (
    adam_of,
    averaged_steps,
    averaging_note,
    base_model_here_text,
    measured_cost,
    optimizer_and_dropout,
    power_text,
)
from explorer.tour.row_a_attention import COMMAND as ROW_A_COMMAND
from explorer.tour.row_a_attention import load as load_row_a

SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints" / "multi30k-en-de"
HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.fixture(scope="module")
def shipped() -> Checkpoint:
    if not (SHIPPED / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    return load_checkpoint(SHIPPED)


@pytest.mark.usefixtures("one_torch_thread")
def test_without_positions_swapping_words_permutes_the_numbers_and_with_them_changes_them(shipped):
    result = word_order(shipped.model, shipped.tokenizer, *DEFAULT_PAIR)
    assert result.permutation is not None
    assert [result.original_pieces[i] for i in result.permutation] == result.swapped_pieces
    assert result.difference(positions=False) < 1e-5
    assert result.difference(positions=True) > 0.1
    # With positions the model reads who bites whom; without them both sentences are one set of vectors.
    with_pe = [run.translation for run in result.with_pe]
    without_pe = [run.translation for run in result.without_pe]
    assert with_pe == ["Ein Hund beißt einen Mann.", "Ein Mann beißt einen Hund."]
    assert without_pe[0] == without_pe[1]


def test_piece_permutation_matches_repeats_and_refuses_other_pieces():
    assert piece_permutation([5, 6, 7, 5], [7, 5, 6, 5]) == (2, 0, 1, 3)
    assert piece_permutation([5, 6], [5, 7]) is None


@pytest.mark.usefixtures("one_torch_thread")
def test_the_ffn_is_two_convolutions_with_kernel_size_1(shipped):
    check = conv_equivalence(shipped.model, shipped.tokenizer, "Two dogs play in the snow.")
    assert check.layers == shipped.config.n_encoder_layers and check.positions == 8
    assert check.max_abs_output > 1.0, "the FFN's outputs are not trivially small"
    assert check.max_abs_difference < 1e-4


def test_additive_score_by_hand_on_two_keys():
    weights = AdditiveWeights(
        w1=np.array([[1.0, 0.0], [0.0, 2.0]]), w2=np.array([[0.5, 0.5], [-1.0, 0.0]]), v=np.array([1.0, -1.0]), seed=0
    )
    q = np.array([0.2, -0.1])
    keys = np.array([[1.0, 0.0], [0.0, 1.0]])
    # W1 q = (0.2, -0.2); W2 k1 = (0.5, -1.0); W2 k2 = (0.5, 0.0)
    by_hand = [math.tanh(0.7) - math.tanh(-1.2), math.tanh(0.7) - math.tanh(-0.2)]
    np.testing.assert_allclose(additive_scores(q[None], keys, weights)[0], by_hand, rtol=1e-12)
    compared = compare_query(q, keys, np.array([True, True]), weights)
    np.testing.assert_allclose(compared.scaled_dot, [0.2 / math.sqrt(2), -0.1 / math.sqrt(2)])
    e = np.exp(by_hand)
    np.testing.assert_allclose(compared.additive_weights, e / e.sum())
    masked = compare_query(q, keys, np.array([True, False]), weights)
    assert masked.additive_weights.tolist() == [1.0, 0.0] and masked.dot_weights.tolist() == [1.0, 0.0]


def test_unscaled_dot_saturates_while_scaled_and_additive_do_not():
    small, large = saturation_curve((4, 1024), n_keys=10, samples=200)
    assert large.max_weight["dot"] > 0.9 > small.max_weight["dot"]
    for scoring in ("scaled_dot", "additive"):
        assert large.max_weight[scoring] < 0.5, scoring
        assert abs(large.entropy[scoring] - small.entropy[scoring]) < 0.2, scoring


def test_timing_reports_both_scorings_for_every_length():
    found = time_scores((8, 32), d_k=16, repeats=2)
    assert [t.n for t in found] == [8, 32] and all(t.dot_s > 0 and t.additive_s > 0 for t in found)


def test_table2_costs_follow_section_6_1s_method():
    rows = {r.model: r for r in TABLE2}
    assert len(TABLE2) == 10 and {"ByteNet", "MoE", "ConvS2S Ensemble", "Deep-Att + PosUnk"} <= set(rows)
    for model, seconds in PAPER_TRAINING_S.items():
        estimate = training_flops(seconds, PAPER_GPUS, GPU_FLOPS["P100"])
        assert power_text(estimate) == power_text(rows[model].flops_en_de), model
    assert rows["Transformer (big)"].bleu_en_fr == 41.8 and BIG_EN_FR_IN_TEXT == 41.0


def test_the_shipped_checkpoint_records_adam_averaging_and_its_training_time(shipped):
    metadata = shipped.metadata
    assert adam_of(metadata) == (0.9, 0.98, 1e-9)
    assert averaged_steps(metadata) == [5550, 5700, 5850, 6000]
    cost = measured_cost(metadata)
    assert cost is not None and cost.devices == 1 and cost.device == "cuda" and 300 < cost.seconds < 320
    assert "5,550, 5,700, 5,850, 6,000" in averaging_note(metadata)
    assert HANGUL.search(averaging_note(metadata, "ko"))
    text = optimizer_and_dropout(adam_of(metadata), shipped.config.dropout)
    assert "\u03b5 = 10\u207b\u2079" in text and "0.3 for this model" in text
    assert HANGUL.search(optimizer_and_dropout(None, None, "ko"))


def test_the_stored_row_a_pair_has_one_head_against_eight_on_the_same_rows():
    record = load_row_a()
    assert record is not None, f"make it with {ROW_A_COMMAND}"
    many, one = record.runs
    assert (many.n_heads, one.n_heads) == (8, 1) and many.d_k * 8 == one.d_k
    shape = (len(record.target_pieces), len(record.source_pieces))
    assert many.cross.shape == (8, *shape) and one.cross.shape == (1, *shape)
    np.testing.assert_allclose(many.cross.sum(-1), 1.0, atol=1e-3)
    np.testing.assert_allclose(one.cross.sum(-1), 1.0, atol=1e-3)


def test_the_base_model_here_is_table_2s_flops_over_this_machines_throughput():
    one_year = 3.3e18 / (365.25 * 24 * 3600)
    assert "about 1 years" in base_model_here_text(one_year) and "GFLOP/s" in base_model_here_text(one_year)
    assert HANGUL.search(base_model_here_text(one_year, "ko"))
