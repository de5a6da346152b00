"""Example sentences for a checkpoint: a first look at the app should show sensible attention.

A checkpoint folder may carry `examples.json`, ``{"en": ["A man ...", ...], "beam": {"en": "Three women ..."}}``:
a few sentences in its source language, in the domain it was trained on (Multi30k: people, animals, streets), and
under "beam" one on which beam search finds another output than greedy decoding (found on validation data by
checkpoints/recipes/beam_example.py), for the Beam page and the tour's beam search stop. A checkpoint without the
file gets `GENERIC_EXAMPLES`; a file that cannot be used gets them too, with a message that says why (the
app shows it; nothing here raises on a bad file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from explorer.i18n import translate

EXAMPLES_FILE = "examples.json"
BEAM_KEY = "beam"
MAX_EXAMPLES = 20
MAX_CHARS = 300  # a sentence, not a paragraph: the attention figure has a row per token

# Plain everyday sentences any English-source model has a chance with.
GENERIC_EXAMPLES: tuple[str, ...] = (
    "A man is riding a bike.",
    "Two dogs play in the snow.",
    "A woman is reading a book.",
    "The children are walking to school.",
)


@dataclass(frozen=True)
class Examples:
    """The sentences to offer, whether they came from the checkpoint, and why its file was not used."""

    sentences: tuple[str, ...]
    from_checkpoint: bool
    problem: str | None = None


def _problem(path: Path, source_lang: str, lang: str) -> tuple[tuple[str, ...], str | None]:
    """The file's sentences, or () and what is wrong with it (in `lang`)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return (), translate("{file} could not be read: {error}", lang, file=path.name, error=err)
    if not isinstance(data, dict) or source_lang not in data:
        return (), translate('{file} has no "{language}" list of sentences', lang, file=path.name, language=source_lang)
    sentences = data[source_lang]
    if (
        not isinstance(sentences, list)
        or not sentences
        or len(sentences) > MAX_EXAMPLES
        or not all(isinstance(s, str) and s.strip() and len(s) <= MAX_CHARS for s in sentences)
    ):
        return (), translate(
            "{file}: expected 1 to {n} sentences of at most {chars} characters",
            lang,
            file=path.name,
            n=MAX_EXAMPLES,
            chars=MAX_CHARS,
        )
    return tuple(s.strip() for s in sentences), None


def load_examples(checkpoint_dir: str | Path, source_lang: str = "en", *, lang: str = "en") -> Examples:
    """The checkpoint's example sentences in `source_lang`, else the generic ones (with the reason in `lang`
    when the checkpoint has a file that could not be used)."""
    path = Path(checkpoint_dir) / EXAMPLES_FILE
    if not path.is_file():
        return Examples(GENERIC_EXAMPLES, from_checkpoint=False)
    sentences, problem = _problem(path, source_lang, lang)
    if problem is not None:
        return Examples(GENERIC_EXAMPLES, from_checkpoint=False, problem=problem)
    return Examples(sentences, from_checkpoint=True)


def examples_for(checkpoint_dir: str | Path, source_lang: str = "en") -> list[str]:
    """Just the sentences of `load_examples`: the checkpoint's own, else the generic ones."""
    return list(load_examples(checkpoint_dir, source_lang).sentences)


def beam_example(checkpoint_dir: str | Path, source_lang: str = "en") -> str | None:
    """The checkpoint's sentence on which beam search and greedy decoding differ (examples.json's "beam"), or
    None when its folder has none (or none usable: the caller then looks for one itself)."""
    path = Path(checkpoint_dir) / EXAMPLES_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    beam = data.get(BEAM_KEY) if isinstance(data, dict) else None
    sentence = beam.get(source_lang) if isinstance(beam, dict) else None
    if not isinstance(sentence, str) or not sentence.strip() or len(sentence) > MAX_CHARS:
        return None
    return sentence.strip()
