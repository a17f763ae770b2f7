"""The report in a real browser (headless Chromium through selenium): it loads without console
errors, draws every chart, and shows hostile strings as text without running them."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankgate.report.html import write_report
from tests.report_support import XSS, XSS_IMG, console_errors, headless_chrome, open_report
from tests.test_report_html import hostile_inputs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser():
    with headless_chrome() as driver:
        yield driver


def test_demo_report_loads_without_errors_and_draws_every_chart(browser, tmp_path: Path):
    from rankgate.report.demo import demo_report

    path = demo_report(tmp_path / "demo.html")
    state, log = open_report(browser, path)
    assert console_errors(log) == []
    assert state == "drawn"
    plots = browser.find_elements("css selector", "div.plot[data-chart]")
    assert len(plots) >= 12  # gate, 3 curves, 3 deltas, 5 tag charts, 3 history charts
    undrawn = [p.get_attribute("data-chart") for p in plots if not p.find_elements("css selector", "svg.main-svg")]
    assert undrawn == []
    # Bars and lines are really there: the per-query delta chart has one bar per query (63 in the demo).
    delta = browser.find_element("css selector", "div.plot[data-chart^='delta-dense_v2-vs-dense-r-5']")
    assert len(delta.find_elements("css selector", "g.point")) == 63
    history = browser.find_element("css selector", "div.plot[data-chart='history-r-5']")
    assert history.find_elements("css selector", "path.point")  # the stored results' markers
    assert "baseline" in history.text
    height = browser.execute_script("return document.body.scrollHeight")
    browser.set_window_size(1400, min(int(height), 12000))
    shot = tmp_path / "demo.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    browser.set_window_size(1400, 1000)


def test_hostile_strings_show_as_text_and_never_run(browser, tmp_path: Path):
    inputs, texts = hostile_inputs()
    path = write_report(tmp_path / "hostile.html", inputs, query_texts=texts, title=f"title {XSS}")
    state, log = open_report(browser, path)
    assert console_errors(log) == []
    assert state == "drawn"
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.title == f"title {XSS}"
    body = browser.find_element("tag name", "body").text
    assert f"query text {XSS} and {XSS_IMG}" in body  # the worst-queries table
    assert f"Gate: {XSS_IMG} against {XSS}" in body
    # plotly draws the escaped names as the original text.
    legend = [e.get_attribute("textContent") for e in browser.find_elements("css selector", "text.legendtext")]
    assert XSS in legend and XSS_IMG in legend
    ticks = [e.get_attribute("textContent") for e in browser.find_elements("css selector", "g.ytick text")]
    assert f"{XSS}={XSS_IMG} (n=12)" in ticks  # the tag chart's group label
    assert browser.find_elements("css selector", "img") == []
