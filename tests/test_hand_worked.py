"""Hand-worked values: each expected number is derived in the comment beside it."""

from __future__ import annotations

import math

import pytest

import rankgate


def trec_run(rankings: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """A run whose scores reproduce the given order (no ties)."""
    return {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in rankings.items()}


def test_recall_at_5_from_the_issue():
    # relevant {D2, D4, D7}; ranking [D3, D4, D8, D2, D9]: D4 and D2 found -> 2/3.
    qrels = {"q": {"D2": 1, "D4": 1, "D7": 1}}
    run = trec_run({"q": ["D3", "D4", "D8", "D2", "D9"]})
    assert rankgate.evaluate(qrels, run, "R@5")["R@5"] == pytest.approx(2 / 3)
    assert round(rankgate.evaluate(qrels, run, "R@5")["R@5"], 3) == 0.667


def test_mrr_first_relevant_at_ranks_2_1_7():
    # (1/2 + 1/1 + 1/7) / 3 = 0.5476
    qrels = {"a": {"r": 1}, "b": {"r": 1}, "c": {"r": 1}}
    run = trec_run(
        {
            "a": ["x1", "r", "x2"],
            "b": ["r", "x1"],
            "c": ["x1", "x2", "x3", "x4", "x5", "x6", "r"],
        }
    )
    value = rankgate.evaluate(qrels, run, "RR")["RR"]
    assert value == pytest.approx((1 / 2 + 1 + 1 / 7) / 3)
    assert round(value, 3) == 0.548


def test_ndcg_at_5_graded_with_ideal_3_2_1():
    # gains [1,0,3,0,2]: DCG = 1/log2(2) + 3/log2(4) + 2/log2(6) = 3.27371
    # ideal [3,2,1]:     IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4) = 4.76186 -> 0.6875
    qrels = {"q": {"a": 1, "b": 0, "c": 3, "d": 0, "e": 2}}
    run = trec_run({"q": ["a", "b", "c", "d", "e"]})
    dcg = 1 + 3 / math.log2(4) + 2 / math.log2(6)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    value = rankgate.evaluate(qrels, run, "nDCG@5")["nDCG@5"]
    assert value == pytest.approx(dcg / idcg, abs=1e-12)
    assert round(value, 3) == 0.687


def test_two_query_macro_average_from_the_issue():
    # Q1 judged {A:3, C:2, F:1}, ranked [B, C, A]; Q2 judged {K:2}, ranked [L, M, N].
    # R@3: Q1 2/3, Q2 0 -> 1/3.  MRR: Q1 1/2, Q2 0 -> 1/4.
    # nDCG@3 Q1: DCG = 2/log2(3) + 3/log2(4) = 2.76186; IDCG = 3 + 2/log2(3) + 1/2 = 4.76186 -> 0.58000
    qrels = {"Q1": {"A": 3, "C": 2, "F": 1}, "Q2": {"K": 2}}
    run = trec_run({"Q1": ["B", "C", "A"], "Q2": ["L", "M", "N"]})
    agg = rankgate.evaluate(qrels, run, ["R@3", "RR", "nDCG@3"]).aggregate
    q1_ndcg = (2 / math.log2(3) + 3 / 2) / (3 + 2 / math.log2(3) + 1 / 2)
    assert agg["R@3"] == pytest.approx(1 / 3)
    assert agg["RR"] == pytest.approx(0.25)
    assert agg["nDCG@3"] == pytest.approx(q1_ndcg / 2)
    assert (round(agg["R@3"], 3), round(agg["RR"], 3), round(agg["nDCG@3"], 3)) == (0.333, 0.25, 0.29)


def test_precision_divides_by_k_even_when_fewer_returned():
    # one relevant doc returned out of 2 docs; P@10 = 1/10, not 1/2
    res = rankgate.evaluate({"q": {"a": 1}}, trec_run({"q": ["a", "b"]}), "P@10")
    assert res["P@10"] == pytest.approx(0.1)


def test_ap_at_k_divides_by_all_relevant():
    # rel {a, b, c}; ranking [a, x, b]: AP@2 = (1/1)/3, AP = (1 + 2/3)/3
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = trec_run({"q": ["a", "x", "b"]})
    agg = rankgate.evaluate(qrels, run, ["AP@2", "AP"]).aggregate
    assert agg["AP@2"] == pytest.approx(1 / 3)
    assert agg["AP"] == pytest.approx((1 + 2 / 3) / 3)


def test_rr_at_k_is_zero_when_first_relevant_is_below_k():
    run = trec_run({"q": ["x", "y", "a"]})
    agg = rankgate.evaluate({"q": {"a": 1}}, run, ["RR@2", "RR@3"]).aggregate
    assert agg == {"RR@2": 0.0, "RR@3": pytest.approx(1 / 3)}


def test_ties_broken_by_doc_id_descending_bytewise():
    # scores tie; trec_eval ranks "b" before "a" (docno descending) and "Z" < "a" bytewise
    qrels = {"q": {"a": 1}}
    assert rankgate.evaluate(qrels, {"q": {"a": 1.0, "b": 1.0}}, "RR")["RR"] == 0.5
    assert rankgate.evaluate(qrels, {"q": {"a": 1.0, "Z": 1.0}}, "RR")["RR"] == 1.0
    assert rankgate.evaluate(qrels, {"q": {"a": 1.0, "b": 1.0}}, "RR", ties="input")["RR"] == 1.0


def test_negative_grades_are_judged_nonrelevant_but_unjudged_for_bpref_and_judged():
    # qrels: d1=2, d2=1, d3=0, d4=-1, d5=1; ranking dX, d2, d3, d4, d1.
    # Hand-computed in trec_eval terms: R=3, N=1 (d4 excluded).
    # P@5 = 2/5; AP = (1/2 + 2/5)/3 = 0.3; Rprec = 1/3; RR = 1/2;
    # bpref: d2 has no nonrel above (1), d1 has d3 above: 1 - min(1,3)/min(1,3) = 0 -> 1/3
    # nDCG = (1/log2 3 + 2/log2 6) / (2 + 1/log2 3 + 1/log2 4)
    # Judged@5: dX unjudged, d4 (grade -1) unjudged -> 3/5
    qrels = {"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": -1, "d5": 1}}
    run = {"q1": {"dX": 0.95, "d2": 0.9, "d3": 0.8, "d4": 0.7, "d1": 0.5}}
    agg = rankgate.evaluate(qrels, run, ["P@5", "AP", "Rprec", "RR", "Bpref", "nDCG", "Judged@5"]).aggregate
    ndcg = (1 / math.log2(3) + 2 / math.log2(6)) / (2 + 1 / math.log2(3) + 1 / 2)
    assert agg["P@5"] == pytest.approx(0.4)
    assert agg["AP"] == pytest.approx(0.3)
    assert agg["Rprec"] == pytest.approx(1 / 3)
    assert agg["RR"] == pytest.approx(0.5)
    assert agg["Bpref"] == pytest.approx(1 / 3)
    assert agg["nDCG"] == pytest.approx(ndcg)
    assert agg["Judged@5"] == pytest.approx(3 / 5)


def test_rel_threshold_changes_binary_measures_but_not_ndcg():
    # with rel=2 only d1 is relevant: R=1; P@5 = 1/5; AP = (1/5)/1; nDCG unchanged
    qrels = {"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": -1, "d5": 1}}
    run = {"q1": {"dX": 0.95, "d2": 0.9, "d3": 0.8, "d4": 0.7, "d1": 0.5}}
    base = rankgate.evaluate(qrels, run, ["nDCG"])["nDCG"]
    res = rankgate.evaluate(qrels, run, ["P@5", "AP", "nDCG", "NumRel"], rel=2)
    assert res.names == ["P(rel=2)@5", "AP(rel=2)", "nDCG", "NumRel(rel=2)"]
    assert res.aggregate["P(rel=2)@5"] == pytest.approx(0.2)
    assert res.aggregate["AP(rel=2)"] == pytest.approx(0.2)
    assert res.aggregate["nDCG"] == pytest.approx(base)
    assert res.aggregate["NumRel(rel=2)"] == 1


def test_exp_gain_ndcg():
    # grades [2, 0, 1] vs ideal [2, 1]: exp gains 3, 0, 1
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = trec_run({"q": ["a", "b", "c"]})
    expected = (3 + 1 / 2) / (3 + 1 / math.log2(3))
    assert rankgate.evaluate(qrels, run, "nDCG(gain=exp)@3")["nDCG(gain=exp)@3"] == pytest.approx(expected)


def test_rbp_and_err_hand_worked():
    # RBP(p=0.5): relevant at ranks 1 and 3: 0.5 * (1 + 0.25) = 0.625
    # ERR@3 with grades [2, 0, 1], gmax = 2: R = [3/4, 0, 1/4]
    #   = 1 * 3/4 / 1 + (1/4)(1) * 0 / 2 + (1/4)(1)(1/4) / 3 = 0.75 + 1/48
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = trec_run({"q": ["a", "b", "c"]})
    agg = rankgate.evaluate(qrels, run, ["RBP(p=0.5)", "ERR@3", "ERR(max_grade=4)@1"]).aggregate
    assert agg["RBP(p=0.5)"] == pytest.approx(0.625)
    assert agg["ERR@3"] == pytest.approx(0.75 + 1 / 48)
    assert agg["ERR(max_grade=4)@1"] == pytest.approx(3 / 16)


def test_success_bpref_counts():
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = trec_run({"q": ["b", "a", "x"]})
    agg = rankgate.evaluate(qrels, run, ["Success@1", "Success@2", "NumRet", "NumRel", "NumRelRet", "Bpref"]).aggregate
    # bpref: R=2, N=1; a has 1 nonrel above: 1 - min(1,2)/min(2,1) = 0; c not retrieved -> 0/2
    assert agg == {"Success@1": 0.0, "Success@2": 1.0, "NumRet": 3.0, "NumRel": 2.0, "NumRelRet": 1.0, "Bpref": 0.0}


def test_query_accounting_and_policies():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    run = {"q1": {"a": 1.0}, "q3": {"c": 1.0}, "q9": {"z": 1.0}}
    res = rankgate.evaluate(qrels, run, "P@1")
    assert res.queries == {"evaluated": 3, "missing_from_run": 1, "run_only": 1, "no_relevant": 1}
    assert res["P@1"] == pytest.approx(1 / 3)  # q1 = 1, q2 (missing) = 0, q3 (no relevant) = 0
    inter = rankgate.evaluate(qrels, run, "P@1", queries="intersection")
    assert inter.queries["evaluated"] == 2 and inter["P@1"] == pytest.approx(1 / 2)
    skip = rankgate.evaluate(qrels, run, "P@1", empty="skip")
    assert skip.query_ids == ["q1", "q2"] and skip["P@1"] == pytest.approx(1 / 2)
    assert any("not in the run" in w for w in res.warnings)
    assert any("no judgments" in w for w in res.warnings)


def test_judged_only_condenses_rankings():
    # unjudged x, y removed: ranking becomes [b, a] -> P@2 = 1/2, RR = 1/2
    qrels = {"q": {"a": 1, "b": 0}}
    run = trec_run({"q": ["x", "b", "y", "a"]})
    agg = rankgate.evaluate(qrels, run, ["P@2", "RR"], judged_only=True).aggregate
    assert agg == {"P@2": 0.5, "RR": 0.5}


def test_warnings_for_self_match_shallow_run_and_unjudged_top():
    qrels = {"q1": {"a": 1}}
    run = trec_run({"q1": ["q1", "x", "a"]})
    res = rankgate.evaluate(qrels, run, ["P@10"])
    text = " | ".join(res.warnings)
    assert "equals the query id" in text
    assert "at most 3 documents" in text
    assert "unjudged" in text


def test_warning_for_some_queries_shallower_than_a_cutoff():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
    # q4 is missing from the run and q5 is only in it: each has a warning of its own, not this one
    run = trec_run({"q1": ["a", "x", "y"], "q2": ["b"], "q3": ["z", "c"], "q5": ["e"]})
    res = rankgate.evaluate(qrels, run, ["P@2", "R@3", "RR"])
    assert res["P@2"] == pytest.approx((1 / 2 + 1 / 2 + 1 / 2 + 0) / 4)  # q2's empty rank 2 is not relevant
    shallow = [w for w in res.warnings if "fewer than" in w]
    assert shallow == [
        "1 query returns fewer than 2 documents (the cutoff of P@2); the ranks they lack count as not relevant",
        "2 queries return fewer than 3 documents (the cutoff of R@3); the ranks they lack count as not relevant",
    ]
