"""Diversity measures: hand-worked values, ndeval's definitions re-implemented per subtopic (an
independent code path) on randomized subtopic qrels, and the subtopic qrels reader's refusals."""

from __future__ import annotations

import math
import random

import pytest

from rankgate.errors import InputError, MeasureError
from rankgate.evaluation.diversity import evaluate_diversity
from rankgate.io.subtopics import read_subtopic_qrels

# a is relevant to subtopic 1, b to 1, c to 2; ranked a, b, c
QRELS_TEXT = "q 1 a 1\nq 1 b 1\nq 2 c 1\nq 2 a 0\n"
RUN = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}


def test_hand_worked(tmp_path):
    path = tmp_path / "subtopics.txt"
    path.write_text(QRELS_TEXT)
    names = ["alpha-nDCG@3", "ERR-IA@3", "NRBP", "P-IA@2", "S-recall@1", "S-recall@3"]
    got = evaluate_diversity(path, RUN, names).aggregate
    # novelty gains (alpha = 0.5): a 1, b 0.5 (subtopic 1 seen once), c 1
    dcg = 1 + 0.5 / math.log2(3) + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3) + 0.5 / math.log2(4)  # greedy ideal: a, c, b
    assert got["alpha-nDCG@3"] == pytest.approx(dcg / idcg, abs=1e-15)
    # ERR per subtopic, stop probability 0.5: s1 = 0.5 + 0.5 * 0.5 / 2; s2 = 0.5 / 3; mean of the two
    assert got["ERR-IA@3"] == pytest.approx((0.625 + 0.5 / 3) / 2, abs=1e-15)
    assert got["NRBP"] == pytest.approx((1 - 0.5 * 0.5) / 2 * (1 + 0.5 * 0.5 + 0.25 * 1), abs=1e-15)
    assert got["P-IA@2"] == 0.5 and got["S-recall@1"] == 0.5 and got["S-recall@3"] == 1.0


def test_clarke_2008_redundancy_is_penalised():
    # Clarke et al. 2008's point: a second doc on the same subtopic gains (1 - alpha) of the first
    qrels = {"q": {"a": {"1": 1}, "b": {"1": 1}, "c": {"2": 1}}}
    redundant = evaluate_diversity(qrels, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, "alpha-nDCG@2").aggregate
    diverse = evaluate_diversity(qrels, {"q": {"a": 3.0, "c": 2.0, "b": 1.0}}, "alpha-nDCG@2").aggregate
    assert diverse["alpha-nDCG@2"] == 1.0
    assert redundant["alpha-nDCG@2"] == pytest.approx((1 + 0.5 / math.log2(3)) / (1 + 1 / math.log2(3)))


def _oracle(name, ranking, qrels_q, alpha=0.5, beta=0.5):
    """ndeval's definitions, written per subtopic (not per rank) with explicit loops."""
    subtopics = sorted({s for subs in qrels_q.values() for s, g in subs.items() if g > 0})
    if not subtopics:
        return 0.0
    family, _, k = name.partition("@")
    k = int(k) if k else len(ranking)

    def rel(d, s):
        return 1 if qrels_q.get(d, {}).get(s, 0) > 0 else 0

    def novelty_sum(order, discount):
        total = 0.0
        for s in subtopics:
            count = 0
            for i, d in enumerate(order[:k]):
                if rel(d, s):
                    total += discount(i) * (1 - alpha) ** count
                    count += 1
        return total

    if family == "S-recall":
        return sum(any(rel(d, s) for d in ranking[:k]) for s in subtopics) / len(subtopics)
    if family == "P-IA":
        return sum(sum(rel(d, s) for d in ranking[:k]) / k for s in subtopics) / len(subtopics)
    if family == "ERR-IA":
        per = []
        for s in subtopics:
            err, reach = 0.0, 1.0
            for i, d in enumerate(ranking[:k], start=1):
                stop = 0.5 * rel(d, s)
                err += reach * stop / i
                reach *= 1 - stop
            per.append(err)
        return sum(per) / len(per)
    if family == "NRBP":
        return (1 - (1 - alpha) * beta) / len(subtopics) * novelty_sum(ranking, lambda i: beta**i)
    ideal, pool = [], sorted(qrels_q)
    while pool and len(ideal) < k:

        def gain(d):
            return sum(rel(d, s) * (1 - alpha) ** sum(rel(e, s) for e in ideal) for s in subtopics)

        best = max(pool, key=lambda d: (gain(d), [-ord(c) for c in d] + [1]))  # the smaller id on ties
        ideal.append(best)
        pool.remove(best)
    idcg = novelty_sum(ideal, lambda i: 1 / math.log2(i + 2))
    return novelty_sum(ranking, lambda i: 1 / math.log2(i + 2)) / idcg if idcg else 0.0


@pytest.mark.parametrize("seed", range(20))
def test_randomized_against_ndeval_definitions(seed):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(6):
        docs = [f"d{i}" for i in range(rng.randint(1, 12))]
        qrels[f"q{q}"] = {
            d: {str(s): rng.choice([0, 0, 1, 2]) for s in range(1, 5) if rng.random() < 0.4} for d in docs
        }
        qrels[f"q{q}"] = {d: subs for d, subs in qrels[f"q{q}"].items() if subs} or {"d0": {"1": 0}}
        pool = docs + [f"x{i}" for i in range(3)]
        if rng.random() < 0.9:
            run[f"q{q}"] = {d: rng.random() for d in rng.sample(pool, rng.randint(1, len(pool)))}
    names = ["alpha-nDCG@5", "alpha-nDCG@20", "ERR-IA@10", "NRBP", "P-IA@5", "S-recall@3", "S-recall@20"]
    got = evaluate_diversity(qrels, run, names).per_query
    for qid in qrels:
        ranking = sorted(run.get(qid, {}), key=lambda d: -run[qid][d])
        for name in names:
            assert got[qid][name] == pytest.approx(_oracle(name, ranking, qrels[qid]), abs=1e-12), (seed, qid, name)


def test_alpha_parameter():
    qrels = {"q": {"a": {"1": 1}, "b": {"1": 1}}}
    got = evaluate_diversity(qrels, {"q": {"a": 2.0, "b": 1.0}}, ["alpha-nDCG(alpha=0.0)@2", "alpha-nDCG(alpha=0.9)@2"])
    assert got.aggregate["alpha-nDCG(alpha=0.0)@2"] == 1.0  # no redundancy penalty: an ideal ranking
    assert got.aggregate["alpha-nDCG(alpha=0.9)@2"] == 1.0  # both docs are needed in any order


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q 0 a 1\nq 0 b 0\n", "plain qrels file"),
        ("q 1 a\n", r":1: expected 'qid subtopic docid grade', got 3 fields"),
        ("q 1 a 1\nq 1 a x\n", r":2: the grade 'x' is not an integer"),
        ("q 1 a 1\nq 1 a 2\n", r":2: .*judged twice"),
    ],
)
def test_reader_refusals(tmp_path, text, message):
    path = tmp_path / "sub.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_subtopic_qrels(path)


@pytest.mark.parametrize(
    "name", ["beta-nDCG@5", "P-IA", "ERR-IA(alpha=0.3)@5", "alpha-nDCG(alpha=1.5)@5", "S-recall@0"]
)
def test_bad_names(name):
    with pytest.raises(MeasureError):
        evaluate_diversity({"q": {"a": {"1": 1}}}, {"q": {"a": 1.0}}, name)


def test_the_diversity_verb_prints_hand_worked_values(tmp_path, capsys):
    # q1: subtopics {1, 2}; a covers 1, b covers 1 and 2; q2 is not in the run (scores 0).
    # alpha-nDCG@2 of q1 (alpha 0.5): DCG 1 + 1.5/log2(3); ideal (b first) 2 + 0.5/log2(3).
    import json
    import math

    from tests.cli_support import invoke

    qrels, run = tmp_path / "sub.txt", tmp_path / "run.txt"
    qrels.write_text("q1 1 a 1\nq1 2 b 1\nq1 1 b 1\nq2 1 c 1\n")
    run.write_text("q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\n")
    args = ["diversity", str(qrels), str(run), "-m", "S-recall@1", "-m", "alpha-nDCG@2"]
    code, out, err = invoke(capsys, *args, "--format", "json", "--per-query")
    assert code == 0, err
    data = json.loads(out)
    q1 = (1 + 1.5 / math.log2(3)) / (2 + 0.5 / math.log2(3))
    assert data["per_query"]["q1"] == {"S-recall@1": 0.5, "alpha-nDCG@2": pytest.approx(q1)}
    assert data["aggregate"] == {"S-recall@1": 0.25, "alpha-nDCG@2": pytest.approx(q1 / 2)}
    code, out, err = invoke(capsys, *args)
    assert code == 0 and "S-recall@1" in out and "0.2500" in out and "2 queries" in out
    code, out, err = invoke(capsys, "diversity", str(qrels), str(run), "-m", "nDCG@5")
    assert code == 2 and "Unknown diversity measure 'nDCG@5'" in err
