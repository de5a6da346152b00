"""Text shown literally inside st.markdown."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text: str) -> str:
    """Text shown literally inside st.markdown (no emphasis, links, maths or headings)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
