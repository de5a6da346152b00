"""Screenshots of every page's first screen at 1280x720, as a projector shows it: Korean in the light theme and
English in the dark theme, on the shipped checkpoints. Written next to this file as <page>-ko-light.png and
<page>-en-dark.png (palette PNGs, to keep the repository small).

    .venv/bin/python docs/screenshots/take.py [PAGE ...]
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from PIL import Image  # noqa: E402

from tests.browser.helpers import (  # noqa: E402
    CHROMIUM_ARGS,
    RENDER_TIMEOUT_MS,
    assert_no_exception,
    chromium_path,
    start_server,
    stop_server,
    wait_for_figure,
    wait_idle,
)
from ui.pages import PAGES  # noqa: E402

VIEWPORT = {"width": 1280, "height": 720}
SHOTS = (("ko", "light"), ("en", "dark"))
NO_FIGURE = {"train"}


def save_small(png: bytes, path: Path) -> None:
    Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128).save(path, optimize=True)


def main(only: list[str]) -> None:
    from playwright.sync_api import sync_playwright

    server, app = start_server(HERE / "server.log")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            for lang, theme in SHOTS:
                context = browser.new_context(viewport=VIEWPORT, color_scheme=theme)
                context.set_default_timeout(RENDER_TIMEOUT_MS)
                page = context.new_page()
                for spec in PAGES:
                    if only and spec.url_path not in only:
                        continue
                    page.goto(f"{app.url}/{spec.url_path}?lang={lang}", timeout=RENDER_TIMEOUT_MS)
                    wait_idle(page)
                    assert_no_exception(page)
                    if spec.url_path not in NO_FIGURE:
                        wait_for_figure(page)
                    path = HERE / f"{spec.url_path}-{lang}-{theme}.png"
                    save_small(page.screenshot(), path)
                    print(path.relative_to(HERE.parents[1]), flush=True)
                context.close()
            browser.close()
    finally:
        stop_server(server)
        (HERE / "server.log").unlink(missing_ok=True)


if __name__ == "__main__":
    main(sys.argv[1:])
