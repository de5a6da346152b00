"""Table 1 of the paper and the three criteria of Section 4 ("Why Self-Attention"), as numbers.

Section 4 compares a layer mapping a sequence of n vectors of size d to another such sequence by
1. total computational complexity per layer,
2. the minimum number of sequential operations (what cannot be parallelised),
3. the maximum path length between any two positions (long-range dependencies are easier to learn when
   forward and backward signals traverse short paths).

Table 1 (n = sequence length, d = representation dimension, k = convolution kernel size,
r = size of the neighbourhood in restricted self-attention):

    Layer Type                    Complexity per Layer   Sequential Operations   Maximum Path Length
    Self-Attention                O(n²·d)                O(1)                    O(1)
    Recurrent                     O(n·d²)                O(n)                    O(n)
    Convolutional                 O(k·n·d²)              O(1)                    O(log_k(n))
    Self-Attention (restricted)   O(r·n·d)               O(1)                    O(n/r)

The operation counts here are the O() terms with their constants dropped, exactly as in the table, so the
ratios between rows are what the table means (e.g. self-attention is cheaper than recurrence when n < d).
Path lengths are exact hop counts under the connectivity stated in `path_length`.
"""

from __future__ import annotations

from typing import Any

from explorer import paper

# Column names of `table1_rows`, in display order.
COLUMNS: tuple[str, ...] = (
    "Layer type",
    "Complexity per layer",
    "Operations",
    "Sequential operations",
    "Sequential steps",
    "Maximum path length",
    "Path length (layers)",
)


def _check(layer: str, allowed: tuple[str, ...]) -> None:
    assert layer in allowed, f"layer must be one of {allowed}, got {layer!r}"


def _check_sizes(**sizes: float) -> None:
    for name, value in sizes.items():
        assert value >= 1, f"{name} must be >= 1, got {value}"


def operations(layer: str, n: float, d: float, k: float = 3, r: float = 16) -> float:
    """Complexity per layer with constants dropped (Table 1, column 2).

    Self-attention: every one of n positions takes a d-dimensional dot product with all n positions: n²·d.
    Recurrent: n steps, each a d×d matrix-vector product: n·d².
    Convolutional: n positions, each k kernel taps of a d×d matrix: k·n·d².
    Restricted self-attention: each position attends to r neighbours only: r·n·d.
    """
    _check(layer, paper.LAYER_TYPES)
    _check_sizes(n=n, d=d, k=k, r=r)
    n, d, k, r = float(n), float(d), float(k), float(r)
    return {
        paper.SELF_ATTENTION: n * n * d,
        paper.RECURRENT: n * d * d,
        paper.CONVOLUTIONAL: k * n * d * d,
        paper.RESTRICTED: r * n * d,
    }[layer]


def sequential_operations(layer: str, n: int) -> int:
    """Minimum number of sequential operations (Table 1, column 3).

    "A self-attention layer connects all positions with a constant number of sequentially executed
    operations, whereas a recurrent layer requires O(n) sequential operations." Convolutions, like
    self-attention, compute all positions at once.
    """
    _check(layer, paper.LAYER_TYPES)
    _check_sizes(n=n)
    return n if layer == paper.RECURRENT else 1


def _smallest_power_reaching(k: int, distance: int) -> int:
    """Smallest L with k**L >= distance + 1, in integers (no floating log rounding)."""
    layers, reach = 0, 1
    while reach < distance + 1:
        layers, reach = layers + 1, reach * k
    return layers


def path_length(layer: str, i: int, j: int, k: int = 3, r: int = 16) -> int:
    """Exact number of layers (recurrent: time steps) a signal crosses between positions i and j.

    This is the quantity behind Table 1's last column (Section 4: "the maximum path length between any two
    input and output positions"). For i == j every architecture needs 0 hops; otherwise, with D = |i - j|:

    - self-attention: 1. One layer connects every pair of positions directly.
    - recurrent: D. The hidden state carries the signal one position per step.
    - contiguous convolution (kernel width k): ceil(D / (k - 1)). A kernel spans k consecutive positions,
      so each layer moves a signal at most k - 1 positions (the causal layout of ByteNet/WaveNet, which the
      paper cites; a centred kernel reaches (k - 1)/2 to each side, twice the layers, the same O(n/k)).
    - dilated convolution (kernel k, dilation 1, k, k², ... per layer): the smallest L with k^L >= D + 1.
      After L layers the receptive field is k^L positions wide and every offset inside it is reached in
      exactly L layers (its base-k digits pick the tap of each layer), so this count is exact: the
      paper's O(log_k(n)).
    - restricted self-attention (neighbourhood r): ceil(D / r). We read the neighbourhood as reaching r
      positions away (|i - j| <= r), the reading under which the paper's O(n/r) is exact.
    """
    _check(layer, paper.PATH_LAYERS + (paper.CONVOLUTIONAL,))
    assert i >= 0 and j >= 0, f"positions must be non-negative, got i={i}, j={j}"
    assert k >= 2, f"kernel size k must be >= 2 to connect distinct positions, got {k}"
    _check_sizes(r=r)
    distance = abs(i - j)
    if distance == 0:
        return 0
    if layer == paper.SELF_ATTENTION:
        return 1
    if layer == paper.RECURRENT:
        return distance
    if layer == paper.CONV_CONTIGUOUS:
        return -(-distance // (k - 1))
    if layer in (paper.CONV_DILATED, paper.CONVOLUTIONAL):  # Table 1 quotes the dilated count
        return _smallest_power_reaching(k, distance)
    return -(-distance // r)


def max_path_length(layer: str, n: int, k: int = 3, r: int = 16) -> int:
    """Maximum path length over a sequence of n positions: the hops between the first and the last.

    Self-attention 1, recurrent n - 1 (O(n)), dilated convolution ceil(log_k(n)), contiguous convolution
    ceil((n - 1)/(k - 1)) (O(n/k)), restricted self-attention ceil((n - 1)/r) (O(n/r)).
    """
    _check_sizes(n=n)
    return path_length(layer, 0, n - 1, k, r)


def crossover_n(d: int, other: str = paper.RECURRENT, k: int = 3) -> float:
    """Sequence length at which self-attention costs as many operations as `other` (Table 1).

    Against recurrence n²·d = n·d² gives n = d: "self-attention layers are faster than recurrent layers
    when the sequence length n is smaller than the representation dimensionality d" (Section 4).
    Against convolution n²·d = k·n·d² gives n = k·d.
    """
    _check(other, (paper.RECURRENT, paper.CONVOLUTIONAL))
    _check_sizes(d=d, k=k)
    return float(d) if other == paper.RECURRENT else float(k * d)


def restricted_crossover_n(r: int) -> float:
    """Restricted self-attention (r·n·d) is cheaper than full self-attention (n²·d) once n > r."""
    _check_sizes(r=r)
    return float(r)


def table1_rows(n: int, d: int, k: int = 3, r: int = 16) -> list[dict[str, Any]]:
    """Table 1 with its formulas and their values at (n, d, k, r), one dict per layer type (keys: COLUMNS).

    "Operations" is the complexity per layer evaluated with constants dropped; "Sequential steps" the
    sequential operations; "Path length (layers)" the exact maximum path length over n positions (see
    `path_length`; the convolutional row uses dilated convolutions, as the table does).
    """
    _check_sizes(n=n, d=d, k=k, r=r)
    rows = []
    for layer in paper.LAYER_TYPES:
        formulas = paper.FORMULAS[layer]
        rows.append(
            {
                "Layer type": paper.LAYER_LABELS[layer],
                "Complexity per layer": formulas.complexity,
                "Operations": int(operations(layer, n, d, k, r)),
                "Sequential operations": formulas.sequential,
                "Sequential steps": sequential_operations(layer, n),
                "Maximum path length": formulas.max_path,
                "Path length (layers)": max_path_length(layer, n, k, r),
            }
        )
    return rows


def path_nodes(layer: str, i: int, j: int, k: int = 3, r: int = 16) -> list[tuple[int, int]]:
    """One shortest path from the earlier position to the later one, as (position, level) pairs.

    Level 0 is the input; for stacked layers level l is the output of layer l; for the recurrent layer
    level 1 holds the hidden states and the path walks along them, one step per hop. The path has
    path_length(...) hops (recurrent: plus the input-to-hidden edge at the start). Used by the drawing.
    """
    _check(layer, paper.PATH_LAYERS)
    source, target = min(i, j), max(i, j)
    hops = path_length(layer, i, j, k, r)
    if layer == paper.RECURRENT:
        return [(source, 0)] + [(p, 1) for p in range(source, target + 1)]
    if hops == 0:
        return [(source, 0)]
    if layer == paper.SELF_ATTENTION:
        return [(source, 0), (target, 1)]
    if layer == paper.CONV_DILATED:
        # Layer l has dilation k**l; the base-k digits of the distance say which tap each layer uses.
        nodes, position, remaining = [(source, 0)], source, target - source
        for level in range(1, hops + 1):
            digit = remaining % k
            remaining //= k
            position += digit * k ** (level - 1)
            nodes.append((position, level))
        return nodes
    step = k - 1 if layer == paper.CONV_CONTIGUOUS else r
    return [(source, 0)] + [(min(source + level * step, target), level) for level in range(1, hops + 1)]
