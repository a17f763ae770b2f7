"""What `rankgate retrieve` got: one `Answer` per query and the `RetrieveReport` of the whole run.

`tidy` turns the hits a retriever returned into the rows of the run, saying what it changed:

- a document returned twice for a query is kept once, at its first place (each dropped copy is
  counted and named in the report);
- hits past k are dropped (counted);
- when any hit has no score, every hit of the query gets ``n - rank + 1`` (n hits), so that
  trec_eval, which orders by score and breaks ties by doc id, keeps the retriever's order;
- with ``scores="ranks"``, every query gets those rank scores, whatever the retriever gave;
- scores that do not descend with rank are kept (trec_eval orders by them), and counted, since a
  retriever that returns distances (smaller is better) would be scored upside down; tied scores
  are counted too, since trec_eval breaks ties by doc id, not by the retriever's order.

The report's latency figures cover every query, a failed one at the time its attempts took
(`rankgate.retrieve.runner` measures it), so failures cannot make the percentiles look better.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.retrieve.base import Hit

EXAMPLES = 5  # ids named in a message before "..."


def attempts(n: int) -> str:
    """``"1 attempt"``, ``"3 attempts"``."""
    return f"{n:,} attempt" + ("" if n == 1 else "s")


@dataclass
class Answer:
    """One query's outcome: its final hits, or the error that left it without any.

    ``latency_ms`` is the time the query's attempts took, a failed query's too (None when it was
    never asked, or was cached without one).
    """

    query_id: str
    hits: list[Hit] = field(default_factory=list)
    latency_ms: float | None = None
    attempts: int = 0
    cached: bool = False
    error: str | None = None
    duplicates: list[str] = field(default_factory=list)
    cut: int = 0
    scores_from_ranks: bool = False
    scores_unordered: bool = False
    scores_tied: bool = False

    @property
    def failed(self) -> bool:
        return self.error is not None

    def to_dict(self) -> dict[str, Any]:
        """One line of the ``--jsonl`` file."""
        return {
            "query_id": self.query_id,
            "hits": [{"doc_id": h.doc_id, "score": h.score} for h in self.hits],
            "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 3),
            "attempts": self.attempts,
            "cached": self.cached,
            "error": self.error,
            "duplicates": self.duplicates,
            "scores_from_ranks": self.scores_from_ranks,
        }


def tidy(
    query_id: str,
    raw: Sequence[Hit],
    k: int,
    *,
    latency_ms: float | None,
    attempts: int,
    cached: bool,
    scores: str = "given",
) -> Answer:
    """The run rows of one answer (see the module docstring).

    >>> a = tidy("q1", [Hit("d1"), Hit("d2"), Hit("d1"), Hit("d3")], 2, latency_ms=5.0, attempts=1, cached=False)
    >>> [(h.doc_id, h.score) for h in a.hits], a.duplicates, a.cut, a.scores_from_ranks
    ([('d1', 2.0), ('d2', 1.0)], ['d1'], 1, True)
    >>> tidy("q1", [Hit("a", 0.2), Hit("b", 0.9)], 10, latency_ms=1.0, attempts=1, cached=False).scores_unordered
    True
    """
    seen: set[str] = set()
    kept: list[Hit] = []
    duplicates: list[str] = []
    for hit in raw:
        if hit.doc_id in seen:
            duplicates.append(hit.doc_id)
            continue
        seen.add(hit.doc_id)
        kept.append(hit)
    cut = max(0, len(kept) - k)
    kept = kept[:k]
    from_ranks = scores == "ranks" or any(h.score is None for h in kept)
    if from_ranks:
        kept = [Hit(h.doc_id, float(len(kept) - i)) for i, h in enumerate(kept)]
    given = [h.score for h in kept if h.score is not None]
    unordered = any(a < b for a, b in itertools.pairwise(given))
    tied = any(a == b for a, b in itertools.pairwise(given))
    return Answer(
        query_id,
        kept,
        latency_ms=latency_ms,
        attempts=attempts,
        cached=cached,
        duplicates=duplicates,
        cut=cut,
        scores_from_ranks=from_ranks,
        scores_unordered=unordered,
        scores_tied=tied,
    )


def latency_summary(values: Sequence[float]) -> dict[str, float] | None:
    """``{p50, p95, p99, mean}`` in milliseconds (linear interpolation), or None without values.

    >>> latency_summary([10.0, 20.0, 30.0, 40.0])
    {'p50': 25.0, 'p95': 38.5, 'p99': 39.7, 'mean': 25.0}
    """
    if not values:
        return None
    data = np.asarray(values, dtype=np.float64)
    p50, p95, p99 = np.percentile(data, [50, 95, 99])
    return {"p50": round(float(p50), 3), "p95": round(float(p95), 3), "p99": round(float(p99), 3),
            "mean": round(float(data.mean()), 3)}  # fmt: skip


@dataclass
class RetrieveReport:
    """The outcome of `rankgate.retrieve.runner.retrieve`: answers in query order, timing, outputs.

    ``wall_s`` and ``qps`` cover the queries asked in this call (not those answered from the cache);
    ``latency_ms`` covers every query: a cached one with the latency it had when asked, a failed one
    at the time its attempts took (a timeout at least the timeout). ``blank`` names the queries
    whose text is empty or blank (they were sent as they are).
    """

    retriever: Mapping[str, Any]
    k: int
    answers: list[Answer]
    wall_s: float
    retries: int = 0
    retry_reasons: dict[str, int] = field(default_factory=dict)
    run: str | None = None
    jsonl: str | None = None
    cache: str | None = None
    written: bool = False
    blank: list[str] = field(default_factory=list)
    scores: str = "given"  # the call's scores setting: "ranks" asked for scores from ranks (no warning then)

    @property
    def failures(self) -> list[Answer]:
        return [a for a in self.answers if a.failed]

    @property
    def asked(self) -> int:
        return sum(1 for a in self.answers if not a.cached)

    def warnings(self) -> list[str]:
        """What was changed or looks wrong, one sentence each."""
        out = []
        if self.blank:
            n, it = len(self.blank), "it" if len(self.blank) == 1 else "them"
            examples = ", ".join(self.blank[:EXAMPLES]) + (", ..." if n > EXAMPLES else "")
            out.append(
                f"{n:,} {'query has' if n == 1 else 'queries have'} empty or blank text, e.g. {examples}; "
                f"the retriever was asked all the same (give {it} text, or drop {it} from the queries file)"
            )
        dup = [a for a in self.answers if a.duplicates]
        if dup:
            copies = sum(len(a.duplicates) for a in dup)
            examples = ", ".join(f"{a.query_id}: {a.duplicates[0]}" for a in dup[:EXAMPLES])
            hits = "duplicate hit was" if copies == 1 else "duplicate hits were"
            out.append(
                f"{copies:,} {hits} dropped from {len(dup):,} {'query' if len(dup) == 1 else 'queries'} "
                f"(the first copy of each document kept), e.g. {examples}"
            )
        ranks = "--scores ranks, or scores='ranks' in Python"
        counts = {  # the verb for one query, then for several
            ("returned more than k hits; the rest were dropped",) * 2: sum(1 for a in self.answers if a.cut),
            ("returned no hits",) * 2: sum(1 for a in self.answers if not a.failed and not a.hits),
            (f"got scores from ranks (hits without scores, or {ranks})",) * 2: sum(
                1 for a in self.answers if a.scores_from_ranks and self.scores != "ranks"
            ),
            _verbs(f"tied scores, which trec_eval orders by doc id, not as returned ({ranks}, keeps the order)"): sum(
                1 for a in self.answers if a.scores_tied
            ),
            _verbs(
                "scores that do not descend with rank; trec_eval orders by score, so distances (smaller is "
                "better) are scored upside down: pass --scores ranks (scores='ranks' in Python) if the "
                "retriever's order is right, else negate the scores in the retriever"
            ): sum(1 for a in self.answers if a.scores_unordered),
        }
        out.extend(f"{n:,} {'query' if n == 1 else 'queries'} {what[n != 1]}" for what, n in counts.items() if n)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON summary (``--format json``, ``--summary``): counts, latency, failures, outputs."""
        answered = [a for a in self.answers if not a.failed]
        live = [a for a in answered if not a.cached]
        latencies = [a.latency_ms for a in self.answers if a.latency_ms is not None]  # failed ones too
        return {
            "retriever": dict(self.retriever),
            "k": self.k,
            "queries": len(self.answers),
            "answered": len(answered),
            "failed": len(self.failures),
            "from_cache": len(answered) - len(live),
            "asked": self.asked,
            "retries": self.retries,
            "retry_reasons": dict(self.retry_reasons),
            "wall_s": round(self.wall_s, 4),
            "qps": round(len(live) / self.wall_s, 3) if live and self.wall_s > 0 else None,
            "latency_ms": latency_summary(latencies),
            "hits": sum(len(a.hits) for a in answered),
            "duplicates": sum(len(a.duplicates) for a in self.answers),
            "scores_from_ranks": sum(1 for a in self.answers if a.scores_from_ranks),
            "failures": [{"query_id": a.query_id, "error": a.error, "attempts": a.attempts} for a in self.failures],
            "warnings": self.warnings(),
            "run": self.run if self.written else None,
            "jsonl": self.jsonl,
            "cache": self.cache,
        }


def _verbs(rest: str) -> tuple[str, str]:
    """``("has REST", "have REST")``: the words after a count of one query, then of several."""
    return f"has {rest}", f"have {rest}"
