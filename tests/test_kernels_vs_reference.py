"""Vectorized kernels against the one-query-at-a-time reference implementations."""

from __future__ import annotations

import pytest

import rankgate
from rankgate.measures.registry import all_specs
from tests.randomized import random_collection

MEASURES = [
    "P@1", "P@7", "P(rel=2)@5", "R@3", "R", "R(rel=3)@10", "nDCG", "nDCG@5", "nDCG(gain=exp)@10",
    "RR", "RR@3", "RR(rel=2)", "AP", "AP@4", "AP(rel=2)@10", "Rprec", "Rprec(rel=2)", "Success@2",
    "Judged@5", "Judged@30", "Bpref", "Bpref(rel=2)", "NumRel", "NumRet", "NumRet@5", "NumRelRet",
    "NumRelRet@3", "RBP", "RBP(p=0.5)@5", "RBP(p=0.95,rel=2)", "ERR@10", "ERR", "ERR(max_grade=4)@5",
    # trec_eval's all_trec families (rankgate.measures.trec_more)
    "GMAP", "GMBpref(rel=2)", "IPrec", "IPrec(recall=0.5)", "IPrec(recall=1.0,rel=2)", "IPrecAvg", "InfAP",
    "InfAP(rel=2)", "RprecMult(mult=0.2)", "RprecMult(mult=2.0)", "Utility", "Utility(a=3.0,c=-1.0,d=0.5,num_docs=60)",
    "BinG", "G", "nDCGRel", "RnDCG", "RnDCG(rel=2)", "RelP@5", "RelP(rel=2)@3", "SetP", "SetRelP", "SetR",
    "SetAP(rel=2)", "SetF", "SetF(beta=0.25)", "NumNonrelJudgedRet", "NumNonrelJudgedRet@5", "Unjudged@5",
    "Unjudged@20", "RBPResid", "NumQ",
    "RBPResid(p=0.8)", "GradedRBP", "GradedRBP(p=0.5)", "GainNDCG", "GainNDCG(g1=3.0,g2=9.0)",
    "GainNDCG(g0=2.0,g1=-1.0,g3=7.5)", "G(g1=3.0,g2=9.0)", "G(g0=1.0,g2=-2.0)", "nDCGRel(g1=3.0,g2=9.0)",
    "nDCGRel(g0=2.0,g1=-1.0)", "RnDCG(g1=3.0,g2=9.0)", "RnDCG(g1=5.0,g3=0.5)", "GradedRBP(g1=3.0,p=0.5)",
    "GradedRBP(g0=-1.0,g2=0.5)", "GradedRBP(g5=0.5)", "GradedRBP(g1=0.25,g2=0.5)", "GainDCG", "GainDCG(g1=3.0,g2=-1.0)",
    "IdealDCG", "IdealDCG(g0=2.0,g3=7.5)",
    # other evaluators' conventions (rankgate.measures.peer_conventions)
    "DCG@5", "DCG(gain=exp,min_grade=2)", "nDCG(min_grade=2)@5", "Hits@3", "Hits(rel=2)", "F@5", "F(beta=0.5)",
    "AP(denominator=min_k_R)@4", "AP(denominator=retrieved_relevant)@4", "AP(denominator=min_k_R)",
    "WeightedRBP", "WeightedRBP(p=0.95,rel=2)", "WeightedRBP(p=0.5)@4",
]  # fmt: skip


def trec_order(scores: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, then doc id descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def test_every_family_is_covered():
    covered = {rankgate.parse_measure(m).name for m in MEASURES}
    assert covered == {s.name for s in all_specs()} == {s.name for s in all_specs() if callable(s.reference)}


@pytest.mark.parametrize("seed", range(30))
def test_kernels_equal_reference(seed):
    qrels, run = random_collection(seed, n_queries=15)
    res = rankgate.evaluate(qrels, run, MEASURES)
    max_grade = max((g for d in qrels.values() for g in d.values()), default=0)
    for qid, values in res.per_query.items():
        ranking = trec_order(run.get(qid, {}))
        for m in res.measures:
            expected = m.spec.reference(ranking, qrels[qid], m, max_grade)
            assert values[str(m)] == pytest.approx(expected, abs=1e-12), (seed, qid, str(m))


@pytest.mark.parametrize("seed", range(10))
def test_block_size_never_changes_results(seed):
    qrels, run = random_collection(seed, n_queries=20)
    whole = rankgate.evaluate(qrels, run, MEASURES)
    for chunk_rows in (1, 7, 50):
        part = rankgate.evaluate(qrels, run, MEASURES, chunk_rows=chunk_rows)
        assert part.query_ids == whole.query_ids
        assert (part.values == whole.values).all()


@pytest.mark.parametrize("seed", range(10))
def test_query_partitions_merge_exactly(seed):
    qrels, run = random_collection(seed, n_queries=20)
    whole = rankgate.evaluate(qrels, run, MEASURES)
    ids = sorted(set(qrels) | set(run))
    parts = []
    for k in range(3):
        chosen = set(ids[k::3])
        part_qrels = {q: d for q, d in qrels.items() if q in chosen}
        part_run = {q: d for q, d in run.items() if q in chosen}
        if not part_qrels:
            continue
        top = max(g for judged in qrels.values() for g in judged.values())  # ERR's ceiling: the whole qrels'
        parts.append(rankgate.evaluate(part_qrels, part_run, MEASURES, max_grade=top))
    merged = rankgate.Results.merge(parts)
    assert merged.query_ids == whole.query_ids
    assert merged.queries == whole.queries
    for name in merged.names:
        assert merged.aggregate[name] == pytest.approx(whole.aggregate[name], abs=1e-12)
    # the warnings come from merged counts, so they read as one evaluation's (examples aside)
    strip = lambda w: w.split(" (e.g.")[0]  # noqa: E731
    assert [strip(w) for w in merged.warnings] == [strip(w) for w in whole.warnings]
