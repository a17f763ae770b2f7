"""trec_eval 10's all_trec measures in rankgate: names, hand-worked values, and three oracles.

The oracles: trec_eval's own output committed as golden files (``tests/make_trec_eval_goldens.py``
makes them; CI has no binary), a live trec_eval binary when one is at hand (RANKGATE_TREC_EVAL or
/work/oracle/READY), and pytrec_eval (trec_eval 9 inside) for the measures it has.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest

import rankgate
from rankgate.errors import MeasureError
from rankgate.measures.parse import read_name
from tests import make_trec_eval_goldens as te
from tests.randomized import random_collection

# trec_eval's names and what they read as (the list `rankgate trec_eval` relies on).
NAMES = {
    "gm_map": ["GMAP"], "gm_bpref": ["GMBpref"], "infAP": ["InfAP"], "11pt_avg": ["IPrecAvg"],
    "iprec_at_recall_0.10": ["IPrec(recall=0.1)"], "iprec_at_recall.0,0.5": ["IPrec", "IPrec(recall=0.5)"],
    "Rprec_mult_0.20": ["RprecMult(mult=0.2)"], "Rprec_mult_1.00": ["RprecMult"], "utility": ["Utility"],
    "utility.2,-1,0,0.5": ["Utility(a=2.0,d=0.5)"], "G": ["G"], "binG": ["BinG"], "ndcg_rel": ["nDCGRel"],
    "Rndcg": ["RnDCG"], "relative_P_5": ["RelP@5"], "relative_P.5,10": ["RelP@5", "RelP@10"], "set_P": ["SetP"],
    "set_relative_P": ["SetRelP"], "set_recall": ["SetR"], "set_map": ["SetAP"], "set_F": ["SetF"],
    "set_F.0.5": ["SetF(beta=0.5)"], "num_nonrel_judged_ret": ["NumNonrelJudgedRet"], "rbp_resid": ["RBPResid"],
    "unj": ["Unjudged@5", "Unjudged@10", "Unjudged@20"], "unj_10": ["Unjudged@10"], "num_q": ["NumQ"],
}  # fmt: skip


@pytest.mark.parametrize(("name", "canonical"), NAMES.items())
def test_trec_eval_names_read_as_trec_eval_measures(name, canonical):
    assert [str(m) for m in read_name(name)] == canonical
    for m in read_name(name):
        assert [str(x) for x in read_name(str(m))] == [str(m)]  # canonical names round-trip


def test_bare_parameter_families_stand_for_trec_eval_defaults():
    assert [m.get("recall") for m in read_name("iprec_at_recall")] == [i / 10 for i in range(11)]
    assert [m.get("mult") for m in read_name("Rprec_mult")] == [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("runid", "not a measure"), ("relstring", "not a measure"), ("P_5, 10", "without spaces"),
        ("utility.1,2", "needs 4 numbers"), ("iprec_at_recall_5", "<= 1"), ("set_F.-1", ">= 0"),
    ],
)  # fmt: skip
def test_names_that_are_not_measures_are_refused(name, message):
    with pytest.raises(MeasureError, match=message):
        read_name(name)


# -- hand-worked -----------------------------------------------------------------------------
# One query: ranking a b c d e; qrels a=1, c=2, d=-1 (pooled, unjudged), f=1 (not retrieved), g=0.
QRELS = {"q": {"a": 1, "c": 2, "d": -1, "f": 1, "g": 0}}
RUN = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
HAND = {
    "SetP": 2 / 5, "SetR": 2 / 3, "SetRelP": 2 / 3, "SetAP": (2 / 5) * (2 / 3),
    "SetF": 2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3), "SetF(beta=0.5)": 1.5 * (2 / 5) * (2 / 3) / (0.5 * 2 / 5 + 2 / 3),
    "Utility": 2 - 3, "Utility(a=2.0,c=-1.0)": 4 - 3 - 1, "NumNonrelJudgedRet": 0.0, "NumQ": 1.0,
    "RelP@2": 1 / 2, "RelP@5": 2 / 3, "Unjudged@5": 3 / 5, "Unjudged@10": 3 / 10,
    # R = 3: floor(0.2 * 3 + 0.9) = 1 doc, floor(3 + 0.9) = 3 docs
    "RprecMult(mult=0.2)": 1.0, "RprecMult": 2 / 3,
    # relevant at ranks 1 and 3: precisions 1 and 2/3; recall 0.5 needs floor(1.5 + 0.9) = 2 docs
    # levels 0, 0.1, ..., 1 need 0,1,1,1,2,2,2,2,3,3,3 docs (0.7 * 3 + 0.9 is just below 3 in floating point)
    "IPrec": 1.0, "IPrec(recall=0.5)": 2 / 3, "IPrec(recall=0.7)": 2 / 3, "IPrec(recall=0.8)": 0.0,
    "IPrecAvg": (4 * 1.0 + 4 * (2 / 3)) / 11,
    # a at j=0: 1; c at j=2: 1/3 + (2/3) * ((1 + 0 + 0)/2) * ((1 + e)/(1 + 2e)); / R
    "InfAP": (1 + 1 / 3 + (2 / 3) * (1 / 2) * ((1 + 1e-5) / (1 + 2e-5))) / 3,
    "BinG": (1 / math.log2(2) + 1 / math.log2(3)) / 3,  # c has one non-relevant doc (b) above it
    # unjudged: b (non-pool, rank 1), d (rank 3), e (rank 4): 0.9^5 + 0.1 * (0.9 + 0.9^3 + 0.9^4)
    "RBPResid": 0.9**5 + 0.1 * (0.9 + 0.9**3 + 0.9**4),
    "RBPResid(p=0.8)": 0.8**5 + 0.2 * (0.8 + 0.8**3 + 0.8**4),
    # trec_eval rbp: the highest grade is 2, so gains are a = 1/2 (rank 0) and c = 2/2 (rank 2)
    "GradedRBP": 0.1 * (0.5 + 1.0 * 0.9**2), "GradedRBP(p=0.5)": 0.5 * (0.5 + 1.0 * 0.5**2),
    # gains a=3 (rank 0), c=9 (rank 2); ideal 9 (c), 3 (a), 3 (f)
    "GainNDCG(g1=3.0,g2=9.0)": (3 + 9 / 2) / (9 + 3 / math.log2(3) + 3 / 2),
}  # fmt: skip


@pytest.mark.parametrize("name", list(HAND))
def test_hand_worked_values(name):
    assert rankgate.evaluate(QRELS, RUN, [name])[name] == pytest.approx(HAND[name], abs=1e-12)


def test_hand_worked_gain_measures():
    # gains: a=1 at rank 1, c=2 at rank 3; ideal gains 2, 1, 1 (c, a, f), summing to 4
    idcg3 = 2.0 + 1 / math.log2(3) + 1 / math.log2(4)
    whole = (1.0 + 2 / math.log2(4)) / idcg3  # nDCG of the whole ranking
    res = rankgate.evaluate(QRELS, RUN, ["G", "nDCGRel", "RnDCG"])
    # G: rank 1 costs 2 (ideal gain), gain so far 1 -> 1/log2(3); rank 3: cost 2+1+1, gain so far 3 -> 2/log2(3)
    assert res["G"] == pytest.approx((1 / math.log2(3) + 2 / math.log2(3)) / 4, abs=1e-12)
    # ndcg_rel: at a, 1 / 2; at c, the whole nDCG; f was not retrieved: the whole nDCG again
    assert res["nDCGRel"] == pytest.approx((0.5 + whole + whole) / 3, abs=1e-12)
    # Rndcg: the ideal gain changes at t=1 (2 -> 1) and drops to 0 at t=3; 5 >= 3 + 2 retrieved adds the whole
    assert res["RnDCG"] == pytest.approx((0.5 + whole + whole) / 3, abs=1e-12)


def test_geometric_mean_floors_each_query_like_trec_eval():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 1.0}}
    res = rankgate.evaluate(qrels, run, ["GMAP", "AP", "NumQ"])
    assert res["GMAP"] == pytest.approx(math.sqrt(1.0 * 0.00001), rel=1e-12)
    assert res["AP"] == 0.5 and res["NumQ"] == 2.0
    assert res.column("GMAP").tolist() == [1.0, 0.0]  # per query: plain AP


# -- oracles ---------------------------------------------------------------------------------
def _golden_files() -> list[Path]:
    return sorted(p for p in te.GOLDEN.glob("*/*.txt") if p.name not in {"qrels.txt", "run.txt"})


def test_golden_files_cover_every_case_and_variant():
    if not _golden_files():
        pytest.skip("no golden files yet: run 'python tests/make_trec_eval_goldens.py /path/to/trec_eval'")
    expected = {f"{case}/{variant}.txt" for case in te.CASES for variant in te.variants()}
    assert {f"{p.parent.name}/{p.name}" for p in _golden_files()} == expected


@pytest.mark.parametrize("path", _golden_files(), ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_equal_to_trec_eval_golden_output(path):
    options, _ = te.variants()[path.stem]
    expected = te.read_output(path.read_text())
    qrels, run = te.read_inputs(path.parent)
    got = te.rankgate_output(qrels, run, options, [name for name, _ in expected])
    assert te.mismatches(expected, got) == []


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_equal_to_a_live_trec_eval_binary(seed):
    binary = te.trec_eval_binary()
    if binary is None:
        pytest.skip("no trec_eval binary: set RANKGATE_TREC_EVAL to one (the golden files still check)")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        te.write_inputs(directory, 1000 + seed, 25)
        qrels, run = te.read_inputs(directory)
        for options, measures in te.variants().values():
            expected = te.read_output(te.run_trec_eval(binary, directory, options, measures))
            got = te.rankgate_output(qrels, run, options, [name for name, _ in expected])
            assert te.mismatches(expected, got) == [], options


PYTREC = ("11pt_avg", "G", "Rndcg", "Rprec_mult", "binG", "gm_bpref", "gm_map", "infAP", "iprec_at_recall",
          "ndcg_rel", "num_nonrel_judged_ret", "num_q", "relative_P", "set_F", "set_P", "set_map", "set_recall",
          "set_relative_P", "utility")  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("rel", [1, 2])
def test_per_query_values_equal_pytrec_eval(seed, rel):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = random_collection(seed)
    evaluator = pytrec_eval.RelevanceEvaluator({q: d for q, d in qrels.items() if d}, set(PYTREC), relevance_level=rel)
    expected = evaluator.evaluate(run)
    names = sorted({k for values in expected.values() for k in values})
    got = te.rankgate_output(qrels, run, ("-l", str(rel)), names)
    for qid, values in expected.items():
        for key, value in values.items():
            ours = got[(key, qid)]
            if key.startswith("gm_"):  # pytrec_eval keeps trec_eval's per-query ln(max(value, 0.00001))
                value, ours = math.exp(value), max(ours, 0.00001)
            assert ours == pytest.approx(value, abs=1e-12), (seed, qid, key)
