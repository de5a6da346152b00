"""Hostile link values in a real browser: the values a careful tester sent (a fake login link, a tracking pixel,
an HTML tag with a script, 100 KB of text) through the bound parameters of the pages that have them, a few
pages, each loaded once with many parameters. The page may quote them, as plain text: no request leaves the
machine, no anchor points to another host. A paste longer than the sentence box holds is cut with a message.
"""

from __future__ import annotations

from tests.browser.helpers import RENDER_TIMEOUT_MS, RequestLog, assert_no_exception, query, wait_idle

LINK = "[Session expired - log in again](https://evil.example/login)"
PIXEL = "![](http://203.0.113.9/b.png)"
HTML = '<img src="http://203.0.113.9/x.png" onerror="fetch(`http://203.0.113.9/x`)">'
HUGE = "x" * 100_000
VALUES = (LINK, PIXEL, HTML)
# Every page's bound parameters (and those of the sidebar); each gets one of the hostile values in turn.
PAGES = {
    "translate": (
        "mode",
        "beam",
        "alpha",
        "no_repeat",
        "stretch",
        "family",
        "layer",
        "head",
        "heads",
        "input",
        "units",
        "ablate",
    ),
    "heads": ("h_mode", "h_beam", "h_layer", "heads"),
    "positional": ("pe_dims", "pe_length", "pe_metric", "pe_offset", "pe_part"),
    "beam": ("beam_k", "beam_alpha", "beam_layer"),
    "complexity": ("complexity_n", "complexity_d", "complexity_k", "complexity_r", "complexity_part"),
    "train": ("train_view", "train_run"),
}
FOREIGN_ELEMENTS = """() => {
    const foreign = [];
    for (const e of document.querySelectorAll('a[href], img[src], iframe[src], link[href], script[src]')) {
        const url = new URL(e.getAttribute('href') ?? e.getAttribute('src'), location.href);
        if (url.host !== location.host && !['data:', 'blob:'].includes(url.protocol))
            foreign.push(`${e.tagName.toLowerCase()} ${url.href}`);
    }
    return foreign;
}"""


def hostile_url(app, page: str) -> str:
    params = {key: VALUES[i % len(VALUES)] for i, key in enumerate(PAGES[page])}
    params["model"] = HUGE if page == "translate" else LINK
    return f"{app.url}/{page}?{query(**params)}"


def test_hostile_link_values_stay_text_and_offline(app, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    requests = RequestLog(context)
    problems: list[str] = []
    try:
        for name in PAGES:
            page = context.new_page()
            page.goto(hostile_url(app, name), timeout=RENDER_TIMEOUT_MS)
            wait_idle(page)
            page.get_by_text("which this server does not have").first.wait_for(timeout=RENDER_TIMEOUT_MS)
            assert_no_exception(page)
            problems += [f"{name}: {found}" for found in page.evaluate(FOREIGN_ELEMENTS)]
            if name != "translate":
                page.close()
        # The last page still open is Translate: a paste longer than the box holds is cut, with the message.
        page = context.pages[0]
        box = page.get_by_role("textbox", name="Sentence")
        box.fill(("a b c d " * 200)[:1500])
        box.press("Enter")
        page.get_by_text("The text was 1,500 characters long").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
        assert len(box.input_value()) == 1000
    finally:
        context.close()
    assert requests.urls, "the request log recorded nothing"
    assert not requests.foreign, f"requests left the machine: {requests.foreign}"
    assert not problems, "\n".join(problems)
