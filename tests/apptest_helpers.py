"""The one place that opens the app for Streamlit's AppTest: the frame (main_script/frame.py), switched to a page,
with a model chosen, URL query parameters and widget state.

    at = open_page("pages/translate.py", model="words-fixture", sentence="a b c")   # ?model=…&sentence=…
    at = open_page("pages/beam.py", model="words-fixture", state={"beam_k": 3})     # st.session_state
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
APP_SCRIPT = REPO / "main_script" / "frame.py"


def open_app(*, state: dict[str, Any] | None = None, **params: str):
    """The frame on its start page, run once."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=120)
    at.session_state["device"] = "cpu"
    for key, value in (state or {}).items():
        at.session_state[key] = value
    for key, value in params.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def open_page(page: str, *, state: dict[str, Any] | None = None, **params: str):
    """The frame switched to `page` ("pages/translate.py"): the first run is the page itself, as when a
    browser opens /translate?… on a fresh server."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=120)
    at.session_state["device"] = "cpu"
    for key, value in (state or {}).items():
        at.session_state[key] = value
    for key, value in params.items():
        at.query_params[key] = str(value)
    # Each page's url_path is its file name, so switch_page finds it before any run, as a browser would.
    at.switch_page(str(Path("..") / page))
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@contextmanager
def checkpoints_at(root: Path) -> Iterator[Path]:
    """The app pointed at the checkpoints folder `root` ($EXPLORER_CHECKPOINTS) while inside, as it was after."""
    previous = os.environ.get("EXPLORER_CHECKPOINTS")
    os.environ["EXPLORER_CHECKPOINTS"] = str(root)
    try:
        yield root
    finally:
        if previous is None:
            os.environ.pop("EXPLORER_CHECKPOINTS", None)
        else:
            os.environ["EXPLORER_CHECKPOINTS"] = previous


def chart_key(chart) -> str:
    """A plotly chart's widget key: its `key=`, else the name Streamlit's element id ends with."""
    return chart.key or chart.proto.id.split("-", 2)[-1]


def chart_keys(at) -> list[str]:
    """The keys of every plotly chart on the page, in page order."""
    return [chart_key(c) for c in at.get("plotly_chart")]


def charts(at, key: str | None = None) -> list[dict]:
    """The figure JSON of every plotly chart on the page (optionally only the one with widget key `key`)."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart") if key is None or chart_key(c) == key]


def chart(at, key: str) -> dict:
    found = charts(at, key)
    assert len(found) == 1, f"expected one chart with key {key!r}, found {len(found)}"
    return found[0]


def plotly_array(value) -> np.ndarray:
    """A data array from figure JSON: plotly writes numpy arrays as {"dtype", "bdata" (base64), "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(n) for n in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape).astype(float)
    return np.array(value, dtype=float)


def query_value(at, key: str) -> str | None:
    """?key= after the run, as one string (AppTest may hold a list)."""
    value = at.query_params.get(key)
    if isinstance(value, list):
        return value[0] if value else None
    return value


def upload_checkpoint(at, folder: Path):
    """Upload a checkpoint folder's three files in the sidebar and press "Load uploaded checkpoint"."""
    uploader = at.sidebar.file_uploader(key="checkpoint_upload")
    for name in ("config.json", "model.safetensors", "tokenizer.model"):
        uploader.upload(name, (Path(folder) / name).read_bytes())
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    next(b for b in at.sidebar.button if b.label == "Load uploaded checkpoint").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def plain(markdown: str) -> str:
    """The text a reader sees of Markdown the app escaped (ui/markdown.py): backslash escapes undone, the
    invisible word joiners that keep a value from turning into a link dropped."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def matrix_tables(at) -> dict[str, tuple[list[str], list[str], np.ndarray]]:
    """The page's matrix tables (explorer/figures/matrix_table.py), by the first word of their caption ("q",
    "K", …): (column labels, row labels, the numbers as shown) read back out of the HTML."""
    from tests.matrix_table_reader import read_matrix_table

    tables = {}
    for element in at.get("html"):
        if 'class="ae-matrix"' in element.proto.body:
            caption, columns, rows, values = read_matrix_table(element.proto.body)
            tables[caption.split()[0]] = (columns, rows, values)
    return tables
