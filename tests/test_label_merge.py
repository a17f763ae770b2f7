"""``label merge --strategy``: tie rules by hand, Dawid-Skene recovers known rater error rates."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rankgate.label.merge import dawid_skene, merge_labels
from rankgate.label.types import Judgment
from tests.cli_support import invoke


def _rater(name: str, labels: dict[str, int]) -> list[Judgment]:
    return [Judgment("q", d, g, name, "human") for d, g in labels.items()]


A = _rater("a", {"d1": 0, "d2": 3, "d3": 1, "d4": 2})
B = _rater("b", {"d1": 1, "d2": 3, "d3": 2, "d4": 1})
C = _rater("c", {"d1": 1, "d2": 0, "d4": 3})


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("majority", {"d1": 1, "d2": 3, "d3": 1, "d4": 1}),  # d3: 1 vs 2, d4: 2/1/3 -> lowest tied label
        ("mean", {"d1": 1, "d2": 2, "d3": 1, "d4": 2}),  # 2/3 -> 1; 2 -> 2; 1.5 -> 1 (half down); 2 -> 2
        ("max", {"d1": 1, "d2": 3, "d3": 2, "d4": 3}),
    ],
)
def test_strategies_and_their_tie_rules_by_hand(strategy, expected):
    merged, info = merge_labels([A, B, C], strategy)
    assert {j.doc_id: j.label for j in merged} == expected and info["pairs"] == 4


def test_dawid_skene_recovers_known_confusion_matrices_and_beats_majority():
    rng = np.random.default_rng(4)
    units, k = 3000, 2
    truth = (rng.random(units) < 0.3).astype(int)
    # rater 0 and 1: good; rater 2: says 1 half the time whatever the truth; rater 3: flips 30% of labels
    p_say_one = np.array([[0.05, 0.9], [0.1, 0.95], [0.5, 0.5], [0.3, 0.7]])  # [rater, true] -> P(says 1)
    said = (rng.random((units, 4)) < p_say_one[:, truth].T).astype(int)
    post, confusion, priors, _ = dawid_skene(said, k)
    assert np.allclose(confusion[:, :, 1], p_say_one, atol=0.04), confusion[:, :, 1]
    assert abs(priors[1] - 0.3) < 0.03
    ds_accuracy = float(np.mean(np.argmax(post, axis=1) == truth))
    majority = (said.sum(axis=1) > 2).astype(int)  # ties (2 of 4) -> 0, the lowest
    print(f"\naccuracy: dawid-skene {ds_accuracy:.3f}, majority {np.mean(majority == truth):.3f}")
    assert ds_accuracy > float(np.mean(majority == truth)) + 0.02


def test_merge_cli_strategy_reports_confusion_matrices(capsys, tmp_path):
    files = []
    for name, rater in (("a", A), ("b", B), ("c", C)):
        path = tmp_path / f"{name}.txt"
        path.write_text("".join(f"q 0 {j.doc_id} {j.label}\n" for j in rater))
        files.append(str(path))
    out = tmp_path / "gold.txt"
    code, text, err = invoke(capsys, "label", "merge", *files, "--strategy", "majority", "-o", str(out))
    assert code == 0, err
    assert out.read_text().split("\n")[:4] == ["q 0 d1 1", "q 0 d2 3", "q 0 d3 1", "q 0 d4 1"]
    report = tmp_path / "ds.json"
    code, text, err = invoke(
        capsys, "label", "merge", *files, "--strategy", "dawid-skene", "-o", str(out), "--report", str(report)
    )
    assert code == 0, err
    body = json.loads(report.read_text())
    assert set(body["dawid_skene"]["confusion"]) == set(files)  # raters named as given
    assert f"confusion matrix of {files[0]} (rows: true label, columns: label given):" in text
