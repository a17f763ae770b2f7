"""bench/eval_matrix.py's verdicts (the release guard) and bench/shapes.py's files, on tiny inputs."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

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
