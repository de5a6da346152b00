"""What Streamlit's own URL binding (`bind="query-params"`) leaves to us: notes on bad links, and option keys.

Plain values (sentences, numbers, sliders, toggles) are bound with `bind="query-params"` on the widget. Two
things remain hand-written, here and nowhere else:

- Streamlit drops a link value that does not fit the widget (an unknown option, a number out of range),
  silently. A reader who followed a lecture link should be told: `note_link_value` says which value was
  ignored, once per session, and `bound_text` cuts over-long text, from a link or pasted, saying so. The
  link's value is anyone's text: it reaches the page only through `ui.markdown.shown_value`, cut and escaped.
- A bound option widget stores its *label* (its `format_func` text) in the URL, and labels are translated:
  a Korean link would not open in English. Option widgets with labels keep language-independent keys in the
  URL (`?mode=grid`) through `url_default` (seed once from the URL) and `sync_to_url` (write back).

Pages and sections bind a widget in one call, one helper per kind of widget: `bound_slider`,
`bound_select_slider`, `bound_buttons` (segmented control or pills over plain values), `bound_multiselect`,
`bound_toggle`, `bound_text` (a text box) and `bound_choice` (an option widget with translated labels).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import streamlit as st

from ui.i18n import t
from ui.markdown import shown_value

_NOTED = "_url_notes"


def _first_sight(key: str) -> str | None:
    """?key= from the link, when this browser tab has not yet drawn the widget `key` (its first run), else None."""
    if key in st.session_state:
        return None
    noted = st.session_state.setdefault(_NOTED, set())
    if key in noted:
        return None
    noted.add(key)
    return st.query_params.get(key)


def note_link_value(key: str, valid: Callable[[str], bool] | Collection[str], fallback: Any) -> None:
    """Before a bound widget: a note when the link's ?key= is not a value the widget accepts."""
    raw = _first_sight(key)
    if raw is None:
        return
    ok = valid(raw) if callable(valid) else raw in valid
    if not ok:
        _note_ignored(key, raw, fallback)


def _note_ignored(key: str, raw: str, fallback: Any) -> None:
    # Both values are shown cut and escaped: the link's is anyone's text, the fallback may be a run's name.
    st.caption(
        t(
            "The link's {key}={value} is not a valid choice here; showing {fallback} instead.",
            key=key,
            value=shown_value(raw),
            fallback=shown_value(fallback),
        )
    )


def bound_text(where: Any, label: str, key: str, limit: int, default: str | None, **options: Any) -> str:
    """A text box kept in the URL (?key=), in one call, that holds at most `limit` characters, from a link or
    pasted: longer text is cut in the box, with a warning above it saying so until the text changes.
    Returns the text. where: st, st.sidebar or a container; options go to `text_input`.

    Not `max_chars`: Streamlit's box then drops a longer paste whole and says nothing. A paste is cut by the
    box's on_change; a link's text is seeded whole by the URL binding, after which only a rerun may change the
    box, so the run that sees it cuts it and reruns."""
    cut_key = f"_{key}_cut_from"

    def cut(text: str) -> str:
        st.session_state[cut_key] = len(text)
        return text[:limit]

    def on_change() -> None:
        text = st.session_state.get(key) or ""
        if len(text) > limit:
            st.session_state[key] = cut(text)

    seeded = st.session_state.get(key)
    if isinstance(seeded, str) and len(seeded) > limit:  # the link's text, seeded whole in the run before
        st.session_state[key] = cut(seeded)
    warning = where.empty()
    text = where.text_input(
        label,
        value=None if key in st.session_state else default,
        key=key,
        on_change=on_change,
        bind="query-params",
        **options,
    )
    text = text or ""
    if len(text) > limit and st.session_state.get(cut_key) != len(text):  # seeded from the link in this run
        cut(text)
        st.rerun()
    if len(text) != limit:  # not the cut text any more: typed over, or an example put in the box
        st.session_state.pop(cut_key, None)
    if cut_key in st.session_state:
        warning.warning(
            t(
                "The text was {length:,} characters long; only its first {limit:,} are used.",
                length=st.session_state[cut_key],
                limit=limit,
            ),
            icon=":material/content_cut:",
        )
    return text[:limit]


def is_int_in(low: int, high: int) -> Callable[[str], bool]:
    """A check that a link's raw value is a whole number in [low, high]."""
    return _number_in(int, low, high)


def is_float_in(low: float, high: float) -> Callable[[str], bool]:
    """A check that a link's raw value is a number in [low, high]."""
    return _number_in(float, low, high)


def _number_in(parse: Callable[[str], float], low: float, high: float) -> Callable[[str], bool]:
    def check(raw: str) -> bool:
        try:
            return low <= parse(raw) <= high
        except ValueError:
            return False

    return check


def url_default(
    key: str, default: Any, cast: Callable[[str], Any] = str, allowed: Collection[Any] | None = None
) -> Any:
    """Seed an option widget's key from ?key= (if valid, else `default` with a note) once per session."""
    if key not in st.session_state:
        value = default
        raw = st.query_params.get(key)
        if raw is not None:
            try:
                candidate = cast(raw)
            except (TypeError, ValueError):
                candidate = None
            if candidate is not None and (allowed is None or candidate in allowed):
                value = candidate
            else:
                _note_ignored(key, raw, default)
        st.session_state[key] = value
    elif allowed is not None and st.session_state[key] not in allowed:
        st.session_state[key] = default
    return st.session_state[key]


def sync_to_url(*keys: str) -> None:
    """Write the option widgets' keys back to the URL, so the view can be linked."""
    for key in keys:
        if key in st.session_state and st.session_state[key] is not None:
            st.query_params[key] = str(st.session_state[key])


def bound_slider(where: Any, label: str, key: str, low: float, high: float, default: float, **options: Any) -> Any:
    """A slider kept in the URL (?key=), in one call: a note when a link's value is out of range, then the widget
    bound with `bind="query-params"`. where: st, st.sidebar or a container; options go to `slider`."""
    check = is_float_in(low, high) if isinstance(default, float) else is_int_in(int(low), int(high))
    note_link_value(key, check, default)
    return where.slider(
        label,
        min_value=low,
        max_value=high,
        value=None if key in st.session_state else default,
        key=key,
        bind="query-params",
        **options,
    )


def bound_choice(
    widget: Callable[..., Any],
    label: str,
    options: Sequence[Any] | Mapping[Any, str],
    key: str,
    default: Any,
    *,
    cast: Callable[[str], Any] = str,
    **kwargs: Any,
) -> Any:
    """An option widget with translated labels (segmented_control, pills, radio, selectbox) kept in the URL by
    its language-independent value (?mode=grid), in one call: seeded from the link once (`url_default`), drawn,
    and written back (`sync_to_url`). widget: the bound method, e.g. `side.segmented_control`; options: the
    values, or a mapping of each value to its English label, shown translated; kwargs go to the widget
    (format_func, required, help, on_change)."""
    if isinstance(options, Mapping):
        labels = options
        kwargs.setdefault("format_func", lambda value: t(labels[value]))
    url_default(key, default, cast, allowed=tuple(options))
    value = widget(label, tuple(options), key=key, **kwargs)
    sync_to_url(key)
    return value


def bound_select_slider(where: Any, label: str, options: Sequence[Any], key: str, default: Any, **kwargs: Any) -> Any:
    """A select slider over plain values (numbers) kept in the URL (?key=4), in one call: a note when the link's
    value is not an option, a kept value that is no longer one (another model, fewer layers) reset to `default`,
    then the widget bound with `bind="query-params"`. where: st, st.sidebar or a container; kwargs go to it."""
    _keep_within(key, options, default)
    return where.select_slider(
        label, options, value=None if key in st.session_state else default, key=key, bind="query-params", **kwargs
    )


def bound_buttons(
    widget: Callable[..., Any], label: str, options: Sequence[Any], key: str, default: Any, **kwargs: Any
) -> Any:
    """A row of buttons over plain values (segmented_control or pills whose value is its own label: numbers)
    kept in the URL by `bind="query-params"`, in one call, with the notes and the reset of
    `bound_select_slider`. selection_mode="multi" in kwargs: `default` is a list and the URL holds ?key=1,3.
    widget: the bound method, e.g. `side.segmented_control`."""
    if kwargs.get("selection_mode") == "multi":
        allowed = {str(o) for o in options}
        note_link_value(key, lambda raw: all(part.strip() in allowed for part in raw.split(",")), "all")
        if key in st.session_state and st.session_state[key] is not None:
            st.session_state[key] = [o for o in st.session_state[key] if o in options]
    else:
        _keep_within(key, options, default)
    initial = None if key in st.session_state else default
    return widget(label, options, default=initial, key=key, bind="query-params", **kwargs)


def bound_multiselect(
    where: Any, label: str, options: Sequence[Any], key: str, default: list[Any], **kwargs: Any
) -> Any:
    """A multiselect over plain values kept in the URL (?key=1&key=5), in one call: a note when a link's value is
    not an option, a kept choice cut to the current options (another model, fewer dimensions), then the widget
    bound with `bind="query-params"`. where: st, st.sidebar or a container; kwargs go to `multiselect`."""
    note_link_value(key, [str(o) for o in options], ", ".join(map(str, default)))
    if key in st.session_state and st.session_state[key] is not None:
        st.session_state[key] = [o for o in st.session_state[key] if o in options]
    initial = None if key in st.session_state else default
    return where.multiselect(label, options, key=key, bind="query-params", default=initial, **kwargs)


def bound_toggle(where: Any, label: str, key: str, default: bool, **kwargs: Any) -> bool:
    """A toggle kept in the URL (?key=true), in one call: a note when the link's value is not true or false,
    then the widget bound with `bind="query-params"`. where: st, st.sidebar or a container."""
    note_link_value(key, lambda raw: raw.lower() in ("true", "false"), str(default).lower())
    return bool(where.toggle(label, value=default, key=key, bind="query-params", **kwargs))


def _keep_within(key: str, options: Sequence[Any], default: Any) -> None:
    note_link_value(key, [str(o) for o in options], default)
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = default
