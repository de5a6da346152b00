"""Attention Explorer engine: a paper-faithful Transformer ("Attention Is All You Need", Vaswani et al. 2017)
whose attention comes back as data. Never imports streamlit."""

__version__ = "0.1.0"
