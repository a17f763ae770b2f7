"""Shared pieces of the dashboard tests: a hand-worked store, its files, a live server.

The hand-worked store (`hand_store`) holds three results:

- #1 ``base`` on ``main`` (2026-01-01), the baseline: RR per query q1 1, q2 1/2, q3 1 (mean 5/6);
  P@1 1, 0, 1 (mean 2/3). Labels ``source=demo``.
- #2 ``cand`` on ``feature/x`` (2026-01-02), stored by a gate that failed: RR 1/2, 1, 0 (mean 1/2);
  P@1 0, 1, 0 (mean 1/3). Labels ``source=gate``, ``verdict=fail`` and operational figures
  (latency p50/p95/p99 3/7/12 ms, 100 queries/s).
- #3 a hostile one (2026-01-03): system name, branch, label and a query id that would run
  script if pasted into a page unescaped (it shares q1 and q2 with the others).

So B - A (cand - base) in RR is q3 -1, q1 -1/2, q2 +1/2 (worst first), mean -1/3.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tests.report_support import XSS, XSS_IMG, write_collection

MEASURES = ["RR", "P@1"]
BASE_RR = {"q1": 1.0, "q2": 0.5, "q3": 1.0}
CAND_RR = {"q1": 0.5, "q2": 1.0, "q3": 0.0}
OPS = {"latency_ms": {"p50": 3.0, "p95": 7.0, "p99": 12.0}, "qps": 100.0}
CORPUS = {f"d{i}": f"document {i} about topic {i % 3}" for i in range(1, 8)}
QUERIES = {"q1": "first question", "q2": "second question", "q3": "third question"}
HOSTILE_QID = f"{XSS} q"


def hand_store(location: str | Path) -> dict[str, int]:
    """Write the hand-worked store at ``location`` (a path or URL); the ids by role."""
    import rankgate
    from rankgate.io import read_qrels, read_run
    from rankgate.store.base import open_store
    from rankgate.store.provenance import Provenance

    def when(day: int) -> datetime:
        return datetime(2026, 1, day, 12, 0, tzinfo=timezone.utc)

    with tempfile.TemporaryDirectory() as tmp:
        files = write_collection(Path(tmp))
        qrels = read_qrels(files["qrels"])
        base = rankgate.evaluate(qrels, read_run(files["base"]), MEASURES)
        cand = rankgate.evaluate(qrels, read_run(files["cand"]), MEASURES)
    hostile = rankgate.evaluate(
        {HOSTILE_QID: {"d1": 1}, "q1": {"d1": 1}, "q2": {"d4": 2}},
        {HOSTILE_QID: {"d1": 1.0}, "q1": {"d1": 1.0}, "q2": {"d5": 1.0}},
        MEASURES,
    )
    with open_store(location) as store:
        ids = {
            "base": store.add(
                base,
                name="base",
                qrels=qrels,
                provenance=Provenance(created_at=when(1), branch="main", commit="a" * 40),
                labels={"source": "demo"},
            ),
            "cand": store.add(
                cand,
                name="cand",
                qrels=qrels,
                provenance=Provenance(created_at=when(2), branch="feature/x", commit="b" * 40),
                labels={"source": "gate", "verdict": "fail", **OPS},
            ),
            "hostile": store.add(
                hostile, name=XSS, provenance=Provenance(created_at=when(3), branch=XSS_IMG), labels={XSS: XSS_IMG}
            ),
        }
        store.set_baseline(ids["base"])
    return ids


def hand_files(folder: Path) -> dict[str, str]:
    """The collection's files (qrels, runs) plus a corpus and queries with text."""
    import json

    paths = write_collection(folder)
    corpus, queries = folder / "corpus.jsonl", folder / "queries.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in CORPUS.items()), encoding="utf-8")
    queries.write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()), encoding="utf-8")
    tags = folder / "tags.jsonl"
    tags.write_text(
        "".join(json.dumps({"_id": q, "tier": t}) + "\n" for q, t in (("q1", "A"), ("q2", "A"), ("q3", "B"))),
        encoding="utf-8",
    )
    return {**paths, "corpus": str(corpus), "queries": str(queries), "tags": str(tags)}


def hand_sources(folder: Path) -> Any:
    from rankgate.dashboard.sources import Sources

    files = hand_files(folder)
    return Sources.load(
        queries=files["queries"],
        corpus=files["corpus"],
        qrels=files["qrels"],
        tags=files["tags"],
        runs={"base": files["base"], "cand": files["cand"]},
    )


@contextlib.contextmanager
def live_server(app: Any, host: str = "127.0.0.1", timeout: float = 30.0) -> Iterator[str]:
    """Run ``app`` with uvicorn in a thread on a free port; yields its base URL (no trailing slash)."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=0, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:  # wait for the event: uvicorn sets `started` once it listens
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the dashboard server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)


# -- a store that looks like a team's: the demo collection's runs recorded over eight weeks ----------

DEMO_NOW = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)
DEMO_MEASURES = ["R@5", "RR", "nDCG@10", "R@10", "P@10"]
# (run, branch, days before DEMO_NOW, gate verdict or None)
DEMO_TIMELINE = (
    ("bm25", "main", 56, None),
    ("bm25", "main", 49, "pass"),
    ("keyword_first", "main", 42, "pass"),
    ("keyword_first", "main", 35, "pass"),
    ("dense", "main", 28, "pass"),
    ("dense", "main", 21, "pass"),
    ("dense", "main", 14, "pass"),
    ("dense", "main", 7, "pass"),
    ("keyword_first", "feature/hybrid", 5, "warn"),
    ("dense_v2", "feature/new-encoder", 3, "fail"),
    ("dense_v2", "feature/new-encoder", 1, "fail"),
)
DEMO_OPS = {
    "bm25": ({"p50": 2.1, "p95": 4.0, "p99": 6.2}, 910.0),
    "keyword_first": ({"p50": 3.0, "p95": 5.5, "p99": 8.1}, 640.0),
    "dense": ({"p50": 8.2, "p95": 14.1, "p99": 22.5}, 310.0),
    "dense_v2": ({"p50": 9.4, "p95": 17.0, "p99": 29.8}, 270.0),
}
DEMO_BASELINE_AT = 7  # main's result of a week ago is the baseline


def demo_store(location: str | Path) -> dict[str, Any]:
    """Record the demo runs along `DEMO_TIMELINE` in a new store; returns ids by (run, days)."""
    from datetime import timedelta

    from rankgate.data import demo_qrels_path, demo_run_path
    from rankgate.evaluation.session import Session
    from rankgate.store.base import open_store
    from rankgate.store.provenance import Provenance

    session = Session.open(demo_qrels_path(), DEMO_MEASURES)
    evaluated = {run: session.evaluate(demo_run_path(run)) for run in dict.fromkeys(r for r, *_ in DEMO_TIMELINE)}
    ids: dict[Any, int] = {}
    with open_store(location) as store:
        for i, (run, branch, days, verdict) in enumerate(DEMO_TIMELINE):
            latency, qps = DEMO_OPS[run]
            labels: dict[str, Any] = {"source": "gate" if verdict else "demo", "latency_ms": latency, "qps": qps}
            if verdict:
                labels["verdict"] = verdict
            prov = Provenance(created_at=DEMO_NOW - timedelta(days=days), branch=branch, commit=f"{i + 1:x}" * 40)
            ids[(run, days)] = store.add(evaluated[run], name=run, qrels=session.qrels, provenance=prov, labels=labels)
        store.set_baseline(ids[("dense", DEMO_BASELINE_AT)])
    return ids


def demo_sources() -> Any:
    from rankgate.dashboard.sources import Sources
    from rankgate.data import demo_dir, demo_qrels_path, demo_run_path

    runs = {run: str(demo_run_path(run)) for run in ("bm25", "keyword_first", "dense", "dense_v2")}
    folder = demo_dir()
    return Sources.load(
        queries=folder / "queries.jsonl",
        corpus=folder / "corpus.jsonl",
        tags=folder / "queries.jsonl",
        qrels=demo_qrels_path(),
        runs=runs,
    )
