"""1 · Data: the corpus a run trains on (a synthetic task, Multi30k, or an upload), its size and a preview."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from explorer.data import TASKS, CorpusError, ParallelCorpus, make_splits, multi30k_available, prepare, task_description
from explorer.training.datasets import SYNTHETIC_VAL_PAIRS, load_corpora
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.train.prepared import wait_for
from ui.train.state import apply_data_defaults, choice_buttons

UPLOAD_LIMIT_BYTES = 20 * 1024 * 1024  # per file
# Uploads larger than this (all files together) are read, and their vocabulary trained, outside the server
# (explorer.data.prepare); a smaller one takes well under a second and little memory, so it is read here.
LARGE_UPLOAD_BYTES = 1024 * 1024
PAIRS = (500, 1000, 2000, 5000, 10000, 20000, 50000)


def data_sources() -> dict[str, str]:
    return {
        "synthetic": t("Synthetic task"),
        "multi30k": t("Multi30k (English → German)"),
        "upload": t("Upload a corpus"),
    }


@dataclass(frozen=True)
class DataChoice:
    """The corpus the run will train on, as the data section chose and loaded it."""

    key: str  # identifies the corpus in caches
    kind: str  # task name, "multi30k" or "upload" (written into the checkpoint's metadata as "data")
    label: str
    train: ParallelCorpus
    val: ParallelCorpus
    job: Path | None = None  # a large upload's preparation folder: its vocabulary is trained there too

    @property
    def synthetic(self) -> bool:
        return self.kind in TASKS


# Memory: every cache is bounded. Generated tasks are small and shared by everyone (a few entries, an hour at
# most); Multi30k is one corpus. An upload belongs to one session: it is kept for that session only, one at a
# time, and Streamlit releases it when the session's browser disconnects.
@st.cache_resource(show_spinner=False, max_entries=4, ttl=3600)
def synthetic_corpora(task: str, n_train: int, max_len: int, seed: int) -> tuple[ParallelCorpus, ParallelCorpus]:
    n_val = min(SYNTHETIC_VAL_PAIRS, max(50, n_train // 10))
    return make_splits(task, n_train, n_val, seed, min_len=min(4, max_len), max_len=max_len)


@st.cache_resource(show_spinner=False, max_entries=1)
def multi30k_corpora() -> tuple[ParallelCorpus, ParallelCorpus]:
    return load_corpora("multi30k")


@st.cache_resource(show_spinner=False, scope="session", max_entries=1)
def upload_corpora(
    digest: str, _files: tuple[tuple[str, bytes], ...], _job: str | None
) -> tuple[ParallelCorpus, ParallelCorpus]:
    """The upload identified by `digest` as (train, validation), the last 5% of pairs held out: read here from
    `_files`, or, for a large upload, from what its preparation (`_job`) wrote."""
    if _job is not None:
        train, val = prepare.load_corpora(Path(_job))
    else:
        train, val = prepare.parse_upload(_files, UPLOAD_LIMIT_BYTES)
    if len(train) + len(val) < 2:
        raise CorpusError(
            t(
                "{name} has {count} sentence pair; at least 2 are needed (one is held out for validation)",
                name=train.name.removesuffix(" (train)"),
                count=len(train) + len(val),
            )
        )
    return train, val


def data_section() -> DataChoice | None:
    """Data source widgets, corpus size and a preview; None (after a message) when there is no usable corpus."""
    st.subheader(t("1 · Data"))
    source = choice_buttons(t("Training data"), data_sources(), "train_data", apply_data_defaults)
    choice: DataChoice | None = None
    if source == "synthetic":
        left, middle, right = st.columns(3)
        task = str(left.selectbox(t("Task"), tuple(TASKS), key="train_task"))
        n_pairs = middle.select_slider(t("Training pairs"), PAIRS, key="train_pairs")
        seq_len = right.slider(
            t("Longest sequence"),
            4,
            20,
            key="train_seq_len",
            help=t("Sequences have 4 to this many symbols, out of an alphabet of 20 letters."),
        )
        # The engine's description is the msgid (explorer.data.synthetic's Task.description; Korean in train.po).
        st.caption(t(task_description(task)))
        with st.spinner(t("Making the task…")):
            train, val = synthetic_corpora(task, n_pairs, seq_len, int(st.session_state["train_seed"]))
        choice = DataChoice(
            f"{task}-{n_pairs}-{seq_len}-{st.session_state['train_seed']}",
            task,
            t("{task} task", task=task),
            train,
            val,
        )
    elif source == "multi30k":
        if not multi30k_available() and not st.session_state.get("train_multi30k_ok"):
            st.info(
                t(
                    "Multi30k (29,000 English–German image captions, Elliott et al. 2016) is not on this machine "
                    "yet. It can be downloaded once (about 4 MB) into `~/.cache/attention-explorer/multi30k`."
                ),
                icon=":material/cloud_download:",
            )
            if not st.button(t("Download Multi30k"), icon=":material/download:", key="train_multi30k_download"):
                return None
        try:
            with st.spinner(t("Reading Multi30k…")):
                train, val = multi30k_corpora()
        except CorpusError as error:
            st.error(t("Multi30k is not available: {error}", error=error), icon=":material/cloud_off:")
            return None
        st.session_state["train_multi30k_ok"] = True
        choice = DataChoice("multi30k", "multi30k", "Multi30k", train, val)
    else:
        choice = upload_section()
    if choice is None:
        return None
    show_corpus(choice)
    return choice


def upload_section() -> DataChoice | None:
    mode = st.radio(
        t("Format"),
        ("two", "tsv"),
        key="train_upload_mode",
        horizontal=True,
        format_func={
            "two": t("Two files: source and target, line by line"),
            "tsv": t("One TSV file: source<TAB>target per line"),
        }.get,
    )
    limit = t("UTF-8 text, at most {mb} MB per file.", mb=UPLOAD_LIMIT_BYTES // (1024 * 1024))
    if mode == "two":
        left, right = st.columns(2)
        src = left.file_uploader(t("Source sentences"), key="train_upload_src", help=limit)
        tgt = right.file_uploader(
            t("Target sentences (line i translates line i of the source)"), key="train_upload_tgt", help=limit
        )
        uploads = [f for f in (src, tgt) if f is not None]
        needed = 2
    else:
        tsv = st.file_uploader(t("Sentence pairs (TSV)"), key="train_upload_tsv", help=limit)
        uploads = [tsv] if tsv is not None else []
        needed = 1
    st.caption(
        limit
        + " "
        + t(
            "One sentence per line; pairs with an empty side are skipped; the last 5% of "
            "pairs are held out to measure validation loss and BLEU."
        )
    )
    if len(uploads) < needed:
        st.info(
            t("Upload both files to train on your own corpus.")
            if needed == 2
            else t("Upload a TSV file to train on your own corpus."),
            icon=":material/upload_file:",
        )
        return None
    files = tuple((f.name, f.getvalue()) for f in uploads)
    digest = prepare.upload_digest(files)
    job = None
    try:
        if sum(len(data) for _, data in files) > LARGE_UPLOAD_BYTES:
            job = prepare.start_corpus(files, UPLOAD_LIMIT_BYTES)
            state = wait_for(job, prepare.CORPUS, t("Reading the upload…"))
            if state.status != "done":
                raise CorpusError(state.error)
        with st.spinner(t("Reading the upload…")):
            train, val = upload_corpora(digest, files, None if job is None else str(job))
    except CorpusError as error:
        st.error(t("Upload not usable: {error}", error=shown_value(error, ERROR_CHARS)), icon=":material/error:")
        return None
    return DataChoice(f"upload-{digest}", "upload", " + ".join(name for name, _ in files), train, val, job)


def show_corpus(choice: DataChoice) -> None:
    cols = st.columns(3)
    cols[0].metric(t("Training pairs"), f"{len(choice.train):,}")
    cols[1].metric(t("Validation pairs"), f"{len(choice.val):,}")
    cols[2].metric(
        t("Skipped pairs"), f"{choice.train.dropped:,}", help=t("Pairs with an empty or placeholder side, left out.")
    )
    st.dataframe(
        [{"source": source, "target": target} for source, target in choice.train.preview(6)],
        hide_index=True,
        width="stretch",
        column_config={
            "source": st.column_config.TextColumn(t("source sentence")),
            "target": st.column_config.TextColumn(t("target sentence")),
        },
    )
