"""The HTML report of the built-in demo collection (what ``rankgate demo`` writes at its end).

It holds what a team would feed ``rankgate report``: the demo runs evaluated at several
cutoffs (with Judged@10), a comparison of the candidate ``dense_v2`` with ``dense`` broken
down by query tag, the CI gate of ``dense_v2`` against the stored baseline, and the history
of a temporary results store in which main's runs were recorded over the past weeks.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

CUTOFFS = (1, 3, 5, 10, 20)
FAMILIES = ("R", "nDCG", "P")
EXTRA = ("RR", "AP", "Judged@10")
# Main's history, oldest first: (run, days before now). The last, recorded today, becomes the
# baseline: the one `rankgate demo` gates against in the terminal, so both name the same result.
HISTORY = (("bm25", 28), ("keyword_first", 21), ("dense", 14), ("dense", 0))
STORE_LABEL = "the demo's results store (temporary: main's runs of the past four weeks, recorded by rankgate demo)"


def demo_inputs(
    *, store: Any = None, n_resamples: int = 2000, qrels: Any = None, now: datetime | None = None
) -> list[dict[str, Any]]:
    """The inputs of the demo report as loaded inputs (``{"kind", "source", "data"}``).

    Args:
        store: an open results store to record main's history and the gated run in; None
            gates against the ``dense`` run evaluated on the spot.
        n_resamples: bootstrap resamples of the comparison's confidence intervals.
        qrels: the demo judgments already read (`Qrels`); default: read them here, once.
        now: when main's latest run (the baseline) was recorded; default: now.
    """
    from rankgate.comparison.compare import compare
    from rankgate.data import (
        DEMO_CANDIDATE,
        DEMO_RUNS,
        demo_gates_path,
        demo_qrels_path,
        demo_query_tags,
        demo_run_path,
    )
    from rankgate.evaluation.session import Session
    from rankgate.gate.config import load_config
    from rankgate.gate.runner import run_gate
    from rankgate.io import read_run

    session = Session.open(qrels if qrels is not None else demo_qrels_path(), _measures())
    qrels = session.qrels
    names = (*DEMO_RUNS, DEMO_CANDIDATE)
    runs = {name: read_run(demo_run_path(name)) for name in names}
    inputs: list[dict[str, Any]] = []
    for name in names:
        res = session.evaluate(runs[name])
        inputs.append({"kind": "eval", "source": f"eval {name}", "data": res.to_dict()})
    comparison = compare(
        qrels,
        [runs["dense"], runs[DEMO_CANDIDATE]],
        ["nDCG@10", "R@10", "RR@10"],
        names=["dense", DEMO_CANDIDATE],
        tags=demo_query_tags(),
        n_resamples=n_resamples,
    )
    inputs.append({"kind": "compare", "source": f"compare dense {DEMO_CANDIDATE}", "data": comparison.to_dict()})
    config = load_config(demo_gates_path())
    if store is not None:
        record_demo_history(store, qrels, config, runs, now=now)
        report = run_gate(qrels, demo_run_path(DEMO_CANDIDATE), config, store=store)
    else:
        report = run_gate(qrels, demo_run_path(DEMO_CANDIDATE), config, baseline_run=demo_run_path("dense"))
    inputs.append({"kind": "gate", "source": f"gate {DEMO_CANDIDATE}", "data": report.to_dict()})
    return inputs


def _measures() -> list[str]:
    return [f"{f}@{k}" for f in FAMILIES for k in CUTOFFS] + list(EXTRA)


def record_demo_history(
    store: Any,
    qrels: Any,
    config: Any,
    runs: Mapping[str, Any] | None = None,
    *,
    now: datetime | None = None,
) -> None:
    """Record main's demo history in ``store`` and make today's ``dense`` result the baseline.

    ``rankgate demo`` gates against this baseline in the terminal and in the report alike; it
    passes the same ``now`` to both, so the two name the baseline identically.
    """
    from rankgate.data import demo_run_path
    from rankgate.evaluation.session import Session
    from rankgate.io import read_run
    from rankgate.store.provenance import Provenance

    runs = runs if runs is not None else {name: read_run(demo_run_path(name)) for name in dict(HISTORY)}

    now = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    session = Session.open(qrels, config.measures, settings=config.settings)
    evaluated = {name: session.evaluate(runs[name]) for name in dict(HISTORY)}  # each run once
    rid = None
    for name, days in HISTORY:
        res = evaluated[name]
        when = Provenance(created_at=now - timedelta(days=days), branch="main")
        rid = store.add(res, name=name, qrels=qrels, provenance=when, labels={"source": "demo"})
    if rid is not None:
        store.set_baseline(rid, key=config.baseline_key)


def demo_report(
    out: str | os.PathLike[str],
    *,
    export_dir: str | os.PathLike[str] | None = None,
    export_format: str = "svg",
    bench: Mapping[str, Any] | None = None,
    qrels: Any = None,
    now: datetime | None = None,
) -> Path:
    """Write the demo's HTML report to ``out`` and return its path.

    Args:
        out: the HTML file to write (atomically; its folder is created).
        bench: the demo benchmark (``BenchReport.to_dict()``), shown as the quality/throughput
            and neighbor-recall charts; None leaves that section out.
        export_dir: also write the key charts as images there (needs kaleido and Chromium).
        export_format: ``"svg"`` or ``"png"``.
        qrels: the demo judgments already read (`Qrels`); default: read them here.
        now: when main's latest run (the baseline) was recorded; default: now.

    Raises:
        BackendError: an extra the report or the demo gate needs is not installed (the
            message names it), or the export failed.
    """
    from rankgate.errors import BackendError
    from rankgate.extras import available, install_hint

    missing = [m for m in ("jinja2", "plotly", "yaml", "pydantic", "sqlalchemy") if not available(m)]
    if missing:
        raise BackendError(f"the demo report needs {', '.join(missing)}: {install_hint('report,gate')}")
    from rankgate.data import demo_dir
    from rankgate.report.html import write_report
    from rankgate.report.inputs import read_query_texts
    from rankgate.store.base import open_store

    with tempfile.TemporaryDirectory(prefix="rankgate-demo-") as tmp:
        # A file store, not ":memory:": the report reads the history back as `rankgate report --store` would.
        path = Path(tmp) / "results.db"
        with open_store(path) as store:
            inputs = demo_inputs(store=store, qrels=qrels, now=now)
        if bench is not None:
            inputs.append({"kind": "bench", "source": "bench demo", "data": dict(bench)})
        with open_store(path, read_only=True) as stored:
            return write_report(
                out,
                inputs,
                store=_NamedStore(stored, STORE_LABEL),
                title="rankgate demo report",
                query_texts=read_query_texts(demo_dir() / "queries.jsonl"),
                export_dir=export_dir,
                export_format=export_format,
            )


class _NamedStore:
    """An open store that the History section names by what it is, not by a temporary path."""

    def __init__(self, store: Any, url: str) -> None:
        self._store = store
        self.url = url

    def list(self, **filters: Any) -> Any:
        return self._store.list(**filters)

    def baseline(self, **key: Any) -> Any:
        return self._store.baseline(**key)
