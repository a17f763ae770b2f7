"""Agreement statistics against hand-worked values, with scikit-learn's ``cohen_kappa_score``
as a test-only oracle: Cohen's kappa (unweighted, linear, quadratic), the confusion matrix,
binary agreement, and Kendall's tau-b of system rankings under two sets of judgments."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import ConfigError, InputError
from rankgate.label.agreement import cohen_kappa, confusion_matrix, label_agreement, ranking_correlation
from tests.cli_support import invoke

# Ten pairs, grades 0-2. Rows of the confusion matrix: reference; columns: candidate.
#   ref 0: cand 0 x3, cand 1 x1
#   ref 1: cand 1 x2, cand 2 x1
#   ref 2: cand 1 x1, cand 2 x2
REF = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
CAND = [0, 0, 0, 1, 1, 1, 2, 2, 2, 1]
# Observed agreement 7/10; marginals ref (4, 3, 3), cand (3, 4, 3); chance agreement
# (4*3 + 3*4 + 3*3) / 100 = 0.33, so kappa = (0.70 - 0.33) / (1 - 0.33) = 37/67.
KAPPA = 37 / 67
# Weighted: the three disagreements are all one grade apart. Expected counts E = outer(ref, cand) / 10:
# one apart 1.6 + 0.9 + 0.9 + 1.2 = 4.6, two apart 1.2 + 0.9 = 2.1.
# linear:    1 - 3 / (4.6 + 2 * 2.1) = 1 - 3 / 8.8 = 29/44
# quadratic: 1 - 3 / (4.6 + 4 * 2.1) = 1 - 3 / 13  = 10/13
KAPPA_LINEAR = 29 / 44
KAPPA_QUADRATIC = 10 / 13
# Binary at rel=1: ref (4 zeros, 6 ones), cand (3, 7), agreement 9/10,
# chance (4*3 + 6*7) / 100 = 0.54: kappa = 0.36 / 0.46 = 18/23.
KAPPA_BINARY = 18 / 23


def as_qrels(labels: list[int], query: str = "q1") -> Qrels:
    return Qrels.from_dict({query: {f"d{i}": g for i, g in enumerate(labels)}})


def test_confusion_matrix_by_hand():
    assert confusion_matrix(REF, CAND, [0, 1, 2]).tolist() == [[3, 1, 0], [0, 2, 1], [0, 1, 2]]
    # Labels order the rows and columns; an absent label is a row and column of zeros.
    assert confusion_matrix(REF, CAND, [2, 1, 0, 3]).tolist() == [[2, 1, 0, 0], [1, 2, 0, 0], [0, 1, 3, 0], [0] * 4]
    with pytest.raises(ValueError, match="label 2 is not among"):
        confusion_matrix(REF, CAND, [0, 1])
    with pytest.raises(ValueError, match="differ in length"):
        confusion_matrix([0], [0, 1], [0, 1])


def test_cohen_kappa_by_hand():
    assert cohen_kappa(REF, CAND) == pytest.approx(KAPPA, abs=1e-12)
    assert cohen_kappa(REF, CAND, weights="linear") == pytest.approx(KAPPA_LINEAR, abs=1e-12)
    assert cohen_kappa(REF, CAND, weights="quadratic") == pytest.approx(KAPPA_QUADRATIC, abs=1e-12)
    # Kappa is symmetric in the two raters, 1 for identical labels, and < 0 below chance.
    assert cohen_kappa(CAND, REF, weights="quadratic") == pytest.approx(KAPPA_QUADRATIC, abs=1e-12)
    assert cohen_kappa(REF, REF, weights="linear") == 1.0
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)
    # One label only: no expected disagreement, kappa undefined (not 0, not 1).
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    with pytest.raises(ConfigError, match="weights must be None, 'linear' or 'quadratic'"):
        cohen_kappa(REF, CAND, weights="cubic")


def test_weights_use_grade_values_when_a_grade_is_missing():
    # Grades 0 and 3 only: a 0-vs-3 disagreement weighs 3 (linear), not 1 as a plain index would.
    ref, cand = [0, 0, 3, 3], [0, 3, 3, 3]
    # observed weighted disagreement 3/4; marginals ref (2, 2) cand (1, 3); expected
    # E(0,3) = 2*3/4 = 1.5, E(3,0) = 2*1/4 = 0.5 -> weighted 3 * 2.0 = 6 over 4 pairs.
    assert cohen_kappa(ref, cand, weights="linear", labels=[0, 1, 2, 3]) == pytest.approx(1 - 3 / 6)
    # With every grade given as labels, scikit-learn (index spacing) agrees.
    oracle = cohen_kappa_score(ref, cand, labels=[0, 1, 2, 3], weights="linear")
    assert cohen_kappa(ref, cand, weights="linear", labels=[0, 1, 2, 3]) == pytest.approx(oracle)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(8))
def test_cohen_kappa_matches_scikit_learn(weights, seed):
    rng = random.Random(seed)
    n = rng.randint(5, 200)
    ref = [rng.choice([0, 0, 1, 2, 3]) for _ in range(n)]
    # A candidate that mostly agrees, sometimes off by one or random.
    cand = [
        r
        if rng.random() < 0.6
        else min(3, max(0, r + rng.choice([-1, 1])))
        if rng.random() < 0.7
        else rng.randint(0, 3)
        for r in ref
    ]
    ours = cohen_kappa(ref, cand, weights=weights, labels=[0, 1, 2, 3])
    oracle = cohen_kappa_score(ref, cand, labels=[0, 1, 2, 3], weights=weights)
    if math.isnan(oracle):
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(oracle, abs=1e-12)


def test_label_agreement_report_by_hand():
    reference = as_qrels(REF)
    candidate = Qrels.from_dict({"q1": {**{f"d{i}": g for i, g in enumerate(CAND)}, "extra": 3}})
    r = label_agreement(reference, candidate)
    assert r["pairs"] == {"shared": 10, "reference_only": 0, "candidate_only": 1}
    assert r["labels"] == [0, 1, 2]
    assert r["confusion"]["matrix"] == [[3, 1, 0], [0, 2, 1], [0, 1, 2]]
    assert r["exact_agreement"] == 0.7
    assert r["kappa"] == {
        "unweighted": round(KAPPA, 4),
        "linear": round(KAPPA_LINEAR, 4),
        "quadratic": round(KAPPA_QUADRATIC, 4),
    }
    assert r["binary"] == {"rel": 1, "agreement": 0.9, "kappa": round(KAPPA_BINARY, 4)}
    assert r["reference_distribution"] == {"0": 4, "1": 3, "2": 3}
    assert r["candidate_distribution"] == {"0": 3, "1": 4, "2": 3}
    assert r["mean_difference"] == 0.1  # (+1 +1 -1) / 10
    # The binary threshold moves: at rel=2, ref (7, 3), cand (7, 3), agreement 8/10,
    # chance (49 + 9) / 100 = 0.58, kappa = 0.22 / 0.42 = 11/21.
    assert label_agreement(reference, candidate, rel=2)["binary"] == {"rel": 2, "agreement": 0.8, "kappa": 0.5238}


def test_label_agreement_scale_negative_grades_and_no_overlap():
    # A fixed scale adds empty rows; a negative grade (trec_eval's judged non-relevant) counts as 0.
    r = label_agreement(
        Qrels.from_dict({"q1": {"a": -1, "b": 2}}), Qrels.from_dict({"q1": {"a": 0, "b": 2}}), labels=[0, 1, 2, 3]
    )
    assert r["confusion"]["matrix"] == [[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]]
    assert r["exact_agreement"] == 1.0 and r["kappa"]["unweighted"] == 1.0
    same = label_agreement(Qrels.from_dict({"q1": {"a": 1}}), Qrels.from_dict({"q1": {"a": 1}}))
    assert same["kappa"] == {"unweighted": None, "linear": None, "quadratic": None}  # undefined, not guessed
    with pytest.raises(InputError, match="share no \\(query, document\\) pair"):
        label_agreement(Qrels.from_dict({"q1": {"a": 1}}), Qrels.from_dict({"q2": {"a": 1}}))


# -- Kendall's tau of system rankings -----------------------------------------------------------
# One query, four systems; system X returns only doc X. nDCG@1 of a system is then
# grade(X) / max grade: the systems' scores are the grades scaled, so the rankings are set by hand.


def systems() -> list[Run]:
    return [
        Run.from_dict({"q1": {doc: 1.0}}, name=name) for name, doc in (("A", "a"), ("B", "b"), ("C", "c"), ("D", "d"))
    ]


def test_kendall_tau_of_rankings_by_hand():
    human = Qrels.from_dict({"q1": {"a": 3, "b": 2, "c": 1, "d": 0}})  # A > B > C > D
    llm = Qrels.from_dict({"q1": {"a": 3, "b": 1, "c": 2, "d": 0}})  # A > C > B > D: one pair of six swapped
    r = ranking_correlation(human, llm, systems(), ["nDCG@1"])
    row = r["measures"]["nDCG@1"]
    assert r["systems"] == ["A", "B", "C", "D"]
    assert row["reference"] == pytest.approx({"A": 1.0, "B": 2 / 3, "C": 1 / 3, "D": 0.0})
    assert row["candidate"] == pytest.approx({"A": 1.0, "B": 1 / 3, "C": 2 / 3, "D": 0.0})
    assert row["tau"] == round((5 - 1) / 6, 4)  # 5 concordant, 1 discordant pair
    assert row["same_best"] is True
    # A tie under the candidate: tau-b = (nc - nd) / sqrt((n0 - ties_x)(n0 - ties_y)) = 5 / sqrt(6 * 5).
    tied = Qrels.from_dict({"q1": {"a": 3, "b": 1, "c": 1, "d": 0}})
    assert ranking_correlation(human, tied, systems(), ["nDCG@1"])["measures"]["nDCG@1"]["tau"] == round(
        5 / math.sqrt(30), 4
    )
    # A reversed ranking: tau = -1, and the best system differs.
    reversed_ = Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 2, "d": 3}})
    row = ranking_correlation(human, reversed_, systems(), ["nDCG@1"])["measures"]["nDCG@1"]
    assert row["tau"] == -1.0 and row["same_best"] is False


def test_ranking_correlation_uses_the_shared_pairs_by_default():
    human = Qrels.from_dict({"q1": {"a": 3, "b": 2}})  # a human sample: two of the four documents
    llm = Qrels.from_dict({"q1": {"a": 3, "b": 2, "c": 3, "d": 1}})
    shared = ranking_correlation(human, llm, systems(), ["nDCG@1"])["measures"]["nDCG@1"]
    assert shared["tau"] == 1.0  # on the shared pairs the two agree exactly
    whole = ranking_correlation(human, llm, systems(), ["nDCG@1"], shared_only=False)["measures"]["nDCG@1"]
    # Whole: human scores A 1, B 2/3, C 0, D 0; LLM scores A 1, B 2/3, C 1, D 1/3.
    assert whole["candidate"] == pytest.approx({"A": 1.0, "B": 2 / 3, "C": 1.0, "D": 1 / 3})
    # Pairs of systems (human, LLM): AB concordant, AC tied under the LLM, AD concordant,
    # BC discordant, BD concordant, CD tied under humans: tau-b = (3 - 1) / sqrt(5 * 5) = 0.4.
    assert whole["tau"] == 0.4
    with pytest.raises(ConfigError, match="at least two runs"):
        ranking_correlation(human, llm, systems()[:1], ["nDCG@1"])


# -- the CLI ------------------------------------------------------------------------------------


def test_agreement_command_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    ref, cand = tmp_path / "human.txt", tmp_path / "llm.txt"
    ref.write_text("".join(f"q1 0 d{i} {g}\n" for i, g in enumerate(REF)) + "q2 0 a 3\nq2 0 b 2\nq2 0 c 1\nq2 0 d 0\n")
    cand.write_text(
        "".join(f"q1 0 d{i} {g}\n" for i, g in enumerate(CAND)) + "q2 0 a 3\nq2 0 b 1\nq2 0 c 2\nq2 0 d 0\n"
    )
    runs = []
    for name, doc in (("A", "a"), ("B", "b"), ("C", "c"), ("D", "d")):
        path = tmp_path / f"{name}.txt"
        path.write_text(f"q2 Q0 {doc} 1 1.0 {name}\n")
        runs += ["--run", str(path)]
    code, out, _ = invoke(capsys, "label", "agreement", str(ref), str(cand), *runs, "-m", "nDCG@1", "--format", "json")
    assert code == 0
    body = json.loads(out)
    # q2 adds four pairs: a (3, 3), b (2, 1), c (1, 2), d (0, 0); grades seen 0-3.
    assert body["pairs"]["shared"] == 14
    assert body["confusion"]["matrix"] == [[4, 1, 0, 0], [0, 2, 2, 0], [0, 2, 2, 0], [0, 0, 0, 1]]
    assert body["kappa"]["unweighted"] == pytest.approx(
        cohen_kappa_score([*REF, 3, 2, 1, 0], [*CAND, 3, 1, 2, 0], labels=[0, 1, 2, 3]), abs=1e-4
    )
    # Only q2 is in the runs; q1 scores 0 for every system under both (queries default: the qrels').
    row = body["ranking"]["measures"]["nDCG@1"]
    assert row["tau"] == round(4 / 6, 4) and row["same_best"] is True
    code, text, _ = invoke(capsys, "label", "agreement", str(ref), str(cand))
    assert code == 0 and "Cohen's kappa, quadratic" in text and "confusion matrix" in text
