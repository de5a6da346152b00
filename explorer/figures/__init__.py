"""Figure builders: arrays and labels in, plotly figures out. Pure functions, no streamlit.

Modules: theme (shared look: sizes, fonts, colour scales, page-theme text colours), export (browser download
config and offline PNG/SVG), attention, positional, training. Other figure modules (e.g. complexity,
beam_tree) are imported by their own path. Every builder takes `lang` ("en" or "ko") for its own text.
"""

from explorer.figures.attention import attention_grid, attention_heatmap, head_view
from explorer.figures.export import ExportUnavailableError, download_config, figure_to_png, figure_to_svg
from explorer.figures.plotly_threads import serialise_validators
from explorer.figures.positional import (
    embedding_norms_figure,
    pe_curves,
    pe_heatmap,
    pe_side_by_side,
    similarity_by_offset,
    similarity_heatmap,
)
from explorer.figures.theme import apply_theme, for_page_theme
from explorer.figures.training import bleu_curve, loss_curve, lr_curve, throughput_curve

serialise_validators()  # before any builder runs in a session's thread (module doc of plotly_threads)

__all__ = [
    "ExportUnavailableError",
    "apply_theme",
    "attention_grid",
    "attention_heatmap",
    "bleu_curve",
    "download_config",
    "embedding_norms_figure",
    "figure_to_png",
    "figure_to_svg",
    "for_page_theme",
    "head_view",
    "loss_curve",
    "lr_curve",
    "pe_curves",
    "pe_heatmap",
    "pe_side_by_side",
    "similarity_by_offset",
    "similarity_heatmap",
    "throughput_curve",
]
