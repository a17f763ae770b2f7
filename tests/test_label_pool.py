"""Depth-k pooling by hand: union over runs, best rank, trec_eval tie order, exclusions, and the
pool report of ``rankgate label --dry-run`` (nothing sent, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import ConfigError
from rankgate.label.pooling import build_pool, pool_from_pairs
from tests.cli_support import invoke

A = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"e1": 2.0, "e2": 1.0}}, name="a")
B = Run.from_dict({"q1": {"d3": 9.0, "d4": 8.0, "d1": 7.0}, "q3": {"f1": 1.0}}, name="b")


def test_pool_is_the_union_of_the_top_k_with_best_ranks():
    pool = build_pool([A, B], 2)
    # q1: a's top 2 {d1 (1), d2 (2)}, b's top 2 {d3 (1), d4 (2)}; q2: e1, e2; q3: f1.
    assert pool.pairs == [
        ("q1", "d1", 1),
        ("q1", "d3", 1),
        ("q2", "e1", 1),
        ("q3", "f1", 1),
        ("q1", "d2", 2),
        ("q1", "d4", 2),
        ("q2", "e2", 2),
    ]
    assert pool.per_query == {"q1": 4, "q2": 2, "q3": 1} and pool.candidates == 7 and pool.runs == ["a", "b"]
    summary = pool.summary()
    assert (summary["pairs"], summary["per_query_min"], summary["per_query_median"], summary["per_query_max"]) == (
        7,
        1,
        2.0,
        4,
    )
    # Depth 3 finds nothing new (d3 of a and d1 of b are in already); each keeps its best rank.
    deeper = build_pool([A, B], 3)
    assert deeper.pairs == pool.pairs and deeper.candidates == 7
    assert build_pool([A, B], 1).pairs == [("q1", "d1", 1), ("q1", "d3", 1), ("q2", "e1", 1), ("q3", "f1", 1)]


def test_ties_are_broken_as_in_evaluation():
    tied = Run.from_dict({"q1": {"d1": 1.0, "d2": 1.0, "d3": 0.5}}, name="t")
    # trec_eval: equal scores by doc id descending, so d2 ranks before d1.
    assert build_pool([tied], 1).pairs == [("q1", "d2", 1)]
    assert build_pool([tied], 1, ties="input").pairs == [("q1", "d1", 1)]


def test_judged_pairs_and_pairs_without_text_are_left_out():
    existing = Qrels.from_dict({"q1": {"d1": 2, "zz": 0}})
    pool = build_pool([A, B], 2, existing=existing, queries={"q1", "q2"}, documents={"d1", "d2", "d3", "e1", "e2"})
    assert pool.judged_before == 1  # d1 (zz was never pooled)
    assert pool.missing_queries == ["q3"]
    assert pool.missing_docs == 1 and pool.missing_doc_example == "d4"
    assert pool.pairs == [("q1", "d3", 1), ("q2", "e1", 1), ("q1", "d2", 2), ("q2", "e2", 2)]
    assert pool.keys() == {("q1", "d3"), ("q2", "e1"), ("q1", "d2"), ("q2", "e2")}


def test_pool_from_pairs_and_bad_settings():
    pool = pool_from_pairs([("q1", "b"), ("q1", "a"), ("q1", "b")], existing=Qrels.from_dict({"q1": {"a": 1}}))
    assert pool.pairs == [("q1", "b", 1)] and pool.candidates == 2 and pool.judged_before == 1
    for depth in (0, -1, 2.5, True):
        with pytest.raises(ConfigError, match="'depth' parameter must be an int >= 1"):
            build_pool([A], depth)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="at least one run"):
        build_pool([], 5)


def test_dry_run_reports_the_pool_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "a.txt").write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq2 Q0 e1 1 2 a\n")
    (tmp_path / "b.txt").write_text("q1 Q0 d2 1 9 b\nq1 Q0 d3 2 8 b\nq2 Q0 zz 1 5 b\n")
    (tmp_path / "c.jsonl").write_text(
        "".join(json.dumps({"_id": d, "text": f"text {d}"}) + "\n" for d in ["d1", "d2", "d3", "e1"])
    )
    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "one"}\n{"_id": "q2", "text": "two"}\n')
    (tmp_path / "old.txt").write_text("q1 0 d3 1\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [
        "label", "--run", str(tmp_path / "a.txt"), "--run", str(tmp_path / "b.txt"), "--corpus",
        str(tmp_path / "c.jsonl"), "--queries", str(tmp_path / "q.jsonl"), "--depth", "2", "--judge", "bm25",
        "--qrels", str(tmp_path / "old.txt"), "--out", str(tmp_path / "weak.txt"), "--dry-run", "--format", "json",
    ]  # fmt: skip
    code, out, err = invoke(capsys, *argv)
    assert code == 0, err
    body = json.loads(out)
    # q1: d1, d2 (a), d2, d3 (b) -> {d1, d2, d3}, d3 judged in old.txt; q2: e1, zz (not in the corpus).
    assert body["pool"]["pairs"] == 3 and body["pool"]["judged_before"] == 1 and body["pool"]["missing_docs"] == 1
    assert body["estimate"]["requests"] == 3 and body["dry_run"] is True
    assert "1 pooled documents are not in" in err and "'zz'" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    code, out, err = invoke(capsys, *argv[:-2])  # the table
    assert code == 0, err
    assert "to judge (dry run: nothing sent)" in out and "judged now" not in out
    assert sorted(p.name for p in tmp_path.iterdir()) == before
