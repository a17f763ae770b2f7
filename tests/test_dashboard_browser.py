"""The dashboard in a real browser (headless Chromium through selenium, as the report's tests) and
served by a real uvicorn: every page loads without console errors, charts draw, a click on a
point opens its evaluation, the filters, the per-query table and the compare picker work, and
hostile strings show as text. Also `rankgate serve` itself, bound beyond localhost, answers 401
without the token.

Screenshots: each page is saved under the test's tmp folder; with RANKGATE_SCREENSHOTS=1 they
are also written to docs/img/dashboard-*.png (how docs/dashboard.md's pictures are made).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.dashboard_support import (
    DEMO_BASELINE_AT,
    HOSTILE_QID,
    demo_sources,
    demo_store,
    hand_sources,
    hand_store,
    live_server,
)
from tests.report_support import XSS, XSS_IMG, console_errors, headless_chrome

pytestmark = [pytest.mark.slow, pytest.mark.extra("serve")]
LOADED = "document.getElementById('rg-queries').getAttribute('data-state') === 'loaded'"
DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


@pytest.fixture(scope="module")
def browser() -> Any:
    with headless_chrome(width=1400, height=1000) as driver:
        yield driver


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from rankgate.dashboard.app import create_app

    path = tmp_path_factory.mktemp("demo") / "results.db"
    ids = demo_store(path)
    with live_server(create_app(str(path), sources=demo_sources())) as url:
        yield url, ids


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from rankgate.dashboard.app import create_app

    path = tmp_path_factory.mktemp("hand") / "results.db"
    hand_store(path)
    with live_server(create_app(str(path), sources=hand_sources(tmp_path_factory.mktemp("files")))) as url:
        yield url


def wait_for(driver: Any, script: str, timeout: float = 60.0) -> Any:
    """Poll ``return <script>`` until it is truthy (the page's own state attributes say when)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(f"return {script}")
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for: {script}")


def open_page(driver: Any, url: str) -> list[dict[str, Any]]:
    """Load ``url``, wait for its charts (or none); the console entries so far."""
    driver.get(url)
    wait_for(driver, "document.body && document.body.getAttribute('data-charts')")
    return list(driver.get_log("browser"))


def charts_drawn(driver: Any) -> None:
    assert driver.execute_script("return document.body.getAttribute('data-charts')") == "drawn"
    plots = driver.find_elements("css selector", "div.plot[data-chart]")
    assert plots
    assert [p.get_attribute("data-chart") for p in plots if not p.find_elements("css selector", "svg.main-svg")] == []


def screenshot(driver: Any, folder: Path, name: str) -> None:
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1400, min(int(height), 3000))
    shot = folder / f"dashboard-{name}.png"
    assert driver.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    if os.environ.get("RANKGATE_SCREENSHOTS") == "1":
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOCS_IMG / shot.name)
    driver.set_window_size(1400, 1000)


def test_overview_draws_every_chart_and_a_click_opens_the_evaluation(browser: Any, demo: Any, tmp_path: Path):
    from selenium.webdriver.common.action_chains import ActionChains

    url, ids = demo
    assert console_errors(open_page(browser, url + "/")) == []
    charts_drawn(browser)
    assert len(browser.find_elements("css selector", "#quality div.plot")) == 5  # one per stored measure
    assert len(browser.find_elements("css selector", "#operational div.plot")) == 4  # latency x3, throughput
    legend = [e.get_attribute("textContent") for e in browser.find_elements("css selector", "text.legendtext")]
    assert {"main", "feature/new-encoder", "baseline"} <= set(legend)
    screenshot(browser, tmp_path, "overview")
    chart = browser.find_element("css selector", "div.plot[data-chart='m0']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", chart)
    point = chart.find_elements("css selector", "g.trace.scatter path.point")[0]
    ActionChains(browser).move_to_element(point).pause(0.3).click().perform()
    wait_for(browser, "window.location.pathname.startsWith('/evaluations/')")
    opened = int(browser.execute_script("return window.location.pathname").rsplit("/", 1)[1])
    assert opened in ids.values()
    assert console_errors(list(browser.get_log("browser"))) == []


def test_filters_narrow_the_charts_and_the_table(browser: Any, demo: Any):
    from selenium.webdriver.support.ui import Select

    url, ids = demo
    open_page(browser, url + "/")
    Select(browser.find_element("id", "rg-filter-branch")).select_by_visible_text("feature/new-encoder")
    browser.find_element("css selector", "#rg-filters button[type=submit]").click()
    wait_for(browser, "window.location.search.includes('branch=feature')")
    wait_for(browser, "document.body.getAttribute('data-charts')")
    charts_drawn(browser)
    rows = browser.find_elements("css selector", "#rg-recent tbody tr")
    assert sorted(int(r.get_attribute("data-id")) for r in rows) == [ids[("dense_v2", 3)], ids[("dense_v2", 1)]]
    assert "2 of 2 matching" in browser.find_element("id", "rg-count").text
    legend = {e.get_attribute("textContent") for e in browser.find_elements("css selector", "text.legendtext")}
    assert "main" not in legend and "feature/new-encoder" in legend
    browser.get(url + "/?since=2026-02-20&tag=verdict%3Dpass")  # the date range and a label
    rows = browser.find_elements("css selector", "#rg-recent tbody tr")
    assert [int(r.get_attribute("data-id")) for r in rows] == [ids[("dense", 7)]]


def test_evaluation_page_pages_sorts_and_searches_the_queries(browser: Any, demo: Any, tmp_path: Path):
    url, ids = demo
    rid = ids[("dense", DEMO_BASELINE_AT)]
    assert console_errors(open_page(browser, f"{url}/evaluations/{rid}")) == []
    wait_for(browser, LOADED)
    assert len(browser.find_elements("css selector", "#rg-queries tbody tr")) == 50  # the first page of 63
    assert "1-50 of 63" in browser.find_element("id", "rg-query-status").text
    assert browser.find_elements("css selector", "#rg-tags tbody tr")  # per tag value
    screenshot(browser, tmp_path, "evaluation")

    def column(index: int) -> list[str]:
        cells = browser.find_elements("css selector", f"#rg-queries tbody tr td:nth-child({index})")
        return [c.text for c in cells]

    browser.find_element("css selector", "#rg-queries th[data-sort='RR']").click()  # highest first
    sorted_by_rr = "document.querySelector('#rg-queries th[data-sort=\"RR\"]').getAttribute('aria-sort')"
    wait_for(browser, f"{sorted_by_rr} === 'descending' && {LOADED}")
    rr = [float(v) for v in column(4)]  # query, text, R@5, RR
    assert rr == sorted(rr, reverse=True)
    browser.find_element("id", "rg-next").click()
    wait_for(browser, "document.getElementById('rg-query-status').textContent.startsWith('51-63')")
    search = browser.find_element("id", "rg-search")
    search.send_keys("q0")
    wait_for(browser, "document.getElementById('rg-query-status').textContent.includes('matching')")
    assert column(1) and all("q0" in q for q in column(1))
    assert len(column(1)) == 9  # q01..q09
    assert console_errors(list(browser.get_log("browser"))) == []


def test_the_compare_picker_compares_and_shows_both_rankings(browser: Any, demo: Any, tmp_path: Path):
    url, ids = demo
    open_page(browser, url + "/compare")
    browser.find_element("id", "rg-a").send_keys(str(ids[("dense", DEMO_BASELINE_AT)]))
    browser.find_element("id", "rg-b").send_keys(str(ids[("dense_v2", 1)]))
    browser.find_element("css selector", "#rg-picker button[type=submit]").click()
    wait_for(browser, "window.location.search.includes('b=')")
    wait_for(browser, "document.body.getAttribute('data-charts')")
    assert console_errors(list(browser.get_log("browser"))) == []
    charts_drawn(browser)
    stats = browser.find_elements("css selector", "#rg-statistics tbody tr")
    assert len(stats) == 5
    worst = browser.find_elements("css selector", "#rg-worst tbody tr td.num:last-child")
    deltas = [float(w.text) for w in worst]
    assert deltas == sorted(deltas) and deltas[0] < 0
    rankings = browser.find_elements("css selector", "#rankings ol.docs")
    assert len(rankings) == 2 and all(r.find_elements("css selector", "li") for r in rankings)
    assert browser.find_elements("css selector", "#rankings .doctext")  # document text from the corpus
    screenshot(browser, tmp_path, "compare")
    browser.find_element("css selector", "#rg-worst tbody tr:nth-child(2) a").click()  # another query
    wait_for(browser, "window.location.search.includes('query=')")
    assert browser.find_element("css selector", "tr.chosen") is not None


def test_hostile_strings_show_as_text_and_never_run(browser: Any, hostile: str):
    for path in ("/", "/evaluations/3", "/compare?a=3&b=1", "/evaluations/9"):
        assert console_errors(open_page(browser, hostile + path)) == [] or path == "/evaluations/9"
        assert browser.execute_script("return window.__pwned === undefined"), path
        assert browser.find_elements("css selector", "img") == []
    browser.get(hostile + "/evaluations/3")
    wait_for(browser, LOADED)
    cells = [c.text for c in browser.find_elements("css selector", "#rg-queries tbody td.mono")]
    assert HOSTILE_QID in cells  # the query id, shown as typed
    assert f"Evaluation #3 of {XSS}" in browser.find_element("id", "summary").text
    browser.get(hostile + "/")
    wait_for(browser, "document.body.getAttribute('data-charts')")
    legend = [e.get_attribute("textContent") for e in browser.find_elements("css selector", "text.legendtext")]
    assert XSS_IMG in legend  # plotly draws the escaped branch as the original text
    assert browser.execute_script("return window.__pwned === undefined")
    browser.get(hostile + "/evaluations/9")
    assert "no stored evaluation '9'" in browser.find_element("id", "rg-error").text


def test_rankgate_serve_beyond_localhost_answers_401_without_the_token(tmp_path: Path):
    path = tmp_path / "results.db"
    hand_store(path)
    token = "a-long-enough-token-1234"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    env.pop("RANKGATE_TOKEN", None)
    command = [sys.executable, "-m", "rankgate", "serve", "--store", str(path), "--host", "0.0.0.0", "--port", "0"]
    proc = subprocess.Popen([*command, "--token", token], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # blocks until the server says where it listens
        assert "rankgate dashboard on http://0.0.0.0:" in line, line
        port = int(line.split("http://0.0.0.0:")[1].split("/")[0])

        def status(headers: dict[str, str], url: str = "/api/overview") -> int:
            request = urllib.request.Request(f"http://127.0.0.1:{port}{url}", headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return int(response.status)
            except urllib.error.HTTPError as e:
                return int(e.code)

        assert status({}) == 401
        assert status({"Authorization": "Bearer wrong-token-wrong-token"}) == 401
        assert status({}, f"/?token={token}x") == 401
        assert status({"Authorization": f"Bearer {token}"}) == 200
        assert status({}, f"/?token={token}") == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
