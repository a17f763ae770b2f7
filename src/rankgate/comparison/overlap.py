"""How much two runs agree without any judgments: overlap@k, Jaccard@k and rank-biased overlap.

The seeds' "reference index vs candidate index" check: a candidate retriever (a new ANN index,
a quantised embedding, a cheaper model) is compared with a reference one on the same queries,
with no qrels at all. Per query, with ``A_k`` and ``B_k`` the top k documents of each run in
evaluation order (score descending, ties by doc id descending as trec_eval, `Run.ranking_order`):

- ``overlap@k`` = ``|A_k ∩ B_k| / k`` (divided by k even when a run returned fewer, like P@k);
- ``Jaccard@k`` = ``|A_k ∩ B_k| / |A_k ∪ B_k|``;
- ``RBO@k``: rank-biased overlap (Webber, Moffat and Zobel, "A similarity measure for indefinite
  rankings", TOIS 2010), extrapolated (their RBO_ext, eq. 32, which handles lists of unequal
  length) over the two top-k lists, with persistence ``p`` (0.9: the top 10 ranks carry about
  86% of the weight). 1 for identical lists, 0 for disjoint ones; top ranks count most.

Queries are those of either run (``queries="union"``, a query one run lacks scores 0) or of
both (``"intersection"``); the counts of each case are reported.

>>> from rankgate.core.run import Run
>>> a = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
>>> b = Run.from_dict({"q1": {"d1": 3.0, "d3": 2.0, "d4": 1.0}})
>>> result = run_overlap(a, b, ks=(2, 3), p=0.5)
>>> {m: round(v, 4) for m, v in result.aggregate.items()}
{'overlap@2': 0.5, 'Jaccard@2': 0.3333, 'RBO@2': 0.75, 'overlap@3': 0.6667, 'Jaccard@3': 0.5, 'RBO@3': 0.7917}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankgate.core.policies import TIE_POLICIES
from rankgate.errors import ConfigError

if TYPE_CHECKING:
    from rankgate.core.run import Run

QUERY_SETS = ("union", "intersection")
FAMILIES = ("overlap", "Jaccard", "RBO")


def ranked_lists(run: Run, depth: int | None = None, *, ties: str = "trec") -> dict[str, list[str]]:
    """Each query's documents in evaluation order (`Run.ranking_order`), the first ``depth`` of them.

    >>> from rankgate.core.run import Run
    >>> ranked_lists(Run.from_dict({"q1": {"a": 1.0, "b": 1.0, "c": 2.0}}))
    {'q1': ['c', 'b', 'a']}
    """
    if ties not in TIE_POLICIES:
        raise ConfigError(f"The 'ties' parameter must be one of {TIE_POLICIES}. Got {ties!r} instead.", key_path="ties")
    order = run.ranking_order(ties)
    docs = run.doc_ids.take(order).to_pylist() if run.num_rows else []
    out: dict[str, list[str]] = {}
    for i, qid in enumerate(run.query_ids.to_pylist()):
        lo, hi = int(run.offsets[i]), int(run.offsets[i + 1])
        out[qid] = docs[lo : hi if depth is None else min(hi, lo + depth)]
    return out


def overlap_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """``|A_k ∩ B_k| / k``.

    >>> overlap_at_k(["d1", "d2", "d3"], ["d3", "d9"], 3)
    0.3333333333333333
    """
    return len(set(a[:k]) & set(b[:k])) / k


def jaccard_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """``|A_k ∩ B_k| / |A_k ∪ B_k|`` (1.0 when both are empty).

    >>> jaccard_at_k(["d1", "d2", "d3"], ["d3", "d9"], 3)
    0.25
    """
    sa, sb = set(a[:k]), set(b[:k])
    union = len(sa | sb)
    return len(sa & sb) / union if union else 1.0


def rbo_ext(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap of two rankings without repeats (Webber et al. 2010, eq. 32).

    With ``S`` the shorter list (length s), ``L`` the longer (length l) and ``X_d`` the overlap of
    their top d (the short list stops growing after s):

        RBO_ext = (1-p)/p * (sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d)
                  + ((X_l - X_s)/l + X_s/s) p^l

    >>> rbo_ext(["a", "b", "c"], ["a", "c", "b"], p=0.5)
    0.875
    >>> rbo_ext(["a", "b"], ["a", "b"]), rbo_ext(["a"], ["b"])
    (1.0, 0.0)
    """
    if not 0 < p < 1:
        raise ConfigError(f"The 'p' parameter of RBO must be a number in (0, 1). Got {p!r} instead.", key_path="p")
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, length = len(short), len(long_)
    if s == 0:
        return 1.0 if length == 0 else 0.0
    seen_short: set[str] = set()
    seen_long: set[str] = set()
    x = 0  # X_d, the overlap at depth d
    x_s = 0
    total = 0.0
    for d in range(1, length + 1):
        new_long = long_[d - 1]
        if d <= s:
            new_short = short[d - 1]
            if new_short == new_long:
                x += 1
            else:
                x += (new_short in seen_long) + (new_long in seen_short)
            seen_short.add(new_short)
            if d == s:
                x_s = x
        else:
            x += new_long in seen_short
        seen_long.add(new_long)
        total += x / d * p**d
        if d > s:
            total += x_s * (d - s) / (s * d) * p**d
    value = (1 - p) / p * total + ((x - x_s) / length + x_s / s) * p**length
    return min(1.0, max(0.0, value))


@dataclass
class Overlap:
    """Agreement of run ``b`` with run ``a``, per query and on average.

    Attributes:
        names: ``(run a, run b)``.
        measures: the measure names (``overlap@10``, ``Jaccard@10``, ``RBO@10`` per cutoff).
        per_query: ``{query_id: {measure: value}}``.
        aggregate: the mean of each measure over the queries.
        queries: how many queries were in both runs, only in a, only in b, and evaluated.
        settings: ``p``, the cutoffs, the query set and the tie rule.
    """

    names: tuple[str, str]
    measures: list[str]
    per_query: dict[str, dict[str, float]]
    aggregate: dict[str, float]
    queries: dict[str, int]
    settings: dict[str, Any] = field(default_factory=dict)

    def worst(self, n: int = 10, measure: str | None = None) -> list[tuple[str, float]]:
        """The ``n`` queries with the lowest ``measure`` (default: RBO at the largest cutoff), ties by id."""
        key = measure or self.measures[-1]
        rows = sorted(((v[key], q) for q, v in self.per_query.items()), key=lambda t: (t[0], t[1]))
        return [(q, value) for value, q in rows[:n]]

    def to_dict(self, *, per_query: bool = True, worst: int = 10) -> dict[str, Any]:
        out: dict[str, Any] = {
            "runs": list(self.names),
            "measures": self.measures,
            "aggregate": self.aggregate,
            "queries": self.queries,
            "settings": self.settings,
            "worst": [{"query_id": q, self.measures[-1]: v} for q, v in self.worst(worst)],
        }
        if per_query:
            out["per_query"] = self.per_query
        return out


def measure_names(ks: Iterable[int]) -> list[str]:
    """``overlap@k``, ``Jaccard@k`` and ``RBO@k`` for each cutoff, cutoffs ascending."""
    return [f"{family}@{k}" for k in sorted(set(ks)) for family in FAMILIES]


def run_overlap(
    a: Run,
    b: Run,
    *,
    ks: Sequence[int] = (10,),
    p: float = 0.9,
    queries: str = "union",
    ties: str = "trec",
) -> Overlap:
    """Overlap@k, Jaccard@k and RBO@k of runs ``a`` and ``b`` for every cutoff in ``ks``.

    Args:
        a: the reference run.
        b: the candidate run.
        ks: cutoffs (>= 1).
        p: RBO's persistence, in (0, 1).
        queries: "union" (a query only one run has scores 0) or "intersection".
        ties: "trec" (doc id descending among equal scores) or "input".
    """
    cutoffs = sorted(set(ks))
    if not cutoffs or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in cutoffs):
        raise ConfigError(f"The 'ks' parameter must hold whole numbers >= 1. Got {list(ks)!r} instead.", key_path="k")
    if queries not in QUERY_SETS:
        raise ConfigError(f"The 'queries' parameter must be one of {QUERY_SETS}. Got {queries!r} instead.")
    if not (isinstance(p, int | float) and 0 < p < 1 and math.isfinite(p)):
        raise ConfigError(f"The 'p' parameter of RBO must be a number in (0, 1). Got {p!r} instead.", key_path="p")
    depth = cutoffs[-1]
    lists_a, lists_b = ranked_lists(a, depth, ties=ties), ranked_lists(b, depth, ties=ties)
    both = set(lists_a) & set(lists_b)
    chosen = sorted(both if queries == "intersection" else set(lists_a) | set(lists_b))
    names = measure_names(cutoffs)
    per_query: dict[str, dict[str, float]] = {}
    for qid in chosen:
        ra, rb = lists_a.get(qid, []), lists_b.get(qid, [])
        values: dict[str, float] = {}
        for k in cutoffs:
            values[f"overlap@{k}"] = overlap_at_k(ra, rb, k)
            values[f"Jaccard@{k}"] = jaccard_at_k(ra, rb, k) if ra or rb else 0.0
            values[f"RBO@{k}"] = rbo_ext(ra[:k], rb[:k], p) if ra and rb else 0.0
        per_query[qid] = values
    n = len(per_query)
    aggregate = {m: (math.fsum(v[m] for v in per_query.values()) / n if n else 0.0) for m in names}
    counts = {
        "both": len(both),
        "only_a": len(set(lists_a) - both),
        "only_b": len(set(lists_b) - both),
        "evaluated": n,
    }
    settings = {
        "ks": cutoffs,
        "p": p,
        "queries": queries,
        "ties": ties,
        "rbo": "extrapolated (Webber et al. 2010, eq. 32)",
    }
    return Overlap((a.name or "a", b.name or "b"), names, per_query, aggregate, counts, settings)
