"""Table 1 (Section 4): formulas, path lengths, measurements and figures (the page: tests/app/test_complexity.py)."""

from __future__ import annotations

import csv
import io
from itertools import pairwise

import pytest
import torch

from explorer.complexity import measure, table1
from explorer.complexity.measure import MEASURED_LAYERS, SELF_ATTENTION_EXPLICIT, measure_layers, rows_to_csv
from explorer.complexity.table1 import (
    crossover_n,
    max_path_length,
    operations,
    path_length,
    path_nodes,
    table1_rows,
)
from explorer.figures.complexity import measured_figure, n_grid, operations_figure, path_length_figure
from explorer.paper import (
    CONV_CONTIGUOUS,
    CONV_DILATED,
    CONVOLUTIONAL,
    LAYER_TYPES,
    PATH_LAYERS,
    RECURRENT,
    RESTRICTED,
    SELF_ATTENTION,
)

# --- formulas -------------------------------------------------------------------------------------------------


def test_operations_hand_computed():
    n, d, k, r = 100, 512, 3, 10
    assert operations(SELF_ATTENTION, n, d, k, r) == 100 * 100 * 512 == 5_120_000
    assert operations(RECURRENT, n, d, k, r) == 100 * 512 * 512 == 26_214_400
    assert operations(CONVOLUTIONAL, n, d, k, r) == 3 * 100 * 512 * 512 == 78_643_200
    assert operations(RESTRICTED, n, d, k, r) == 10 * 100 * 512 == 512_000


def test_table1_rows_formulas_and_values():
    rows = table1_rows(100, 512, 3, 10)
    assert [row["Layer type"] for row in rows] == [
        "Self-Attention",
        "Recurrent",
        "Convolutional",
        "Self-Attention (restricted)",
    ]
    assert all(list(row) == list(table1.COLUMNS) for row in rows)
    by_type = {row["Layer type"]: row for row in rows}
    assert [row["Complexity per layer"] for row in rows] == ["O(n²·d)", "O(n·d²)", "O(k·n·d²)", "O(r·n·d)"]
    assert [row["Sequential operations"] for row in rows] == ["O(1)", "O(n)", "O(1)", "O(1)"]
    assert [row["Maximum path length"] for row in rows] == ["O(1)", "O(n)", "O(log_k(n))", "O(n/r)"]
    assert [row["Operations"] for row in rows] == [5_120_000, 26_214_400, 78_643_200, 512_000]
    assert [row["Sequential steps"] for row in rows] == [1, 100, 1, 1]
    # 3^4 = 81 < 100 <= 243 = 3^5 dilated layers; ceil(99 / 10) = 10 restricted layers.
    assert [row["Path length (layers)"] for row in rows] == [1, 99, 5, 10]
    assert by_type["Recurrent"]["Operations"] > by_type["Self-Attention"]["Operations"]  # n < d


def test_crossover_at_n_equals_d():
    d = 256
    assert crossover_n(d) == d
    assert operations(SELF_ATTENTION, d, d) == operations(RECURRENT, d, d)
    assert operations(SELF_ATTENTION, d - 1, d) < operations(RECURRENT, d - 1, d)
    assert operations(SELF_ATTENTION, d + 1, d) > operations(RECURRENT, d + 1, d)
    assert crossover_n(d, CONVOLUTIONAL, k=3) == 3 * d
    assert operations(SELF_ATTENTION, 3 * d, d) == operations(CONVOLUTIONAL, 3 * d, d, k=3)
    assert table1.restricted_crossover_n(16) == 16


# --- path length ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "i, j, k, r, expected",
    [
        # (self-attention, recurrent, contiguous conv, dilated conv, restricted)
        (0, 8, 3, 4, (1, 8, 4, 2, 2)),  # 8/(3-1) = 4; 3^2 = 9 >= 9; 8/4 = 2
        (10, 3, 3, 3, (1, 7, 4, 2, 3)),  # symmetric; ceil(7/2) = 4; 9 >= 8; ceil(7/3) = 3
        (0, 7, 2, 1, (1, 7, 7, 3, 7)),  # k = 2: one position per contiguous layer, 2^3 = 8 >= 8 dilated
        (0, 8, 2, 16, (1, 8, 8, 4, 1)),  # 2^3 = 8 < 9 <= 16 = 2^4; within r: one layer
        (5, 5, 3, 4, (0, 0, 0, 0, 0)),  # a position reaches itself without a hop
    ],
)
def test_path_lengths(i, j, k, r, expected):
    assert tuple(path_length(layer, i, j, k, r) for layer in PATH_LAYERS) == expected


def test_dilated_path_length_is_ceil_log_k():
    for k in (2, 3, 5):
        for distance in range(1, 200):
            expected = next(layers for layers in range(20) if k**layers >= distance + 1)
            assert path_length(CONV_DILATED, 0, distance, k) == expected
            assert path_length(CONVOLUTIONAL, 0, distance, k) == expected  # Table 1 quotes the dilated case


def test_max_path_length():
    assert max_path_length(SELF_ATTENTION, 512) == 1
    assert max_path_length(RECURRENT, 512) == 511
    assert max_path_length(CONVOLUTIONAL, 512, k=2) == 9  # 2^9 = 512
    assert max_path_length(CONV_CONTIGUOUS, 512, k=3) == 256  # ceil(511 / 2)
    assert max_path_length(RESTRICTED, 512, r=64) == 8  # ceil(511 / 64)


@pytest.mark.parametrize("layer", PATH_LAYERS)
@pytest.mark.parametrize("i, j", [(0, 37), (40, 3), (6, 6), (0, 1)])
def test_path_nodes_are_a_valid_shortest_path(layer, i, j):
    k, r = 3, 5
    nodes = path_nodes(layer, i, j, k, r)
    hops = path_length(layer, i, j, k, r)
    source, target = min(i, j), max(i, j)
    assert nodes[0] == (source, 0) and nodes[-1][0] == target
    if layer == RECURRENT:  # input -> hidden, then one step per position along the hidden states
        assert [p for p, _ in nodes[1:]] == list(range(source, target + 1))
        assert len(nodes) - 2 == hops
        return
    assert len(nodes) - 1 == hops
    for level, ((p0, l0), (p1, l1)) in enumerate(pairwise(nodes), start=1):
        assert (l0, l1) == (level - 1, level)
        step = p1 - p0
        if layer == CONV_CONTIGUOUS:
            assert 0 <= step <= k - 1
        elif layer == CONV_DILATED:
            dilation = k ** (level - 1)
            assert step % dilation == 0 and 0 <= step // dilation <= k - 1
        elif layer == RESTRICTED:
            assert 0 <= step <= r


# --- measurements ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_rows():
    calls = []
    rows = measure_layers((8, 32), 16, kernel=3, repeats=1, progress=lambda done, what: calls.append((done, what)))
    return rows, calls


def test_measure_layers_rows(tiny_rows):
    rows, calls = tiny_rows
    assert [(row["layer"], row["n"]) for row in rows] == [(layer, n) for layer in MEASURED_LAYERS for n in (8, 32)]
    for row in rows:
        assert row["d"] == 16 and row["device"] == "cpu"
        assert row["forward_ms"] > 0 and row["train_ms"] > 0 and row["memory_mb"] > 0
        assert row["memory_measure"] == "cpu_saved_for_backward"
    by_key = {(row["layer"], row["n"]): row for row in rows}
    assert by_key[(RECURRENT, 32)]["sequential_steps"] == 32
    assert by_key[(CONV_DILATED, 8)]["depth"] == 2  # 3^2 = 9 >= 8
    assert by_key[(CONV_DILATED, 32)]["depth"] == 4  # 3^3 = 27 < 32 <= 81
    assert by_key[(CONVOLUTIONAL, 32)]["depth"] == 1
    # The explicit path keeps the (heads, n, n) weights for backward; the fused kernel does not.
    assert by_key[(SELF_ATTENTION_EXPLICIT, 32)]["memory_mb"] > by_key[(SELF_ATTENTION, 32)]["memory_mb"]
    assert len(calls) == len(rows) and calls[-1][0] == pytest.approx(1.0)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_measure_forward_only_and_rng_untouched():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    rows = measure_layers((4,), 8, backward=False, repeats=1)
    assert torch.equal(torch.rand(3), expected), "measuring must not move the caller's random state"
    assert all(row["forward_ms"] > 0 and row["train_ms"] is None and row["memory_mb"] is None for row in rows)


def test_rows_to_csv(tiny_rows):
    rows, _ = tiny_rows
    parsed = list(csv.DictReader(io.StringIO(rows_to_csv(rows))))
    assert len(parsed) == len(rows)
    assert {"layer", "n", "d", "forward_ms", "train_ms", "memory_mb", "memory_measure"} <= set(parsed[0])
    assert float(parsed[0]["forward_ms"]) == pytest.approx(rows[0]["forward_ms"])


def test_helpers():
    assert measure.sequence_lengths(512) == (16, 32, 64, 128, 256, 512)
    assert measure.sequence_lengths(100, 16) == (16, 32, 64)
    assert measure.attention_heads(512) == 8 and measure.attention_heads(12) == 4 and measure.attention_heads(7) == 1


# --- figures --------------------------------------------------------------------------------------------------


def test_operations_figure():
    ns = n_grid(100, 512)
    assert ns[0] == 1 and ns[-1] >= 512
    fig = operations_figure(ns, 512, 3, 10, highlight_n=100)
    names = [trace.name for trace in fig.data]
    assert names[:4] == [
        "Self-Attention  O(n²·d)",
        "Recurrent  O(n·d²)",
        "Convolutional  O(k·n·d²)",
        "Self-Attention (restricted)  O(r·n·d)",
    ]
    assert any(name.startswith("n = d = 512") for name in names)
    crossover = next(trace for trace in fig.data if trace.name.startswith("n = d"))
    assert tuple(crossover.x) == (512, 512)
    highlight = fig.data[-1]
    assert tuple(highlight.y) == tuple(operations(layer, 100, 512, 3, 10) for layer in LAYER_TYPES)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.font.size >= 16 and fig.layout.paper_bgcolor == "rgba(0, 0, 0, 0)"


def test_measured_figure(tiny_rows):
    rows, _ = tiny_rows
    fig = measured_figure(rows, "train_ms")
    measured = [trace for trace in fig.data if trace.mode == "lines+markers"]
    overlays = [trace for trace in fig.data if trace.mode == "lines"]
    assert len(measured) == len(overlays) == len(MEASURED_LAYERS)
    for line, overlay in zip(measured, overlays, strict=True):
        assert overlay.y[-1] == pytest.approx(line.y[-1])  # formula scaled to the measurement at the largest n
    attention = measured[0]
    assert tuple(attention.x) == (8, 32)
    assert "forward + backward" in fig.layout.yaxis.title.text
    memory = measured_figure(rows, "memory_mb")
    assert len(memory.data) == len(MEASURED_LAYERS)  # no operation-count overlay for memory
    assert "CPU estimate" in memory.layout.yaxis.title.text
    with pytest.raises(AssertionError):
        measured_figure(rows, "nonsense")


def test_path_length_figure():
    fig = path_length_figure(3, 40, 48, k=3, r=4)
    bars = fig.data[0]
    assert bars.type == "bar"
    assert tuple(bars.x) == (1, 37, 19, 4, 10)
    titles = [annotation.text for annotation in fig.layout.annotations]
    assert "Self-Attention: 1 layer" in titles and "Recurrent: 37 steps" in titles
    assert "Convolutional (dilated): 4 layers" in titles
    paths = [trace for trace in fig.data if trace.type == "scatter" and trace.mode == "lines+markers"]
    assert len(paths) == len(PATH_LAYERS)
    assert tuple(paths[0].x) == (3, 40)  # self-attention: one direct edge
    with pytest.raises(AssertionError):
        path_length_figure(0, 48, 48)
