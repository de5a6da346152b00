"""Head roles with evidence: a role and a measured score per head, the sentences that show it, and the rules
and thresholds explained (from explorer.analysis.roles, where they live)."""

from __future__ import annotations

import csv
import io
from typing import Any

import streamlit as st

from explorer.analysis.roles import MIN_ROWS, POSITIONAL_MARGIN, ROLE_RULES, ROLE_THRESHOLDS, HeadRole, measure_roles
from explorer.checkpoint import Checkpoint
from explorer.text.pieces import shown_piece
from ui.attention_view import example_sentences
from ui.heads.numbering import numbering_note
from ui.i18n import t
from ui.markdown import SENTENCE_CHARS, shown_value
from ui.model_cache import cached
from ui.model_picker import Selection

ROLE_SENTENCES = 60


def reference_sentences(checkpoint: Checkpoint, extra: str | None = None) -> tuple[str, ...]:
    """Validation sentences of the checkpoint's data, else its example sentences; plus the page's sentence."""
    from explorer.analysis.importance import validation_pairs

    try:
        sentences = validation_pairs(checkpoint.metadata, ROLE_SENTENCES, 0)[0]
    except (ValueError, OSError):
        sentences = list(example_sentences(checkpoint.metadata))
    if extra and extra not in sentences:
        sentences.append(extra)
    return tuple(sentences)


def roles_for(selection: Selection, sentences: tuple[str, ...], level: str = "word") -> list[HeadRole]:
    return cached(
        "head_roles",
        selection,
        (sentences, level),
        lambda ck: measure_roles(ck.model, ck.tokenizer, list(sentences), level=level),
    )


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    columns = list(dict.fromkeys(k for row in rows for k in row))
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def roles_section(selection: Selection, checkpoint: Checkpoint, sentence: str | None) -> None:
    from explorer.analysis.roles import roles_table

    sentences = reference_sentences(checkpoint, sentence)
    roles = roles_for(selection, sentences)
    st.markdown(t("Measured over {n} sentences, word by word (a word's pieces merged).", n=len(sentences)))
    rows = [
        {
            t("head"): r["head"],
            t("role"): t(r["role"]),
            t("score"): r["score"],
            t("evidence"): r["evidence"],
            t("example"): r["example"],
        }
        for r in roles_table(roles)
    ]
    st.dataframe(rows, hide_index=True, key="heads_roles_table")
    st.caption(numbering_note(checkpoint.config))
    st.download_button(
        t("Roles as CSV"),
        _csv(roles_table(roles)),
        file_name="head_roles.csv",
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
        key="heads_roles_csv",
    )
    with st.expander(t("How roles are given: rules and thresholds"), icon=":material/rule:"):
        st.markdown(
            t(
                "Each role is a rule saying where a query should look. A query **follows** the rule when its strongest "
                "key is where the rule points (as Voita et al., 2019, define positional heads); the score is the share "
                "of queries that follow it. A head gets the role with the highest score among those at or over their "
                "threshold; a positional role within {margin:.2f} of the best wins, being the simpler explanation. "
                "A role needs at least {rows} queries it applies to. No role over its threshold: **mixed**.",
                margin=POSITIONAL_MARGIN,
                rows=MIN_ROWS,
            )
        )
        st.dataframe(
            [
                {t("role"): t(role), t("rule"): t(ROLE_RULES[role]), t("threshold"): ROLE_THRESHOLDS.get(role)}
                for role in ROLE_RULES
            ],
            hide_index=True,
            key="heads_roles_rules",
        )
        st.markdown(
            t(
                "Alignment uses no dictionary: an output word is anchored to a source word when the same "
                "text occurs exactly once on each side (names, numbers, words such as *in*, and every symbol "
                "of a toy task). Rare words are words the subword model splits into two or more pieces."
            )
        )
    shown = [r for r in roles if r.role != "mixed"]
    for r in shown:
        with st.expander(f"`{r.name}` · {t(r.role)} · {r.score:.2f}"):
            for example in r.examples:
                # Validation sentences: a trained model's come from the corpus someone uploaded.
                st.markdown(f"*{shown_value(example.sentence, SENTENCE_CHARS)}* — {example.score:.0%}")
                st.markdown(
                    "  \n".join(
                        f"{shown_value(shown_piece(q))} → {shown_value(shown_piece(k))} ({w:.0%})"
                        for q, k, w in example.pairs
                    )
                )
