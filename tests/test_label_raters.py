"""Multi-rater agreement against independent implementations: scikit-learn's Cohen kappa, statsmodels'
Fleiss kappa and the krippendorff package, on random data (test-only oracles)."""

from __future__ import annotations

import numpy as np
import pytest

from rankgate.core.qrels import Qrels
from rankgate.label.raters import multi_rater_agreement


def _raters(seed: int, n_units: int = 120, n_raters: int = 4, missing: float = 0.0) -> tuple[list[Qrels], np.ndarray]:
    """Raters who see a true grade 0-3 and err by +-1 sometimes; a share of labels is missing."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, n_units)
    noise = rng.choice([-1, 0, 0, 0, 1], size=(n_units, n_raters))
    grades = np.clip(truth[:, None] + noise, 0, 3).astype(float)
    grades[rng.random(grades.shape) < missing] = np.nan
    qrels = []
    for r in range(n_raters):
        data: dict[str, dict[str, int]] = {}
        for u in range(n_units):
            if not np.isnan(grades[u, r]):
                data.setdefault(f"q{u // 10}", {})[f"d{u}"] = int(grades[u, r])
        qrels.append(Qrels.from_dict(data))
    order = sorted(range(n_units), key=lambda u: (f"q{u // 10}".encode(), f"d{u}".encode()))
    return qrels, grades[order]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cohen_fleiss_krippendorff_equal_the_oracles(seed):
    krippendorff = pytest.importorskip("krippendorff")
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    from sklearn.metrics import cohen_kappa_score

    qrels, grades = _raters(seed)
    got = multi_rater_agreement(qrels, ["a", "b", "c", "d"], n_boot=0)
    table, _ = inter_rater.aggregate_raters(grades.astype(int))
    assert got["fleiss_kappa"]["value"] == pytest.approx(inter_rater.fleiss_kappa(table), abs=1e-4)
    for level in ("nominal", "ordinal"):
        expected = krippendorff.alpha(reliability_data=grades.T, level_of_measurement=level)
        assert got["krippendorff_alpha"][level]["value"] == pytest.approx(expected, abs=1e-4)
    for row in got["pairwise"]:
        a, b = ("abcd".index(n) for n in row["raters"])
        for w in ("unweighted", "linear", "quadratic"):
            expected = cohen_kappa_score(grades[:, a], grades[:, b], weights=None if w == "unweighted" else w)
            assert row["kappa"][w]["value"] == pytest.approx(expected, abs=1e-4)


def test_krippendorff_with_missing_labels_equals_the_oracle():
    krippendorff = pytest.importorskip("krippendorff")
    qrels, grades = _raters(5, n_units=150, n_raters=5, missing=0.3)
    got = multi_rater_agreement(qrels, n_boot=200)
    for level in ("nominal", "ordinal"):
        expected = krippendorff.alpha(reliability_data=grades.T, level_of_measurement=level)
        entry = got["krippendorff_alpha"][level]
        assert entry["value"] == pytest.approx(expected, abs=1e-4)
        assert entry["ci"][0] < entry["value"] < entry["ci"][1]
    complete = int((~np.isnan(grades)).all(axis=1).sum())
    assert got["fleiss_kappa"]["units"] == complete  # Fleiss: only units every rater judged


def test_bootstrap_interval_covers_and_shrinks_with_more_units():
    small = multi_rater_agreement(_raters(7, n_units=60)[0], n_boot=500)["fleiss_kappa"]
    large = multi_rater_agreement(_raters(7, n_units=600)[0], n_boot=500)["fleiss_kappa"]
    assert small["ci"][0] < small["value"] < small["ci"][1]
    assert (large["ci"][1] - large["ci"][0]) < 0.5 * (small["ci"][1] - small["ci"][0])


def test_relevant_only_reference_with_unjudged_as_zero():
    """A BEIR-style reference lists only relevant pairs; shared-only comparison sees nothing to disagree on."""
    reference = Qrels.from_dict({"q1": {"a": 1}})
    llm = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": 0, "d": 1}})
    plain = multi_rater_agreement([reference, llm], n_boot=0)
    assert plain["pairwise"][0]["units"] == 1  # one shared pair: kappa undefined
    filled = multi_rater_agreement([reference, llm], n_boot=0, unjudged_as=0)
    row = filled["pairwise"][0]
    # 4 units: ref 1,0,0,0; llm 1,0,0,1 -> po = 3/4, pe = (1/4)(2/4) + (3/4)(2/4) = 1/2, kappa = 0.5
    assert row["units"] == 4 and row["agreement"] == 0.75 and row["kappa"]["unweighted"]["value"] == 0.5


def test_agreement_cli_three_raters_and_unjudged_as(capsys, tmp_path):
    import json

    from tests.cli_support import invoke

    paths = []
    for name, lines in (
        ("a", "q 0 d1 1\nq 0 d2 0\nq 0 d3 1\n"),
        ("b", "q 0 d1 1\nq 0 d2 0\nq 0 d3 0\n"),
        ("c", "q 0 d1 1\n"),
    ):
        (tmp_path / f"{name}.txt").write_text(lines)
        paths.append(str(tmp_path / f"{name}.txt"))
    code, out, err = invoke(capsys, "label", "agreement", *paths, "--unjudged-as", "0", "--format", "json")
    assert code == 0, err
    body = json.loads(out)
    assert body["units"] == 3 and body["fleiss_kappa"]["units"] == 3  # c's missing pairs count as 0
    code, out, err = invoke(capsys, "label", "agreement", *paths, "--bootstrap", "50")
    assert code == 0, err
    assert "Fleiss' kappa" in out and "Krippendorff's alpha (ordinal)" in out and "Cohen's kappa" in out
