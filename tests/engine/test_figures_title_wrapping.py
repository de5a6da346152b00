"""Titles that fit a 1024 px window: `wrap_words` breaks a long title into lines that fit, at a
separator where it can, and `apply_theme` gives every extra line its own room above the plot."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from explorer.figures.theme import FONT_SIZE, TITLE_SIZE, apply_theme, text_width_px, wrap_words

TITLES = [
    "Complexity per layer (Table 1), d = 512, k = 3, r = 10",
    "Sinusoidal positional encoding, 100 positions × d_model = 256",
    "Unscaled logits saturate the softmax as d_k grows (10 keys, 1000 queries)",
    "스케일링하지 않은 로짓은 d_k가 커질수록 소프트맥스를 포화시킵니다 (키 10개, 쿼리 1000개)",
    "Encoder-decoder attention · layer 1 · head 1<br>Q·Kᵀ → ÷√d_k → mask → softmax",
]


@pytest.mark.parametrize("title", TITLES)
@pytest.mark.parametrize("width, size", [(540, TITLE_SIZE), (340, FONT_SIZE)])
def test_every_line_fits_and_no_word_is_lost(title: str, width: int, size: int) -> None:
    wrapped = wrap_words(title, width, size)
    lines = wrapped.split("<br>")
    assert all(text_width_px(line, size) <= width or " " not in line for line in lines), lines
    assert " ".join(wrapped.replace("<br>", " ").split()) == " ".join(title.replace("<br>", " ").split())


def test_a_title_that_fits_is_left_alone() -> None:
    assert wrap_words("Head 1", 540) == "Head 1"


def test_lines_break_at_a_separator_that_keeps_the_numbers_together() -> None:
    assert wrap_words(TITLES[0]) == "Complexity per layer (Table 1),<br>d = 512, k = 3, r = 10"
    assert wrap_words("Encoder-decoder attention · layer 1 · head 1", 480) == (
        "Encoder-decoder attention ·<br>layer 1 · head 1"
    )


def test_each_extra_title_line_gets_room_above_the_plot() -> None:
    one = apply_theme(go.Figure(), title="One line")
    three = apply_theme(go.Figure(), title="One<br>two<br>three")
    assert three.layout.margin.t - one.layout.margin.t >= 2 * TITLE_SIZE


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("family", ["encoder_self", "decoder_self", "cross"])
def test_a_head_title_fits_the_narrow_column_in_both_languages(lang: str, family: str) -> None:
    """Translate's heatmap sits beside its pickers, `NARROW_COLUMN_PX` wide at 1024x768. The Korean
    cross-attention title has no " · " before which it fits, and used to be left whole and cut at "레이"."""
    from ui.attention_view import head_title
    from ui.layout import NARROW_COLUMN_PX, wrap_title

    title = head_title(family, 3, 1, lang)
    one_line = apply_theme(go.Figure(), title=title)
    fig = wrap_title(apply_theme(go.Figure(), title=title), NARROW_COLUMN_PX)
    lines = fig.layout.title.text.split("<br>")
    assert all(text_width_px(line, TITLE_SIZE) <= NARROW_COLUMN_PX - 20 for line in lines), lines
    assert len(lines) <= 2, lines
    words = [w for w in " ".join(lines).split() if w != "\u00b7"]  # a line may end where a " · " was
    gloss = "(cross-attention)" if lang == "ko" and family == "cross" else None  # dropped: see the next test
    assert words == [w for w in title.split() if w not in ("\u00b7", gloss)]
    assert fig.layout.margin.t - one_line.layout.margin.t >= int(1.3 * TITLE_SIZE) * (len(lines) - 1)


@pytest.mark.parametrize("mean", [False, True], ids=["head", "mean"])
def test_translate_heatmap_title_takes_two_lines_in_korean_without_its_gloss_only_where_needed(mean: bool) -> None:
    """Translate's heatmap column is 406 px at 1024x768. The Korean cross-attention title with its glossary gloss,
    "인코더-디코더 어텐션 (cross-attention) · 레이어 3 · 헤드 1", broke over three lines there, which left the 13
    rows of a caption 12.7 px apart for 16 px labels. Without the gloss it takes two; where it fits in two lines
    (a wide column) the gloss stays."""
    from ui.attention_view import head_title
    from ui.layout import COLUMN_GAP_PX, figure_column_px, wrap_title

    title = head_title("cross", 3, None if mean else 1, "ko")
    assert "(cross-attention)" in title
    width = figure_column_px(3 / 4.35, COLUMN_GAP_PX)
    assert 395 <= width <= 406  # the column measured in Chromium: 406 px
    lines = wrap_title(apply_theme(go.Figure(), title=title), width).layout.title.text.split("<br>")
    assert len(lines) == 2 and "(cross-attention)" not in " ".join(lines), lines
    assert lines[0].startswith("인코더-디코더 어텐션")
    wide = wrap_title(apply_theme(go.Figure(), title=title), 700).layout.title.text
    assert "(cross-attention)" in wide
    english = head_title("decoder_self", 3, 1, "en")  # no Hangul: a parenthesis is part of the name, kept
    assert "(masked)" in wrap_title(apply_theme(go.Figure(), title=english), width).layout.title.text


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_presenter_mode_wraps_titles_for_its_wider_column(monkeypatch, lang: str) -> None:
    """Presenter mode hides the sidebar, so Translate's figure column is wider than `NARROW_COLUMN_PX`; a title
    wrapped for the narrow column took three lines in Korean and the 13 rows of a caption's heatmap were left
    11.5 px each for 18 px labels. The column's width is divided by the presenter's text scale, so the wrapped
    lines, drawn larger, still fit it."""
    import ui.layout
    from ui.attention_view import head_title

    monkeypatch.setattr(ui.layout, "font_scale", lambda: 1.0)
    assert ui.layout.figure_column_px() == ui.layout.NARROW_COLUMN_PX
    assert ui.layout.figure_column_px(3 / 4.35, ui.layout.COLUMN_GAP_PX) < ui.layout.NARROW_COLUMN_PX
    monkeypatch.setattr(ui.layout, "font_scale", lambda: 1.125)
    width = ui.layout.figure_column_px(3 / 4.35)
    assert width == int(ui.layout.PRESENTER_MAIN_PX * 3 / 4.35 / 1.125)
    fig = ui.layout.fit_height(apply_theme(go.Figure(), title=head_title("cross", 3, 1, lang), height=600), 440, width)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) <= 2, lines
    assert all(1.125 * text_width_px(line, TITLE_SIZE) <= ui.layout.PRESENTER_MAIN_PX * 3 / 4.35 - 20 for line in lines)
    assert fig.layout.height == 440
