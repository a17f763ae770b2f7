"""Click models on impression logs: PBM by EM recovers known parameters (checked against a direct
maximum-likelihood fit by scipy), debiased labels rank documents better than raw CTR, cascade and
simplified DBN worked by hand, the reader's formats and errors, and `rankgate label` on such a log."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from rankgate.errors import ConfigError, InputError
from rankgate.io.readers import read_qrels
from rankgate.label.types import Pair
from rankgate.label.weak import ClickJudge, read_clicks
from rankgate.online import fit_click_model, read_click_log, simulate_pbm
from rankgate.online.logs import log_from_table
from rankgate.online.simulate import write_table
from tests.cli_support import invoke

TINY = """session,query_id,doc_id,position,clicked
p1,q1,d1,1,0
p1,q1,d2,2,1
p1,q1,d3,3,1
p2,q1,d2,1,1
p2,q1,d1,2,0
p2,q1,d3,3,0
p3,q1,d1,1,0
p3,q1,d2,2,0
p3,q1,d3,3,0
"""


@pytest.fixture(scope="module")
def simulated() -> object:
    # A mediocre production ranker (quality 0.3): raw CTR mostly measures where a document was shown.
    return simulate_pbm(queries=300, docs_per_query=10, pages=60_000, ranker_quality=0.3, seed=7)


def test_em_recovers_examination_within_tolerance(simulated):
    fit = fit_click_model(log_from_table(simulated.table), "pbm")
    error = np.abs(fit.examination - np.array(simulated.examination))
    print("\ntrue examination", np.round(simulated.examination, 3))
    print("EM examination  ", np.round(fit.examination, 3), "max abs error", round(float(error.max()), 4))
    assert fit.converged
    assert error.max() < 0.02  # the stated tolerance (docs/online.md), 600k rows
    truth = np.array([simulated.attractiveness[p] for p in fit.pairs()])
    strong = ~fit.weak
    z = np.abs(fit.attractiveness - truth)[strong] / np.maximum(fit.stderr[strong], 1e-9)
    print("attractiveness within 2 standard errors:", round(float((z < 2).mean()), 3))
    assert (z < 2).mean() > 0.9  # the reported standard errors are honest


def _per_query_tau(fit, values, truth):
    taus = [
        stats.kendalltau(truth[fit.pair_query == q], values[fit.pair_query == q])[0] for q in np.unique(fit.pair_query)
    ]
    return float(np.nanmean(taus))


def test_debiased_labels_rank_documents_better_than_raw_ctr(simulated):
    fit = fit_click_model(log_from_table(simulated.table), "pbm")
    truth = np.array([simulated.attractiveness[p] for p in fit.pairs()])
    tau_em, tau_ctr = stats.kendalltau(truth, fit.relevance)[0], stats.kendalltau(truth, fit.ctr)[0]
    rho_em, rho_ctr = stats.spearmanr(truth, fit.relevance)[0], stats.spearmanr(truth, fit.ctr)[0]
    q_em, q_ctr = _per_query_tau(fit, fit.relevance, truth), _per_query_tau(fit, fit.ctr, truth)
    print(f"\nKendall tau vs true attractiveness: PBM {tau_em:.3f}, raw CTR {tau_ctr:.3f}")
    print(f"Spearman rho: PBM {rho_em:.3f}, raw CTR {rho_ctr:.3f}; within-query tau: PBM {q_em:.3f}, CTR {q_ctr:.3f}")
    assert tau_em > tau_ctr + 0.1
    assert rho_em > rho_ctr + 0.05
    assert q_em > q_ctr + 0.1


def _neg_loglik(params, cell_pair, cell_pos, n, c, positions):
    theta = np.r_[1.0, params[: positions - 1]]
    p = theta[cell_pos] * params[positions - 1 :][cell_pair]
    return -float(np.sum(c * np.log(p) + (n - c) * np.log1p(-p)))


def test_em_reaches_the_maximum_likelihood_of_a_direct_optimizer():
    from rankgate.online.clickmodels import _pairs_and_cells

    sim = simulate_pbm(queries=4, docs_per_query=4, pages=4000, examination=(1.0, 0.6, 0.3), noise=2.0, seed=3)
    log = log_from_table(sim.table)
    fit = fit_click_model(log, "pbm", tol=1e-9, max_iter=20_000)
    cell_pair, cell_pos, n, c, _, positions = _pairs_and_cells(log)
    start = np.full(positions - 1 + len(fit.impressions), 0.5)
    bounds = [(1e-6, 1 - 1e-6)] * len(start)
    best = optimize.minimize(
        _neg_loglik,
        start,
        args=(cell_pair, cell_pos, n, c, positions),
        bounds=bounds,
        method="L-BFGS-B",
        options={"maxiter": 10_000, "ftol": 1e-14, "gtol": 1e-10},
    )
    em = np.r_[fit.examination[1:], np.clip(fit.attractiveness, 1e-6, 1 - 1e-6)]
    args = (cell_pair, cell_pos, n, c, positions)
    assert _neg_loglik(em, *args) <= best.fun + 1e-4
    np.testing.assert_allclose(fit.examination[1:], best.x[: positions - 1], atol=5e-3)


def test_cascade_and_sdbn_by_hand(tmp_path):
    path = tmp_path / "tiny.csv"
    path.write_text(TINY)
    log = read_click_log(path)
    cascade = fit_click_model(log, "cascade", min_impressions=3)
    got = dict(zip(cascade.pairs(), cascade.relevance.tolist(), strict=True))
    # cascade: examined down to the first click (a page without clicks: all of it)
    assert got == pytest.approx({("q1", "d1"): 0 / 2, ("q1", "d2"): 2 / 3, ("q1", "d3"): 0 / 1})
    sdbn = fit_click_model(log, "sdbn", min_impressions=3)
    a = dict(zip(sdbn.pairs(), sdbn.attractiveness.tolist(), strict=True))
    rel = dict(zip(sdbn.pairs(), sdbn.relevance.tolist(), strict=True))
    # sdbn: examined down to the last click; satisfaction = last clicks / clicks
    assert a == pytest.approx({("q1", "d1"): 0 / 2, ("q1", "d2"): 2 / 3, ("q1", "d3"): 1 / 2})
    assert rel == pytest.approx({("q1", "d1"): 0.0, ("q1", "d2"): 2 / 3 * 1 / 2, ("q1", "d3"): 1 / 2 * 1})
    assert not cascade.weak.any()
    assert fit_click_model(log, "cascade", min_impressions=4).weak.all()


def test_formats_read_the_same(tmp_path):
    sim = simulate_pbm(queries=5, docs_per_query=4, pages=50, seed=2)
    fits = []
    for name in ("log.csv", "log.jsonl", "log.parquet"):
        write_table(sim.table, str(tmp_path / name))
        fits.append(fit_click_model(read_click_log(tmp_path / name), "pbm"))
    for other in fits[1:]:
        assert other.pairs() == fits[0].pairs()
        np.testing.assert_allclose(other.attractiveness, fits[0].attractiveness)


def test_rows_without_session_split_pages_where_position_restarts(tmp_path):
    path = tmp_path / "log.tsv"
    path.write_text("qid\tdocid\trank\tclick\nq1\ta\t1\ttrue\nq1\tb\t2\tfalse\nq1\tb\t1\tfalse\nq2\ta\t1\t1\n")
    log = read_click_log(path)
    assert log.pages == 3 and log.position.tolist() == [1, 2, 1, 1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("query_id,doc_id,position,clicked\nq1,a,0,1\n", "log.csv:2: position must be a whole number >= 1"),
        ("query_id,doc_id,position,clicked\nq1,a,1,1\nq1,b,2.5,0\n", "log.csv:3: position must be a whole number"),
        ("query_id,doc_id,position,clicked\nq1,a,1,2\n", "log.csv:2: clicked must be 0/1 or true/false"),
        ("query_id,doc_id,position,clicked\nq1,a,1,maybe\n", "log.csv:2: clicked must be a number"),
        ("query_id,doc_id,position,clicked\nq1,,1,1\n", "log.csv:2: missing document id"),
        ("query_id,position,clicked\nq1,1,1\n", "log.csv:1: no document id column"),
        ("session,query_id,doc_id,position,clicked\ns,q1,a,1,1\ns,q1,b,1,0\n", "two results at position 1"),
    ],
)
def test_bad_logs_name_the_line(tmp_path, text, message):
    path = tmp_path / "log.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message.replace(".", r"\.")):
        read_click_log(path)


def test_unknown_model_is_a_config_error(tmp_path):
    path = tmp_path / "tiny.csv"
    path.write_text(TINY)
    with pytest.raises(ConfigError, match="click model must be one of pbm, cascade, sdbn"):
        fit_click_model(read_click_log(path), "ubm")


def test_click_judge_grades_debiased_relevance_and_skips_weak_pairs(tmp_path):
    sim = simulate_pbm(queries=20, docs_per_query=5, pages=2000, seed=5)
    path = tmp_path / "log.parquet"
    write_table(sim.table, str(path))
    clicks = read_clicks(path)
    assert clicks.fit is not None and clicks.fit.model == "pbm"
    judge = ClickJudge(clicks, thresholds=(0.2, 0.5), min_impressions=10)
    pairs = [Pair(q, d) for q, d in clicks]
    made = {(j.query_id, j.doc_id): j for j in judge.judge_batch(pairs)}
    rel = dict(zip(clicks.fit.pairs(), clicks.fit.relevance.tolist(), strict=True))
    for key, j in made.items():
        assert j.score == pytest.approx(rel[key])
        assert j.label == (rel[key] >= 0.2) + (rel[key] >= 0.5)
        assert "pbm relevance" in j.reason
    weak = {p for p, w in zip(clicks.fit.pairs(), clicks.fit.weak.tolist(), strict=True) if w}
    assert set(made) == set(clicks) - weak
    assert judge.describe()["click_model"]["weak_pairs"] == len(weak)


def test_label_cli_reads_an_impression_log(tmp_path, capsys):
    path = tmp_path / "tiny.csv"
    path.write_text(TINY)
    out = tmp_path / "qrels.txt"
    code, _, err = invoke(
        capsys,
        "label",
        "--judge",
        "clicks",
        "--clicks",
        str(path),
        "--min-impressions",
        "2",
        "--thresholds",
        "0.3",
        "--out",
        str(out),
        "--store",
        str(tmp_path / "j.db"),
    )
    assert code == 0, err
    assert read_qrels(out).to_dict() == {"q1": {"d1": 0, "d2": 1, "d3": 1}}


@pytest.mark.parametrize("model", ["pbm", "cascade", "sdbn"])
def test_label_cli_fits_the_click_model_it_is_given(tmp_path, capsys, model):
    # `--click-model` picks the model `read_clicks` fits; the judge's JSON names it, and the
    # grades are those of that model's debiased relevance at the thresholds.
    sim = simulate_pbm(queries=6, docs_per_query=4, pages=400, seed=11)
    path = tmp_path / "log.parquet"
    write_table(sim.table, str(path))
    out = tmp_path / f"{model}.txt"
    code, stdout, err = invoke(
        capsys, "label", "--judge", "clicks", "--clicks", str(path), "--click-model", model,
        "--thresholds", "0.2,0.5", "--out", str(out), "--store", str(tmp_path / f"{model}.db"), "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    fit = read_clicks(path, model=model).fit
    assert fit is not None and fit.model == model
    expected = {
        (q, d): int(r >= 0.2) + int(r >= 0.5)
        for (q, d), r, w in zip(fit.pairs(), fit.relevance.tolist(), fit.weak.tolist(), strict=True)
        if not w
    }
    got = {(q, d): g for q, docs in read_qrels(out).to_dict().items() for d, g in docs.items()}
    assert got == expected
    assert model in stdout
