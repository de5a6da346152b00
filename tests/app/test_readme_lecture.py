"""Every link of the README's lecture path opens its page on the shipped checkpoints without an exception, with
the figure the question is about: a lecturer pastes them into slides, so a renamed parameter or a part moved to
another tab must show here, not in front of a class."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.apptest_helpers import chart_keys, checkpoints_at, open_page
from tests.browser.helpers import REPO

# The path's rows: "| minutes | what: `/page?query` … | question |".
LINK = re.compile(r"`(/[a-z_]+\?[^`]*)`")
# page -> a chart key (its prefix) the question is asked over
FIGURES = {
    "tour": "tour_figure_",
    "translate": "translate_",
    "step_by_step": "sbs_",
    "compare": "",
    "heads": "",  # the link switches a whole layer off: the question is about the translation, shown changed
    "positional": "pe_heatmap",
    "beam": "beam_tree",
    "complexity": "complexity_operations",
}


def lecture_links() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    path = text[text.index("| Min. | Open | Ask the room |") :]
    path = path[: path.index("\n\n")]
    return [link for line in path.splitlines() for link in LINK.findall(line)]


def test_the_readme_has_a_lecture_path():
    links = lecture_links()
    assert len(links) >= 8 and {urlsplit(link).path.strip("/") for link in links} <= set(FIGURES), links


@pytest.mark.parametrize("link", lecture_links())
def test_each_lecture_link_opens_its_page_with_its_figure(link):
    url = urlsplit(link)
    page = url.path.strip("/")
    params = dict(parse_qsl(url.query))
    with checkpoints_at(REPO / "checkpoints"):  # the shipped ones, whatever fixtures other tests pointed the app at
        at = open_page(f"pages/{page}.py", **params)  # asserts no exception
    ignored = [c.value for c in at.caption if "is not a valid choice here" in c.value]
    assert not ignored, ignored  # a link value the page no longer understands
    keys = chart_keys(at)
    if FIGURES[page]:
        assert any(key.startswith(FIGURES[page]) for key in keys), (link, keys)
    assert "model" not in params or at.session_state["model"] == params["model"]
    if page == "heads":  # the changed words, marked, under the original translation
        assert any("orange-background" in m.value for m in at.markdown), [m.value for m in at.markdown]
