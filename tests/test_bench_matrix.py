"""bench/eval_matrix.py's verdicts (the release guard) and bench/shapes.py's files, on tiny inputs."""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import eval_matrix  # noqa: E402
import shapes  # noqa: E402

from rankgate import evaluate  # noqa: E402

ARGS = SimpleNamespace(goal_speed=10.0, goal_memory=0.4, goal_spread=1.5, guard_on="wall")


def _result(tool: str, wall: float, rss: float, **values: float) -> dict:
    return {"tool": tool, "ok": True, "wall": wall, "cpu": wall, "rss_mb": rss, "values": values, "error": None}


def test_guard_passes_a_shape_that_meets_both_goals() -> None:
    results = [_result("rankgate", 1.0, 100, AP=0.5), _result("pytrec_eval", 11.0, 300, AP=0.5)]
    eval_matrix.check_agreement(results, 1e-4)
    ratios, misses = eval_matrix.verdict(results, ARGS)
    assert misses == [] and ratios["wall"] == 11.0 and ratios["mem"] == pytest.approx(1 / 3)


def test_guard_names_each_missed_goal_and_a_disagreement() -> None:
    results = [_result("rankgate", 1.0, 130, AP=0.5), _result("pytrec_eval", 9.0, 300, AP=0.5002)]
    eval_matrix.check_agreement(results, 1e-4)
    _, misses = eval_matrix.verdict(results, ARGS)
    assert misses == ["9.0x wall < 10x", "memory 0.43x > 0.4x", "pytrec_eval disagrees"]


def test_a_shape_over_one_and_a_half_times_the_fastest_shape_misses_the_spread_goal() -> None:
    saved = [
        {"shape": s, "results": [_result("rankgate", wall, 1), _result("pytrec_eval", 99.0, 9)], "misses": []}
        for s, wall in (("base", 2.0), ("shuffled", 3.2), ("tabs", 3.0))
    ]
    spreads = eval_matrix.spread(saved, ARGS)
    assert spreads == {"base": 1.0, "shuffled": 1.6, "tabs": 1.5}
    assert [s["misses"] for s in saved] == [[], ["1.60x the fastest shape's wall time > 1.5x"], []]


def test_a_tie_rule_difference_counts_only_for_the_tools_that_order_ties_otherwise() -> None:
    results = [
        _result("rankgate", 1.0, 1, RR=0.5, AP=0.5),
        _result("ranx", 9.0, 9, RR=0.6, AP=0.6),
        _result("pytrec_eval", 9.0, 9, RR=0.5, AP=0.6),
    ]
    results[0]["values"] = {"RR@10": 0.5, "AP": 0.5}
    results[1]["values"] = {"RR@10": 0.6, "AP": 0.6}
    results[2]["values"] = {"AP": 0.6}
    eval_matrix.check_agreement(results, 1e-4)
    assert results[1]["check"].startswith("tie rule") and results[1]["agrees"]
    assert results[2]["check"] == "AP +1.0e-01" and not results[2]["agrees"]


@pytest.mark.parametrize("name", ["numeric", "tabs", "gzip", "beir", "int-ties"])
def test_every_order_and_spelling_of_a_shape_evaluates_as_its_data(tmp_path: Path, name: str) -> None:
    """The shapes change how the files look, not what they hold: the base files' values, except
    where the shape changes the data itself (ids, judgments, scores)."""
    meta = shapes.write_shape(str(tmp_path / name), shapes.SHAPES[name], 2000)
    assert meta["run_lines"] == 2000
    got = evaluate(meta["qrels"], meta["run"], ["P@10", "AP"]).aggregate
    if name in ("numeric", "tabs", "gzip"):
        base = shapes.write_shape(str(tmp_path / "base"), shapes.SHAPES["base"], 2000)
        assert got == evaluate(base["qrels"], base["run"], ["P@10", "AP"]).aggregate
    assert 0 < got["AP"] < 1


def _bm25(query: str, texts: list[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """Lucene's BM25 of every text for ``query``, written out here (bm25s's tokens: words of 2+
    characters, lower-cased, English stopwords dropped), to check the shape's scores against."""
    from bm25s.stopwords import STOPWORDS_EN

    def words(t: str) -> list[str]:
        return [w for w in re.findall(r"(?u)\b\w\w+\b", t.lower()) if w not in STOPWORDS_EN]

    docs = [Counter(words(t)) for t in texts]
    lengths = np.array([sum(d.values()) for d in docs], dtype=float)
    norm = k1 * (1 - b + b * lengths / lengths.mean())
    scores = np.zeros(len(docs))
    for term in words(query):
        tf = np.array([d[term] for d in docs], dtype=float)
        df = int((tf > 0).sum())
        scores += math.log(1 + (len(docs) - df + 0.5) / (df + 0.5)) * tf / (tf + norm)
    return scores


@pytest.mark.extra("bench")  # bm25s
def test_the_bm25_shape_is_a_bm25_ranking_of_its_own_collection_and_judgments(tmp_path: Path) -> None:
    """bm25: queries x 1,000 lines, each query's docs ranked by their BM25 score for it (scores as
    float32 reprs, descending), judged by the collection (every doc holding the query's sentence,
    its source doc grade 2), and the same bytes on a second build."""
    meta = shapes.write_shape(str(tmp_path / "a"), shapes.SHAPES["bm25"], 2000)
    assert (meta["n_queries"], meta["run_lines"]) == (2, 2000)
    corpus = [json.loads(line) for line in Path(meta["corpus"]).read_text().splitlines()]
    ids = [d["_id"] for d in corpus]
    position = {d: i for i, d in enumerate(ids)}
    texts = [f"{d['title']} {d['text']}" for d in corpus]
    queries = {q["_id"]: q["text"] for q in map(json.loads, Path(meta["queries"]).read_text().splitlines())}
    assert len(corpus) >= 5000 and ids == [f"d{i}" for i in range(len(corpus))] and list(queries) == ["q0", "q1"]

    rows = [line.split(" ") for line in Path(meta["run"]).read_text().splitlines()]
    assert len(rows) == 2000 and {(r[1], r[5]) for r in rows} == {("Q0", "bm25")}
    assert [r[0] for r in rows] == ["q0"] * 1000 + ["q1"] * 1000  # collection order, 1,000 each
    for qid, query in queries.items():
        ranked = [r for r in rows if r[0] == qid]
        assert [int(r[3]) for r in ranked] == list(range(1, 1001))
        docs = [position[r[2]] for r in ranked]
        assert len(set(docs)) == 1000
        scores = np.array([float(r[4]) for r in ranked])
        assert all(r[4] == repr(float(np.float32(r[4]))) for r in ranked)  # float32 values, repr'd
        assert (np.diff(scores) <= 0).all() and (np.diff(scores) == 0).any()  # descending, with real ties
        want = _bm25(query, texts)
        np.testing.assert_allclose(scores, want[docs], rtol=1e-5, atol=1e-5)
        assert np.sort(want)[-1000] <= scores[-1] + 1e-5  # no doc left out scores above the last one kept

    qrels = [line.split(" ") for line in Path(meta["qrels"]).read_text().splitlines()]
    assert len(qrels) == meta["qrels_lines"] and {r[1] for r in qrels} == {"0"}
    for qid, query in queries.items():
        judged = {r[2]: int(r[3]) for r in qrels if r[0] == qid}
        holding = {d for d, t in zip(ids, texts, strict=True) if query in t}
        assert judged.keys() == holding and len(holding) >= 3  # several judgments: all docs holding it
        (source,) = [d for d, g in judged.items() if g == 2]
        assert set(judged.values()) == {1, 2} and query in corpus[position[source]]["text"]

    again = shapes.write_shape(str(tmp_path / "b"), shapes.SHAPES["bm25"], 2000)
    for key in ("run", "qrels", "corpus", "queries"):
        assert Path(again[key]).read_bytes() == Path(meta[key]).read_bytes()
    got = evaluate(meta["qrels"], meta["run"], ["P@10", "AP"]).aggregate
    assert 0 < got["AP"] <= 1 and 0 < got["P@10"] <= 1


def test_the_timing_wrapper_reports_a_child_and_kills_one_past_its_timeout(tmp_path: Path) -> None:
    """bench/eval_speed.py's WRAPPER: a blocking wait (no polling) and a timer for the timeout."""
    import subprocess

    from eval_speed import WRAPPER

    def wrapped(timeout: str, *cmd: str) -> dict:
        out = tmp_path / "out"
        done = subprocess.run(
            [sys.executable, "-c", WRAPPER, str(out), str(tmp_path / "err"), timeout, *cmd],
            capture_output=True,
            text=True,
            timeout=120,
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    ok = wrapped("60", sys.executable, "-c", "print('hi')")
    assert ok["rc"] == 0 and ok["timed_out"] is False and ok["wall"] > 0
    assert (tmp_path / "out").read_text() == "hi\n"
    stuck = wrapped("0.5", sys.executable, "-c", "import time; time.sleep(600)")
    assert stuck["timed_out"] is True and stuck["rc"] == -9
    assert wrapped("3", "/nonexistent/tool")["rc"] == 127


def test_the_machine_line_says_what_new_memory_costs_here():
    """The matrix notes what writing new memory costs on this machine, and what reusing memory
    just freed costs: on a VM that gives free memory back to its host the first is several times
    the second, and it weighs on every tool in proportion to its peak memory."""
    line = eval_matrix.machine_state(0)
    found = re.search(r"new memory ([0-9.]+) ms/MB, memory just freed ([0-9.]+) ms/MB", line)
    assert found is not None, line
    assert all(float(x) > 0 for x in found.groups())


def test_threads_busy_takes_turns_and_summarizes_medians_and_losses() -> None:
    import threads_busy

    assert [threads_busy.turn_order([1, 2], i) for i in range(4)] == [[1, 2], [2, 1], [1, 2], [2, 1]]
    walls = {
        "threads=1": {"quiet": [1.5, 1.2, 1.4], "busy": [1.5, 1.6, 1.4]},
        "threads=2": {"quiet": [1.0, 1.1, 0.9], "busy": [1.4, 1.3, 1.2]},
        "pytrec_eval": {"quiet": [0.5, 0.6], "busy": [0.6, 0.6]},  # quicker than rankgate, but a peer
    }
    summary = threads_busy.summarize(walls)
    assert summary["threads=1"]["quiet"] == {"min": 1.2, "median": 1.4, "max": 1.5}
    assert summary["threads=2"]["loss"] == pytest.approx(1.3 / 1.0)
    assert summary["pytrec_eval"]["loss"] == pytest.approx(0.6 / 0.55)
    # the peer is never "quickest": only rankgate's thread counts compete
    assert threads_busy.quickest(summary, "quiet") == "threads=2"
    assert threads_busy.quickest(summary, "busy") == "threads=2"
    quiet_only = threads_busy.summarize({"threads=1": {"quiet": [1.0], "busy": []}})
    assert "loss" not in quiet_only["threads=1"] and threads_busy.quickest(quiet_only, "busy") is None
    table = threads_busy.report("base", summary, 1)
    assert table[2].startswith("| threads=1 | 1.20-1.50 (1.40) | 1.40-1.60 (1.50) | 1.07x |")
    assert table[-1] == "quickest: quiet threads=2, beside the hog(s) threads=2"


def test_a_datasets_files_are_read_through_before_its_first_timed_run(tmp_path: Path, monkeypatch) -> None:
    """No tool pays for reading a shape's files from disk: bench_dataset reads them once first
    (else the first tool timed would, on a machine whose page cache dropped them)."""
    import eval_speed

    qrels, run, empty = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "empty.txt"
    qrels.write_bytes(b"q1 0 d1 1\n" * 3)
    run.write_bytes(b"q1 Q0 d1 1 2.0 t\n" * 5)
    empty.write_bytes(b"")
    assert eval_speed.read_through(qrels, run, empty, block=7) == 30 + 85

    events: list[str] = []
    monkeypatch.setattr(eval_speed, "read_through", lambda *paths: events.append("read " + " ".join(map(str, paths))))

    def measure_once(tool, qrels, run, args, tag):
        events.append(f"time {tool}")
        return {"tool": tool, "ok": True, "wall": 1.0, "cpu": 1.0, "rss_mb": 1.0, "values": {}, "error": None}

    monkeypatch.setattr(eval_speed, "measure_once", measure_once)
    monkeypatch.setattr(eval_speed, "agreement", lambda results, tol: None)
    args = SimpleNamespace(repeat=2, tol=1e-4)
    eval_speed.bench_dataset({"qrels": str(qrels), "run": str(run)}, ["rankgate", "pytrec_eval"], args, "tiny")
    assert events == [f"read {qrels} {run}"] + ["time rankgate", "time pytrec_eval"] * 2
