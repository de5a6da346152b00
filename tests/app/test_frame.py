"""The frame (main_script/frame.py, ui/): public Streamlit API only, uploads that belong to one session, a vanished
checkpoint named, links validated, results bounded by memory, libraries imported once before sessions run."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from tests.apptest_helpers import REPO, open_page, upload_checkpoint
from ui.markdown import md_escape
from ui.result_cache import MB, MemoryBoundedCache, nbytes
from ui.uploads import PREFIX, SessionUploads, remove_stale_folders

WORDS_SENTENCE = "a small child sees the red dog ."


def shown_translations(at) -> list[str]:
    return [m.value.removeprefix("## ") for m in at.markdown if m.value.startswith("## ")]


def texts(at) -> str:
    """Every caption, warning, info and markdown text on the page (sidebar included), joined."""
    parts = [e.value for kind in ("caption", "warning", "info", "markdown", "error") for e in getattr(at, kind)]
    parts += [e.value for kind in ("caption", "warning", "error") for e in getattr(at.sidebar, kind)]
    return "\n".join(map(str, parts))


# --- public API only --------------------------------------------------------------------------------------------


def test_app_uses_no_private_streamlit_module():
    private = re.compile(r"^\s*(from|import)\s+streamlit\.(runtime|web|_)", re.MULTILINE)
    files = [
        REPO / "app.py",
        *(REPO / "main_script").rglob("*.py"),
        *(REPO / "pages").glob("*.py"),
        *(REPO / "ui").rglob("*.py"),
    ]
    offenders = [str(f.relative_to(REPO)) for f in files if private.search(f.read_text(encoding="utf-8"))]
    assert not offenders, f"private Streamlit imports in {offenders}"


def test_main_script_folder_has_no_pages_folder():
    """A pages/ folder beside the main script would switch Streamlit to its old multipage mode (see app.py)."""
    assert not (REPO / "main_script" / "pages").exists()
    assert (REPO / "pages" / "translate.py").is_file()


# --- uploads ----------------------------------------------------------------------------------


def test_uploaded_checkpoint_is_selected_without_an_exception(checkpoint_root, words_checkpoint):
    at = open_page("pages/translate.py", model="reverse-fixture", sentence=WORDS_SENTENCE)
    upload_checkpoint(at, words_checkpoint)
    label = at.sidebar.selectbox(key="model").value
    assert re.fullmatch(r"uploaded: checkpoint-[0-9a-f]{12}", label), label
    expected = translate(*_model(words_checkpoint), [WORDS_SENTENCE])[0].output
    assert shown_translations(at) == [md_escape(expected)], "the page now translates with the uploaded model"


def _model(folder: Path):
    ck = load_checkpoint(folder)
    return ck.model, ck.tokenizer


def test_uploads_belong_to_the_session_that_made_them(checkpoint_root, words_checkpoint):
    first = open_page("pages/translate.py", model="reverse-fixture", sentence="a b c")
    upload_checkpoint(first, words_checkpoint)
    label = first.sidebar.selectbox(key="model").value
    folder = Path(first.session_state["_session_uploads"].folder)
    assert folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert folder.name.startswith(f"{PREFIX}{os.getpid()}-") and folder.name != f"{PREFIX}{os.getpid()}-"

    second = open_page("pages/translate.py", model="reverse-fixture", sentence="a b c")
    assert label not in second.sidebar.selectbox(key="model").options, "another session does not see the upload"
    assert label in first.sidebar.selectbox(key="model").options


def test_upload_folder_goes_with_its_session(tmp_path, words_checkpoint):
    uploads = SessionUploads(parent=tmp_path)
    files = {
        name: (words_checkpoint / name).read_bytes() for name in ("config.json", "model.safetensors", "tokenizer.model")
    }
    saved = uploads.save(files)
    assert uploads.checkpoints() == [saved]
    folder = uploads.folder
    del uploads  # the session's state is dropped: the finalizer removes the folder
    import gc

    gc.collect()
    assert not folder.exists()


def test_bad_upload_keeps_nothing_and_says_why(tmp_path):
    uploads = SessionUploads(parent=tmp_path)
    from explorer.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="missing: tokenizer.model"):
        uploads.save({"config.json": b"{}", "model.safetensors": b""})
    with pytest.raises(CheckpointError):
        uploads.save({"config.json": b"{}", "model.safetensors": b"x", "tokenizer.model": b"y"})
    assert uploads.checkpoints() == []


def test_stale_upload_folders_of_dead_servers_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{PREFIX}{dead.pid}-abc"
    mine = tmp_path / f"{PREFIX}{os.getpid()}-def"
    other = tmp_path / "something-else"
    for folder in (stale, mine, other):
        folder.mkdir()
    assert remove_stale_folders(tmp_path) == [stale]
    assert not stale.exists() and mine.exists() and other.exists()


# --- a checkpoint that disappears -----------------------------------------------------------------------


def test_vanished_checkpoint_is_named_and_the_replacement_said(
    tmp_path, monkeypatch, reverse_checkpoint, words_checkpoint
):
    root = tmp_path / "checkpoints"
    shutil.copytree(reverse_checkpoint, root / "reverse-fixture")
    shutil.copytree(words_checkpoint, root / "words-copy")
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    at = open_page("pages/translate.py", model="words-copy", sentence="a b c")
    assert at.sidebar.selectbox(key="model").value == "words-copy"
    shutil.rmtree(root / "words-copy")
    at.run()
    assert not at.exception
    warnings = [w.value for w in at.sidebar.warning]
    gone, shown = md_escape("words-copy"), md_escape("reverse-fixture")
    assert any(gone in w and "is gone" in w and shown in w for w in warnings), warnings
    assert at.sidebar.selectbox(key="model").value == "reverse-fixture"


# --- links validated --------------------------------------------------------------------------------------


def test_a_100_kb_link_text_is_cut_with_a_visible_message(checkpoint_root):
    text = ("a b c d " * 12_800)[:100_000]
    at = open_page("pages/translate.py", model="reverse-fixture", sentence=text)
    assert len(at.text_input(key="sentence").value) <= 1000
    cut = [w.value for w in at.warning if "characters long" in w.value]
    assert cut and "100,000" in cut[0] and "1,000" in cut[0], [w.value for w in at.warning]


def test_unknown_link_values_fall_back_with_a_note(checkpoint_root):
    at = open_page(
        "pages/translate.py",
        model="no-such-model",
        sentence="a b c",
        mode="bogus",
        layer="99",
        beam="77",
        family="nonsense",
        stretch="maybe",
    )
    shown = texts(at)
    for key, value in (
        ("mode", "bogus"),
        ("layer", "99"),
        ("beam", "77"),
        ("family", "nonsense"),
        ("stretch", "maybe"),
    ):
        assert f"{key}={value}" in shown, f"no note for ?{key}={value}"
    assert md_escape("no-such-model") in shown
    assert at.radio(key="mode").value == "head" and at.radio(key="family").value == "cross"
    assert at.select_slider(key="beam").value == 1


# --- beam against greedy by the search's own score -------------------------------------------------------


def test_beam_page_compares_by_the_normalised_score_at_the_alpha_on_screen(checkpoint_root, words_checkpoint):
    from explorer.decoding.policy import normalized_score

    alpha = 1.3
    at = open_page(
        "pages/beam.py",
        model="words-fixture",
        state={"beam_sentence": WORDS_SENTENCE, "beam_k": 3, "beam_alpha": alpha},
    )
    model, tokenizer = _model(words_checkpoint)
    beam = translate(model, tokenizer, [WORDS_SENTENCE], beam_size=3, alpha=alpha)[0]
    greedy = translate(model, tokenizer, [WORDS_SENTENCE])[0]
    greedy_score = normalized_score(greedy.log_prob, len(greedy.output_ids), alpha)
    (caption,) = [c.value for c in at.caption if "score at α" in c.value]
    assert f"α = {alpha:g}: beam {beam.score:.3f}, greedy {greedy_score:.3f}" in caption
    assert f"log-probability: beam {beam.log_prob:.3f}, greedy {greedy.log_prob:.3f}" in caption
    if beam.output_ids != greedy.output_ids:
        assert ("ranks higher" in caption) and (("Beam search found" in caption) == (beam.score >= greedy_score))


# --- results bounded by memory ---------------------------------------------------------------------------


def test_result_cache_never_exceeds_its_budget():
    now = [0.0]
    cache = MemoryBoundedCache(10 * MB, ttl_s=60, clock=lambda: now[0])
    for i in range(50):
        cache.put(i, [np.zeros(MB // 8)])  # 1 MB each
        assert cache.total_bytes <= 10 * MB
    assert len(cache) == 10 and cache.total_bytes == 10 * MB
    assert cache.get_or_compute(49, lambda: pytest.fail("49 is cached")) is not None
    cache.put("huge", np.zeros(11 * MB // 8))  # bigger than the budget: not kept
    cache.put("tiny", "a short text")  # counts as at least min_entry_bytes
    assert cache._entries["tiny"][1] == cache.min_entry_bytes
    assert "huge" not in cache._entries and cache.total_bytes <= 10 * MB
    now[0] = 61.0  # stale entries are recomputed
    calls = []
    cache.get_or_compute(49, lambda: calls.append(1) or np.zeros(1))
    assert calls == [1]


def test_cached_translations_stay_under_256_mb(checkpoint_root, words_checkpoint):
    """The app's own cache, filled with long sentences and all their maps, stays within 256 MB."""
    from ui.model_cache import RESULT_BUDGET_MB
    from ui.model_picker import Selection, weights_version

    assert RESULT_BUDGET_MB <= 256
    model, tokenizer = _model(words_checkpoint)
    one = translate(
        model, tokenizer, ["a man rides a bicycle . " * 6], with_attention=True, beam_size=4, with_trace=True, n_best=4
    )
    cache = MemoryBoundedCache(RESULT_BUDGET_MB * MB // 200)  # the same code at 1/200 of the size
    per_entry = cache.entry_bytes(one)
    assert per_entry >= nbytes(one) > 0
    selection = Selection(str(words_checkpoint), "cpu", weights_version(str(words_checkpoint)))
    for i in range(40):
        cache.put(("translate", selection, i), one)
        assert cache.total_bytes <= cache.budget_bytes
    assert len(cache) == cache.budget_bytes // per_entry


# --- eight sessions at once --------------------------------------------------------------------------------


def test_eight_sessions_starting_at_once_import_the_libraries_once(tmp_path):
    """Eight script threads of a fresh process start together; every one finds pandas and plotly whole."""
    script = textwrap.dedent(f"""
        import sys, threading
        sys.path.insert(0, {str(REPO)!r})
        assert "pandas" not in sys.modules
        from ui.startup import LIBRARIES, preload_libraries
        barrier, errors = threading.Barrier(8), []
        def session():
            barrier.wait()
            try:
                preload_libraries()
                import pandas, plotly.graph_objects as go
                pandas.DataFrame({{"a": [1, 2]}}).to_numpy(); go.Figure(go.Heatmap(z=[[1]]))
            except Exception as error:
                errors.append(repr(error))
        threads = [threading.Thread(target=session) for _ in range(8)]
        [t.start() for t in threads]; [t.join() for t in threads]
        assert not errors, errors
        assert all(name in sys.modules for name in LIBRARIES)
        print("ok")
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


# --- language ------------------------------------------------------------------------------------------------------

OWN_FILES = [
    "main_script/frame.py",
    "ui/model_picker.py",
    "ui/model_cache.py",
    "ui/urlstate.py",
    "ui/attention_controls.py",
    "ui/figures.py",
    "pages/translate.py",
    "pages/compare.py",
    "pages/beam.py",
    "pages/step_by_step.py",
    "pages/positional.py",
    "pages/complexity.py",
    "ui/step_by_step/choice.py",
    "ui/step_by_step/stages.py",
    "ui/step_by_step/scaling.py",
    "ui/part_tabs.py",
    "ui/positional/sinusoids.py",
    "ui/positional/model_input.py",
    "ui/complexity/sections.py",
    "ui/complexity/measuring.py",
]
# The sections of the pages above, in their pages' packages.
OWN_FILES += sorted(
    str(path.relative_to(REPO))
    for part in ("translate", "beam", "compare", "heads")
    for path in (REPO / "ui" / part).glob("*.py")
)


def test_every_string_the_pages_show_has_korean():
    import ast

    from explorer.i18n import _catalogue
    from explorer.paper import FAMILY_SHORT, FAMILY_TITLES
    from ui.attention_view import FAMILY_HELP
    from ui.pages import ALL_PAGES

    messages = set()
    for name in OWN_FILES:
        for node in ast.walk(ast.parse((REPO / name).read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "t"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                messages.add(node.args[0].value)
    messages |= {spec.title for spec in ALL_PAGES} | {spec.group for spec in ALL_PAGES}
    messages |= set(FAMILY_TITLES.values()) | set(FAMILY_SHORT.values()) | {FAMILY_HELP}
    messages |= {
        "One head",
        "All layers and heads",
        "Mean over heads",
        "Head view",
        "Pieces",
        "Words",
        "the encoder's own positions",
        "cosine",
        "dot product",
    }
    assert len(messages) > 150
    korean = _catalogue("ko")
    missing = sorted(m for m in messages if m not in korean)
    assert not missing, missing


def test_language_switch_keeps_lang_in_the_url(checkpoint_root):
    from tests.apptest_helpers import query_value

    at = open_page("pages/translate.py", model="words-fixture", sentence=WORDS_SENTENCE, lang="ko")
    assert at.title[0].value == "번역과 어텐션"
    assert query_value(at, "lang") == "ko"
    assert any("인코더-디코더 어텐션" in str(o) for o in at.radio(key="family").options)
    at.sidebar.segmented_control(key="lang").set_value("en").run()
    assert not at.exception
    assert at.title[0].value == "Translate & attention" and query_value(at, "lang") == "en"


def test_reruns_leave_the_runtime_as_the_first_run_set_it(checkpoint_root, monkeypatch):
    """Streamlit runs main_script/frame.py on every click. Deciding the runtime samples the load for about 11 ms, and
    once torch has loaded a new decision can change nothing (it only warned): only a run before torch loads decides."""
    import explorer.runtime

    calls: list[str] = []
    monkeypatch.setattr(explorer.runtime, "configure_for", lambda workload: calls.append(workload) or {})
    assert "torch" in sys.modules  # this process, as a server after its first run
    at = open_page("pages/translate.py", model="reverse-fixture", sentence="a b c")
    at.run()
    assert calls == []


def test_every_tab_label_has_korean():
    """The pages' tab labels are message ids in a table (ui/part_tabs.py), out of reach of the extraction above."""
    from explorer.i18n import _catalogue
    from ui.part_tabs import PARTS

    korean = _catalogue("ko")
    missing = [label for parts in PARTS.values() for label in parts.values() if not korean.get(label)]
    assert not missing, missing
