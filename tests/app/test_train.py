"""The train page through the app's frame: train the reverse task from the page (in a process of its own) and
use the saved model; one run through reruns, page switches and a second session, stopped from that session;
a crashed run shown with its log; the whole run's time estimate before Start; bad uploads rejected; and the
page's figure builders."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.config import PRESETS, count_parameters
from explorer.figures.training import attention_evolution, lr_schedule_curve
from explorer.inference import translate
from explorer.training.estimate.plan import RunEstimate, StepTiming, planned_schedule
from explorer.training.snapshots import load_snapshots
from tests.apptest_helpers import open_app as open_frame
from tests.apptest_helpers import open_page, plain

PAGE = "pages/train.py"
TINY = {
    "train_pairs": 1000,
    "train_seq_len": 6,
    "train_d_model": 32,
    "train_heads": 2,
    "train_d_ff": 64,
    "train_layers": 2,
    "train_warmup": 40,
    "train_batch_tokens": 512,
    "train_eval_every": 50,
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def folders(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """Runs and checkpoints in a temporary folder (the app reads both variables at call time)."""
    runs, checkpoints = tmp_path / "runs", tmp_path / "checkpoints"
    checkpoints.mkdir()
    monkeypatch.setenv("EXPLORER_RUNS", str(runs))
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(checkpoints))
    return runs, checkpoints


def open_app(page: str | None = PAGE):
    return open_page(page) if page is not None else open_frame()


def set_widgets(at, values: dict) -> None:
    kinds = ("select_slider", "slider", "number_input", "text_input", "text_area", "selectbox")
    for key, value in values.items():
        widget = next(w for kind in kinds for w in getattr(at, kind) if w.key == key)
        widget.set_value(value)


def start_from_page(at, name: str, steps: int):
    at.segmented_control(key="train_view").set_value("new").run()
    set_widgets(at, {**TINY, "train_steps": steps})
    at.run()
    set_widgets(at, {"train_name": name})
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Training pairs"] == "1,000"
    at.button(key="train_start").click().run()
    assert not at.exception, at.exception
    assert at.session_state["train_view"] == "watch"


def manager():
    from ui.train.runs import manager as shared

    return shared()


def texts(at) -> str:
    return "\n".join(
        e.value for kind in ("markdown", "caption", "success", "info", "error", "warning") for e in getattr(at, kind)
    )


@pytest.mark.slow  # starts a training process
def test_train_reverse_from_the_page_and_use_the_model(folders):
    runs, checkpoints = folders
    at = open_app()
    # The setup view: corpus size, tokenizer, exact parameter count, measured time per step.
    at.segmented_control(key="train_view").set_value("new").run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Training pairs"] == "5,000" and metrics["Validation pairs"] == "500"
    assert "Reverse the sequence" in texts(at)
    assert "pieces" in texts(at) and "training: 600 steps ×" in texts(at) and "start-up:" in texts(at)
    set_widgets(at, TINY)
    at.run()
    tiny_params = {m.label: m.value for m in at.metric}["Parameters"]
    set_widgets(at, {"train_d_model": 64})
    at.run()
    assert {m.label: m.value for m in at.metric}["Parameters"] != tiny_params, "the count must follow the knobs"

    start_from_page(at, "page-reverse", steps=300)
    assert manager().status("page-reverse").pid != os.getpid(), "the run trains in a process of its own"
    snap = manager().wait("page-reverse", 300)
    assert snap.status == "finished", (snap.error, snap.log)
    at.run()
    assert not at.exception, at.exception
    assert "Finished" in texts(at) and "Saved at step 300 as checkpoint **page-reverse**" in texts(at)

    # The loss fell, and the page shows it.
    loss = snap.history["loss"]
    assert np.mean(loss[-20:]) < 0.6 * np.mean(loss[:20]), (loss[:5], loss[-5:])
    metric = next(m for m in at.metric if m.label == "Training loss")
    assert float(metric.value) == pytest.approx(loss[-1], abs=1e-3) and metric.delta.startswith("-")
    charts = {c.key: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    lr_chart = charts["train_lr_page-reverse"]
    assert lr_chart["data"][2]["x"] == [40], "the warm-up's end is marked"
    assert "train_att_evolution_page-reverse" in charts

    # The saved checkpoint is in the checkpoint folder with its snapshots, translates, and every page lists it.
    checkpoint = load_checkpoint(checkpoints / "page-reverse")
    assert checkpoint.metadata["data"] == "reverse" and count_parameters(checkpoint.config) > 0
    # Evaluated early and often at the start (steps 10, 20, 40), so a class sees a pattern form, then every 50.
    assert [s.step for s in load_snapshots(checkpoints / "page-reverse")][:5] == [0, 10, 20, 40, 50]
    (result,) = translate(checkpoint.model, checkpoint.tokenizer, ["a b c d e"])
    assert result.output and set(result.output.split()) <= set("abcdefghijklmnopqrst"), result.output
    fresh = open_app(page=None)
    assert "page-reverse" in fresh.sidebar.selectbox(key="model").options
    assert (runs / "page-reverse" / "latest").is_dir()


@pytest.mark.slow  # starts a training process
def test_reruns_page_switches_and_a_second_session_keep_one_job(folders):
    at = open_app()
    start_from_page(at, "page-long", steps=1_000_000)
    jobs = manager()
    try:
        deadline = time.monotonic() + 120
        while (first := jobs.snapshot("page-long")).step < 1:
            assert time.monotonic() < deadline and first.live, (first.status, first.log)
            time.sleep(0.1)
        for _ in range(3):
            at.run()
        at.switch_page("../pages/complexity.py").run()
        at.switch_page("../" + PAGE).run()
        assert not at.exception, at.exception
        other = open_app()  # a second browser session reattaches to the same run
        assert other.session_state["train_view"] == "watch"
        assert other.selectbox(key="train_run").value == "page-long"
        assert jobs.live_names().count("page-long") == 1 and len(jobs.live_names()) == 1
        deadline = time.monotonic() + 60
        while jobs.snapshot("page-long").step <= first.step + 5:
            assert time.monotonic() < deadline, "the run stopped progressing"
            time.sleep(0.1)
        assert "Training" in texts(other)
        other.button(key="train_stop_page-long").click().run()
        stopped = jobs.wait("page-long", 120)
        assert stopped.status == "stopped"
        at.run()
        assert "Stopped" in texts(at)
        # Resume from the page: it continues from the saved step, in the same single job.
        at.number_input(key="train_resume_steps_page-long").set_value(stopped.step + 5)
        at.button(key="train_resume_page-long").click().run()
        assert not at.exception, at.exception
        resumed = jobs.wait("page-long", 120)
        assert (resumed.status, resumed.resumed_from, resumed.step) == ("finished", stopped.step, stopped.step + 5)
    finally:
        for name in jobs.live_names():
            jobs.stop(name)
            jobs.wait(name, 120)


@pytest.mark.slow  # starts a training process
def test_a_crashed_run_is_shown_with_its_log_and_can_be_resumed(folders):
    at = open_app()
    start_from_page(at, "page-crash", steps=1_000_000)
    jobs = manager()
    try:
        deadline = time.monotonic() + 120
        while jobs.snapshot("page-crash").step < 5:
            assert time.monotonic() < deadline, jobs.snapshot("page-crash")
            time.sleep(0.1)
        os.kill(jobs.status("page-crash").pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while jobs.status("page-crash").status != "crashed":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        fresh = open_app()  # a restarted server: the run is listed again, as crashed
        assert any(o.startswith("page-crash (crashed at step") for o in fresh.selectbox(key="train_run").options)
        assert "Crashed" in texts(fresh) and "The training process crashed at step" in texts(fresh)
        assert any(b.key == "train_resume_page-crash" for b in fresh.button)
    finally:
        for name in jobs.live_names():
            jobs.stop(name)
            jobs.wait(name, 120)


def test_multi30k_is_offered_from_the_local_copy(folders, multi30k_root, monkeypatch):
    monkeypatch.setenv("EXPLORER_MULTI30K", str(multi30k_root))
    at = open_app()
    at.segmented_control(key="train_view").set_value("new").run()
    at.segmented_control(key="train_data").set_value("multi30k").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    sizes = (metrics["Training pairs"], metrics["Validation pairs"], metrics["Skipped pairs"])
    assert sizes == ("28,998", "1,014", "2")
    assert at.session_state["train_preset"] == "small" and at.session_state["train_d_model"] == 256
    assert at.dataframe[0].value["source"][0].startswith("Two young, White males are outside")
    assert "▁" in at.code[0].value  # subword pieces of the trained vocabulary
    tokenizer_line = next(m.value for m in at.markdown if " pieces**" in m.value)  # "**7,998 pieces**, ..."
    vocab = int(tokenizer_line.split("**")[1].split()[0].replace(",", ""))
    assert metrics["Parameters"] == f"{count_parameters(PRESETS['small'].replace(vocab_size=vocab)):,}"
    # A 7M-parameter model's run is timed on request (its steps take seconds on a CPU).
    assert at.button(key="train_estimate").label == "Estimate the run's time"
    assert "Estimated time" not in metrics


@pytest.fixture
def fresh_estimates():
    """No measurement cached by an earlier test (the cache is the server's, shared by every session), and none
    of this test's left behind."""
    from ui.train.estimate import run_costs

    run_costs.clear()
    yield
    run_costs.clear()


def moved(at) -> list[str]:
    return [w.value for w in at.warning if "load has changed" in w.value]


def test_the_estimate_before_start_is_the_whole_measured_run(folders, fresh_estimates, monkeypatch):
    """The page shows `measure_run`'s costs multiplied by the plan: with every step timed at 250 ms, a process
    start-up of 3 s and every other part (evaluations, checkpoints, encoding) timed at zero, 600 steps are
    2 min 30 s of training and 2 min 33 s in all. A longer plan is re-planned without timing again; a moved
    load says so and offers to measure again."""
    import ui.train.estimate as page_estimate
    from explorer.training.estimate import harness, measure

    step_s = {"now": 0.25}
    load = {"now": 1.0}
    timed = []

    def step(self, rows, *, whole=False) -> float:
        timed.append(len(rows))
        return step_s["now"]

    monkeypatch.setattr(harness.StepClock, "step", step)
    monkeypatch.setattr(measure, "clocked", lambda work: (0.0, work()))
    monkeypatch.setattr(measure, "process_startup_s", lambda: 3.0)
    monkeypatch.setattr(measure, "load_average", lambda: load["now"])  # when measured
    monkeypatch.setattr(page_estimate, "load_average", lambda: load["now"])  # when shown
    at = open_app()
    at.segmented_control(key="train_view").set_value("new").run()
    assert not at.exception, at.exception
    assert at.session_state["train_steps"] == 600 and at.session_state["train_save"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Estimated time"] == "≈ 2 min 33 s"
    assert metrics["Time per step"] == "250 ms" and metrics["600 steps"] == "≈ 2 min 30 s"
    assert "start-up: 3.0 s" in texts(at) and "evaluations: 15 × 0.0 s" in texts(at)  # every 50 steps and at 10, 20, 40
    assert "An estimate, measured on this machine" in texts(at) and "at a load average of 1.0:" in texts(at)
    assert not moved(at), moved(at)

    before = len(timed)
    set_widgets(at, {"train_steps": 1200})
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Estimated time"] == "≈ 5 min 03 s" and metrics["1,200 steps"] == "≈ 5 min 00 s"
    assert len(timed) == before, "a longer run is the same run's costs, not a new measurement"

    load["now"], step_s["now"] = 3.0, 0.5
    at.run()
    assert "load average 1.0 then, 3.0 now" in moved(at)[0]
    assert {m.label: m.value for m in at.metric}["Estimated time"] == "≈ 5 min 03 s"  # still the cached one
    at.button(key="train_estimate_again").click().run()
    assert not at.exception, at.exception
    assert {m.label: m.value for m in at.metric}["Estimated time"] == "≈ 10 min 03 s"
    assert not moved(at) and len(timed) > before


def test_the_estimates_parts_read_in_korean():
    """The page tells the estimate part by part in its language (the engine gives only the numbers)."""
    from ui.train.estimate import estimate_parts

    step = StepTiming(0.0125, 1000, 1024, "cpu", timed_batches=6, repeats=3)
    found = RunEstimate(step, 25, 0.5, 0.001, 4.0, 0.2, 1.5, 0.75, 3, 0.25, 2, 0.5)
    english, korean = estimate_parts(found, "en"), estimate_parts(found, "ko")
    assert english[0].startswith("training: 25 steps × 12.5 ms (the median of 3 timings of each of 6")
    assert "evaluations: 3 × 1.5 s (greedy BLEU decoding 0.8 s of each)" in english
    assert "checkpoints: 2 × 0.2 s" in english and english[-1].startswith("start-up: 4.0 s")
    assert len(english) == len(korean) == 6
    for line in korean:
        assert not any(word in line for word in ("training", "evaluations", "checkpoints", "start-up")), line
        assert any("\uac00" <= ch <= "\ud7a3" for ch in line), line  # Hangul


BAD_UPLOADS = [
    ("two", [("src.txt", b"a b\nc d\ne f\n"), ("tgt.txt", b"b a\nd c\n")], "src.txt has 3 lines but tgt.txt has 2"),
    ("two", [("src.txt", "caf\u00e9\n".encode("latin-1")), ("tgt.txt", b"cafe\n")], "src.txt is not valid UTF-8"),
    ("two", [("src.txt", bytes(range(256)) * 8), ("tgt.txt", b"x\n")], "src.txt looks like a binary file"),
    ("two", [("src.txt", b"\n\n"), ("tgt.txt", b"x\n")], "src.txt has no sentences (only blank lines)"),
    ("two", [("src.txt", b"a\n" * (10 * 1024 * 1024 + 1)), ("tgt.txt", b"x\n")], "the limit is 20.0 MB"),
    ("tsv", [("pairs.tsv", b"a\tb\nno tab here\n")], "pairs.tsv line 2: expected exactly one TAB"),
    ("tsv", [("pairs.tsv", b"only\tone\n")], "at least 2 are needed"),
]


@pytest.mark.parametrize("mode, files, message", BAD_UPLOADS, ids=[m for _, _, m in BAD_UPLOADS])
def test_bad_uploads_are_rejected_with_a_clear_message(folders, mode, files, message):
    at = open_app()
    at.segmented_control(key="train_view").set_value("new").run()
    at.segmented_control(key="train_data").set_value("upload").run()
    at.radio(key="train_upload_mode").set_value(mode).run()
    keys = ("train_upload_src", "train_upload_tgt") if mode == "two" else ("train_upload_tsv",)
    for key, (name, data) in zip(keys, files, strict=True):
        at.file_uploader(key=key).set_value((name, data, "text/plain"))
    at.run()
    assert not at.exception, at.exception
    errors = [plain(e.value) for e in at.error]
    assert any(message in e for e in errors), errors
    assert not [b for b in at.button if b.key == "train_start"], "no run can start from a bad upload"


def test_a_good_upload_shows_its_size_and_pairs(folders):
    at = open_app()
    at.segmented_control(key="train_view").set_value("new").run()
    at.segmented_control(key="train_data").set_value("upload").run()
    at.radio(key="train_upload_mode").set_value("tsv").run()
    pairs = "".join(f"the {w} sleeps .\tder {w} schläft .\n" for w in ("cat", "dog", "man", "child") * 10)
    at.file_uploader(key="train_upload_tsv").set_value(("pairs.tsv", pairs.encode("utf-8"), "text/plain"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Training pairs"], metrics["Validation pairs"]) == ("38", "2")
    preview = at.dataframe[0].value
    assert list(preview["source"][:2]) == ["the cat sleeps .", "the dog sleeps ."]
    assert preview["target"][0] == "der cat schläft ."


# --- figure builders used by the page ---------------------------------------------------------------------------


def test_lr_schedule_shows_the_plan_the_path_so_far_and_the_warmup_end():
    planned = planned_schedule(1000, 64, 200)
    fig = lr_schedule_curve([1, 2, 3], [0.1, 0.2, 0.3], *planned, 200)
    plan, used, marker = fig.data
    assert list(plan.x) == planned[0] and list(used.y) == [0.1, 0.2, 0.3]
    assert list(marker.x) == [200] and marker.y[0] == pytest.approx(max(planned[1]))
    assert fig.layout.xaxis.range[1] >= 1000 and fig.layout.yaxis.title.text == "learning rate"
    zoomed = lr_schedule_curve([1, 2, 3], [0.1, 0.2, 0.3], *planned, 200, x_max=800)
    assert 800 <= zoomed.layout.xaxis.range[1] < 1000 and list(zoomed.data[0].x) == planned[0]


def test_attention_evolution_one_panel_per_snapshot_on_one_scale():
    src = ["▁a", "▁b", "</s>"]
    weights = [np.full((2, 3), 1 / 3), np.eye(3)[[2, 1]], np.eye(3)]
    outputs = [["▁b", "</s>"], ["▁b", "</s>"], ["▁b", "▁a", "<s>"]]
    fig = attention_evolution(weights, [0, 50, 100], outputs, src, title="Layer 1, head 1")
    assert [t.meta["step"] for t in fig.data] == [0, 50, 100]
    assert [a.text for a in fig.layout.annotations] == ["step 0", "step 50", "step 100"]
    np.testing.assert_array_equal(np.asarray(fig.data[2].z), np.eye(3))
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    assert list(fig.layout.yaxis3.ticktext) == ["▁b", "▁a", "&lt;s&gt;"]  # labels escaped, per panel
    with pytest.raises(AssertionError, match="step 50"):
        attention_evolution([np.ones((2, 3)), np.ones((2, 2))], [0, 50], outputs[:2], src)


def test_the_page_speaks_korean(folders):
    at = open_page(PAGE, lang="ko")
    at.segmented_control(key="train_view").set_value("new").run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Transformer 학습하기"
    assert {"학습 문장 쌍", "예상 시간"} <= {m.label for m in at.metric}
    assert any("시작:" in c.value and "학습:" in c.value for c in at.caption), [c.value for c in at.caption]
    assert at.button(key="train_start").label == "학습 시작"
    # The task's description and the preview's headers were English in the Korean page.
    assert any("반대 대각선" in c.value for c in at.caption), [c.value for c in at.caption]
    preview = json.loads(at.dataframe[0].proto.columns)
    assert (preview["source"]["label"], preview["target"]["label"]) == ("원문", "번역문"), preview
    assert any("word-break: keep-all" in h.proto.body for h in at.get("html")), "Hangul lines break between words"
