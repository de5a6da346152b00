"""A link's values, a checkpoint's files and a paste reach the page only as plain text, cut short: hostile
values in every kind of bound parameter (and in a checkpoint's examples) come back with no live link, image or
HTML in the message that quotes them; text longer than the sentence box holds is cut with one message, from a
link or pasted."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.apptest_helpers import open_page
from ui.attention_controls import MAX_SENTENCE_CHARS
from ui.attention_view import example_sentences
from ui.markdown import md_escape, shown_value

LINK = "[Session expired - log in again](https://evil.example/login)"
PIXEL = "![](http://203.0.113.9/b.png)"
HTML = "<img src=x onerror=alert(1)>"
HUGE = "x" * 100_000
HOSTILE = (LINK, PIXEL, HTML, "www.evil.example", "mail@evil.example", "`code` *em* :red[red] $x$ # h\n\n- item")
# What Markdown would make live: a link or image ([..](..), ![..]), an HTML tag, or a bare URL or e-mail address
# that GitHub-flavoured Markdown links by itself. Escaped text has a backslash before each bracket and `<`, and
# a word joiner inside "://", "www." and after "@".
LIVE = re.compile(r"(?<!\\)\]\(|(?<!\\)!\[|(?<!\\)<[a-z/!]|://|www\.|@[a-z]", re.IGNORECASE)


def live_markup(text: str) -> list[str]:
    return LIVE.findall(text)


def messages(at) -> list[str]:
    """Every caption, warning, info, error and markdown on the page, sidebar included."""
    return [str(e.value) for kind in ("caption", "warning", "info", "error", "markdown") for e in getattr(at, kind)]


def quoting(at, marker: str) -> list[str]:
    found = [m for m in messages(at) if marker in m]
    assert found, f"no message with {marker!r} among {messages(at)}"
    return found


# --- the helper ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [*HOSTILE, HUGE])
def test_a_shown_value_is_plain_text_on_one_line_and_cut(value):
    shown = shown_value(value)
    assert not live_markup(shown), shown
    assert "\n" not in shown
    visible = shown.replace("\\", "").replace("\u2060", "")
    assert len(visible) <= 40 and (len(value) <= 40 or visible.endswith("…")), visible


def test_md_escape_leaves_no_bare_link_for_markdown_to_make():
    for text in ("see www.evil.example now", "go to https://evil.example", "write to a@evil.example"):
        assert not live_markup(md_escape(text)), md_escape(text)
    assert md_escape("*a* [b](c) #1 <s>") == r"\*a\* \[b\]\(c\) \#1 \<s\>"


# --- every reflection point ------------------------------------------------------------------------------------


def test_a_hostile_model_link_is_quoted_as_cut_plain_text(checkpoint_root):
    """?model= (model_picker._settle_choice): the issue's fake login link, and a 100 KB value that took 100 s."""
    for value in (LINK, HUGE):
        at = open_page("pages/translate.py", model=value, sentence="a b c")
        (warning,) = quoting(at, "which this server does not have")
        assert not live_markup(warning), warning
        assert len(warning) < 400, f"{len(warning)} characters: the value was not cut"


def test_hostile_option_and_number_links_are_quoted_as_cut_plain_text(checkpoint_root):
    """?mode= (url_default of a labelled option), ?beam= (note_link_value of a plain-value widget), ?stretch=
    (a toggle) on one page."""
    at = open_page("pages/translate.py", model="reverse-fixture", sentence="a b c", mode=LINK, beam=PIXEL, stretch=HTML)
    for key in ("mode", "beam", "stretch"):
        (note,) = quoting(at, f"{key}=")
        assert not live_markup(note), note
        assert "is not a valid choice here" in note and len(note) < 200, note


@pytest.mark.parametrize(
    ("page", "key"),
    [
        ("pages/positional.py", "pe_dims"),
        ("pages/complexity.py", "complexity_n"),
        ("pages/beam.py", "beam_k"),
        ("pages/train.py", "train_view"),
    ],
)
def test_hostile_links_on_the_other_pages_are_quoted_as_cut_plain_text(checkpoint_root, page, key):
    at = open_page(page, model="reverse-fixture", **{key: LINK + HUGE})
    (note,) = quoting(at, f"{key}=")
    assert not live_markup(note), note
    assert "is not a valid choice here" in note and len(note) < 200, note


def test_a_hostile_heads_link_is_quoted_as_cut_plain_text(checkpoint_root, one_torch_thread):
    """?heads= (heads/ablation._seed_from_url): the value and the parser's error that quotes it."""
    at = open_page("pages/heads.py", model="reverse-fixture", h_sentence="a b c", heads=LINK + HUGE)
    (warning,) = quoting(at, "was ignored")
    assert not live_markup(warning), warning
    assert len(warning) < 1000, f"{len(warning)} characters: the value was not cut"


def test_a_checkpoints_examples_are_offered_as_plain_text(tmp_path, monkeypatch, reverse_checkpoint):
    """A checkpoint's examples.json is its author's text: the example buttons show it escaped."""
    root = tmp_path / "checkpoints"
    shutil.copytree(reverse_checkpoint, root / "hostile")
    (root / "hostile" / "examples.json").write_text(json.dumps({"en": [PIXEL, LINK]}), encoding="utf-8")
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    at = open_page("pages/translate.py", model="hostile")
    shown = list(at.pills(key="sentence_example").options)
    assert shown == [shown_value(PIXEL, 80), shown_value(LINK, 80)]
    assert not any(live_markup(s) for s in shown), shown


# --- over-long text: a link and a paste cut alike --------------------------------------------------------------


def test_pasted_text_over_the_limit_is_cut_with_the_links_message(checkpoint_root):
    at = open_page("pages/translate.py", model="reverse-fixture", sentence="a b c")
    assert not [w for w in at.warning if "characters long" in w.value]
    pasted = ("a b c d " * 400)[:1500]
    at.text_input(key="sentence").set_value(pasted).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.text_input(key="sentence").value == pasted[:MAX_SENTENCE_CHARS], "the paste was ignored or kept whole"
    (cut,) = [w.value for w in at.warning if "characters long" in w.value]
    linked = open_page("pages/translate.py", model="reverse-fixture", sentence=pasted)
    (cut_from_link,) = [w.value for w in linked.warning if "characters long" in w.value]
    assert cut == cut_from_link == "The text was 1,500 characters long; only its first 1,000 are used."
    # A shorter sentence typed next, or an example clicked, clears the message.
    at.text_input(key="sentence").set_value("a b c").run()
    assert not [w for w in at.warning if "characters long" in w.value]
    linked.pills(key="sentence_example").set_value(example_sentences({"data": "reverse"})[0]).run()
    assert len(linked.text_input(key="sentence").value) < MAX_SENTENCE_CHARS, "no example was put in the box"
    assert not [w for w in linked.warning if "characters long" in w.value]
