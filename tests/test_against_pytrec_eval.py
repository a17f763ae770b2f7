"""Differential tests: rankgate against pytrec_eval (trec_eval 9.0.8) on randomized inputs.

pytrec_eval stores scores as float32; the random scores are multiples of 1/4, exact in
float32, so both see the same order. pytrec_eval evaluates queries present in both inputs
(trec_eval without -c), so these tests use queries="intersection"; the "qrels" policy is
checked separately (missing queries score 0). Deliberate differences are listed in
docs/semantics.md.
"""

from __future__ import annotations

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

import rankgate  # noqa: E402
from tests.randomized import random_collection  # noqa: E402

# rankgate canonical name -> (pytrec_eval measure to request, key in its output)
PAIRS = {
    "P@1": ("P.1", "P_1"),
    "P@5": ("P.5", "P_5"),
    "P@20": ("P.20", "P_20"),
    "R@5": ("recall.5", "recall_5"),
    "R@20": ("recall.20", "recall_20"),
    "nDCG@3": ("ndcg_cut.3", "ndcg_cut_3"),
    "nDCG@10": ("ndcg_cut.10", "ndcg_cut_10"),
    "nDCG": ("ndcg", "ndcg"),
    "AP": ("map", "map"),
    "AP@5": ("map_cut.5", "map_cut_5"),
    "RR": ("recip_rank", "recip_rank"),
    "Rprec": ("Rprec", "Rprec"),
    "Success@1": ("success.1", "success_1"),
    "Success@10": ("success.10", "success_10"),
    "Bpref": ("bpref", "bpref"),
    "NumRel": ("num_rel", "num_rel"),
    "NumRet": ("num_ret", "num_ret"),
    "NumRelRet": ("num_rel_ret", "num_rel_ret"),
}


def oracle(qrels, run, *, rel: int = 1, judged_only: bool = False):
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(d) for q, d in qrels.items() if d},
        {p[0] for p in PAIRS.values()},
        relevance_level=rel,
        judged_docs_only_flag=judged_only,
    )
    return evaluator.evaluate(run)


def with_rel(name: str, rel: int) -> str:
    return str(rankgate.parse_measure(name).with_defaults(rel=rel))


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("rel", [1, 2])
def test_per_query_values_equal_pytrec_eval(seed, rel):
    qrels, run = random_collection(seed)
    expected = oracle(qrels, run, rel=rel)
    res = rankgate.evaluate(qrels, run, list(PAIRS), queries="intersection", rel=rel)
    got = res.per_query
    assert set(got) == set(expected)
    for qid, values in expected.items():
        for name, (_, key) in PAIRS.items():
            assert got[qid][with_rel(name, rel)] == pytest.approx(values[key], abs=1e-9), (seed, qid, name)


@pytest.mark.parametrize("seed", range(15))
def test_judged_only_equals_pytrec_eval_judged_docs_only(seed):
    qrels, run = random_collection(seed + 100)
    expected = oracle(qrels, run, judged_only=True)
    got = rankgate.evaluate(qrels, run, list(PAIRS), queries="intersection", judged_only=True).per_query
    for qid, values in expected.items():
        for name, (_, key) in PAIRS.items():
            assert got[qid][name] == pytest.approx(values[key], abs=1e-9), (seed, qid, name)


@pytest.mark.parametrize("seed", range(10))
def test_qrels_policy_scores_missing_queries_zero(seed):
    qrels, run = random_collection(seed + 200)
    expected = oracle(qrels, run)
    res = rankgate.evaluate(qrels, run, ["AP", "nDCG@10", "NumRel"])
    assert res.query_ids == sorted(qrels)
    for qid, values in res.per_query.items():
        if qid in expected:
            assert values["AP"] == pytest.approx(expected[qid]["map"], abs=1e-9)
        else:
            assert values["AP"] == 0.0 and values["nDCG@10"] == 0.0
            assert values["NumRel"] == sum(1 for g in qrels[qid].values() if g >= 1)


def test_float32_caveat_is_real():
    """Where float32 rounding merges two scores, pytrec_eval ties them and rankgate does not."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0000000001, "b": 1.0}}
    assert oracle(qrels, run)["q"]["P_1"] == 0.0  # float32: tie, "b" first
    assert rankgate.evaluate(qrels, run, "P@1")["P@1"] == 1.0  # float64, like trec_eval 10
