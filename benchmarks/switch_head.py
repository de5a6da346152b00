"""Switch head: how long the Translate page takes to show another head, model already loaded.

Two rows: the page's rerun after a click on another head, driven by Streamlit's AppTest on the shipped
checkpoint (AppTest reruns the whole script, so this is an upper bound of the fragment's rerun in a browser,
which skips the sentence box and the translation card), and the fragment's own work: the head's heatmap
built, themed and serialised as the browser receives it. Neither re-runs the model: the translation with its
attention comes from ui/result_cache.py.

    python -m benchmarks --only switch_head [--quick]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.common import REPO_ROOT, Options, Result

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

NAME = "switch_head"
TITLE = "Switch head on the Translate page (ms)"
SENTENCE = "Two dogs play in the snow."


def _summary(times_ms: list[float]) -> str:
    ordered = sorted(times_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):.0f}, p95 {p95:.0f} ({len(ordered)} switches)"


def _page(checkpoint: Path) -> AppTest:
    """The Translate page on `checkpoint`, run once (the translation is computed and cached here)."""
    from streamlit.testing.v1 import AppTest

    os.environ["EXPLORER_CHECKPOINTS"] = str(checkpoint.parent)
    at = AppTest.from_file(str(REPO_ROOT / "main_script" / "frame.py"), default_timeout=300)
    at.session_state["device"] = "cpu"
    at.query_params.update(model=checkpoint.name, sentence=SENTENCE, mode="head")
    at.switch_page("../pages/translate.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _figure_work(checkpoint: Path) -> Callable[[int], None]:
    """What the fragment does for one head, without Streamlit: heatmap, page theme, JSON."""
    from explorer.checkpoint import load_checkpoint
    from explorer.figures.attention import attention_heatmap
    from explorer.figures.theme import for_page_theme
    from explorer.inference import translate
    from ui.attention_view import attention_view
    from ui.layout import fit_height

    ck = load_checkpoint(checkpoint, "cpu")
    view = attention_view(translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True)[0], "cross")

    def one(head: int) -> None:
        fig = fit_height(
            attention_heatmap(
                view.weights[-1, head], view.query_labels, view.key_labels, title=f"head {head + 1}", show_values=True
            )
        )
        for_page_theme(fig, "light").to_json()

    return one


def run(opts: Options) -> Result:
    sys.path.insert(0, str(REPO_ROOT))  # ui/ for the figure work, as the app has it
    result = Result(NAME, TITLE)
    checkpoint = Path(opts.checkpoint)
    rounds = opts.n_rounds(24, quick=4)

    at = _page(checkpoint)
    heads = at.segmented_control(key="head").options
    times = []
    for i in range(rounds + opts.n_warmup(2)):
        start = time.perf_counter()
        at.segmented_control(key="head").set_value(int(heads[(i + 1) % len(heads)])).run()
        elapsed = (time.perf_counter() - start) * 1000
        assert not at.exception, [e.message for e in at.exception]
        if i >= opts.n_warmup(2):
            times.append(elapsed)
    result.add("switch head: page rerun (AppTest, whole script)", _summary(times))
    print(f"  page rerun: {_summary(times)}", flush=True)

    one = _figure_work(checkpoint)
    times = []
    for i in range(rounds * 2):
        start = time.perf_counter()
        one(i % len(heads))
        times.append((time.perf_counter() - start) * 1000)
    result.add("switch head: the fragment's figure (build, theme, JSON)", _summary(times))
    print(f"  fragment figure: {_summary(times)}", flush=True)
    result.note("The model is not re-run on a switch: its translation and attention come from the result cache.")
    return result


def memory_setup(opts: Options, variant: str) -> Callable[[], None]:
    one = _figure_work(Path(opts.checkpoint))
    return lambda: one(0)
