"""Screenshots of every stop of the tour at 1280×720, and where each stop's first figure lies.

python app.py --server.headless true --server.port 8571 &
.venv/bin/python docs/tour/screenshots.py [--port 8571] [--lang en] [--out docs/tour]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

STOPS = range(1, 11)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8571)
    parser.add_argument("--lang", default="en")
    parser.add_argument("--model", default="multi30k-en-de")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        for stop in STOPS:
            page.goto(
                f"http://localhost:{args.port}/tour?stop={stop}&lang={args.lang}&model={args.model}",
                wait_until="networkidle",
            )
            page.wait_for_selector(".js-plotly-plot", timeout=180_000)
            for _ in range(240):  # until the script run has finished
                if page.locator('[data-testid="stStatusWidget"]').count() == 0:
                    break
                time.sleep(0.5)
            time.sleep(2.5)  # plotly's first draw
            page.screenshot(path=str(args.out / f"stop-{stop:02d}.png"))
            box = page.locator(".js-plotly-plot").first.bounding_box()
            print(f"stop {stop}: first figure from y = {box['y']:.0f} to {box['y'] + box['height']:.0f} px")
        browser.close()


if __name__ == "__main__":
    main()
