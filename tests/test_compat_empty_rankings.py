"""The pytrec_eval drop-in on empty rankings, trec_eval 10's rbp and parameter keys, against pytrec_eval.

Under ``judged_docs_only_flag=True`` a query whose retrieved docs are all unjudged is left with an
empty ranking. trec_eval's interpolated precision divides by the docs retrieved before it looks
at them, so pytrec_eval (and trec_eval 10, and ``rankgate trec_eval -J``) give NaN for
``iprec_at_recall`` at the levels that need no relevant doc and for ``11pt_avg``; the drop-in
gave 0.0 there. Every measure both compute is compared, NaN for NaN. The scores are multiples of
1/4 (exact in float32), so pytrec_eval's float32 scores rank as rankgate's float64.
"""

from __future__ import annotations

import math
import random

import pytest

from rankgate.compat import pytrec_eval as compat
from rankgate.compat.trec_eval import trec_eval
from tests.cli_support import invoke

real = pytest.importorskip("pytrec_eval")

# parameter forms whose NaN depends on the level: the lowest level decides 11pt_avg
LEVELS = ["iprec_at_recall.0.05,0.3,0.55", "11pt_avg.0.2,0.6"]


def _emptied(seed: int):
    """Qrels (grades -1..3; some queries without a relevant doc) and a run in which a third of the
    queries retrieve only unjudged docs, so that -J leaves them an empty ranking."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(14):
        docs = [f"d{i}" for i in range(rng.randint(1, 9))]
        grades = [rng.choice([-1, 0, 0, 1, 2, 3]) for _ in docs]
        if q % 4 == 1:  # no relevant doc: R = 0 puts every level at zero documents
            grades = [min(g, 0) for g in grades]
        qrels[f"q{q}"] = dict(zip(docs, grades, strict=True))
        unjudged = [f"u{q}_{i}" for i in range(rng.randint(1, 5))]
        pool = unjudged if q % 3 == 0 else [*unjudged, *rng.sample(docs, rng.randint(1, len(docs)))]
        run[f"q{q}"] = {d: rng.randint(0, 40) / 4.0 for d in pool}
    return qrels, run


def _same(got: dict, expected: dict, context: object) -> None:
    assert set(got) == set(expected), context
    for qid, values in expected.items():
        assert set(got[qid]) == set(values), (context, qid, set(got[qid]) ^ set(values))
        for key, value in values.items():
            ours = got[qid][key]
            assert isinstance(ours, float), (context, qid, key)
            assert math.isnan(ours) == math.isnan(value), (context, qid, key, ours, value)
            if not math.isnan(value):
                assert ours == pytest.approx(value, abs=1e-9), (context, qid, key)


def _common() -> set[str]:
    both = compat.supported_measures & real.supported_measures
    assert {"iprec_at_recall", "11pt_avg", "map", "P", "ndcg_cut"} <= both  # the test cannot pass empty
    return set(both)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("rel", [1, 2])
def test_every_common_measure_on_emptied_rankings_equals_pytrec_eval(seed, rel):
    qrels, run = _emptied(seed)
    for measures in (_common(), set(LEVELS)):
        expected = real.RelevanceEvaluator(qrels, measures, relevance_level=rel, judged_docs_only_flag=True)
        got = compat.RelevanceEvaluator(qrels, measures, relevance_level=rel, judged_docs_only_flag=True)
        theirs = expected.evaluate(run)
        _same(got.evaluate(run), theirs, (seed, rel, len(measures)))
        assert any(math.isnan(v) for values in theirs.values() for v in values.values())  # the case is there


def test_trial_example_is_nan_in_all_three(capsys, tmp_path):
    qrels, run = {"q1": {"d1": 1, "d2": 0}}, {"q1": {"dX": 1.0}}
    measures = {"iprec_at_recall", "11pt_avg"}
    ours = compat.RelevanceEvaluator(qrels, measures, judged_docs_only_flag=True).evaluate(run)["q1"]
    theirs = real.RelevanceEvaluator(qrels, measures, judged_docs_only_flag=True).evaluate(run)["q1"]
    assert math.isnan(ours["iprec_at_recall_0.00"]) and math.isnan(ours["11pt_avg"])
    assert ours["iprec_at_recall_0.10"] == 0.0  # one relevant doc: level 0.1 needs it, and stays 0
    _same({"q1": ours}, {"q1": theirs}, "trial")
    assert math.isnan(compat.compute_aggregated_measure("11pt_avg", [ours["11pt_avg"]]))
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    r.write_text("q1 Q0 dX 1 1.0 r\n")
    code, out, _ = invoke(capsys, "trec_eval", "-q", "-J", "-m", "iprec_at_recall", "-m", "11pt_avg", str(q), str(r))
    assert code == 0
    assert {line.split("\t")[0].strip() for line in out.splitlines() if line.endswith("-nan")} == {
        "iprec_at_recall_0.00",
        "11pt_avg",
    }


def test_a_query_with_no_documents_gets_trec_evals_nan():
    """``{"q1": {}}`` is an empty ranking without -J. pytrec_eval's value there depends on what it
    computed before (0.0 asked alone, NaN beside other measures, and it can crash), so rankgate gives
    what trec_eval's arithmetic gives, as for -J."""
    got = compat.RelevanceEvaluator({"q1": {"d1": 1, "d2": 0}}, {"iprec_at_recall", "11pt_avg", "map"}).evaluate(
        {"q1": {}}
    )["q1"]
    assert math.isnan(got["iprec_at_recall_0.00"]) and math.isnan(got["11pt_avg"])
    assert got["iprec_at_recall_0.10"] == 0.0 and got["map"] == 0.0


def test_rbp_is_trec_eval_10s(tmp_path):
    """pytrec_eval lacks trec_eval 10's rbp; the drop-in reads it as `rankgate trec_eval` does
    (GradedRBP), not as binary RBP."""
    qrels = {"q1": {"d1": 3, "d2": 1, "d3": 0}, "q2": {"d4": 1, "d5": 2}}
    run = {"q1": {"d1": 1.0, "d2": 2.0, "d3": 3.0}, "q2": {"d5": 1.0, "d4": 0.5}}
    got = compat.RelevanceEvaluator(qrels, {"rbp"}).evaluate(run)
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("".join(f"{qid} 0 {d} {g}\n" for qid, docs in qrels.items() for d, g in docs.items()))
    r.write_text("".join(f"{qid} Q0 {d} 1 {s} r\n" for qid, docs in run.items() for d, s in docs.items()))
    printed = {qid: value for _, qid, value, _ in trec_eval(q, r, ["rbp"], per_query=True).per_query}
    assert got == {"q1": {"rbp": pytest.approx(printed["q1"])}, "q2": {"rbp": pytest.approx(printed["q2"])}}
    # q1: gains 3/3, 1/3 at ranks 2 and 1 (0-based), p = 0.9: 0.1 * (0.9^2 * 1 + 0.9 * 1/3)
    assert got["q1"]["rbp"] == pytest.approx(0.1 * (0.81 + 0.3))


@pytest.mark.parametrize("measures", [{"set_F.0.5"}, {"11pt_avg.0.5,1"}, {"set_F", "set_F.0.5"}, {"11pt_avg.0.2,0.6"}])
def test_parameterised_measures_keep_pytrec_evals_key(measures):
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
    run = {"q1": {"d1": 1.0, "d2": 2.0, "d3": 0.5}}
    expected = real.RelevanceEvaluator(qrels, measures).evaluate(run)
    _same(compat.RelevanceEvaluator(qrels, measures).evaluate(run), expected, measures)
