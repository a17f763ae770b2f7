"""Report inputs: what each JSON is, the checks on the fields the report reads, gathering by system."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rankgate.errors import InputError
from rankgate.report.collect import baseline_name, collect
from rankgate.report.inputs import as_inputs, classify, load_inputs, read_query_texts
from tests.report_support import eval_json, gate_row


@pytest.mark.parametrize(
    ("obj", "kind"),
    [
        ({"measures": ["P@5"], "aggregate": {"P@5": 0.5}}, "eval"),
        ({"baseline": "a", "systems": ["a", "b"], "comparisons": []}, "compare"),
        ({"cutoffs": [1, 5], "runs": {"a": {"R@1": 0.1, "R@5": 0.3}}}, "cutoffs"),
        ({"verdict": "warn", "gates": []}, "gate"),
        ({"results": [{"retriever": "bm25"}]}, "bench"),
        ({"runs": {"a": {"measures": [], "aggregate": {}}}, "gate": None}, "demo"),
    ],
)
def test_classify(obj, kind):
    assert classify(obj, "x.json") == kind


def test_demo_json_is_split_into_its_evals_and_gate():
    demo = {
        "runs": {
            "dense": eval_json("dense", {"P@10": 0.4}),
            "bm25": {"measures": ["P@10"], "aggregate": {"P@10": 0.2}},
        },
        "gate": {"verdict": "pass", "gates": [], "run": "dense_v2"},
    }
    inputs = as_inputs([demo], sources=["demo.json"])
    assert [(i["kind"], i["source"]) for i in inputs] == [
        ("eval", "demo.json#runs.dense"),
        ("eval", "demo.json#runs.bm25"),
        ("gate", "demo.json#gate"),
    ]
    assert inputs[1]["data"]["run"] == "bm25"  # named by its key


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([1, 2], "expected a JSON object written by rankgate"),
        ({"hello": 1}, "top-level keys: hello"),
        ({"measures": ["P@5"], "aggregate": {"P@5": "high"}}, "aggregate.P@5: expected a number or null"),
        ({"measures": ["P@5"], "aggregate": {"P@5": True}}, "aggregate.P@5: expected a number or null"),
        ({"measures": [5], "aggregate": {}}, "measures[0]: expected a measure name"),
        ({"measures": ["P@5"], "aggregate": {}, "per_query": {"q1": 0.5}}, "per_query.q1: expected an object"),
        ({"measures": ["P@5"], "aggregate": {}, "ci": {"P@5": [0.1]}}, "ci.P@5: expected [low, high] or null"),
        ({"measures": ["P@5"], "aggregate": {}, "groups": {"topic": ["x"]}}, "groups.topic: expected an object"),
        (
            {"measures": ["P@5"], "aggregate": {}, "groups": {"t": {"a": {"n": 3, "aggregates": {"P@5": "hi"}}}}},
            "groups.t.a.aggregates.P@5: expected a number or null",
        ),
        (
            {
                "measures": ["P@5"],
                "aggregate": {},
                "groups": {"t": {"a": {"n": 3, "aggregates": {}, "ci": {"P@5": 1}}}},
            },
            "groups.t.a.ci.P@5: expected [low, high] or null",
        ),
        ({"measures": ["P@5"], "aggregate": {}, "groups": {"t": {"a": {"n": "3"}}}}, "groups.t.a.n: expected a number"),
        ({"verdict": "maybe", "gates": []}, "verdict: expected one of pass, warn, fail"),
        ({"verdict": "pass", "gates": [{"name": "g", "metric": "RR"}]}, "gates[0].status: expected a string"),
        ({"verdict": "pass", "gates": [], "by_tag": [{"tag": "t"}]}, "by_tag[0].value: expected a string"),
        (
            {"systems": ["a"], "comparisons": [{"measure": "RR", "delta": 0}]},
            "comparisons[0].system: expected a string",
        ),
        ({"cutoffs": [0, 5], "runs": {}}, "cutoffs[0]: expected an int >= 1"),
        (
            {"results": [{"retriever": "x", "latency_ms": {"p50": "fast"}}]},
            "results[0].latency_ms.p50: expected a number",
        ),
        ({"results": [{"retriever": "x", "throughput_qps": [1]}]}, "results[0].throughput_qps: expected a number"),
    ],
)
def test_bad_objects_name_the_file_and_key(obj, message):
    with pytest.raises(InputError) as e:
        as_inputs([obj], sources=["in.json"])
    assert str(e.value).startswith("in.json: ")
    assert message in str(e.value)


def test_file_errors_name_the_file_and_line(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"measures": ["P@5"],\n "aggregate": {"P@5": 0.5,}}\n')
    with pytest.raises(InputError, match=r"bad\.json:2: invalid JSON"):
        load_inputs([bad])
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    with pytest.raises(InputError, match=r"empty\.json: file is empty"):
        load_inputs([empty])
    binary = tmp_path / "latin.json"
    binary.write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(InputError, match="not UTF-8"):
        load_inputs([binary])
    with pytest.raises(InputError, match=r"missing\.json"):
        load_inputs([tmp_path / "missing.json"])


def test_compressed_input_is_read(tmp_path: Path):
    path = tmp_path / "eval.json.gz"
    path.write_bytes(gzip.compress(json.dumps(eval_json("dense", {"P@10": 0.25})).encode()))
    (item,) = load_inputs([path])
    assert item["kind"] == "eval" and item["data"]["aggregate"] == {"P@10": 0.25}


def test_two_evals_with_per_query_make_a_pair_first_is_the_baseline():
    base = eval_json("base", {"RR": 0.8333}, {"q1": {"RR": 1.0}, "q2": {"RR": 0.5}, "q3": {"RR": 1.0}})
    cand = eval_json("cand", {"RR": 0.5}, {"q1": {"RR": 0.5}, "q2": {"RR": 1.0}, "q3": {"RR": 0.0}})
    data = collect(as_inputs([base, cand]))
    (pair,) = data.pairs
    assert (pair.baseline, pair.candidate, pair.measures) == ("base", "cand", ["RR"])
    assert sorted(pair.deltas("RR")) == [("q1", -0.5), ("q2", 0.5), ("q3", -1.0)]
    assert data.systems == {"base": {"RR": 0.8333}, "cand": {"RR": 0.5}}


def test_curves_come_from_measures_at_two_or_more_cutoffs_and_cutoffs_json_wins():
    ev = eval_json("a", {"R@5": 0.3, "R@10": 0.5, "R@1": 0.1, "nDCG@10": 0.4, "RR": 0.6})
    data = collect(as_inputs([ev]))
    assert data.curves == {"a": {"R": [(1, 0.1), (5, 0.3), (10, 0.5)]}}  # nDCG at one cutoff is no curve
    cut = {"cutoffs": [5, 20], "runs": {"a": {"R@5": 0.35, "R@20": 0.7}, "b": {"R@5": 0.2, "R@20": 0.4}}}
    data = collect(as_inputs([ev, cut]))
    assert data.curves["a"]["R"] == [(1, 0.1), (5, 0.35), (10, 0.5), (20, 0.7)]
    assert data.curves["b"]["R"] == [(5, 0.2), (20, 0.4)]


def test_gate_gives_the_run_its_baseline_the_pair_and_tag_rows():
    tag = {"tag": "topic", "value": "coffee", "n": 13, "measure": "RR", "system": "current", "mean": 0.3}
    gate = {
        "verdict": "fail",
        "run": "dense_v2",
        "baseline": "stored result 4 (dense, main 4f1899f1 2026-11-17 04:42 UTC)",
        "gates": [gate_row("mrr", "RR", "fail", 0.5, 0.8)],
        "aggregate": {"RR": 0.5},
        "baseline_aggregate": {"RR": 0.8},
        "per_query": {"q1": {"RR": 0.5}, "q2": {"RR": 0.5}},
        "baseline_per_query": {"q1": {"RR": 1.0}, "q2": {"RR": 0.6}},
        "by_tag": [{**tag, "baseline_mean": 0.9, "delta": -0.6, "ci": [-0.8, -0.4]}],
    }
    compare = {
        "baseline": "dense",
        "systems": ["dense", "dense_v2"],
        "comparisons": [],
        "by_tag": [{**tag, "system": "dense_v2", "baseline_mean": 0.9, "delta": -0.6, "ci": [-0.8, -0.4]}],
    }
    data = collect(as_inputs([gate, compare]))
    assert data.systems == {"dense_v2": {"RR": 0.5}, "dense": {"RR": 0.8}}
    (pair,) = data.pairs
    assert (pair.baseline, pair.candidate) == ("dense", "dense_v2")
    assert sorted(pair.deltas("RR")) == [("q1", -0.5), ("q2", pytest.approx(-0.1))]
    assert len(data.tag_rows) == 1  # the compare's copy of the same row is not drawn twice
    assert data.tag_rows[0]["system"] == "dense_v2"


@pytest.mark.parametrize(
    ("label", "run", "expected"),
    [
        ("run `bm25`", "dense", "bm25"),
        ("stored result 12 (dense, main 4f2a9c1e 2025-01-31 12:00 UTC)", "dense_v2", "dense"),
        ("stored result 12 (a, b, 2025-01-31 12:00 UTC)", None, "a, b"),
        ("stored result 3 (dense, 2025-01-31 12:00 UTC)", "dense", "dense (baseline)"),
        ("something else", None, "something else"),
    ],
)
def test_baseline_name(label, run, expected):
    assert baseline_name(label, run) == expected


def test_query_texts(tmp_path: Path):
    path = tmp_path / "queries.jsonl"
    path.write_text('{"_id": "q1", "text": "how to <b>brew</b>"}\n\n{"query_id": 2, "query": "second"}\n')
    assert read_query_texts(path) == {"q1": "how to <b>brew</b>", "2": "second"}
    path.write_text('{"_id": "q1", "text": "a"}\n{"text": "no id"}\n')
    with pytest.raises(InputError, match=r"queries\.jsonl:2: no query id"):
        read_query_texts(path)
