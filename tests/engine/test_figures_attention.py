import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures import attention_grid, attention_heatmap, head_view
from explorer.figures.theme import FONT_SIZE, TITLE_SIZE, TRANSPARENT


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


QUERY = ["<s>", "\u2581a", "\u2581cat", "\u2581a"]  # '▁a' twice: must stay two rows
KEY = ["\u2581a", "\u2581dog", "\u2581a", "</s>", "."]


@pytest.fixture(scope="module")
def weights() -> np.ndarray:
    rng = np.random.default_rng(0)
    return _softmax_rows(rng.normal(size=(2, 3, len(QUERY), len(KEY))))  # (L, H, q, k)


def _heatmaps(fig: go.Figure) -> list[go.Heatmap]:
    return [t for t in fig.data if isinstance(t, go.Heatmap)]


def test_heatmap_z_is_input_with_queries_as_rows(weights):
    w = weights[0, 0]
    fig = attention_heatmap(w, QUERY, KEY, title="Encoder self-attention")
    (trace,) = _heatmaps(fig)
    np.testing.assert_array_equal(np.asarray(trace.z), w)  # z[i][j] = weight of query i on key j
    assert list(trace.y) == list(range(len(QUERY)))
    assert list(trace.x) == list(range(len(KEY)))
    # Query 0 at the top: the y range runs from the last row down to the first.
    assert tuple(fig.layout.yaxis.range) == (len(QUERY) - 0.5, -0.5)
    assert fig.layout.yaxis.title.text == "query"
    assert fig.layout.xaxis.title.text == "key"
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)
    assert fig.layout.title.text == "Encoder self-attention"


def test_heatmap_duplicate_labels_stay_distinct_and_are_escaped(weights):
    fig = attention_heatmap(weights[0, 0], QUERY, KEY)
    assert list(fig.layout.yaxis.tickvals) == [0, 1, 2, 3]
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt;", "\u2581a", "\u2581cat", "\u2581a"]
    assert list(fig.layout.xaxis.ticktext) == ["\u2581a", "\u2581dog", "\u2581a", "&lt;/s&gt;", "."]
    assert fig.layout.yaxis.type != "category"


def test_heatmap_hover_names_query_and_key_with_exact_weight(weights):
    trace = _heatmaps(attention_heatmap(weights[0, 0], QUERY, KEY))[0]
    assert "%{customdata[0]} \u2192 %{customdata[1]}: %{z:.4f}" in trace.hovertemplate
    custom = np.asarray(trace.customdata)
    assert custom.shape == (len(QUERY), len(KEY), 2)
    assert tuple(custom[2, 1]) == ("\u2581cat", "\u2581dog")


def test_heatmap_options(weights):
    w = weights[0, 0] * 0.5
    fig = attention_heatmap(w, QUERY, KEY, zmax=None, x_title="source", y_title="target", show_values=True)
    trace = _heatmaps(fig)[0]
    assert trace.zmax == pytest.approx(w.max())
    assert trace.texttemplate == "%{z:.2f}"
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("source", "target")
    assert _heatmaps(attention_heatmap(w, QUERY, KEY))[0].texttemplate is None


def test_heatmap_rejects_mismatched_labels(weights):
    with pytest.raises(AssertionError, match="query labels"):
        attention_heatmap(weights[0, 0], QUERY[:-1], KEY)


def test_grid_has_one_heatmap_per_layer_and_head(weights):
    n_layers, n_heads = weights.shape[:2]
    fig = attention_grid(weights, QUERY, KEY, title="All heads")
    maps = _heatmaps(fig)
    assert len(maps) == n_layers * n_heads
    for layer in range(n_layers):
        for head in range(n_heads):
            trace = maps[layer * n_heads + head]
            assert trace.meta == {"layer": layer, "head": head}
            np.testing.assert_array_equal(np.asarray(trace.z), weights[layer, head])
            assert f"Layer {layer + 1}, head {head + 1}" in trace.hovertemplate
            assert trace.coloraxis == "coloraxis"
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    annotations = {a.text for a in fig.layout.annotations}
    assert {f"Head {h + 1}" for h in range(n_heads)} <= annotations
    y_titles = {fig.layout[name].title.text for name in fig.layout if name.startswith("yaxis")}
    assert {f"Layer {layer + 1}" for layer in range(n_layers)} <= y_titles


def test_head_view_draws_only_selected_heads(weights):
    layer = weights[1]  # (H, q, k)
    fig = head_view(layer, QUERY, KEY, heads=[0, 2])
    drawn = {t.meta["head"] for t in fig.data if t.meta is not None}
    assert drawn == {0, 2}
    legend = [t.name for t in fig.data if t.showlegend]
    assert legend == ["Head 1", "Head 3"]
    # Every line trace belongs to its head's legend group, so the legend toggles it.
    for t in fig.data:
        if t.meta is not None:
            assert t.legendgroup == f"head{t.meta['head']}"


def test_head_view_lines_follow_weights_and_threshold():
    w = np.zeros((1, 2, 3))
    w[0, 0] = [0.9, 0.1, 0.0]
    w[0, 1] = [0.0, 0.01, 0.99]  # 0.01 is under the threshold
    fig = head_view(w, ["x", "y"], ["a", "b", "c"], threshold=0.02, levels=4)
    lines = [t for t in fig.data if t.meta is not None and t.showlegend is False]
    segments = []
    for t in lines:
        ys = [y for y in t.y]
        segments += [(ys[i], ys[i + 1]) for i in range(0, len(ys), 3)]
    # Query i sits at y=-i, key j at y=-j: 0->0, 0->1 and 1->2 are drawn, 1->1 is not.
    assert sorted(segments) == sorted([(0.0, 0.0), (0.0, -1.0), (-1.0, -2.0)])
    widths = {t.line.width for t in lines}
    assert len(widths) == 2  # weights 0.1 and ~0.9+ land in different strength levels


def test_head_view_default_draws_all_heads(weights):
    fig = head_view(weights[0], QUERY, KEY)
    assert {t.meta["head"] for t in fig.data if t.meta is not None} == {0, 1, 2}
    with pytest.raises(AssertionError, match="out of range"):
        head_view(weights[0], QUERY, KEY, heads=[3])


def test_theme_is_large_and_transparent(weights):
    fig = attention_heatmap(weights[0, 0], QUERY, KEY, title="t")
    assert fig.layout.font.size >= 16 and fig.layout.font.size == FONT_SIZE
    assert fig.layout.title.font.size == TITLE_SIZE > FONT_SIZE
    assert fig.layout.xaxis.tickfont.size >= 16
    assert fig.layout.paper_bgcolor == TRANSPARENT and fig.layout.plot_bgcolor == TRANSPARENT
    assert fig.layout.font.color is None  # left to Streamlit's light/dark theme
