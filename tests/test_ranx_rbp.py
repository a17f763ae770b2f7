"""ranx's rbp.NN is graded (`WeightedRBP`), checked against ranx itself on graded qrels.

ranx (0.3.15 and later, so every version the test pin ``ranx>=0.3.20`` allows) weighs each
relevant document of ``rbp.NN`` by its grade (``_rank_biased_precision``: ``weighted_hit_list[i] =
qrels[j, 1]``), and drops the judgments below its ``-lN`` level first. rankgate used to read
``rbp.80`` as binary RBP: 0.36 where ranx says 0.76 on the first example below.
"""

from __future__ import annotations

import json
import random

import pytest

import rankgate
from rankgate.measures.parse import parse_measure, read_name
from tests.cli_support import invoke

RANX_RBP = ["rbp.80", "rbp.95", "rbp.5", "rbp.99", "rbp.80-l2", "rbp.90-l3"]


def _graded(seed: int, n_queries: int = 16):
    """Graded qrels (-1 to 4) and a run with distinct scores (no tie rule in play), unjudged docs included."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(rng.randint(2, 18))]
        qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3, 4]) for d in docs}
        if not any(g > 0 for g in qrels[f"q{q}"].values()):
            qrels[f"q{q}"][docs[0]] = rng.choice([1, 3])  # ranx needs a relevant doc per query
        retrieved = rng.sample([*docs, *(f"x{i}" for i in range(6))], rng.randint(1, len(docs) + 6))
        run[f"q{q}"] = {d: rng.random() for d in retrieved}
    return qrels, run


@pytest.mark.slow  # ranx compiles its numba kernels on first use (about a minute without a warm cache)
@pytest.mark.parametrize("seed", range(6))
def test_ranx_rbp_equals_ranx_per_query(seed):
    ranx = pytest.importorskip("ranx")
    qrels, run = _graded(seed)
    ranx_run = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, RANX_RBP)
    got = rankgate.evaluate(qrels, run, RANX_RBP)
    for name in RANX_RBP:
        canonical = str(parse_measure(name))
        assert canonical.startswith("WeightedRBP"), name
        for qid, theirs in ranx_run.scores[name].items():
            assert got.per_query[qid][canonical] == pytest.approx(theirs, abs=1e-12), (seed, name, qid)


def test_hand_worked_graded_and_binary():
    qrels = {"q1": {"d1": 3, "d2": 1}}
    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    got = rankgate.evaluate(qrels, run, ["rbp.80", "RBP", "rbp.80-l2", "WeightedRBP(p=0.5)@1"]).aggregate
    assert got["WeightedRBP"] == pytest.approx(0.2 * (3 + 1 * 0.8))  # ranx: 0.76
    assert got["RBP"] == pytest.approx(0.2 * (1 + 0.8))  # binary: 0.36
    assert got["WeightedRBP(rel=2)"] == pytest.approx(0.2 * 3)  # below the level: weighs 0
    assert got["WeightedRBP(p=0.5)@1"] == pytest.approx(0.5 * 3)


def test_binary_grades_make_weighted_rbp_equal_rbp():
    qrels, run = _graded(3)
    binary = {q: {d: min(g, 1) for d, g in docs.items()} for q, docs in qrels.items()}
    got = rankgate.evaluate(binary, run, ["rbp.95", "RBP(p=0.95)"])
    for values in got.per_query.values():
        assert values["WeightedRBP(p=0.95)"] == pytest.approx(values["RBP(p=0.95)"], abs=1e-15)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("rbp.80", "WeightedRBP"), ("rbp.95", "WeightedRBP(p=0.95)"), ("rbp.05", "WeightedRBP(p=0.05)"),
        ("rbp.80-l2", "WeightedRBP(rel=2)"), ("RBP", "RBP"), ("RBP@80", "RBP@80"), ("RBP(p=0.95)", "RBP(p=0.95)"),
        ("Rbp", "RBP"), ("WeightedRBP(p=0.9,rel=2)@5", "WeightedRBP(p=0.9,rel=2)@5"),
    ],
)  # fmt: skip
def test_names(name, canonical):
    assert [str(m) for m in read_name(name)] == [canonical]


@pytest.mark.parametrize(
    ("name", "readings"),
    [
        ("rbp", ["'GradedRBP'", "'RBP'", "'WeightedRBP'"]),  # trec_eval's rbp, or binary RBP
        ("rbp@80", ["'rbp.80'", "'RBP@80'", "persistence 0.8"]),  # ranx: p = 0.80; elsewhere a cutoff
        ("rbp@95-l2", ["'rbp.95'", "'RBP@95'"]),
        ("rbp.p=0.5", ["GradedRBP(p=0.5)", "RBP(p=0.5)"]),
    ],
)
def test_ambiguous_rbp_words_are_refused_with_each_reading(name, readings):
    with pytest.raises(rankgate.MeasureError) as info:
        read_name(name)
    assert all(r in str(info.value) for r in readings), str(info.value)


def test_the_cli_refuses_rbp_in_one_line(capsys, tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 d1 3\nq1 0 d2 1\n")
    r.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    code, out, err = invoke(capsys, "eval", str(q), str(r), "-m", "rbp")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "GradedRBP" in err
    code, out, err = invoke(capsys, "eval", str(q), str(r), "-m", "rbp.80", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["aggregate"] == {"WeightedRBP": pytest.approx(0.76)}
