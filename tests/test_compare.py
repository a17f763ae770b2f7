"""`rankgate compare` and `rankgate.comparison.compare.compare` on the demo collection."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from scipy import stats as scipy_stats

import rankgate
from rankgate.comparison.compare import compare
from rankgate.data import demo_qrels_path, demo_run_path
from tests.cli_support import invoke

QRELS = str(demo_qrels_path())
RUNS = [str(demo_run_path(n)) for n in ("bm25", "dense", "keyword_first")]
MEASURES = ["nDCG@10", "R@10", "RR@10"]


def test_json_contract_and_values(capsys):
    code, out, _ = invoke(capsys, "compare", QRELS, *RUNS, "-m", ",".join(MEASURES), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["baseline"] == "bm25"
    assert data["systems"] == ["bm25", "dense", "keyword_first"]
    assert data["measures"] == MEASURES
    assert len(data["comparisons"]) == 6
    keys = {"system", "measure", "baseline_mean", "mean", "delta", "ci", "p_value", "p_adjusted", "test",
            "wins", "ties", "losses", "effect_size", "mde"}  # fmt: skip
    for row in data["comparisons"]:
        assert keys <= set(row)
        assert row["ci"][0] <= row["delta"] <= row["ci"][1]
        assert row["p_adjusted"] >= row["p_value"]
        assert row["wins"] + row["ties"] + row["losses"] == data["queries"]["compared"] == 63
    settings = data["settings"]
    assert settings["seed"] == 0 and settings["n_resamples"] == 10_000 and settings["correction"] == "holm"
    assert settings["ties"] == "trec" and settings["queries"] == "qrels"


def test_p_values_equal_scipy_ttest_rel():
    comp = compare(QRELS, RUNS[:2], MEASURES, correction="none", n_resamples=200)
    base = rankgate.evaluate(QRELS, RUNS[0], MEASURES)
    cand = rankgate.evaluate(QRELS, RUNS[1], MEASURES)
    for m in MEASURES:
        expected = scipy_stats.ttest_rel(cand.column(m), base.column(m)).pvalue
        row = comp.row("dense", m)
        assert row["p_value"] == pytest.approx(expected, rel=1e-10)
        assert row["p_adjusted"] == row["p_value"]  # correction none
        assert row["delta"] == pytest.approx(cand[m] - base[m])


def test_holm_adjusts_over_the_whole_family():
    comp = compare(QRELS, RUNS, MEASURES, n_resamples=200)
    raw = np.array([r["p_value"] for r in comp.rows])
    order = np.argsort(raw)
    expected = np.maximum.accumulate(np.minimum(1, raw[order] * (len(raw) - np.arange(len(raw)))))
    adjusted = np.array([r["p_adjusted"] for r in comp.rows])[order]
    assert adjusted == pytest.approx(expected)


def test_reproducible_with_a_seed():
    a = compare(QRELS, RUNS[:2], MEASURES, randomization=True, n_resamples=500, n_permutations=500, seed=7)
    b = compare(QRELS, RUNS[:2], MEASURES, randomization=True, n_resamples=500, n_permutations=500, seed=7)
    c = compare(QRELS, RUNS[:2], MEASURES, randomization=True, n_resamples=500, n_permutations=500, seed=8)
    assert a.rows == b.rows
    assert [r["ci"] for r in a.rows] != [r["ci"] for r in c.rows]


def test_runs_with_different_query_sets_compare_on_shared_queries():
    # keyword_first misses q04: with --queries intersection it is evaluated on 62 queries
    comp = compare(QRELS, [RUNS[0], RUNS[2]], ["nDCG@10"], queries="intersection", n_resamples=200)
    assert len(comp.query_ids) == 62 and "q04" not in comp.query_ids
    assert any("different query sets" in n for n in comp.notes)
    # default policy: q04 scores 0 for keyword_first and all 63 queries are compared
    assert len(compare(QRELS, [RUNS[0], RUNS[2]], ["nDCG@10"], n_resamples=200).query_ids) == 63


def test_baseline_names_detect_and_formats(capsys):
    code, out, _ = invoke(
        capsys, "compare", QRELS, *RUNS, "--name", "a", "--name", "b", "--name", "c", "--baseline", "b",
        "-m", "nDCG@10", "--detect", "0.05", "--format", "markdown",
    )  # fmt: skip
    assert code == 0
    assert "| a | nDCG@10 |" in out and "| c | nDCG@10 |" in out and "baseline: b" in out
    assert "queries needed to detect a delta of 0.05" in out
    code, out, _ = invoke(capsys, "compare", QRELS, *RUNS[:2], "-m", "nDCG@10", "--format", "latex")
    assert r"\begin{tabular}" in out and r"\bottomrule" in out


def test_markdown_and_latex_hold_every_table(capsys):
    """The all-pairs and by-tag tables are in every format, with the numbers of the JSON."""
    tags = str(pathlib.Path(QRELS).parent / "queries.jsonl")
    args = ("compare", QRELS, *RUNS, "-m", "nDCG@10", "--all-pairs", "--permutations", "500", "--tags", tags)
    code, out, _ = invoke(capsys, *args, "--format", "json")
    data = json.loads(out)
    pair = next(p for p in data["pairs"] if (p["a"], p["b"]) == ("dense", "keyword_first"))
    tag = next(
        r for r in data["by_tag"] if r["system"] == "dense" and r["tag"] == "difficulty" and r["value"] == "hard"
    )
    assert data["settings"]["n_permutations"] == 500 and data["settings"]["all_pairs"] is True
    code, md, _ = invoke(capsys, *args, "--format", "markdown")
    assert code == 0
    assert "**All pairs (randomized Tukey HSD, family-wise p, 500 permutations)**" in md
    assert (
        f"| nDCG@10 | dense | keyword_first | {pair['mean_a']:.4f} | {pair['mean_b']:.4f} | {pair['delta']:+.4f} *"
        in md
    )
    assert f"| dense | nDCG@10 | difficulty=hard | {tag['n']} | {tag['baseline_mean']:.4f} | {tag['mean']:.4f} |" in md
    code, tex, _ = invoke(capsys, *args, "--format", "latex")
    assert code == 0 and tex.count(r"\begin{tabular}") == 3 == tex.count(r"\end{tabular}")
    assert rf"nDCG@10 & dense & keyword\_first & {pair['mean_a']:.4f} & {pair['mean_b']:.4f}" in tex
    assert rf"dense & nDCG@10 & difficulty=hard & {tag['n']} & {tag['baseline_mean']:.4f}" in tex


def test_json_states_the_query_policy_and_each_runs_accounting(capsys):
    code, out, _ = invoke(capsys, "compare", QRELS, RUNS[0], RUNS[2], "-m", "nDCG@10", "--format", "json")
    queries = json.loads(out)["queries"]
    assert queries["compared"] == 63 and queries["policy"] == "qrels"
    assert queries["per_system"]["keyword_first"]["missing_from_run"] == 1  # q04 scores 0
    assert queries["per_system"]["bm25"]["missing_from_run"] == 0
    assert any(w.startswith("keyword_first: 1 qrels query is not in the run") for w in json.loads(out)["warnings"])
    code, out, _ = invoke(capsys, "compare", QRELS, RUNS[0], RUNS[2], "-m", "nDCG@10", "--queries", "intersection")
    assert code == 0
    assert "queries: those in both the qrels and each run" in out and "62 queries" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((RUNS[0],), "at least two runs"),
        ((*RUNS[:2], "--baseline", "nope"), "No system named 'nope'"),
        ((RUNS[0], RUNS[0]), "System names must differ"),
    ],
)
def test_bad_usage_exits_2(capsys, args, message):
    code, out, err = invoke(capsys, "compare", QRELS, *args)
    assert code == 2 and message in err and "Traceback" not in err and out == ""


def test_eval_ci_brackets_the_mean_and_is_reproducible(capsys):
    args = ("eval", QRELS, RUNS[0], "-m", "nDCG@10,R@10,NumRel", "--ci", "--format", "json")
    code, out, _ = invoke(capsys, *args)
    assert code == 0
    data = json.loads(out)
    for name in ("nDCG@10", "R@10"):
        lo, hi = data["ci"][name]
        assert lo < data["aggregate"][name] < hi
        assert hi - lo < 0.3
    assert data["ci"]["NumRel"] is None  # summed, not averaged: no interval
    assert data["settings"]["ci"]["n_resamples"] == 10_000
    assert json.loads(invoke(capsys, *args)[1])["ci"] == data["ci"]


def test_eval_ci_agrees_with_scipy_bootstrap():
    res = rankgate.evaluate(QRELS, RUNS[0], ["nDCG@10"]).with_confidence_intervals(n_resamples=20_000, seed=1)
    ref = scipy_stats.bootstrap(
        (res.column("nDCG@10"),), np.mean, n_resamples=20_000, method="percentile", random_state=2
    ).confidence_interval
    lo, hi = res.ci["nDCG@10"]
    assert lo == pytest.approx(ref.low, abs=0.01) and hi == pytest.approx(ref.high, abs=0.01)


def test_cutoffs_table_matches_evaluate(capsys):
    code, out, _ = invoke(
        capsys, "cutoffs", QRELS, *RUNS[:2], "-m", "R,nDCG(gain=exp)", "-k", "1,5,10", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["cutoffs"] == [1, 5, 10]
    expected = rankgate.evaluate(QRELS, RUNS[1], ["R@1", "R@5", "R@10", "nDCG(gain=exp)@5"]).aggregate
    for name, value in expected.items():
        assert data["runs"]["dense"][name] == pytest.approx(value)
    code, out, _ = invoke(capsys, "cutoffs", QRELS, RUNS[0], "-k", "1,3")
    assert code == 0 and "@3" in out and "bm25" in out


@pytest.mark.parametrize("family", ["P", "precision", "Success", "P(rel=2)", "RR", "AP"])
def test_cutoffs_accepts_families_that_need_a_cutoff(capsys, family):
    code, out, err = invoke(capsys, "cutoffs", QRELS, RUNS[0], "-m", family, "-k", "1,5", "--format", "csv")
    assert code == 0, err
    _, row = out.strip().splitlines()
    name = rankgate.parse_measure(f"{family}@5")
    expected = rankgate.evaluate(QRELS, RUNS[0], [f"{family}@1", name]).aggregate
    assert row.split(",")[2:] == [repr(v) for v in expected.values()]
    assert row.split(",")[1] == str(name).rsplit("@", 1)[0]


@pytest.mark.parametrize(("family", "message"), [("P@5", "without a cutoff"), ("Rprec", "takes no cutoff")])
def test_cutoffs_rejects_what_cannot_be_tabulated(capsys, family, message):
    code, _, err = invoke(capsys, "cutoffs", QRELS, RUNS[0], "-m", family)
    assert code == 2 and message in err


def test_cutoffs_keeps_runs_with_the_same_stem_apart(capsys, tmp_path):
    copy = tmp_path / "bm25.txt"
    copy.write_text(pathlib.Path(RUNS[0]).read_text())
    code, out, _ = invoke(capsys, "cutoffs", QRELS, RUNS[0], str(copy), "-k", "1", "--format", "json")
    assert code == 0 and len(json.loads(out)["runs"]) == 2


@pytest.mark.parametrize(("k", "message"), [("0,5", ">= 1"), ("a,b", "whole numbers")])
def test_cutoffs_bad_k(capsys, k, message):
    code, _, err = invoke(capsys, "cutoffs", QRELS, RUNS[0], "-k", k)
    assert code == 2 and message in err


def test_per_tag_breakdown(capsys, tmp_path):
    from rankgate.data import demo_dir, demo_query_tags
    from rankgate.io.tags import read_query_tags

    tags = read_query_tags(demo_dir() / "queries.jsonl")
    assert tags == demo_query_tags()
    comp = compare(QRELS, RUNS[:2], ["nDCG@10"], tags=tags, n_resamples=300)
    sizes: dict[str, int] = {}
    for row in comp.by_tag:
        sizes[row["tag"]] = sizes.get(row["tag"], 0) + row["n"]
        assert row["small"] == (row["n"] < 10)
    assert sizes == {"difficulty": 63, "topic": 63}
    base = rankgate.evaluate(QRELS, RUNS[0], ["nDCG@10"])
    cand = rankgate.evaluate(QRELS, RUNS[1], ["nDCG@10"])
    hard = [i for i, q in enumerate(base.query_ids) if tags[q]["difficulty"] == "hard"]
    row = next(r for r in comp.by_tag if r["tag"] == "difficulty" and r["value"] == "hard")
    assert row["n"] == len(hard) == 24
    expected = cand.column("nDCG@10")[hard].mean() - base.column("nDCG@10")[hard].mean()
    assert row["delta"] == pytest.approx(expected)
    deltas = [r["delta"] for r in comp.by_tag if not r["small"]]
    assert deltas == sorted(deltas)  # worst first
    # CSV tags through the CLI
    csv_tags = tmp_path / "tags.csv"
    csv_tags.write_text("qid,tier\n" + "".join(f"{q},{'A' if i % 2 else 'B'}\n" for i, q in enumerate(tags)))
    code, out, _ = invoke(
        capsys, "compare", QRELS, *RUNS[:2], "-m", "nDCG@10", "--tags", str(csv_tags), "--format", "json"
    )
    by_tag = json.loads(out)["by_tag"]
    assert code == 0 and {r["value"] for r in by_tag} == {"A", "B"} and sum(r["n"] for r in by_tag) == 63


def test_tags_file_errors(capsys, tmp_path):
    bad = tmp_path / "tags.csv"
    bad.write_text("name,tier\nq01,A\n")
    code, _, err = invoke(capsys, "compare", QRELS, *RUNS[:2], "--tags", str(bad))
    assert code == 2 and "tags.csv:1" in err and "no query id column" in err


def test_all_pairs_tukey(capsys):
    comp = compare(QRELS, RUNS, ["nDCG@10", "RR@10"], all_pairs=True, n_resamples=200, n_permutations=2000)
    assert len(comp.pairs) == 2 * 3  # 3 pairs per measure
    pair = next(p for p in comp.pairs if p["measure"] == "nDCG@10" and {p["a"], p["b"]} == {"dense", "keyword_first"})
    assert pair["p_value"] < 0.01 and pair["test"] == "randomized Tukey HSD"
    assert pair["delta"] == pytest.approx(pair["mean_b"] - pair["mean_a"])
    code, out, _ = invoke(capsys, "compare", QRELS, *RUNS, "-m", "nDCG@10", "--all-pairs", "--permutations", "500",
                       "--format", "json")  # fmt: skip
    assert code == 0 and len(json.loads(out)["pairs"]) == 3


def test_compare_results_equals_compare_on_stored_results():
    from rankgate.comparison.compare import compare, compare_results

    measures = ["nDCG@10", "R@100", "RR@10"]
    direct = compare(QRELS, RUNS[:2], measures, seed=3)
    base = rankgate.evaluate(QRELS, RUNS[0], measures[::-1])  # a stored baseline may hold another order
    cand = rankgate.evaluate(QRELS, RUNS[1], measures)
    again = compare_results({"bm25": base, "dense": cand}, seed=3)
    for measure in measures:
        a, b = direct.row("dense", measure), again.row("dense", measure)
        assert a["delta"] == pytest.approx(b["delta"], abs=1e-15)
        assert a["ci"] == pytest.approx(b["ci"], abs=1e-15)
        assert a["p_value"] == pytest.approx(b["p_value"], rel=1e-12)


def test_compare_results_refuses_results_with_other_measures():
    from rankgate.comparison.compare import compare_results
    from rankgate.errors import InputError

    a = rankgate.evaluate(QRELS, RUNS[0], ["nDCG@10"])
    b = rankgate.evaluate(QRELS, RUNS[1], ["R@100"])
    with pytest.raises(InputError, match="different measures"):
        compare_results({"a": a, "b": b})
