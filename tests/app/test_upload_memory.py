"""Server memory stays bounded: a large corpus upload is read, and its vocabulary trained, in processes of their
own (explorer.data.prepare); the Train page's caches of corpora and tokenizers are bounded, an upload's corpus
is kept per session. No timings: what is asserted is where the work ran and what the caches keep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.data import prepare
from tests.apptest_helpers import open_page, plain

PAIRS = "".join(f"the {w} sleeps {i} .\tder {w} schläft {i} .\n" for i in range(30) for w in ("cat", "dog"))


@pytest.fixture
def jobs(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "prepare"
    monkeypatch.setenv(prepare.ROOT_ENV, str(root))
    monkeypatch.setenv("EXPLORER_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(tmp_path / "checkpoints"))
    return root


def _wait(job: Path, step: str) -> prepare.StepState:
    deadline = time.monotonic() + 120
    while (state := prepare.step_state(job, step)).running and time.monotonic() < deadline:
        time.sleep(0.1)
    return state


def test_a_large_upload_is_read_and_its_vocabulary_trained_outside_the_server(jobs, monkeypatch):
    import ui.train.data

    monkeypatch.setattr(ui.train.data, "LARGE_UPLOAD_BYTES", 0)  # this small file counts as large
    at = open_page("pages/train.py")
    at.segmented_control(key="train_view").set_value("new").run()
    at.segmented_control(key="train_data").set_value("upload").run()
    at.radio(key="train_upload_mode").set_value("tsv").run()
    at.session_state["train_vocab"] = 64
    at.file_uploader(key="train_upload_tsv").set_value(("pairs.tsv", PAIRS.encode(), "text/plain"))
    at.run(timeout=180)
    assert not at.exception and not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Training pairs"], metrics["Validation pairs"]) == ("57", "3")
    (job,) = jobs.iterdir()
    for step in (prepare.CORPUS, prepare.tokenizer_step(64)):
        pid = int((job / f"{step}.pid").read_text())
        assert pid != os.getpid(), f"{step} ran in a process of its own"
        assert json.loads((job / f"{step}.json").read_text())["status"] == "done"
    assert prepare.tokenizer_path(job, 64).is_file()
    assert not list(job.glob("input-*")), "the uploaded bytes are not kept once read"
    assert any("pieces" in m.value for m in at.markdown), "the tokenizer section shows the vocabulary"


def test_a_bad_large_upload_says_why(jobs, monkeypatch):
    import ui.train.data

    monkeypatch.setattr(ui.train.data, "LARGE_UPLOAD_BYTES", 0)
    at = open_page("pages/train.py")
    at.segmented_control(key="train_view").set_value("new").run()
    at.segmented_control(key="train_data").set_value("upload").run()
    at.radio(key="train_upload_mode").set_value("tsv").run()
    at.file_uploader(key="train_upload_tsv").set_value(("pairs.tsv", b"a\tb\nno tab\n", "text/plain"))
    at.run(timeout=120)
    errors = [plain(e.value) for e in at.error]
    assert any("pairs.tsv line 2: expected exactly one TAB" in e for e in errors), errors


def test_one_job_per_upload_and_a_dead_step_starts_again(jobs):
    files = [("pairs.tsv", PAIRS.encode())]
    job = prepare.start_corpus(files, 1 << 20)
    assert prepare.start_corpus(files, 1 << 20) == job, "a second session (or a reload) finds the same job"
    assert _wait(job, prepare.CORPUS).status == "done"
    assert len(list(jobs.iterdir())) == 1 and len((job / "corpus.log").read_bytes().splitlines()) == 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    step = prepare.tokenizer_step(32)
    (job / f"{step}.claim").touch()
    (job / f"{step}.json").write_text(json.dumps({"status": "running", "pid": dead.pid, "started": 0}))
    assert prepare.step_state(job, step).crashed
    prepare.start_tokenizer(job, 32)
    assert _wait(job, step).status == "done"


def test_old_jobs_are_pruned(jobs):
    jobs.mkdir()
    for i in range(prepare.MAX_JOBS + 2):
        (jobs / f"job{i}").mkdir()
        os.utime(jobs / f"job{i}", (i, i))
    removed = prepare.prune(jobs, stale_after_s=prepare.STALE_AFTER_S)
    assert len(removed) == prepare.MAX_JOBS + 2, "all are older than a day"
    (jobs / "fresh").mkdir()
    assert prepare.prune(jobs, stale_after_s=prepare.STALE_AFTER_S) == []


def _caches_script() -> None:
    """Calls the Train page's cached loaders with counting stand-ins for the work, and records the calls."""
    import streamlit as st

    import ui.train.data as data
    import ui.train.tokenizer as tok

    calls = st.session_state.setdefault("calls", [])
    data.prepare.parse_upload = lambda files, limit: (
        calls.append(files[0][0])
        or (  # type: ignore[method-assign]
            data.ParallelCorpus("a", ("x", "y"), ("x", "y")),
            data.ParallelCorpus("b", ("z",), ("z",)),
        )
    )
    tok.train_tokenizer = lambda train, vocab, synthetic: calls.append(vocab) or object()  # type: ignore[assignment]
    for name in st.session_state.get("uploads", []):
        data.upload_corpora(name, ((name, b""),), None)
    for vocab in st.session_state.get("vocabs", []):
        tok.tokenizer_for("k", vocab, False, None, None)


def test_the_page_caches_are_bounded():
    import streamlit as st

    import ui.train.data as data
    import ui.train.tokenizer as tok

    parse, train = data.prepare.parse_upload, tok.train_tokenizer
    st.cache_resource.clear()
    try:
        at = AppTest.from_function(_caches_script, default_timeout=30)
        at.session_state["uploads"] = ["a.tsv", "b.tsv", "a.tsv"]
        at.run()
        assert at.session_state["calls"] == ["a.tsv", "b.tsv", "a.tsv"], "one upload's corpus per session"
        # (Kept per session and released with it: every AppTest shares one session id, so a real server's
        # disconnects are what benchmarks/probes/upload_memory.py checks.)
        at.session_state["calls"], at.session_state["uploads"] = [], []
        at.session_state["vocabs"] = [*range(100, 109), 100]
        at.run()
        assert at.session_state["calls"] == [*range(100, 109), 100], "at most 8 vocabularies: the oldest went"
    finally:
        data.prepare.parse_upload, tok.train_tokenizer = parse, train
        st.cache_resource.clear()


def test_an_unexpected_failure_names_no_server_path_and_is_tried_again(jobs):
    job = jobs / "broken"
    job.mkdir(parents=True)
    (job / "request.json").write_text(json.dumps({"names": ["pairs.tsv"], "max_bytes": 1 << 20}))  # no input-0
    assert prepare.main([prepare.CORPUS, str(job), "--nice", "0"]) == 1
    state = prepare.step_state(job, prepare.CORPUS)
    assert state.status == "failed" and state.crashed, "the next start tries again"
    assert str(jobs) not in state.error and "input-0" not in state.error, state.error
