import numpy as np
import pytest

from explorer.analysis import (
    average_heads,
    head_entropy,
    head_summary,
    mean_attention_distance,
    merge_attention_to_words,
)


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_merge_matches_hand_computed_values():
    # Pieces: '▁play' 'ing' '▁ball' -> words 'playing', 'ball'.
    w = np.array(
        [
            [0.5, 0.3, 0.2],
            [0.1, 0.6, 0.3],
            [0.2, 0.2, 0.6],
        ]
    )
    merged = merge_attention_to_words(w, [[0, 1], [2]], [[0, 1], [2]])
    # 'playing' row: mean of rows 0 and 1, key 'playing' = sum of columns 0 and 1.
    expected = np.array(
        [
            [((0.5 + 0.3) + (0.1 + 0.6)) / 2, (0.2 + 0.3) / 2],
            [0.2 + 0.2, 0.6],
        ]
    )
    np.testing.assert_allclose(merged, expected)
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0)


def test_merge_keeps_leading_dims_and_row_sums():
    rng = np.random.default_rng(0)
    w = _softmax_rows(rng.normal(size=(2, 3, 5, 6)))  # (layers, heads, q, k)
    q_groups = [[0], [1, 2], [3, 4]]
    k_groups = [[0, 1, 2], [3], [4, 5]]
    merged = merge_attention_to_words(w, q_groups, k_groups)
    assert merged.shape == (2, 3, 3, 3)
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0)
    # One cell by hand, for a leading index other than zero.
    cell = (w[1, 2, 1, 3] + w[1, 2, 2, 3]) / 2
    assert merged[1, 2, 1, 1] == pytest.approx(cell)


def test_merge_identity_groups_is_a_no_op():
    rng = np.random.default_rng(1)
    w = _softmax_rows(rng.normal(size=(4, 4)))
    groups = [[i] for i in range(4)]
    np.testing.assert_allclose(merge_attention_to_words(w, groups, groups), w)


def test_merge_rejects_bad_groups():
    w = np.full((2, 2), 0.5)
    with pytest.raises(AssertionError, match="index 2"):
        merge_attention_to_words(w, [[0], [2]], [[0], [1]])
    with pytest.raises(AssertionError, match="more than one group"):
        merge_attention_to_words(w, [[0], [1]], [[0, 1], [1]])


def test_average_heads():
    w = np.zeros((2, 2, 1, 2))
    w[0, 0, 0] = [1.0, 0.0]
    w[0, 1, 0] = [0.0, 1.0]
    w[1, :, 0] = [0.25, 0.75]
    avg = average_heads(w)
    assert avg.shape == (2, 1, 2)
    np.testing.assert_allclose(avg[0, 0], [0.5, 0.5])
    np.testing.assert_allclose(avg[1, 0], [0.25, 0.75])


def test_pieces_to_words_has_one_implementation():
    # explorer.tokenizer.word_groups / word_labels is the one pieces->words rule every caller uses.
    from explorer.tokenizer import word_groups, word_labels

    pieces = ["<s>", "\u2581play", "ing", "\u2581a", "\u2581a", "</s>"]
    assert word_labels(pieces) == ["<s>", "playing", "a", "a", "</s>"]
    assert word_groups(pieces) == [[0], [1, 2], [3], [4], [5]]
    import explorer.analysis as analysis

    assert not hasattr(analysis, "group_pieces")


def test_head_statistics_on_known_patterns():
    n = 5
    eye = np.eye(n)
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1.0  # the first query has no previous token
    first = np.zeros((n, n))
    first[:, 0] = 1.0
    uniform = np.full((n, n), 1.0 / n)
    w = np.stack([eye, prev, first, uniform])[None]  # (1 layer, 4 heads, n, n)

    entropy = head_entropy(w)
    assert entropy.shape == (1, 4)
    assert entropy[0, 0] == pytest.approx(0.0, abs=1e-9)
    assert entropy[0, 3] == pytest.approx(np.log(n))

    distance = mean_attention_distance(w)
    assert distance[0, 0] == pytest.approx(0.0)
    assert distance[0, 1] == pytest.approx((n - 1) / n)  # every query but the first looks 1 back
    assert distance[0, 2] == pytest.approx(np.arange(n).mean())

    summary = head_summary(w)
    assert [s["pattern"] for s in summary] == ["diagonal", "previous token", "first token", "broad"]
    assert [(s["layer"], s["head"]) for s in summary] == [(1, 1), (1, 2), (1, 3), (1, 4)]
    assert summary[0]["max_weight"] == pytest.approx(1.0)
    assert summary[3]["max_weight"] == pytest.approx(1.0 / n)
    assert summary[1]["caption"].startswith("Layer 1, head 2 mostly attends to the previous token")


def test_head_captions_speak_the_session_language():
    # The Translate and Compare pages show this sentence under the figure; in Korean it must be Korean.
    w = np.eye(4)[None, None]  # (1 layer, 1 head, 4, 4): every query attends to itself
    english, korean = head_summary(w)[0], head_summary(w, "ko")[0]
    assert english["caption"] == "Layer 1, head 1 mostly attends to itself (100% of its attention)."
    assert english["behaviour"] == "mostly attends to itself (100% of its attention)"
    assert korean["caption"].startswith("레이어 1, 헤드 1") and "자기 자신" in korean["caption"]
