"""Prediction-powered inference: coverage on simulated data with a known biased judge, and ``eval --ppi``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankgate.core.qrels import Qrels
from rankgate.label.ppi import classical_mean, evaluate_ppi, ppi_mean, required_labels, whole_query_sample
from tests.cli_support import invoke

REPS, UNLABELED, LABELED, TRUE_MEAN = 2000, 2000, 200, 0.3


def _simulate(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """REPS data sets at once: true relevance ~ Bernoulli(0.3); the judge says 1 for 95% of relevant
    units and for 10% of the others, so its mean is 0.3 * 0.95 + 0.7 * 0.1 = 0.355, not 0.3."""
    rng = np.random.default_rng(seed)
    truth = rng.random((REPS, UNLABELED + LABELED)) < TRUE_MEAN
    says_yes = np.where(truth, 0.95, 0.1)
    judged = (rng.random(truth.shape) < says_yes).astype(np.float64)
    return judged[:, :UNLABELED], judged[:, UNLABELED:], truth[:, UNLABELED:].astype(np.float64)


def test_ppi_covers_the_true_mean_about_95_percent_and_the_naive_interval_does_not():
    f_u, f_l, y = _simulate(seed=20)
    ppi = ppi_mean(f_u, f_l, y)
    naive = classical_mean(np.concatenate([f_u, f_l], axis=1))
    human = classical_mean(y)
    cover = {
        name: float(np.mean((r.low <= TRUE_MEAN) & (r.high >= TRUE_MEAN)))
        for name, r in (("ppi", ppi), ("naive", naive), ("human only", human))
    }
    width = {name: float(np.mean(r.high - r.low)) for name, r in (("ppi", ppi), ("human only", human))}
    print(f"\ncoverage of the true mean {TRUE_MEAN} over {REPS} simulations: {cover}; mean CI width: {width}")
    assert 0.93 <= cover["ppi"] <= 0.97
    assert cover["naive"] < 0.01  # centred on 0.355
    assert abs(float(np.mean(ppi.mean)) - TRUE_MEAN) < 0.002  # unbiased
    assert abs(float(np.mean(naive.mean)) - 0.355) < 0.002
    assert 0.93 <= cover["human only"] <= 0.97 and width["ppi"] < 0.85 * width["human only"]  # the judge helps


def test_required_labels_gives_the_width_it_promises():
    """n from required_labels, used in the simulation's variances, gives a CI of about the asked width."""
    f_u, f_l, y = _simulate(seed=3)
    sd_rect = float(np.std(f_l[0] - y[0], ddof=1))
    n = required_labels(0.1, rectifier_sd=sd_rect, predicted_sd=float(np.std(f_u[0], ddof=1)), unlabeled=UNLABELED)
    assert n is not None
    rng = np.random.default_rng(1)
    truth = rng.random((REPS, n)) < TRUE_MEAN
    judged = (rng.random(truth.shape) < np.where(truth, 0.95, 0.1)).astype(np.float64)
    width = float(np.mean(ppi_mean(f_u, judged, truth.astype(np.float64)).high - ppi_mean(f_u, judged, truth).low))
    assert abs(width - 0.1) < 0.005, (n, width)
    assert (
        required_labels(0.01, rectifier_sd=0.5, predicted_sd=0.5, unlabeled=100) is None
    )  # the LLM part alone is wider


def _write(path: Path, lines: str) -> str:
    path.write_text(lines)
    return str(path)


def test_eval_ppi_hand_worked(capsys, tmp_path):
    """P@1 of four queries: the LLM calls every top document relevant (naive 1.0); humans judged q1 (relevant)
    and q2 (not). PPI = mean(f on q3, q4) - mean(f - y on q1, q2) = 1 - 0.5 = 0.5;
    se = sqrt(0 / 2 + var([0, 1]) / 2) = 0.5; CI 0.5 +- 1.96 * 0.5."""
    run = _write(tmp_path / "run.txt", "".join(f"q{i} Q0 d{i} 1 9 s\n" for i in range(1, 5)))
    llm = _write(tmp_path / "llm.txt", "".join(f"q{i} 0 d{i} 1\n" for i in range(1, 5)))
    human = _write(tmp_path / "human.txt", "q1 0 d1 1\nq2 0 d2 0\n")
    code, out, err = invoke(capsys, "eval", llm, run, "-m", "P@1", "--ppi", human, "--format", "json")
    assert code == 0, err
    body = json.loads(out)
    entry = body["measures"]["P@1"]
    assert body["queries"] == {"llm": 4, "human": 2, "human_not_in_llm": []}
    assert entry["naive"] == {"mean": 1.0, "ci": [1.0, 1.0], "se": 0.0}
    assert entry["ppi"]["mean"] == 0.5 and entry["ppi"]["se"] == 0.5
    assert entry["ppi"]["ci"] == pytest.approx([0.5 - 1.959964 * 0.5, 0.5 + 1.959964 * 0.5], abs=1e-6)
    assert entry["human_only"]["mean"] == 0.5 and entry["rectifier"] == {"mean": 0.5, "sd": pytest.approx(0.707107)}
    code, out, err = invoke(capsys, "eval", llm, run, "-m", "P@1", "--ppi", human)
    assert code == 0, err
    assert "naive (LLM only)" in out and "PPI (corrected)" in out and "0.5000 [-0.4800, 1.4800]" in out
    code, _, err = invoke(capsys, "eval", llm, run, "-m", "P@1", "--ppi", human, "--format", "trec")
    assert code == 2 and "--ppi prints --format table or json" in err


def test_too_few_human_queries_is_an_input_error():
    llm = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    from rankgate.core.run import Run

    run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    from rankgate.errors import InputError

    with pytest.raises(InputError, match="at least two of the evaluated queries"):
        evaluate_ppi(llm, Qrels.from_dict({"q1": {"a": 0}}), run, ["P@1"])


def test_whole_query_sample_draws_queries_uniformly_with_all_their_pairs():
    qrels = Qrels.from_dict({f"q{i}": {f"d{i}_{j}": j % 2 for j in range(3)} for i in range(10)})
    chosen = whole_query_sample(qrels, 4, seed=1)
    queries = {q for q, _, _ in chosen}
    assert len(queries) == 4 and len(chosen) == 12
    assert whole_query_sample(qrels, 4, seed=1) == chosen
    counts = np.zeros(10)
    for seed in range(500):
        for q in {q for q, _, _ in whole_query_sample(qrels, 2, seed=seed)}:
            counts[int(q[1:])] += 1
    assert counts.min() > 60 and counts.max() < 140  # each query about 500 * 2 / 10 = 100 times


def test_label_sample_whole_queries_for_a_target_width(capsys, tmp_path):
    from tests.label_support import write_collection

    coll = write_collection(tmp_path, n_queries=60, docs_per_query=2)
    llm = _write(tmp_path / "llm.txt", "".join(f"q{i} 0 d{i}_{j} {j}\n" for i in range(1, 61) for j in range(2)))
    out = tmp_path / "review.csv"
    args = ["label", "sample", llm, "--corpus", coll["corpus"], "--queries", coll["queries"], "-o", str(out)]
    code, text, err = invoke(capsys, *args, "--whole-queries", "--target-width", "0.2", "--rectifier-sd", "0.3")
    assert code == 0, err
    # n = ceil(0.3^2 / (0.1 / 1.959964)^2) = ceil(34.57) = 35 queries, 2 pairs each
    assert "needs about 35 human-judged queries" in text and "wrote 70 pairs" in text
    code, _, err = invoke(capsys, *args, "--target-width", "0.2")
    assert code == 2 and "--target-width needs --whole-queries" in err
