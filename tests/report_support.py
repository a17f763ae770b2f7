"""Shared pieces of the HTML report tests: a hand-worked collection, hostile strings, a headless browser."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A collection small enough to work out by hand.
#   q1: d1 (1), d2 (1), d3 (0)     base ranks d1 d3 d2 -> RR 1,   P@1 1     cand ranks d3 d1 d2 -> RR 1/2, P@1 0
#   q2: d4 (2), d5 (0)             base ranks d5 d4    -> RR 1/2, P@1 0     cand ranks d4 d5    -> RR 1,   P@1 1
#   q3: d6 (1)                     base ranks d6       -> RR 1,   P@1 1     cand ranks d7 (unjudged) -> 0, 0
QRELS = "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 2\nq2 0 d5 0\nq3 0 d6 1\n"
BASE_RUN = "q1 Q0 d1 1 3 b\nq1 Q0 d3 2 2 b\nq1 Q0 d2 3 1 b\nq2 Q0 d5 1 2 b\nq2 Q0 d4 2 1 b\nq3 Q0 d6 1 1 b\n"
CAND_RUN = "q1 Q0 d3 1 3 c\nq1 Q0 d1 2 2 c\nq1 Q0 d2 3 1 c\nq2 Q0 d4 1 2 c\nq2 Q0 d5 2 1 c\nq3 Q0 d7 1 1 c\n"
BASE_RR = {"q1": 1.0, "q2": 0.5, "q3": 1.0}
CAND_RR = {"q1": 0.5, "q2": 1.0, "q3": 0.0}
GATES_YAML = """\
gates:
  - name: mrr
    metric: RR
    threshold: 0.4
    regression_max: 0.05
    severity: error
"""

# Strings that would run script if a report pasted them into the page unescaped.
XSS = "<script>window.__pwned = 1</script>"
XSS_IMG = '<img src=x onerror="window.__pwned = 2">'


def write_collection(folder: Path) -> dict[str, str]:
    """The hand-worked qrels, runs and gate config as files; their paths by name."""
    paths = {"qrels": "qrels.txt", "base": "base.txt", "cand": "cand.txt", "gates": "gates.yaml"}
    texts = {"qrels": QRELS, "base": BASE_RUN, "cand": CAND_RUN, "gates": GATES_YAML}
    out = {}
    for key, name in paths.items():
        (folder / name).write_text(texts[key], encoding="utf-8")
        out[key] = str(folder / name)
    return out


def eval_json(
    run: str,
    aggregate: dict[str, float | None],
    per_query: dict[str, dict[str, float]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An object of the ``rankgate eval --format json`` contract."""
    out: dict[str, Any] = {"measures": list(aggregate), "aggregate": aggregate, "run": run, **extra}
    if per_query is not None:
        out["per_query"] = per_query
    return out


def gate_row(name: str, metric: str, status: str, value: float, baseline: float | None, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "metric": metric,
        "severity": "error",
        "status": status,
        "value": value,
        "baseline": baseline,
        "delta": None if baseline is None else value - baseline,
        "ci": None,
        "threshold": extra.pop("threshold", None),
        "regression_max": None,
        "failed": extra.pop("failed", []),
        **extra,
    }


# -- headless Chromium ---------------------------------------------------------------------------

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def chrome_paths() -> tuple[str, str] | None:
    """(browser, chromedriver) executables, or None when either is missing."""
    browser = next((p for p in map(shutil.which, CHROMIUM) if p), None)
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@contextlib.contextmanager
def headless_chrome(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A selenium Chrome driver on headless Chromium that records the browser console."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    paths = chrome_paths()
    if paths is None:
        pytest.skip("needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver)")
    browser, driver_path = paths
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},{height}")
    options.binary_location = browser
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def open_report(driver: Any, path: Path, timeout: float = 60.0) -> tuple[str, list[dict[str, Any]]]:
    """Load a report; wait until its script says the charts are drawn (or failed).

    Returns:
        The final ``data-charts`` state of the body and the browser console entries.
    """
    driver.get(path.resolve().as_uri())
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = driver.execute_script("return document.body.getAttribute('data-charts')")
        if state in ("drawn", "failed", "none"):
            break
        time.sleep(0.1)
    return str(state), list(driver.get_log("browser"))


def console_errors(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("level") == "SEVERE"]
