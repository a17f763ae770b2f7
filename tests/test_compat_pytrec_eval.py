"""rankgate.compat.pytrec_eval against the real pytrec_eval (pytrec_eval-terrier) on randomized inputs.

Every measure both compute is requested, bare (trec_eval's default parameters) and with
parameters, and must give the same keys and the same per-query values. The random scores are
multiples of 1/4, exact in float32, so pytrec_eval's float32 scores rank as rankgate's float64.
"""

from __future__ import annotations

import math

import pytest

from rankgate.compat import pytrec_eval as compat
from tests.randomized import random_collection

real = pytest.importorskip("pytrec_eval")

WITH_PARAMS = ["P.3,7", "P_2", "recall.4", "ndcg_cut.4,12", "map_cut_7", "success.2"]


def common_measures() -> list[str]:
    both = sorted(compat.supported_measures & real.supported_measures)
    assert {"map", "P", "ndcg_cut", "recip_rank", "gm_map", "num_q"} <= set(both)  # the test cannot pass empty
    return both


def assert_same(got: dict, expected: dict, context: object) -> None:
    assert set(got) == set(expected), context
    for qid, values in expected.items():
        assert set(got[qid]) == set(values), (context, qid, set(got[qid]) ^ set(values))
        for key, value in values.items():
            assert isinstance(got[qid][key], float), (context, qid, key)
            assert got[qid][key] == pytest.approx(value, abs=1e-9), (context, qid, key)


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("rel", [1, 2])
def test_every_common_measure_equals_pytrec_eval(seed, rel):
    qrels, run = random_collection(seed)
    measures = set(common_measures())
    expected = real.RelevanceEvaluator(qrels, measures, relevance_level=rel).evaluate(run)
    got = compat.RelevanceEvaluator(qrels, measures, relevance_level=rel).evaluate(run)
    assert_same(got, expected, (seed, rel))


@pytest.mark.parametrize("seed", range(10))
def test_parameters_and_judged_only_equal_pytrec_eval(seed):
    qrels, run = random_collection(seed + 50)
    for judged_only in (False, True):
        expected = real.RelevanceEvaluator(qrels, WITH_PARAMS, judged_docs_only_flag=judged_only).evaluate(run)
        got = compat.RelevanceEvaluator(qrels, WITH_PARAMS, judged_docs_only_flag=judged_only).evaluate(run)
        assert_same(got, expected, (seed, judged_only))


def test_keys_merge_as_in_pytrec_eval():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    requests = [{"P", "P.5"}, {"P.10,5", "P_20"}, {"ndcg_cut"}, {"success"}, {"official"}]
    for measures in requests:
        expected = real.RelevanceEvaluator(qrels, measures).evaluate(run)
        got = compat.RelevanceEvaluator(qrels, measures).evaluate(run)
        assert set(got["q"]) == set(expected["q"])


def test_hand_worked_values_and_order():
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d4": 1}, "q3": {"d5": 1}}
    run = {"q1": {"d1": 1.0, "d2": 3.0, "d3": 3.0}, "q2": {}, "q9": {"d1": 1.0}}
    got = compat.RelevanceEvaluator(qrels, {"map", "recip_rank", "P.1", "num_ret", "gm_map"}).evaluate(run)
    # q1: the tie between d2 and d3 goes to the larger doc id, d3: d3 (rel), d2, d1 (rel)
    assert got["q1"] == {
        "num_ret": 3.0,
        "map": (1 + 2 / 3) / 2,
        "gm_map": math.log((1 + 2 / 3) / 2),
        "recip_rank": 1.0,
        "P_1": 1.0,
    }
    # q2 retrieved nothing but is in the run: evaluated, as pytrec_eval does;
    # q3 (not in the run) and q9 (no judgments) are not
    assert list(got) == ["q1", "q2"]
    nothing = {"num_ret": 0.0, "map": 0.0, "gm_map": math.log(1e-5), "recip_rank": 0.0, "P_1": 0.0}
    assert got["q2"] == nothing


def test_scores_are_float64_unlike_pytrec_eval():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0000000001, "b": 1.0}}
    assert real.RelevanceEvaluator(qrels, {"P.1"}).evaluate(run)["q"]["P_1"] == 0.0  # float32: a tie, "b" first
    assert compat.RelevanceEvaluator(qrels, {"P.1"}).evaluate(run)["q"]["P_1"] == 1.0


def test_refusals_are_value_errors():
    qrels = {"q": {"a": 1}}
    for bad in ["nope", "P.x", "P.0", "P.2.5", "map.3", "ndcg_cut@10"]:
        with pytest.raises(ValueError, match="unsupported measure"):
            compat.RelevanceEvaluator(qrels, {bad})
    with pytest.raises(ValueError, match="relevance_level"):
        compat.RelevanceEvaluator(qrels, {"map"}, relevance_level=0)
    assert compat.RelevanceEvaluator(qrels, {"map"}).evaluate({}) == {}
    assert compat.RelevanceEvaluator(qrels, {"map"}).evaluate({"other": {"a": 1.0}}) == {}


def test_nicknames_and_aggregation():
    assert compat.supported_nicknames["official"] <= real.supported_nicknames["official"]
    assert "map" in compat.supported_nicknames["all_trec"]
    qrels, run = random_collection(7)
    measures = {"map", "gm_map", "num_rel", "ndcg_cut.10"}
    got = compat.RelevanceEvaluator(qrels, measures).evaluate(run)
    expected = real.RelevanceEvaluator(qrels, measures).evaluate(run)
    for key in ["map", "gm_map", "num_rel", "ndcg_cut_10"]:
        ours = compat.compute_aggregated_measure(key, [v[key] for v in got.values()])
        theirs = real.compute_aggregated_measure(key, [v[key] for v in expected.values()])
        assert ours == pytest.approx(theirs, abs=1e-12), key
