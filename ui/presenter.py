"""Presenter mode: `?presenter=1` or the sidebar toggle. The sidebar is hidden (the page's controls move to a
"Controls" popover in the presenter's bar, which also leaves presenter mode), figure text is at least 18 px
(`FONT_SCALE` on the figure theme), and a presentation remote steps through the view.

A remote sends PageDown/PageUp (some send the arrow keys). Streamlit has no key-event API, so a small script
(`st.html` with JavaScript allowed: not iframed, it runs in the page itself) listens on the document and clicks a
Streamlit button by its key: `.st-key-present_next button` / `.st-key-present_prev button`, which each page
in presenter mode draws with `step_buttons`, else the tour's `tour_next` / `tour_prev`. No network.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from ui.i18n import t

KEY = "presenter"
NEXT, PREVIOUS = "present_next", "present_prev"
# 18 px ticks from 16 px: everything in a figure grows by the same factor (explorer/figures/theme.py).
FONT_SCALE = 1.125

# Installed once per page document (the flag survives Streamlit's reruns, which may run the script again).
_KEYS_JS = """<script>
const doc = document;
if (!doc.__presenterKeys) {
  doc.__presenterKeys = true;
  const click = (names) => {
    for (const name of names) {
      const button = doc.querySelector(`.st-key-${name} button`);
      if (button && !button.disabled) { button.click(); return true; }
    }
    return false;
  };
  doc.addEventListener('keydown', (event) => {
    const tag = (event.target.tagName || '').toLowerCase();
    if (tag === 'input' || tag === 'textarea' || event.target.isContentEditable) return;
    const forward = ['PageDown', 'ArrowRight'].includes(event.key);
    const back = ['PageUp', 'ArrowLeft'].includes(event.key);
    if (!forward && !back) return;
    if (!doc.querySelector('.st-key-present_on')) return;  // presenter mode was left
    if (click(forward ? ['present_next', 'tour_next'] : ['present_prev', 'tour_prev'])) event.preventDefault();
  });
}
</script>"""

# Presenter mode's style lives in ui/layout.py's page style, keyed on the `present_on` marker this module draws:
# a style element of its own would outlive presenter mode (Streamlit keeps style-only elements across runs).


def _url_on() -> bool:
    return st.query_params.get(KEY, "0") in ("1", "true", "on")


def presenter_on() -> bool:
    """Whether this browser tab presents: `?presenter=1` on the tab's first page run switches it on, an explicit
    `?presenter=0` switches it off."""
    if KEY not in st.session_state or st.query_params.get(KEY) == "0":
        st.session_state[KEY] = _url_on()
    return bool(st.session_state[KEY])


def _leave() -> None:
    st.session_state[KEY] = False


def presenter_bar() -> Any | None:
    """In presenter mode, a bar at the top right of the page (over Streamlit's header, beside the page list):
    a "Controls" popover, returned for the page's controls, and "Leave presenter mode". It is also the
    `present_on` marker on which the key script and the page style act. None outside presenter mode."""
    if not presenter_on():
        return None
    bar = st.container(key="present_on", horizontal=True, gap="small", width="content")
    popover = bar.popover(t("Controls"), help=t("The page's sentence, decoding and view"))
    bar.button(t("Leave presenter mode"), key="present_exit", on_click=_leave)
    with bar.container(key="present_keys"):  # hidden by the page style: the script runs, the bar keeps its size
        st.html(_KEYS_JS, unsafe_allow_javascript=True)
    return popover


def presenter_toggle() -> bool:
    """The sidebar toggle, kept in the URL as ?presenter=1 (in presenter mode the sidebar is hidden, and the
    presenter's bar leaves it)."""
    presenter_on()
    with st.sidebar:
        on = st.toggle(
            t("Presenter mode"),
            key=KEY,
            help=t(
                "For a projector: no sidebar (the page's controls move to the Controls button at the top), "
                "larger figure text; PageDown / PageUp (a presentation remote) or the arrow keys step through "
                "heads."
            ),
        )
    if on:
        st.query_params[KEY] = "1"
    elif KEY in st.query_params:
        del st.query_params[KEY]
    return bool(on)


def font_scale() -> float:
    return FONT_SCALE if st.session_state.get(KEY) else 1.0


def step_buttons(step: Callable[[int], None], *, can_back: bool = True, can_forward: bool = True) -> None:
    """Previous / next buttons the remote clicks (also clickable): `step(-1)` and `step(+1)` as callbacks."""
    if not st.session_state.get(KEY):
        return
    row = st.container(horizontal=True, gap="small")
    row.button("\u2190", key=PREVIOUS, on_click=step, args=(-1,), disabled=not can_back, help=t("Previous (PageUp)"))
    row.button("\u2192", key=NEXT, on_click=step, args=(1,), disabled=not can_forward, help=t("Next (PageDown)"))


def stepper(key: str, count: int) -> Callable[[int], None]:
    """A `step` for `step_buttons` that moves the 1-based choice `st.session_state[key]` within 1..count,
    wrapping around (a remote has no 'first' button)."""

    def step(direction: int) -> None:
        current = int(st.session_state.get(key) or 1)
        st.session_state[key] = (current - 1 + direction) % count + 1

    return step
