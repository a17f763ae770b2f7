"""What each page and JSON endpoint shows, as plain data (the app renders or serializes it).

Each builder reads the store through `StoreReader` and computes nothing a library function
does not: confidence intervals come from `Results.with_confidence_intervals`, per-tag means
from `Results.by_group`, comparison statistics from `rankgate.comparison.compare.compare_results`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from rankgate.dashboard.data import Filters, StoreReader, Summary
from rankgate.dashboard.figures import ops_figure, quality_figure
from rankgate.dashboard.ops import FIGURES
from rankgate.dashboard.ops import label as ops_label
from rankgate.dashboard.sources import Sources
from rankgate.errors import InputError

CI_RESAMPLES = 2000  # bootstrap resamples of an evaluation's intervals (the report's demo uses as many)
MAX_CHARTS = 24
RECENT = 50  # rows of the overview's table
PICKER = 300  # evaluations offered by the compare picker
WORST = 50  # worst queries listed on the compare page
MAX_PAGE = 500  # per-query rows per request


def baseline_summaries(reader: StoreReader) -> dict[str, Summary]:
    out = {}
    for key, rid in reader.baselines().items():
        found = reader.summary(rid)
        if found is not None:
            out[key] = found
    return out


def overview(reader: StoreReader, filters: Filters) -> dict[str, Any]:
    """The overview: every measure (and operational figure) over time, the newest results, the filters."""
    points, total = reader.filtered(filters)
    baselines = baseline_summaries(reader)
    counts = Counter(m for s in points for m in s.measures)
    measures = [m for m, _ in counts.most_common(MAX_CHARTS)]
    ops = [k for k in FIGURES if any(k in s.ops for s in points)]
    figures = {f"m{i}": quality_figure(m, points, baselines) for i, m in enumerate(measures)}
    figures.update({f"o{i}": ops_figure(k, points, baselines) for i, k in enumerate(ops)})
    return {
        "filters": filters,
        "total": total,
        "shown": len(points),
        "measures": measures,
        "ops": [{"key": k, "label": ops_label(k)} for k in ops],
        "charts": [{"id": f"m{i}", "title": m} for i, m in enumerate(measures)],
        "ops_charts": [{"id": f"o{i}", "title": ops_label(k)} for i, k in enumerate(ops)],
        "figures": figures,
        "recent": list(reversed(points[-RECENT:])),
        "baselines": baselines,
        "facets": reader.facets(),
    }


def overview_json(reader: StoreReader, filters: Filters) -> dict[str, Any]:
    """``GET /api/overview``: the results behind the charts (oldest first), the baselines, the filters."""
    points, total = reader.filtered(filters)
    return {
        "store": reader.url,
        "filters": filters.to_dict(),
        "total": total,
        "shown": len(points),
        "evaluations": [s.to_dict() for s in points],
        "baselines": {k: s.id for k, s in baseline_summaries(reader).items()},
    }


def evaluations_json(reader: StoreReader, filters: Filters, offset: int) -> dict[str, Any]:
    """``GET /api/evaluations``: matching results, newest first, paged."""
    matching = [s for s in reversed(reader.summaries()) if filters.matches(s)]
    page = matching[offset : offset + filters.limit]
    return {
        "total": len(matching),
        "offset": offset,
        "limit": filters.limit,
        "evaluations": [s.to_dict() for s in page],
    }


def evaluation(reader: StoreReader, sources: Sources, rid: int) -> dict[str, Any]:
    """An evaluation: aggregates with CIs, query accounting, settings, provenance, per-tag table, ops."""
    result = reader.result(rid)
    summary = reader.summary(rid)
    ci = reader.derived(("ci", rid), lambda: _intervals(result))
    rows = [{"measure": m, "value": result.aggregate.get(m), "ci": ci.get(m)} for m in result.measures]
    baselines = {k: b for k, b in baseline_summaries(reader).items() if b.id != rid}
    return {
        "result": result,
        "summary": summary,
        "aggregates": rows,
        "ci_settings": {"method": "bootstrap over queries, percentile", "n_resamples": CI_RESAMPLES, "seed": 0},
        "by_tag": reader.derived(("tags", rid), lambda: _by_tag(result, sources)) if sources.tags else [],
        "ops": [{"key": k, "label": ops_label(k), "value": v} for k, v in (summary.ops if summary else {}).items()],
        "baselines": baselines,
        "has_texts": bool(sources.queries),
    }


def evaluation_json(reader: StoreReader, sources: Sources, rid: int) -> dict[str, Any]:
    """``GET /api/evaluations/{id}``: `StoredResult.to_dict` with intervals, per-tag rows and ops."""
    page = evaluation(reader, sources, rid)
    out = page["result"].to_dict()
    out["ci"] = {r["measure"]: r["ci"] for r in page["aggregates"]}
    out["ci_settings"] = page["ci_settings"]
    out["by_tag"] = page["by_tag"]
    out["operational"] = {r["key"]: r["value"] for r in page["ops"]}
    out["per_query"] = f"/api/evaluations/{rid}/queries"
    return out


def _intervals(result: Any) -> dict[str, list[float] | None]:
    res = result.to_results().with_confidence_intervals(n_resamples=CI_RESAMPLES, seed=0)
    return dict(res.ci or {})


def _by_tag(result: Any, sources: Sources) -> list[dict[str, Any]]:
    groups = result.to_results().by_group(sources.tags, untagged=None)
    return [
        {"tag": tag, "value": value, "n": g.n, "small": g.small, "aggregate": dict(g.aggregate)}
        for tag, values in groups.items()
        for value, g in sorted(values.items())
    ]


def queries_json(reader: StoreReader, sources: Sources, rid: int, params: Mapping[str, str]) -> dict[str, Any]:
    """``GET /api/evaluations/{id}/queries``: one page of per-query values, sorted and searched.

    Parameters: ``offset``, ``limit`` (at most 500), ``sort`` (``qid`` or a measure),
    ``order`` (``asc``/``desc``), ``q`` (text that the query id or text contains, any case).
    """
    result = reader.result(rid)
    offset, limit = int_param(params, "offset", 0, 0, 10**9), int_param(params, "limit", 50, 1, MAX_PAGE)
    sort, order = params.get("sort") or "qid", params.get("order") or "asc"
    if sort != "qid" and sort not in result.measures:
        raise InputError(f"sort must be qid or one of {', '.join(result.measures)}. Got {sort[:40]!r} instead.")
    if order not in ("asc", "desc"):
        raise InputError(f"order must be asc or desc. Got {order[:40]!r} instead.")
    ids, values = result.query_ids, result.values
    needle = (params.get("q") or "").strip().lower()
    rows = np.arange(len(ids))
    if needle:
        texts = sources.queries
        rows = np.array([i for i, q in enumerate(ids) if needle in q.lower() or needle in texts.get(q, "").lower()])
    rows = rows.astype(np.int64)
    if sort == "qid":
        keyed = sorted(rows.tolist(), key=lambda i: ids[i], reverse=order == "desc")
    else:
        column = values[rows, result.measures.index(sort)]
        ranked = np.argsort(-column if order == "desc" else column, kind="stable")
        keyed = rows[ranked].tolist()
    page = keyed[offset : offset + limit]
    return {
        "id": rid,
        "measures": list(result.measures),
        "total": len(ids),
        "matching": len(keyed),
        "offset": offset,
        "limit": limit,
        "sort": sort,
        "order": order,
        "rows": [
            {
                "qid": ids[i],
                "text": sources.queries.get(ids[i]),
                "values": dict(zip(result.measures, values[i].tolist(), strict=True)),
            }
            for i in page
        ],
    }


def int_param(params: Mapping[str, str], key: str, default: int, low: int, high: int) -> int:
    text = (params.get(key) or "").strip()
    try:
        value = int(text) if text else default
    except ValueError:
        raise InputError(f"{key} must be a whole number. Got {text[:40]!r} instead.") from None
    if not low <= value <= high:
        raise InputError(f"{key} must be between {low} and {high}. Got {value} instead.")
    return value


def picker(reader: StoreReader) -> list[Summary]:
    """The newest results, offered by the compare picker."""
    return list(reversed(reader.summaries()[-PICKER:]))
