"""The compare page: two stored evaluations, the `compare` statistics, per-query deltas, rankings.

The statistics are `rankgate.comparison.compare.compare_results` on the two results restricted
to the measures they share (A is the baseline), with the query tags when the dashboard knows
them. Deltas are B - A per query, worst first; the chart is the report's `delta_chart`.
"""

from __future__ import annotations

from typing import Any

from rankgate.dashboard.data import StoreReader
from rankgate.dashboard.sources import Sources
from rankgate.errors import InputError

WORST = 50


def compare(
    reader: StoreReader, sources: Sources, a: int, b: int, *, measure: str | None = None, query: str | None = None
) -> dict[str, Any]:
    """Everything the compare page shows for results ``a`` (baseline) and ``b``.

    Raises:
        InputError: an unknown id (the app answers 404), or no measure or query in common.
    """
    ra, rb = reader.result(a), reader.result(b)
    shared = [m for m in ra.measures if m in rb.measures]
    if not shared:
        raise InputError(f"#{a} and #{b} share no measure ({', '.join(ra.measures)} vs {', '.join(rb.measures)})")
    if measure is None or measure not in shared:
        measure = shared[0]
    la, lb = _label(ra), _label(rb)
    if la == lb:
        lb += " (B)"
    comparison = reader.derived(("compare", a, b), lambda: _statistics(ra, rb, la, lb, shared, sources))
    deltas = reader.derived(("deltas", a, b, measure), lambda: _deltas(ra, rb, measure))
    if not deltas:
        raise InputError(f"#{a} and #{b} share no query")
    chart = reader.derived(("chart", a, b, measure), lambda: _chart(la, lb, measure, deltas, sources))
    worst = [
        {"qid": q, "text": sources.queries.get(q), "a": va, "b": vb, "delta": d} for q, va, vb, d in deltas[:WORST]
    ]
    if query is None and worst:
        query = worst[0]["qid"]
    return {
        "a": ra,
        "b": rb,
        "label_a": la,
        "label_b": lb,
        "measures": shared,
        "measure": measure,
        "comparison": comparison,
        "rows": list(comparison["comparisons"]),
        "by_tag": [r for r in comparison.get("by_tag", []) if r["measure"] == measure],
        "worst": worst,
        "deltas": deltas,
        "chart": chart,
        "query": query,
        "query_text": sources.queries.get(query or ""),
        "rankings": _rankings(sources, ra, rb, query),
        "warnings": _warnings(ra, rb),
    }


def compare_json(reader: StoreReader, sources: Sources, a: int, b: int, measure: str | None) -> dict[str, Any]:
    """``GET /api/compare?a=&b=``: the comparison (the ``rankgate compare`` JSON) and every delta, worst first."""
    page = compare(reader, sources, a, b, measure=measure)
    deltas = page["deltas"]
    return {
        "a": page["a"].id,
        "b": page["b"].id,
        "labels": {"a": page["label_a"], "b": page["label_b"]},
        "measure": page["measure"],
        "comparison": page["comparison"],
        "deltas": [{"qid": q, "a": va, "b": vb, "delta": d} for q, va, vb, d in deltas],
        "warnings": page["warnings"],
    }


def rankings_json(reader: StoreReader, sources: Sources, a: int, b: int, query: str) -> dict[str, Any]:
    """``GET /api/rankings?a=&b=&query=``: both rankings of a query with grades and document text."""
    ra, rb = reader.result(a), reader.result(b)
    return {"query": query, "text": sources.queries.get(query), **(_rankings(sources, ra, rb, query) or {})}


def _label(result: Any) -> str:
    return f"#{result.id} {result.name}"


def _statistics(ra: Any, rb: Any, la: str, lb: str, shared: list[str], sources: Sources) -> dict[str, Any]:
    from rankgate.comparison.compare import compare_results

    results = {la: ra.to_results().select(shared), lb: rb.to_results().select(shared)}
    out: dict[str, Any] = compare_results(results, baseline=la, tags=sources.tags or None).to_dict()
    return out


def _deltas(ra: Any, rb: Any, measure: str) -> list[tuple[str, float, float, float]]:
    col_a, col_b = ra.measures.index(measure), rb.measures.index(measure)
    va = dict(zip(ra.query_ids, ra.values[:, col_a].tolist(), strict=True))
    vb = zip(rb.query_ids, rb.values[:, col_b].tolist(), strict=True)
    rows = [(q, va[q], b, b - va[q]) for q, b in vb if q in va]
    rows.sort(key=lambda r: (r[3], r[0]))
    return rows


def _chart(la: str, lb: str, measure: str, deltas: list[tuple[str, float, float, float]], sources: Sources) -> Any:
    from rankgate.report.charts import delta_chart

    texts = {q: sources.queries[q] for q, *_ in deltas if q in sources.queries}
    return delta_chart(la, lb, measure, [(q, d) for q, _, _, d in deltas], texts)


def _rankings(sources: Sources, ra: Any, rb: Any, query: str | None) -> dict[str, Any] | None:
    if query is None or not sources.rankings:
        return None
    left, right = sources.ranking(ra.id, ra.name, query), sources.ranking(rb.id, rb.name, query)
    if left is None and right is None:
        return None
    return {"a": left, "b": right, "judged": len(sources.grades.get(query, {}))}


def _warnings(ra: Any, rb: Any) -> list[str]:
    out = []
    if ra.qrels_fingerprint != rb.qrels_fingerprint:
        out.append(
            "the two were evaluated on different (or unknown) judgments: qrels fingerprints "
            f"{(ra.qrels_fingerprint or 'unknown')[:12]} and {(rb.qrels_fingerprint or 'unknown')[:12]}"
        )
    skip = {"ci"}
    differ = sorted(
        k for k in set(ra.settings) | set(rb.settings) if k not in skip and ra.settings.get(k) != rb.settings.get(k)
    )
    if differ:
        out.append(f"the two were evaluated with different settings: {', '.join(differ)}")
    return out
