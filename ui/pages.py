"""The app's page list, in one place: main_script/frame.py navigates over it (`page_menu`, the top bar's menus)
and the tests open every page from it.

To add a page, append a `PageSpec`. A spec whose file does not exist yet (a page another part of the
project is still writing) is left out of the navigation until the file appears.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ui.i18n import t

APP_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PageSpec:
    file: str  # relative to the app root
    title: str  # English; shown through ui.i18n.t
    # None: no icon. A ":material/…:" icon makes the browser fetch the tab icon from fonts.gstatic.com, which a
    # lecture hall without network cannot reach; an emoji is drawn as an empty box on a machine
    # without an emoji font (a Linux lecture PC, headless Chromium).
    icon: str | None
    group: str  # English section header; shown through ui.i18n.t

    @property
    def url_path(self) -> str:
        """The page's address: /translate for pages/translate.py."""
        return Path(self.file).stem

    @property
    def path(self) -> Path:
        return APP_ROOT / self.file


ALL_PAGES: tuple[PageSpec, ...] = (
    PageSpec("pages/tour.py", "Tour of the paper", None, "Start here"),
    PageSpec("pages/translate.py", "Translate & attention", None, "Look inside"),
    PageSpec("pages/compare.py", "Compare heads", None, "Look inside"),
    PageSpec("pages/heads.py", "Heads: ablation & roles", None, "Look inside"),
    PageSpec("pages/step_by_step.py", "Attention step by step", None, "Look inside"),
    PageSpec("pages/beam.py", "Beam search", None, "Look inside"),
    PageSpec("pages/explain.py", "Is attention explanation?", None, "Look inside"),
    PageSpec("pages/positional.py", "Positional encoding", None, "The paper"),
    PageSpec("pages/complexity.py", "Complexity (Table 1)", None, "The paper"),
    PageSpec("pages/train.py", "Train", None, "Train"),
)

# The pages that exist; the first is the start page, served at /.
PAGES: tuple[PageSpec, ...] = tuple(spec for spec in ALL_PAGES if spec.path.is_file())

# Pages reached by their address alone, never in the top bar: a student's phone opens /join?room=CODE from the
# projector's link or QR code (ui/room/join.py).
HIDDEN_PAGES: tuple[PageSpec, ...] = (PageSpec("pages/join.py", "Join a room", None, ""),)


def page_menu() -> dict[str, list[st.Page]]:
    """The pages for `st.navigation(position="top")`, by group: a group of one page is a link in the top bar, a
    larger group a menu (Streamlit shows the pages of the "" section first, as links). In the top bar the page
    list is on the first screen of every page, also in presenter mode, and takes no room from the sidebar's
    controls or the page.

    Streamlit serves its default page at / and nowhere else, so the start page is registered twice: as the
    default (at /, left out of the menu) and under its own name, which keeps /tour a working address."""
    start = PAGES[0]
    menu: dict[str, list[st.Page]] = {
        "": [st.Page(str(start.path), title=t(start.title), url_path="start", default=True, visibility="hidden")]
    }
    groups: dict[str, list[PageSpec]] = {}
    for spec in PAGES:
        groups.setdefault(spec.group, []).append(spec)
    for group, specs in groups.items():
        pages = [st.Page(str(s.path), title=t(s.title), icon=s.icon, url_path=s.url_path) for s in specs]
        menu.setdefault("" if len(specs) == 1 else t(group), []).extend(pages)
    menu[""] += [
        st.Page(str(s.path), title=t(s.title), url_path=s.url_path, visibility="hidden")
        for s in HIDDEN_PAGES
        if s.path.is_file()
    ]
    return menu
