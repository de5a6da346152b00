"""Attention Explorer engine: a paper-faithful Transformer ("Attention Is All You Need", Vaswani et al. 2017)
whose attention comes back as data. Never imports streamlit.

Importing the package changes nothing in the process: runtime settings (OpenMP wait policy, torch threads)
are chosen by the entry points (`explorer.cli`, the app) through `explorer.runtime.configure_for`.
"""

__version__ = "0.1.0"
