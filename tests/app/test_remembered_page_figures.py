"""Step by step, Positional and Complexity remember their figures (explorer/figures/memo.py): each page draws the
same figures, with the same data, as when every builder builds its figure anew, on its first run and on a rerun
served from memory; the rerun builds nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

import explorer.figures.complexity
import explorer.figures.paper_live
import explorer.figures.positional
import explorer.figures.step_by_step
import ui.complexity.sections
import ui.positional.model_input
import ui.positional.sinusoids
import ui.positional.word_order
import ui.step_by_step.additive
import ui.step_by_step.scaling
import ui.step_by_step.stages
from explorer.figures import theme
from explorer.figures.memo import remembered
from tests.apptest_helpers import open_page
from ui.part_tabs import PARTS

SENTENCE = "a small child sees the red dog ."
# The inner function every remembered builder shares: how a builder is told from any other callable.
REMEMBERED = remembered()(lambda: None).__code__

# page -> (its widget state, the modules that call its figure builders, the modules that build its figures)
PAGES: dict[str, tuple[dict[str, Any], tuple[ModuleType, ...], tuple[ModuleType, ...]]] = {
    "step_by_step": (
        {"sbs_sentence": SENTENCE, "sbs_family": "cross", "sbs_layer": 2, "sbs_head": 2, "sbs_query": 2},
        (ui.step_by_step.stages, ui.step_by_step.scaling, ui.step_by_step.additive),
        (explorer.figures.step_by_step, explorer.figures.paper_live),
    ),
    "positional": (
        {"pe_length": 40, "pe_sentence": SENTENCE, "pe_offset": 5},
        (ui.positional.sinusoids, ui.positional.model_input, ui.positional.word_order),
        (explorer.figures.positional, explorer.figures.step_by_step, explorer.figures.paper_live),
    ),
    "complexity": (
        {"complexity_n": 96, "complexity_d": 64},
        (ui.complexity.sections,),
        (explorer.figures.complexity,),
    ),
}


# page -> the URL parameter of its tabs (ui/part_tabs.py): only the open tab is drawn, so each tab is a view.
TABS = {"step_by_step": "sbs_part", "positional": "pe_part", "complexity": "complexity_part"}
NOT_DRAWN_AT_ONCE = {"measured"}  # Complexity's measurement draws nothing until its button is clicked
VIEWS = [(page, None) for page in PAGES] + [
    (page, tab) for page, key in TABS.items() for tab in list(PARTS[key])[1:] if tab not in NOT_DRAWN_AT_ONCE
]


def builders(modules: tuple[ModuleType, ...]) -> dict[tuple[ModuleType, str], Callable[..., Any]]:
    """Every remembered figure builder the page's modules call, by (module, name)."""
    return {
        (module, name): value
        for module in modules
        for name, value in vars(module).items()
        if getattr(value, "__code__", None) is REMEMBERED
    }


def figures(at) -> dict[str, dict]:
    """The page's plotly figures as the browser receives them, by chart key."""
    found = {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    assert found, "the page drew no figure"
    return found


@pytest.mark.parametrize("page, tab", VIEWS)
def test_the_page_draws_what_fresh_builds_draw(checkpoint_root, monkeypatch, page, tab):
    state, modules, figure_modules = PAGES[page]
    params = {} if tab is None else {TABS[page]: tab}
    remembered_builders = builders(modules)
    assert remembered_builders, f"no remembered builder on {page}"

    with monkeypatch.context() as fresh:
        for (module, name), builder in remembered_builders.items():
            fresh.setattr(module, name, builder.__wrapped__)
        expected = figures(open_page(f"pages/{page}.py", model="words-fixture", state=state, **params))

    at = open_page(f"pages/{page}.py", model="words-fixture", state=state, **params)
    assert figures(at) == expected
    # Every builder ends in the theme (explorer/figures/theme.py apply_theme): a rerun that builds a figure calls it.
    builds: list[int] = []
    themed = theme.apply_theme

    def counting(*args: Any, **kwargs: Any) -> Any:
        builds.append(1)
        return themed(*args, **kwargs)

    monkeypatch.setattr(theme, "apply_theme", counting)
    for module in figure_modules:
        if hasattr(module, "apply_theme"):
            monkeypatch.setattr(module, "apply_theme", counting)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert figures(at) == expected
    assert builds == [], "a rerun with unchanged inputs built figures anew"
