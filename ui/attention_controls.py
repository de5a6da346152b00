"""The controls the attention pages share: the sentence box with examples, the (family, layer, head) pickers,
the translation card (one sentence, or a line of several joined) and the picker of one sentence among them.
Every control is keyed by the caller and kept in the URL, so a lecture slide can link straight to a view:
plain values through Streamlit's `bind="query-params"`, labelled options through ui/urlstate.py (which also
says so when a link's value does not fit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from explorer.data.synthetic import TASKS, task_description
from explorer.decoding.repetition import output_loop
from explorer.explain.sinks import family_sinks
from explorer.explain.value_weighted import ValueWeighted
from explorer.inference import Translation
from explorer.paper import FAMILIES, FAMILY_SHORT, FAMILY_TITLES
from explorer.text.sentences import join_sentences
from ui.attention_view import FAMILY_HELP, UNITS, data_kind, example_sentences
from ui.explain.compute import explained_for
from ui.i18n import t
from ui.markdown import SENTENCE_CHARS, md_escape, shown_value
from ui.model_picker import Selection
from ui.urlstate import bound_buttons, bound_choice, bound_select_slider, bound_text

WEIGHTINGS = {"raw": "Raw weights", "value_weighted": "Value-weighted"}
WEIGHTING_KEY = "weighting"  # one URL key on every page: ?weighting=value_weighted carries from page to page
MAX_SENTENCE_CHARS = 1000
EXAMPLE_CHARS = 80  # an example's button shows this many characters; a click still takes it whole


def sentence_input(
    key: str, metadata: Mapping[str, Any], *, label: str = "Sentence", example: int = 0, default: str | None = None
) -> str:
    """A sentence box bound to ?{key}= (else `default`, else example number `example`), with the checkpoint's
    example sentences one click away. Returns the sentence stripped ('' when empty)."""
    examples = example_sentences(metadata)
    examples_key = f"{key}_example"

    def use_example() -> None:
        choice = st.session_state.get(examples_key)
        if choice:
            st.session_state[key] = choice
        st.session_state[examples_key] = None

    st.pills(
        t("Examples"),
        examples,
        key=examples_key,
        on_change=use_example,
        help=t("Click one to put it in the box."),
        format_func=lambda sentence: shown_value(sentence, EXAMPLE_CHARS),  # a checkpoint's examples.json
    )
    kind = data_kind(metadata)
    hint = t("Symbols separated by spaces. {task}", task=task_description(kind)) if kind in TASKS else None
    initial = default or examples[example % len(examples)]
    text = bound_text(
        st,
        t(label),
        key,
        MAX_SENTENCE_CHARS,
        initial,
        help=hint,
        placeholder=t("Type a sentence and press Enter"),
    )
    return text.strip()


def show_translation(translation: Translation, max_len: int, *, how: str, source: bool = False) -> None:
    """The translation in large type, with how it was found and a warning if the source was cut.
    source: the source sentence as text beside it (the page shows it nowhere else in its main area)."""
    summary = t(
        "{source} source tokens → {target} target tokens · score {score:.3f} (length-normalised log-probability)",
        source=len(translation.source_pieces),
        target=len(translation.output_ids),
        score=translation.score,
    )
    _translation_card([translation], translation.output, max_len, how=how, summary=summary, source=source)


def show_translations(translations: Sequence[Translation], max_len: int, *, how: str, source: bool = False) -> None:
    """A line's translation: the card of its one sentence, or its sentences' translations joined, with how
    many sentences it had and the warnings of any of them. source: as `show_translation`'s."""
    if len(translations) == 1:
        show_translation(translations[0], max_len, how=how, source=source)
        return
    summary = t(
        "{n} sentences, each translated on its own and joined; {source} source tokens → {target} target tokens",
        n=len(translations),
        source=sum(len(tr.source_pieces) for tr in translations),
        target=sum(len(tr.output_ids) for tr in translations),
    )
    output = join_sentences(tr.output for tr in translations)
    _translation_card(translations, output, max_len, how=how, summary=summary, source=source)


def _translation_card(
    translations: Sequence[Translation], output: str, max_len: int, *, how: str, summary: str, source: bool
) -> None:
    """`output` in large type over how it was found and `summary`, then the warnings of any of `translations`
    (cut at the length limit, unfinished, repeating). source: the source sentence beside the output."""
    # Compact (one heading line, one caption line): on a 720 px projector the figure below must still fit.
    with st.container(border=True, gap="small"):
        shown = f"## {md_escape(output) if output else t('(empty)')}"
        if source:
            # Beside, not above: the pair reads as one line of a slide ("A man … → Ein Mann …") and costs no
            # height. The source a step smaller, so the eye lands on the translation; cut like any quoted
            # sentence (the box takes 1000 characters).
            said, translated = st.columns(2, gap="medium", vertical_alignment="center")
            said.markdown(f"### {shown_value(join_sentences(tr.source for tr in translations), SENTENCE_CHARS)} →")
            translated.markdown(shown)
        else:
            st.markdown(shown)
        details = t("Translation · {how}", how=how) + " · " + summary
        if not all(tr.finished for tr in translations):
            details += " · " + t("stopped at the length limit without producing </s>")
        st.caption(details)
    if any(tr.truncated for tr in translations):
        _warn_cut(max_len)
    warn_repeated(translations)


def _warn_cut(max_len: int) -> None:
    st.warning(
        t(
            "The sentence is longer than this model reads ({max_len} tokens including </s>), so only its "
            "first {kept} tokens were translated.",
            max_len=max_len,
            kept=max_len - 1,
        ),
        icon=":material/content_cut:",
    )


def warn_repeated(translations: Sequence[Translation]) -> None:
    """A warning when an output says a phrase (two or more words, or pieces inside a word) three or more times
    in a row: a decoding loop, typical of the model out of its domain (explorer/decoding/repetition.py)."""
    for tr in translations:
        found = output_loop(tr.output, tr.target_output_pieces)
        if found is not None:
            st.warning(
                t(
                    "The translation repeats “{phrase}” {times} times in a row: the search is stuck in a loop, "
                    "which happens out of the model's domain. The settings can forbid repeated phrases.",
                    phrase=md_escape(found[0]),
                    times=found[1],
                ),
                icon=":material/repeat:",
            )
            return


def sentence_picker(key: str, sentences: Sequence[str]) -> int:
    """Which sentence of a line the views below show: 'Sentence 2 of 3: …' (0-based index back)."""
    if st.session_state.get(key, 0) >= len(sentences):  # a new line with fewer sentences
        st.session_state[key] = 0
    picked = st.selectbox(
        t("Attention of"),
        range(len(sentences)),
        key=key,
        format_func=lambda i: t("Sentence {i} of {n}", i=i + 1, n=len(sentences)) + f": {sentences[i][:80]}",
        help=t("The line has several sentences; each was translated on its own, so each has its own attention."),
    )
    return picked or 0


def choice_list(
    label: str, options: Mapping[str, str], key: str, default: str, *, help: str | None = None, where: Any = st
) -> str:
    """One choice among `options` (value -> message id), one option a line, kept in the URL by its value
    (?key=value; `default` when the link has none): for a sidebar or a narrow column, where joined buttons break
    over several rows once their labels are long (in Korean at 1024 px: Translate's view, Compare's comparison
    and colour scale, the attention families, tests/browser/test_sweep.py).

    label and help are shown as given (the caller translates them); the options' labels are translated now, in
    this run's language: Streamlit may call format_func again outside the run (AppTest does, to send the
    widget's state back), where a lazy `t` would format in the default language. where: st, or a container.
    """
    labels = {value: t(message) for value, message in options.items()}
    return str(
        bound_choice(where.radio, label, tuple(options), key, default, format_func=labels.__getitem__, help=help)
    )


def units_picker(key: str, *, help: str, where: Any = st) -> str:
    """Sub-word pieces or whole words (`UNITS`) as the attention's tokens, kept in the URL (?key=words).
    where: st, or a container."""
    return str(
        bound_choice(
            where.segmented_control,
            t("Tokens"),
            UNITS,
            key,
            "pieces",
            required=True,
            format_func=lambda u: t(u.capitalize()),
            help=help,
        )
    )


def family_picker(
    key: str,
    *,
    label: str = "Attention family",
    short: bool = False,
    help: str | None = FAMILY_HELP,
    vertical: bool = False,
) -> str:
    """Encoder self / decoder self / cross, kept in the URL as its key (?family=cross).

    vertical: a list of radio buttons, one family a line, for a column too narrow for three joined buttons
    (Translate's pickers at 1024 px: the segmented control broke into three rows with their borders open).
    """
    names = FAMILY_SHORT if short else FAMILY_TITLES
    help_text = t(help) if help else None
    if vertical:
        return choice_list(t(label), {f: names[f] for f in FAMILIES}, key, "cross", help=help_text)
    labels = {f: t(names[f]) for f in FAMILIES}  # translated now: `choice_list`'s note
    return str(
        bound_choice(
            st.segmented_control,
            t(label),
            FAMILIES,
            key,
            "cross",
            required=True,
            format_func=labels.__getitem__,
            help=help_text,
        )
    )


def number_picker(label: str, key: str, count: int, *, default: int = 1, help: str | None = None) -> int:
    """1-based choice among `count` (layers or heads), bound to ?{key}=; a one-click button row."""
    options = list(range(1, count + 1))
    default = min(max(default, 1), count)
    if count > 12:
        return int(bound_select_slider(st, t(label), options, key, default, help=help))
    return int(bound_buttons(st.segmented_control, t(label), options, key, default, required=True, help=help))


def weighting_switch(*, where: Any = st) -> str:
    """The one switch of every page that draws attention: the raw weights α, or value-weighted attention (each row's
    share of ‖α_ij · f(x_j)‖, what the head moves from every key; Kobayashi et al., 2020). Kept in the URL
    (?weighting=value_weighted); returns a key of `WEIGHTINGS`. where: st, or a container."""
    labels = {value: t(message) for value, message in WEIGHTINGS.items()}  # translated now: `choice_list`'s note
    return str(
        bound_choice(
            where.segmented_control,
            t("Attention drawn"),
            tuple(WEIGHTINGS),
            WEIGHTING_KEY,
            "raw",
            required=True,
            format_func=labels.__getitem__,
            help=t(
                "Raw: the weights α each query puts on each key. Value-weighted: the share of what the head moves "
                "from each key, α_ij · ‖f(x_j)‖ with f the value projection and the head's slice of W^O "
                "(Kobayashi et al., 2020); a key that is looked at but moves little fades."
            ),
        )
    )


def drawn_values(selection: Selection, translation: Translation, weighting: str) -> ValueWeighted | None:
    """What `attention_view(explained=…)` needs to draw `weighting`: None for the raw weights, else the
    translation's value-weighted attention, computed by the engine and cached per checkpoint."""
    assert weighting in WEIGHTINGS, f"weighting must be one of {tuple(WEIGHTINGS)}, got {weighting!r}"
    if weighting == "raw":
        return None
    with st.spinner(t("Computing the value-weighted attention of every head…")):
        return explained_for(selection, translation)


def sink_note(
    selection: Selection, translation: Translation, family: str, *, head: tuple[int, int] | None = None
) -> str:
    """The family's sink heads (most weight on `</s>`, `<s>` or punctuation, little of what moves) with their two
    shares, as a caption line ('' when none); head (0-based layer, head): only that head."""
    keys = translation.target_input_pieces if family == "decoder_self" else translation.source_pieces
    sinks = [s for s in family_sinks(explained_for(selection, translation), family, keys) if s.is_sink]
    if head is not None:
        sinks = [s for s in sinks if (s.layer, s.head) == head]
    if not sinks:
        return ""
    found = ", ".join(
        t(
            "layer {layer} head {head} (raw {raw:.0%}, value-weighted {weighted:.0%})",
            layer=s.layer + 1,
            head=s.head + 1,
            raw=s.raw_share,
            weighted=s.weighted_share,
        )
        for s in sinks
    )
    return t("Sinks (weight on end and punctuation tokens that moves little): {found}.", found=found)
