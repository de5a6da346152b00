"""What the attention pages show, as plain data: one family of a translation as weights plus axis labels,
example sentences that suit a checkpoint, and the batch-result table. No streamlit here, so it is
tested directly; the pages and ui/attention_controls.py render it.

Label conventions follow `explorer.inference` (rows are queries, columns are keys):
encoder self-attention is source × source, masked decoder self-attention is the decoder's input
("<s> y1 …") × itself, and encoder-decoder attention is the produced target ("y1 … </s>") × source.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from explorer.analysis.words import merge_attention_to_words
from explorer.data.synthetic import TASKS
from explorer.decoding.repetition import output_loop
from explorer.examples import Examples, load_examples
from explorer.explain.value_weighted import ValueWeighted
from explorer.i18n import translate
from explorer.inference import Translation
from explorer.paper import FAMILIES, FAMILY_TITLES
from explorer.text.pieces import shown_pieces
from explorer.text.sentences import join_sentences
from explorer.tokenizer import word_groups, word_labels

FAMILY_HELP = (
    "Section 3.2.3 of the paper: the encoder's self-attention lets every source token look at every "
    "source token; the decoder's masked self-attention lets each target position look only at earlier "
    "ones; encoder-decoder attention lets each produced token look at the source."
)
UNITS = ("pieces", "words")

# Example sentences, by what the checkpoint was trained on (metadata["data"], or the test fixtures'
# metadata["fixture"]).
NATURAL_EXAMPLES = (
    "A man is riding a bike.",
    "Two dogs play in the snow.",
    "A little girl climbs into a wooden playhouse.",
    "A woman in a red jacket is walking down the street.",
)
SYMBOL_EXAMPLES = ("a b c d e f g", "h e l l o", "s t e p s", "b a d c a b")
WORDS_FIXTURE_EXAMPLES = (
    "a man rides a bicycle .",
    "the dog walks in the park .",
    "a small child sees the red dog .",
)


def data_kind(metadata: Mapping[str, Any]) -> str:
    """What a checkpoint translates: the synthetic task's name ('reverse', 'copy', ...), 'words' for the
    mini word fixture, or 'natural' for real sentences (Multi30k and anything unknown)."""
    data = str(metadata.get("data") or metadata.get("fixture") or "")
    if data in TASKS:
        return data
    return "words" if data == "words" else "natural"


def example_sentences(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The sentences to offer: `metadata["examples"]` when the page put the checkpoint's own there (see
    `checkpoint_examples`), else a list that suits what the checkpoint translates."""
    if metadata.get("examples"):
        return tuple(metadata["examples"])
    kind = data_kind(metadata)
    if kind in TASKS:
        return SYMBOL_EXAMPLES
    return WORDS_FIXTURE_EXAMPLES if kind == "words" else NATURAL_EXAMPLES


def checkpoint_examples(checkpoint_dir: str | Path, metadata: Mapping[str, Any], lang: str = "en") -> Examples:
    """The checkpoint folder's own examples (examples.json), else `example_sentences(metadata)` (symbols for a
    toy task, the fixture's words...); `problem` says, in `lang`, why a file in the folder was not used."""
    found = load_examples(checkpoint_dir, lang=lang)
    if found.from_checkpoint:
        return found
    return Examples(example_sentences(metadata), from_checkpoint=False, problem=found.problem)


def with_examples(metadata: Mapping[str, Any], examples: Examples) -> dict[str, Any]:
    """`metadata` plus the sentences to offer, for `sentence_input` (the shared checkpoint's dict is not changed)."""
    return {**metadata, "examples": list(examples.sentences)}


@dataclass(frozen=True)
class AttentionView:
    """One attention family of one translation, ready for the figure builders."""

    family: str
    units: str
    weights: np.ndarray  # (layers, heads, q, k), rows are queries
    query_labels: list[str]
    key_labels: list[str]
    query_title: str
    key_title: str
    value_weighted: bool = False  # weights are value-weighted shares (explorer/explain/value_weighted.py), not α

    @property
    def title(self) -> str:
        return FAMILY_TITLES[self.family]

    @property
    def n_layers(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.weights.shape[1])


def family_title(family: str, lang: str = "en") -> str:
    """The family's title in `lang` ("Encoder-decoder attention"); literal calls, so the catalogue check sees them."""
    titles = {
        "encoder_self": translate("Encoder self-attention", lang),
        "decoder_self": translate("Decoder self-attention (masked)", lang),
        "cross": translate("Encoder-decoder attention", lang),
    }
    return titles[family]


def family_pieces(translation: Translation, family: str, lang: str = "en") -> tuple[list[str], list[str], str, str]:
    """(query pieces, key pieces, query axis title, key axis title) of one attention family; titles in `lang`."""
    if family == "encoder_self":
        pieces = translation.source_pieces
        return pieces, pieces, translate("source (query)", lang), translate("source (key)", lang)
    if family == "decoder_self":
        pieces = translation.target_input_pieces
        return pieces, pieces, translate("target read (query)", lang), translate("target read (key)", lang)
    if family == "cross":
        return (
            translation.target_output_pieces,
            translation.source_pieces,
            translate("target produced (query)", lang),
            translate("source (key)", lang),
        )
    raise KeyError(f"unknown attention family {family!r}; expected one of {FAMILIES}")


def attention_view(
    translation: Translation,
    family: str,
    units: str = "pieces",
    lang: str = "en",
    *,
    marker: bool = False,
    explained: ValueWeighted | None = None,
) -> AttentionView:
    """The weights (layers, heads, q, k) and labels of `family`; units='words' merges sub-word pieces
    (summed over a word's pieces on the key side, averaged on the query side). Axis titles in `lang`.

    Labels as a reader sees them ("Hund", not "▁Hund": explorer/text/pieces.py); marker=True keeps the pieces
    as the model sees them, word-start marker included (units='pieces' only: a word has no marker).
    explained: this translation's value-weighted attention (explorer/explain/value_weighted.py); given, the view
    holds each row's share of what the head moves from every key instead of the raw weights (rows still sum to 1).
    """
    assert translation.attention is not None, "translate with with_attention=True to look at attention"
    assert units in UNITS, f"units must be one of {UNITS}, got {units!r}"
    weights = np.asarray(translation.attention.family(family) if explained is None else explained.weighted(family))
    raw_shape = np.shape(translation.attention.family(family))
    assert weights.shape == raw_shape, f"value-weighted {family} {weights.shape} is not this translation's {raw_shape}"
    queries, keys, query_title, key_title = family_pieces(translation, family, lang)
    if units == "words":
        weights = merge_attention_to_words(weights, word_groups(queries), word_groups(keys))
        queries, keys, marker = word_labels(queries), word_labels(keys), False
    return AttentionView(
        family,
        units,
        weights,
        shown_pieces(queries, marker),
        shown_pieces(keys, marker),
        query_title,
        key_title,
        explained is not None,
    )


def head_title(family: str, layer: int, head: int | None, lang: str = "en") -> str:
    """'Encoder-decoder attention · layer 2 · head 1' (1-based; head None means the mean over heads), in `lang`.
    English (the default) also names the exported files."""
    if head is None:
        return translate(
            "{family} · layer {layer} · mean over heads", lang, family=family_title(family, lang), layer=layer
        )
    return translate(
        "{family} · layer {layer} · head {head}", lang, family=family_title(family, lang), layer=layer, head=head
    )


# Batch translation of an uploaded file.
MAX_UPLOAD_BYTES = 1024 * 1024
MAX_UPLOAD_LINES = 1000
BATCH_CHUNK = 16  # sentences per cached call, so the progress bar moves


def result_rows(lines: Sequence[str], translations: Sequence[Sequence[Translation]]) -> list[dict[str, Any]]:
    """One row per line for the results table and the CSV/TSV download: the translations of the line's
    sentences joined, their mean score, whether any was cut, and whether any repeats a phrase in a loop."""
    rows = []
    for i, (line, parts) in enumerate(zip(lines, translations, strict=True)):
        rows.append(
            {
                "#": i + 1,
                "source": line,
                "translation": join_sentences(t.output for t in parts),
                "score": round(sum(t.score for t in parts) / len(parts), 4) if parts else None,
                "truncated": any(t.truncated for t in parts),
                "repeated": any(output_loop(t.output, t.target_output_pieces) is not None for t in parts),
            }
        )
    return rows


def rows_to_delimited(rows: Sequence[Mapping[str, Any]], delimiter: str = ",") -> str:
    """CSV (delimiter ',') or TSV ('\\t') text with a header row; quoting keeps commas and tabs safe."""
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), delimiter=delimiter, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()
