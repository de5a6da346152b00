"""'Open in the full page' links: which app page shows each stop in full, and the stop's state as that page's
URL path and query.

The query keys are the ones each page seeds its widgets from (the widgets' keys, bound to the URL);
`model` and `lang` carry the checkpoint and the language across.
"""

from __future__ import annotations

from urllib.parse import urlencode

# Stop key (explorer.tour.stops) -> the url path of the app page that shows it in full.
STOP_PAGES: dict[str, str] = {
    "architecture": "translate",
    "scaled_dot_product": "step_by_step",
    "multi_head": "compare",
    "ffn_embeddings": "positional",
    "positional": "positional",
    "why_self_attention": "complexity",
    "training": "train",
    "beam_search": "beam",
    "variations": "train",
    "beyond": "translate",
}
# Stop key -> the query that opens the page's tab for it, where that is not the page's first tab.
STOP_TABS: dict[str, dict[str, str]] = {
    "ffn_embeddings": {"pe_part": "input"},  # the embeddings scaled by √d_model beside the positions (ui/part_tabs.py)
}


def full_page_link(
    page: str,
    sentence: str,
    *,
    model: str | None = None,
    lang: str | None = None,
    layer: int | None = None,
    head: int | None = None,
    family: str | None = None,
    tab: dict[str, str] | None = None,
) -> str:
    """A relative link such as '/translate?sentence=...&family=cross&layer=3&head=1&mode=head&model=...'.

    layer and head are 1-based, as the pages show them; `tab` is the query that opens one of the page's tabs.
    """
    params: dict[str, object] = {}
    if page == "translate":
        params.update(sentence=sentence, mode="head", family=family or "cross", layer=layer, head=head)
    elif page == "step_by_step":
        params.update(sbs_sentence=sentence, sbs_family=family or "encoder_self", sbs_layer=layer, sbs_head=head)
    elif page == "compare":
        params.update(c_sentence=sentence)
    elif page == "positional":
        params.update(pe_sentence=sentence)
    elif page == "beam":
        params.update(beam_sentence=sentence, beam_k=4, beam_alpha=0.6)
    params.update(tab or {})
    params.update(model=model, lang=lang)
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"/{page}" + (f"?{query}" if query else "")
