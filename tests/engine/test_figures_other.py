import json

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures import (
    bleu_curve,
    download_config,
    embedding_norms_figure,
    figure_to_png,
    figure_to_svg,
    loss_curve,
    lr_curve,
    pe_curves,
    pe_heatmap,
    pe_side_by_side,
    similarity_by_offset,
    similarity_heatmap,
    throughput_curve,
)
from explorer.figures.attention import attention_heatmap
from explorer.figures.export import find_browser

N, D = 12, 16


def sinusoidal(n: int, d: int) -> np.ndarray:
    """Section 3.5, written out independently of the model code."""
    pos = np.arange(n)[:, None]
    i = np.arange(0, d, 2)[None, :]
    angle = pos / 10000.0 ** (i / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


@pytest.fixture(scope="module")
def pe() -> np.ndarray:
    return sinusoidal(N, D)


def cosine(pe: np.ndarray) -> np.ndarray:
    unit = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    return unit @ unit.T


def test_pe_heatmap_orientation_and_scale(pe):
    fig = pe_heatmap(pe, title="Positional encoding")
    (trace,) = fig.data
    np.testing.assert_array_equal(np.asarray(trace.z), pe)  # rows = positions, columns = dimensions
    assert len(trace.y) == N and len(trace.x) == D
    assert (trace.zmin, trace.zmax) == (-1.0, 1.0)
    assert fig.layout.yaxis.title.text == "position (from 0)"
    assert fig.layout.xaxis.title.text == "embedding dimension"


def test_pe_curves_one_line_per_dim_with_wavelength(pe):
    fig = pe_curves(pe, [0, 5, 14])
    assert [len(t.y) for t in fig.data] == [N, N, N]
    np.testing.assert_array_equal(np.asarray(fig.data[1].y), pe[:, 5])
    assert fig.data[0].name == "dim 0 (sin, \u03bb=6.3)"
    # dim 5 is the cosine of pair i=2: wavelength 2*pi*10000^(4/16) = 62.8
    assert fig.data[1].name == "dim 5 (cos, \u03bb=62.8)"
    assert fig.data[2].name == f"dim 14 (sin, \u03bb={2 * np.pi * 10000 ** (14 / 16):,.0f})"
    assert pe_curves(pe, [3], sinusoidal=False).data[0].name == "dim 3"


def test_similarity_heatmap(pe):
    sim = cosine(pe)
    fig = similarity_heatmap(sim)
    np.testing.assert_allclose(np.asarray(fig.data[0].z), sim)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1.0, 1.0)
    dot = similarity_heatmap(pe @ pe.T, metric="dot product")
    assert dot.data[0].zmin is None
    assert dot.layout.yaxis.title.text == "position (from 0)"


def test_similarity_by_offset_depends_only_on_offset(pe):
    sim = cosine(pe)
    fig = similarity_by_offset(sim)
    low, high, mean = fig.data
    assert list(mean.x) == list(range(N))
    np.testing.assert_allclose(mean.y, [np.diagonal(sim, k).mean() for k in range(N)])
    assert mean.y[0] == pytest.approx(1.0)
    # Sinusoidal encodings: the band over positions collapses, similarity is a function of the offset.
    np.testing.assert_allclose(np.asarray(high.y) - np.asarray(low.y), 0.0, atol=1e-9)


def test_embedding_norms_figure():
    labels = ["\u2581a", "\u2581cat", "\u2581a"]
    fig = embedding_norms_figure([4.0, 5.0, 4.0], [2.8, 2.8, 2.8], [5.0, 6.0, 4.5], labels)
    assert [t.type for t in fig.data] == ["bar"] * 3
    assert [list(t.y) for t in fig.data] == [[4.0, 5.0, 4.0], [2.8, 2.8, 2.8], [5.0, 6.0, 4.5]]
    assert list(fig.layout.xaxis.ticktext) == ["a", "cat", "a"]  # no '▁'; the repeated 'a' keeps its own bars
    assert "\u221ad_model" in fig.data[0].name and "PE" in fig.data[1].name
    with pytest.raises(AssertionError, match="one per label"):
        embedding_norms_figure([1.0], [1.0, 2.0], [1.0, 2.0], ["a", "b"])


def test_pe_side_by_side(pe):
    learned = np.random.default_rng(0).normal(scale=0.1, size=(N, D))
    fig = pe_side_by_side(pe, learned)
    left, right = fig.data
    np.testing.assert_array_equal(np.asarray(left.z), pe)
    np.testing.assert_array_equal(np.asarray(right.z), learned)
    assert (left.coloraxis, right.coloraxis) == ("coloraxis", "coloraxis2")
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (-1.0, 1.0)
    assert fig.layout.coloraxis2.cmax == pytest.approx(np.abs(learned).max())


def test_training_curves():
    steps = np.arange(1, 101) * 100
    fig = loss_curve(steps, np.linspace(5, 2, 100), val_steps=[2000, 6000, 10000], val_loss=[4, 3, 2.5])
    assert [t.name for t in fig.data] == ["train", "validation"]
    assert len(fig.data[1].y) == 3 and fig.layout.xaxis.title.text == "training step"

    d_model, warmup = 512, 4000
    lrs = d_model**-0.5 * np.minimum(steps**-0.5, steps * warmup**-1.5)  # Eq. 3
    fig = lr_curve(steps, lrs, warmup_steps=warmup)
    peak = fig.data[1]
    assert list(peak.x) == [warmup]
    assert peak.y[0] == pytest.approx(d_model**-0.5 * warmup**-0.5)
    assert any(s.type == "line" and s.x0 == warmup for s in fig.layout.shapes)
    assert len(lr_curve(steps, lrs).data) == 1

    assert bleu_curve([1000, 2000], [10.5, 20.1]).layout.yaxis.title.text == "BLEU"
    fig = throughput_curve([1, 2, 3], [1e4, 1.1e4, 1.2e4])
    assert "tokens / s" in fig.layout.yaxis.title.text
    with pytest.raises(AssertionError, match="same length"):
        bleu_curve([1, 2], [3.0])


def test_download_config_names_the_png_after_the_view():
    config = download_config("Encoder self-attention, layer 2")
    opts = config["toImageButtonOptions"]
    assert opts == {"format": "png", "filename": "encoder-self-attention-layer-2", "scale": 2}
    assert config["displaylogo"] is False
    assert download_config("heads.png")["toImageButtonOptions"]["filename"] == "heads"
    json.dumps(config)  # st.plotly_chart sends it as JSON


@pytest.mark.slow
@pytest.mark.skipif(
    find_browser() is None, reason="static export needs a local Chrome/Chromium (apt-get install chromium)"
)
def test_static_export_offline():
    fig = attention_heatmap(np.full((2, 3), 1 / 3), ["a", "b"], ["x", "y", "z"], title="export")
    svg = figure_to_svg(fig, width=400, height=300)
    assert svg.lstrip().startswith(b"<svg") and b"</svg>" in svg
    assert b"export" in svg
    png = figure_to_png(fig, scale=2, width=400, height=300)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (800, 600)  # layout size times scale
    assert isinstance(fig, go.Figure) and fig.layout.paper_bgcolor == "rgba(0, 0, 0, 0)"  # untouched
