"""What every browser test shares: the `browser` and `slow` marks, one headless Chromium for the session, and
Streamlit servers started on first use and kept for the session, so many checks share one server (a server
start and its first page, which imports torch and loads a model, cost far more than a check on a warm one).

- `app`: `python app.py` on the fixture checkpoints, for every check that only reads pages.
- `servers.get(name, ...)`: a server of its own, for checks that need one (a fresh server, the dark theme,
  another checkpoint folder or script, or a check that leaves a training run behind in its runs folder).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.helpers import (
    APP_SCRIPT,
    CHROMIUM_ARGS,
    TRAIN_RUN,
    App,
    chromium_path,
    start_server,
    stop_server,
)
from tests.folder_marks import mark_folder


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_folder(items, __file__, pytest.mark.browser, pytest.mark.slow)


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium (Debian's `chromium`, driven by Playwright); the tests are skipped with the reason
    when either is missing."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("Chromium not found: install it (apt-get install chromium) to run browser tests")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


class Servers:
    """Streamlit servers by name, each started on its first `get` and stopped at the end of the session."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.running: dict[str, tuple[subprocess.Popen, App]] = {}

    def get(
        self,
        name: str,
        *,
        checkpoint_root: Path | None = None,
        extra: tuple[str, ...] = (),
        script: Path = APP_SCRIPT,
    ) -> App:
        """The server called `name`; the options apply when this call starts it. Each server has a runs folder
        of its own (the train page's run folders, not runs/app)."""
        if name not in self.running:
            log, runs = self.log(name), self.runs(name)
            self.running[name] = start_server(
                log, checkpoint_root=checkpoint_root, runs=runs, extra=extra, script=script
            )
        return self.running[name][1]

    def train_run(self, checkpoint_root: Path) -> App:
        """The server for checks that train or read training runs in its runs folder (a run started from the
        train page, a run for Train's figures): one server for all of them, apart from `app`, whose train page
        opens on its form only while its runs folder is empty."""
        return self.get(TRAIN_RUN, checkpoint_root=checkpoint_root)

    def runs(self, name: str) -> Path:
        """The runs folder of the server called `name`."""
        return self.logs / f"runs-{name}"

    def log(self, name: str) -> Path:
        """Where the server called `name` writes its output."""
        return self.logs / f"{name}.log"

    def close(self) -> None:
        for server, _ in self.running.values():
            stop_server(server)


@pytest.fixture(scope="session")
def servers(tmp_path_factory) -> Iterator[Servers]:
    started = Servers(tmp_path_factory.mktemp("streamlit"))
    yield started
    started.close()


@pytest.fixture(scope="session")
def app(servers: Servers, checkpoint_root: Path) -> App:
    """The app on the fixture checkpoints, shared by every browser check that leaves the server as it found
    it (no training run started)."""
    return servers.get("fixtures", checkpoint_root=checkpoint_root)


SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints"


@pytest.fixture(scope="session")
def shipped_app(servers: Servers) -> App:
    """The app on the shipped checkpoints (the Multi30k model's long pieces and real beam trees)."""
    if not (SHIPPED / "multi30k-en-de" / "model.safetensors").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    return servers.get("shipped", checkpoint_root=SHIPPED)
