"""Figure text in Korean on the Positional encoding and Step-by-step pages: every title, axis title,
legend entry, subplot title and colour-bar title that is English prose on the English page is Korean on the
Korean page, and so are the row labels that name things ("head 1", "output", "dim 0"). Formulas (q = x W^Q,
softmax, d_model) may stay as they are, as the glossary says.

Each page is opened twice through the frame with AppTest, once per language, on the fixture checkpoint; the
figures are compared field by field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.apptest_helpers import chart_keys, charts, open_page

SENTENCE = "a small child sees the red dog ."
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Words that are formula or notation, not prose: kept in English on the Korean page too.
NOTATION = {"sin", "cos", "max", "min", "log", "softmax", "concat", "var", "multihead", "attention", "eq", "pe"}
# A page (and its tab) by name: (its file, its link's parameters).
PAGES = {
    "positional": ("pages/positional.py", dict(pe_sentence=SENTENCE)),
    "positional similarity": ("pages/positional.py", dict(pe_sentence=SENTENCE, pe_part="similarity")),
    "positional input": ("pages/positional.py", dict(pe_sentence=SENTENCE, pe_part="input")),
    "step_by_step": ("pages/step_by_step.py", dict(sbs_sentence=SENTENCE)),
    "step_by_step output": ("pages/step_by_step.py", dict(sbs_sentence=SENTENCE, sbs_part="output")),
}


def prose_words(text: str) -> list[str]:
    """The English words of `text`, without markup, identifiers (d_model, M_k) and notation."""
    plain = re.sub(r"<[^>]+>", " ", text)
    plain = re.sub(r"\w+_\{?\w+\}?", " ", plain)
    return [w for w in re.findall(r"[A-Za-z]{3,}", plain) if w.lower() not in NOTATION]


def figure_texts(figure: dict) -> Iterator[tuple[str, str]]:
    """(where, text) for every text of a plotly figure JSON that a reader sees as a label."""
    layout = figure.get("layout", {})
    if (layout.get("title") or {}).get("text"):
        yield "title", layout["title"]["text"]
    for name, value in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name) and ((value or {}).get("title") or {}).get("text"):
            yield f"{name}.title", value["title"]["text"]
        if name.startswith("coloraxis"):
            bar_title = ((value or {}).get("colorbar") or {}).get("title") or {}
            if bar_title.get("text"):
                yield f"{name}.colorbar", bar_title["text"]
    for i, note in enumerate(layout.get("annotations", [])):
        if note.get("text"):
            yield f"annotation {i}", note["text"]
    for i, trace in enumerate(figure.get("data", [])):
        if trace.get("name") and trace.get("showlegend", True) is not False:
            yield f"trace {i}.name", trace["name"]
        bar_title = ((trace.get("colorbar") or {}).get("title")) or {}
        if bar_title.get("text"):
            yield f"trace {i}.colorbar", bar_title["text"]


def by_key(at) -> dict[str, dict]:
    return {chart["key"]: chart["figure"] for chart in keyed_charts(at)}


def keyed_charts(at) -> list[dict]:
    figures = charts(at)
    keys = chart_keys(at)
    return [{"key": key, "figure": figure} for key, figure in zip(keys, figures, strict=True)]


@pytest.fixture(scope="module", params=sorted(PAGES))
def both_languages(request, checkpoint_root):
    page = request.param
    path, params = PAGES[page]
    english = open_page(path, model="words-fixture", lang="en", **params)
    korean = open_page(path, model="words-fixture", lang="ko", **params)
    return page, by_key(english), by_key(korean)


def test_every_figure_label_that_is_english_prose_is_korean(both_languages):
    page, english, korean = both_languages
    assert english and set(english) == set(korean), f"{page}: the same figures in both languages"
    untranslated = []
    for key, figure in english.items():
        korean_texts = dict(figure_texts(korean[key]))
        for where, text in figure_texts(figure):
            if prose_words(text) and not HANGUL.search(korean_texts.get(where, "")):
                untranslated.append(f"{key} {where}: {korean_texts.get(where)!r} (English: {text!r})")
    assert not untranslated, f"{page}: English figure text on the Korean page:\n" + "\n".join(untranslated)


def row_labels(figure: dict) -> list[str]:
    return [str(label) for label in figure["layout"]["yaxis"].get("ticktext", [])]


def test_row_labels_that_name_things_are_korean(both_languages):
    page, _, korean = both_languages
    named = {
        "pe_shift_matrix": "dim",  # "dim 0" rows of M_k
        "sbs_heads": "head",  # "head 1 (above)"
        "sbs_output": "output",
        "sbs_weighted": "head",  # the last row, "Σ = head 2"
    }
    problems = []
    for key, english_word in named.items():
        if key not in korean:
            continue
        labels = row_labels(korean[key])
        if key == "sbs_weighted":
            labels = labels[-1:]
        if any(english_word in label or not HANGUL.search(label) for label in labels):
            problems.append(f"{key}: {labels}")
    # The tabs that draw one of these figures (the others' rows are pieces of the sentence, or positions).
    if page in ("positional similarity", "step_by_step output"):
        assert any(key in korean for key in named), f"{page}: none of the labelled figures was drawn"
    assert not problems, f"{page}: row labels in English on the Korean page: {problems}"
