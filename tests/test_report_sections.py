"""Report sections: the verdict, the headline, bench points, history from a real store, chart data."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

import rankgate
from rankgate.report.bench_view import ann_recall, bench_row, neighbor_points, quality_points
from rankgate.report.collect import collect
from rankgate.report.history import load_history
from rankgate.report.inputs import as_inputs
from rankgate.report.sections import build_sections, verdict
from tests.cli_support import invoke
from tests.report_support import eval_json, gate_row


def _data(*objs):
    return collect(as_inputs(list(objs)))


def test_gate_verdict_is_the_worst_gate_input():
    passing = {"verdict": "pass", "run": "a", "gates": [gate_row("g1", "RR", "pass", 0.8, 0.8)]}
    failing = {
        "verdict": "fail",
        "run": "b",
        "baseline": "run `a`",
        "gates": [gate_row("g1", "RR", "fail", 0.5, 0.8), gate_row("g2", "P@10", "warn", 0.4, 0.45)],
    }
    v = verdict(_data(passing, failing))
    assert (v["status"], v["word"]) == ("fail", "fail")
    assert v["text"] == "a against no baseline; b against a: 1 gate failed, 1 gate warned, 1 gate passed."


def _comparison(delta, significant, measure="nDCG@10"):
    row = {"system": "new", "measure": measure, "baseline_mean": 0.5, "mean": 0.5 + delta, "delta": delta}
    return {"baseline": "old", "systems": ["old", "new"], "comparisons": [{**row, "significant": significant}]}


@pytest.mark.parametrize(
    ("delta", "significant", "status", "word"),
    [
        (-0.05, True, "fail", "regression"),
        (0.05, True, "pass", "improvement"),
        (-0.05, False, "none", "no clear difference"),
    ],
)
def test_comparison_verdict(delta, significant, status, word):
    v = verdict(_data(_comparison(delta, significant)))
    assert (v["status"], v["word"]) == (status, word)


def test_targets_decide_without_gate_or_comparison():
    from rankgate.report.guidance import DEFAULT_TARGETS, assess

    data = _data(eval_json("x", {"nDCG@10": 0.7, "R@10": 0.9}))
    v = verdict(data, assess(DEFAULT_TARGETS, data.systems))
    assert (v["status"], v["word"]) == ("warn", "below target")
    assert "nDCG@10 (x)" in v["text"]
    data = _data(eval_json("x", {"R@10": 0.9}))
    assert verdict(data, assess(DEFAULT_TARGETS, data.systems))["word"] == "targets met"
    assert verdict(_data(eval_json("x", {"AP": 0.3})), assess(DEFAULT_TARGETS, {"x": {"AP": 0.3}}))["word"] == (
        "no verdict"
    )


def test_sections_left_out_say_what_input_fills_them():
    sections, charts, not_shown = build_sections(_data(eval_json("x", {"nDCG@10": 0.7})))
    assert [s["id"] for s in sections] == ["summary", "guidance"]
    assert charts == []
    assert [line.split(":")[0] for line in not_shown] == [
        "Metric against k",
        "Per-query deltas",
        "Per-tag breakdown",
        "Judged fraction and warnings",
        "Recall against throughput",
        "History",
    ]
    assert "--per-query" in not_shown[1]


@pytest.mark.extra("report")
def test_delta_chart_bars_are_the_per_query_differences_sorted():
    base = eval_json("base", {"RR": 0.8333}, {"q1": {"RR": 1.0}, "q2": {"RR": 0.5}, "q3": {"RR": 1.0}})
    cand = eval_json("cand", {"RR": 0.5}, {"q1": {"RR": 0.5}, "q2": {"RR": 1.0}, "q3": {"RR": 0.0}})
    sections, charts, _ = build_sections(_data(base, cand), query_texts={"q3": "a <b>bold</b> query"})
    (chart,) = [c for c in charts if c.id.startswith("delta")]
    (bars,) = chart.figure["data"]
    assert bars["x"] == ["q3", "q1", "q2"]
    assert bars["y"] == [-1.0, -0.5, 0.5]
    assert bars["customdata"][0] == "q3<br>a &lt;b&gt;bold&lt;/b&gt; query"  # plotly text is escaped
    assert chart.caption.startswith("2 queries worse, 0 unchanged, 1 better; mean delta -0.3333")
    deltas = next(s for s in sections if s["id"] == "deltas")
    assert [row["qid"] for row in deltas["pairs"][0]["worst"]] == ["q3", "q1"]  # only losses, worst first


def test_bench_points_and_rows():
    results = [
        {"retriever": "bm25", "index": None, "throughput_qps": 50.0, "metrics": {"R@10": 0.6}},
        {"retriever": "dense", "index": "exact", "throughput_qps": 100.0, "metrics": {"R@10": 0.8}},
        {
            "retriever": "dense",
            "index": "hnsw",
            "params": {"M": 16, "ef_search": 32},
            "throughput_qps": 800.0,
            "neighbor_recall": 0.91,
            "metrics": {"R@10": 0.76},
            "memory_bytes": 2_500_000,
        },
    ]
    points, x, y = neighbor_points(results)
    assert (x, y) == ("throughput (queries/s)", "neighbor recall")
    assert [(p["index"], p["x"], p["y"], p["exact"]) for p in points] == [
        ("exact", 100.0, 1.0, True),  # exact search finds every exact neighbor
        ("hnsw", 800.0, 0.91, False),  # BM25 has no neighbor recall: not drawn
    ]
    points, _, y = quality_points(results)
    assert y == "R@10" and [p["y"] for p in points] == [0.6, 0.8, 0.76]
    assert ann_recall(results) == 0.91
    row = bench_row(results[2])
    assert (row["params"], row["memory_mb"], row["index"]) == ("M=16, ef_search=32", 2.5, "hnsw")
    assert bench_row(results[0])["index"] == "-"
    # Without throughput, x is 1000 / p50 latency.
    points, x, _ = neighbor_points(
        [{"retriever": "d", "index": "ivf-pq", "latency_ms": {"p50": 4.0}, "neighbor_recall": 0.8}]
    )
    assert x.startswith("queries/s (1000 / p50") and points[0]["x"] == 250.0


def _store_with_history():
    from rankgate.store.base import open_store
    from rankgate.store.provenance import Provenance

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    runs = [
        ("bm25", {"q1": {"d1": 1.0}}, 3),  # RR 0.5
        ("dense", {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}, 2),  # RR 1.0
        ("dense", {"q1": {"d9": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}}, 1),  # RR 0.75
    ]
    store = open_store(":memory:")
    now = datetime(2026, 1, 31, 12, tzinfo=timezone.utc)
    ids = []
    for name, run, days in runs:
        res = rankgate.evaluate(qrels, run, ["RR", "P@1"])
        branch = "main" if name == "dense" else "exp"
        ids.append(
            store.add(res, name=name, provenance=Provenance(created_at=now - timedelta(days=days), branch=branch))
        )
    store.set_baseline(ids[1])
    return store, ids


@pytest.mark.extra("report", "gate")
def test_history_from_a_real_store():
    store, ids = _store_with_history()
    with store:
        h = load_history(store, ["RR", "nDCG@10"])
        assert h.metrics == ["RR"]
        assert h.notes == ["no stored result holds nDCG@10"]
        assert [p.id for p in h.points] == ids  # oldest first
        series = h.series("RR")
        assert {name: [p["y"] for p in pts] for name, pts in series.items()} == {"bm25": [0.5], "dense": [1.0, 0.75]}
        assert series["dense"][0]["x"] == "2026-01-29 12:00:00"
        assert h.baseline_point("RR") == {"x": "2026-01-29 12:00:00", "y": 1.0, "label": h.baseline.label}
        assert h.baseline.label == f"#{ids[1]} dense main 2026-01-29 12:00 UTC"
        only_main = load_history(store, branch="main")
        assert [p.name for p in only_main.points] == ["dense", "dense"]
        assert set(only_main.metrics) == {"RR", "P@1"}  # no gate: the measures the results hold
        assert load_history(store, name="nobody").points == []


@pytest.mark.extra("report")
def test_history_chart_marks_the_baseline():
    store, ids = _store_with_history()
    with store:
        gate = {"verdict": "pass", "run": "dense", "gates": [gate_row("mrr", "RR", "pass", 0.75, None)]}
        sections, charts, _ = build_sections(_data(gate), store=store)
    (chart,) = [c for c in charts if c.id == "history-rr"]
    traces = {t["name"]: t for t in chart.figure["data"]}
    assert traces["dense"]["y"] == [1.0, 0.75]
    assert traces["baseline"]["y"] == [1.0] and traces["baseline"]["marker"]["symbol"] == "star"
    (line,) = chart.figure["layout"]["shapes"]
    assert (line["y0"], line["y1"]) == (1.0, 1.0)
    history = next(s for s in sections if s["id"] == "history")["history"]
    assert history.baseline.id == ids[1]


@pytest.mark.extra("report")
def test_repeated_chart_ids_get_a_suffix():
    gates = [{"verdict": "pass", "run": f"r{i}", "gates": [gate_row("g", "RR", "pass", 0.5, None)]} for i in range(2)]
    cut = {"cutoffs": [1, 5], "runs": {"r0": {"R@1": 0.1, "R@5": 0.2}}}
    _, charts, _ = build_sections(_data(*gates, cut))
    ids = [c.id for c in charts]
    assert len(ids) == len(set(ids))
    assert ids[:2] == ["gate", "gate-2"]


@pytest.mark.extra("report")
def test_eval_tag_groups_become_the_per_tag_chart_with_their_intervals(capsys, tmp_path):
    """``eval --tags --ci --format json`` alone fills the per-tag section: means per value, CI bars."""
    from rankgate.data import demo_dir, demo_qrels_path, demo_run_path

    code, out, _ = invoke(capsys, "eval", str(demo_qrels_path()), str(demo_run_path("bm25")), "-m", "nDCG@10",
                       "--tags", str(demo_dir() / "queries.jsonl"), "--group-by", "difficulty", "--ci",
                       "--format", "json")  # fmt: skip
    assert code == 0
    groups = json.loads(out)["groups"]["difficulty"]
    sections, charts, not_shown = build_sections(_data(json.loads(out)))
    assert not any(line.startswith("Per-tag breakdown") for line in not_shown)
    (chart,) = [c for c in charts if c.id.startswith("tag")]
    (bars,) = chart.figure["data"]
    shown = dict(zip(bars["y"], bars["x"], strict=True))
    for value, g in groups.items():
        assert shown[f"difficulty={value} (n={g['n']})"] == g["aggregates"]["nDCG@10"]
    hard = bars["y"].index(f"difficulty=hard (n={groups['hard']['n']})")
    low, high = groups["hard"]["ci"]["nDCG@10"]
    assert bars["error_x"]["arrayminus"][hard] == pytest.approx(bars["x"][hard] - low)
    assert bars["error_x"]["array"][hard] == pytest.approx(high - bars["x"][hard])
    tags = next(s for s in sections if s["id"] == "tags")
    assert tags["worst"] == []  # no baseline: no drops to list


@pytest.mark.extra("report")
def test_tag_deltas_and_tag_means_get_separate_charts(capsys):
    """A compare --tags JSON (deltas) and an eval --tags JSON (means) of one measure: both drawn."""
    from rankgate.data import demo_dir, demo_qrels_path, demo_run_path

    tags = str(demo_dir() / "queries.jsonl")
    qrels, bm25, dense = str(demo_qrels_path()), str(demo_run_path("bm25")), str(demo_run_path("dense"))
    _, compared, _ = invoke(capsys, "compare", qrels, bm25, dense, "-m", "nDCG@10", "--tags", tags, "--format", "json",
                         "--resamples", "200")  # fmt: skip
    _, evaluated, _ = invoke(capsys, "eval", qrels, bm25, "-m", "nDCG@10", "--tags", tags, "--format", "json")
    _, charts, _ = build_sections(_data(json.loads(compared), json.loads(evaluated)))
    by_id = {c.id: c for c in charts if c.id.startswith("tags")}
    assert set(by_id) == {"tags-ndcg-10", "tags-means-ndcg-10"}, set(by_id)
    (delta_bars,) = by_id["tags-ndcg-10"].figure["data"]
    assert all(x is not None for x in delta_bars["x"])  # dense's deltas against bm25
    (mean_bars,) = by_id["tags-means-ndcg-10"].figure["data"]
    groups = json.loads(evaluated)["groups"]
    assert sorted(mean_bars["x"]) == sorted(g["aggregates"]["nDCG@10"] for v in groups.values() for g in v.values())


def test_a_warning_read_from_eval_and_compare_is_shown_once(capsys):
    """The same run's warning in its eval JSON and (as "name: text") in a compare JSON: one line."""
    from rankgate.data import demo_qrels_path, demo_run_path

    qrels, bm25, dense = str(demo_qrels_path()), str(demo_run_path("bm25")), str(demo_run_path("dense"))
    _, compared, _ = invoke(capsys, "compare", qrels, bm25, dense, "-m", "nDCG@10", "--format", "json",
                         "--resamples", "200")  # fmt: skip
    _, evaluated, _ = invoke(capsys, "eval", qrels, bm25, "-m", "nDCG@10", "--format", "json")
    data = _data(json.loads(compared), json.loads(evaluated))
    bm25_warnings = json.loads(evaluated)["warnings"]
    assert bm25_warnings  # the demo's bm25 run has queries without relevant judgments
    for text in bm25_warnings:
        assert sorted(set(data.warnings)).count(("bm25", text)) == 1
    assert not any(w.startswith(("bm25: ", "dense: ")) for _, w in data.warnings)  # not again under the file
