"""Replay over training: the watched sentences' cross-attention saved at every evaluation
(explorer.training.snapshots, read only), played with a step slider beside the loss curve."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from explorer.checkpoint import Checkpoint
from explorer.figures.heads import replay_frame
from explorer.text.pieces import shown_pieces
from explorer.training.snapshots import SNAPSHOT_JSON, AttentionSnapshot, SnapshotError, load_snapshots
from ui.figures import show_figure
from ui.heads.numbering import numbering_note
from ui.i18n import current_language, t
from ui.markdown import shown_value


@st.cache_data(max_entries=4, show_spinner=False)
def snapshots_of(path: str, stamp: float) -> list[AttentionSnapshot]:
    """The checkpoint's snapshots ([] when it has none); `stamp` (the snapshot file's mtime) only keys the cache."""
    try:
        return load_snapshots(path)
    except SnapshotError:
        return []


def replay_section(path: str, checkpoint: Checkpoint) -> None:
    index = Path(path) / SNAPSHOT_JSON
    snapshots = snapshots_of(path, index.stat().st_mtime if index.is_file() else 0.0)
    if not snapshots:
        st.info(
            t(
                "This checkpoint has no attention snapshots. Checkpoints trained on the Train page or with "
                "`explorer train --watch` keep the watched sentences' cross-attention at every evaluation; open one of "
                "those to replay it."
            ),
            icon=":material/history:",
        )
        return
    config = checkpoint.config
    sentences = [s.source for s in snapshots[-1].samples]
    left, middle, right = st.columns((3, 1, 1), gap="medium")
    sentence = left.selectbox(
        t("Sentence"), range(len(sentences)), format_func=lambda i: sentences[i], key="hr_sentence"
    )
    # 0-based values, 1-based labels like every other picker of the app; never None (options, no placeholder).
    layer = middle.selectbox(
        t("Layer"),
        range(config.n_decoder_layers),
        index=config.n_decoder_layers - 1,
        key="hr_layer",
        format_func=lambda i: str(i + 1),
    )
    head = right.selectbox(t("Head"), range(config.n_heads), key="hr_head", format_func=lambda i: str(i + 1))
    sentence, layer, head = sentence or 0, layer or 0, head or 0
    steps = [s.step for s in snapshots]
    started = checkpoint.metadata.get("initialised_from")
    if isinstance(started, dict):
        # A continued run's step 0 is a trained model: say so, or the replay reads as learning from scratch.
        st.caption(
            t(
                "This training continued an already trained model ({start}): step 0 shows that model, not "
                "random weights, so the replay shows how the last stage of training refined the attention.",
                start=shown_value(Path(str(started.get("path", "?"))).name),
            )
        )
    step = st.select_slider(t("Training step"), steps, value=steps[-1], key="hr_step")
    snapshot = snapshots[steps.index(step)]
    sample = snapshot.samples[sentence]
    history = (checkpoint.training or {}).get("history", {})
    st.caption(t("Output at this step: {output}", output=sample.output or t("(empty)")))
    figure = replay_frame(
        sample.cross_attention[layer, head],
        shown_pieces(sample.output_pieces),
        shown_pieces(sample.source_pieces),
        history.get("step", []),
        history.get("loss", []),
        step,
        title=t("Cross-attention · layer {layer} · head {head}", layer=layer + 1, head=head + 1)
        + f" (cross.{layer}.{head})",
        lang=current_language(),
    )
    show_figure(figure, f"replay cross {layer + 1} {head + 1} step {step}", key="heads_replay")
    st.caption(numbering_note(config))
