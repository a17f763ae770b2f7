"""torchmetrics' adaptive_k and empty_target_action, ir_measures' Judged: each option against the peer's own code.

torchmetrics (retrieval metric classes and functions) and ir_measures (its judged provider) are
test-only oracles. torchmetrics sees only the retrieved documents, so the collections here
retrieve every judged document (plus unjudged ones): its "no positive target" is then
rankgate's "no relevant judgment", its recall divides by R, its ideal DCG is rankgate's.
Scores tie only between documents of the same grade, where any order of a tie gives the same
values (torchmetrics' topk and argsort order ties as they please); scores are > 0, as
torchmetrics' retrieval_precision counts a document with a score <= 0 as not relevant.
"""

from __future__ import annotations

import json
import random

import pytest

import rankgate
from rankgate.measures.registry import all_specs
from tests.cli_support import invoke

KS = (1, 3, 5, 20)


def _collection(seed: int, n_queries: int = 14):
    """Qrels with grades -1..3 (about a third of the queries without a relevant doc) and a run that
    retrieves every judged doc and some unjudged ones; depths 1 to 14, so k = 20 passes every depth."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        grades = [rng.choice([-1, 0, 0, 1, 2, 3]) for _ in range(rng.randint(1, 8))]
        if rng.random() < 0.35:
            grades = [min(g, 0) for g in grades]
        qrels[f"q{q}"] = {f"d{i}": g for i, g in enumerate(grades)}
        extra = {f"u{i}": 0 for i in range(rng.randint(0, 6))}  # unjudged: gain 0, as grades <= 0
        gains = {d: max(g, 0) for d, g in qrels[f"q{q}"].items()} | extra
        run[f"q{q}"] = {d: rng.randint(1, 4) + 0.2 * g for d, g in gains.items()}  # ties within a grade only
    return qrels, run


def _torchmetrics_values(metric, qrels, run, *, graded=False):
    """The metric's output (by its aggregation) from float64 inputs, query i being the i-th of the qrels."""
    torch = pytest.importorskip("torch")
    preds, target, indexes = [], [], []
    for i, (qid, judged) in enumerate(qrels.items()):
        for d, score in run[qid].items():
            grade = judged.get(d, 0)
            preds.append(score)
            target.append(max(grade, 0) if graded else int(grade >= 1))
            indexes.append(i)
    return metric(torch.tensor(preds, dtype=torch.float64), torch.tensor(target), indexes=torch.tensor(indexes))


def _torchmetrics_per_query(metric, qrels, run, *, graded=False):
    """The metric's value for each query, by query id (queries it skips left out)."""
    values = _torchmetrics_values(metric, qrels, run, graded=graded)
    kept = [q for q, judged in qrels.items() if metric.empty_target_action != "skip" or max(judged.values()) >= 1]
    return dict(zip(kept, (float(v) for v in values.reshape(-1)), strict=True))


def _per_query(values, dim=None):
    return values


def _torchmetrics_cases(k: int, action: str, aggregation=_per_query):
    """(torchmetrics metric, rankgate name in torchmetrics' spelling, graded target) for cutoff k."""
    tm = pytest.importorskip("torchmetrics.retrieval")
    keep = {"empty_target_action": action, "aggregation": aggregation}
    spelled = f"empty_target_action={action}"
    return [
        (tm.RetrievalPrecision(top_k=k, adaptive_k=True, **keep), f"P(adaptive_k=True,{spelled})@{k}", False),
        (tm.RetrievalPrecision(top_k=k, **keep), f"P({spelled})@{k}", False),
        (tm.RetrievalRecall(top_k=k, **keep), f"R({spelled})@{k}", False),
        (tm.RetrievalMAP(top_k=k, **keep), f"AP(denominator=retrieved_relevant,{spelled})@{k}", False),
        (tm.RetrievalMRR(top_k=k, **keep), f"RR({spelled})@{k}", False),
        (tm.RetrievalHitRate(top_k=k, **keep), f"Success({spelled})@{k}", False),
        (tm.RetrievalNormalizedDCG(top_k=k, **keep), f"nDCG({spelled})@{k}", True),
        (tm.RetrievalRPrecision(**keep), f"Rprec({spelled})", False),
        (tm.RetrievalMAP(**keep), f"AP({spelled})", False),
    ]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("action", ["neg", "pos"])
def test_empty_target_action_and_adaptive_k_equal_torchmetrics(seed, action):
    qrels, run = _collection(seed)
    for k in KS:
        cases = _torchmetrics_cases(k, action)
        got = rankgate.evaluate(qrels, run, [name for _, name, _ in cases])
        for (metric, name, graded), m in zip(cases, got.measures, strict=True):
            expected = _torchmetrics_per_query(metric, qrels, run, graded=graded)
            ours = dict(zip(got.query_ids, got.column(m).tolist(), strict=True))
            assert ours == pytest.approx(expected, abs=1e-6), (seed, name, str(m))  # torchmetrics: float32


@pytest.mark.parametrize("seed", range(6))
def test_skip_is_the_evaluation_policy_and_equals_torchmetrics(seed):
    qrels, run = _collection(seed)
    for k in KS:
        cases = _torchmetrics_cases(k, "skip")
        means = _torchmetrics_cases(k, "skip", aggregation="mean")
        names = [name.replace("empty_target_action=skip", "empty=zero") for _, name, _ in cases]
        got = rankgate.evaluate(qrels, run, names, empty="skip")
        assert got.settings["empty"] == "skip"
        with_relevant = sum(any(g >= 1 for g in judged.values()) for judged in qrels.values())
        assert got.queries["evaluated"] == with_relevant
        for (metric, name, graded), (mean, _, _), m in zip(cases, means, got.measures, strict=True):
            expected = _torchmetrics_per_query(metric, qrels, run, graded=graded)
            assert dict(zip(got.query_ids, got.column(m).tolist(), strict=True)) == pytest.approx(expected, abs=1e-6)
            their_mean = float(_torchmetrics_values(mean, qrels, run, graded=graded))
            assert got[m] == pytest.approx(their_mean, abs=1e-6), (seed, name)


def test_skip_as_a_measure_parameter_names_the_evaluation_policy():
    for name in ("P(empty_target_action=skip)@5", "nDCG(empty=skip)@5"):
        with pytest.raises(rankgate.MeasureError, match="--empty skip"):
            rankgate.parse_measure(name)


def test_empty_error_refuses_like_torchmetrics(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    tm = pytest.importorskip("torchmetrics.retrieval")
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0, "d": -1}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "d": 1.0}}
    metric = tm.RetrievalPrecision(top_k=2, empty_target_action="error")
    with pytest.raises(ValueError, match="no positive target"):
        metric(torch.tensor([2.0, 1.0, 2.0, 1.0]), torch.tensor([1, 0, 0, 0]), indexes=torch.tensor([0, 0, 1, 1]))
    with pytest.raises(rankgate.InputError, match=r"at least 1 evaluated query has no relevant judgment.*--empty skip"):
        rankgate.evaluate(qrels, run, "P(empty_target_action=error)@2")
    kept = rankgate.evaluate(qrels, run, "P(empty=error)@2", empty="skip")  # nothing left to refuse
    assert kept.per_query == {"q1": {"P(empty=error)@2": 0.5}}
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 c 0\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2.0 x\nq2 Q0 c 1 2.0 x\n")
    files = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    code, _, err = invoke(capsys, "eval", *files, "-m", "RR(empty=error)")
    assert code == 2 and "no relevant judgment" in err and "Traceback" not in err


@pytest.mark.parametrize("seed", range(6))
def test_adaptive_k_equals_the_precision_recall_curve(seed):
    torch = pytest.importorskip("torch")
    tm = pytest.importorskip("torchmetrics.functional.retrieval")
    qrels, run = _collection(seed)
    max_k = 16
    names = [f"P(denominator=min_k_retrieved)@{k}" for k in range(1, max_k + 1)]
    got = rankgate.evaluate(qrels, run, names).per_query
    for qid, judged in qrels.items():
        docs = list(run[qid])
        preds = torch.tensor([run[qid][d] for d in docs], dtype=torch.float64)
        target = torch.tensor([judged.get(d, 0) >= 1 for d in docs])
        precision, _, _ = tm.retrieval_precision_recall_curve(preds, target, max_k=max_k, adaptive_k=True)
        assert [got[qid][n] for n in names] == pytest.approx(precision.tolist(), abs=1e-6), (seed, qid)


def test_peer_options_hand_worked():
    # q1 retrieves a (relevant), b, c (relevant): 3 docs; q2 has no relevant judgment
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 0}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0, "y": 0.5}}
    names = ["P@5", "P(denominator=min_k_retrieved)@5", "P(denominator=min_k_retrieved)@2", "P(empty=one)@5",
             "R(empty=one)@1", "nDCG(empty=one)@2", "RR(empty=one)"]  # fmt: skip
    res = rankgate.evaluate(qrels, run, names)
    ndcg = 1.0 / (2.0 + 1.0 / 1.5849625007211563)  # DCG@2 = 1 (a, b); ideal: c (2), a (1)
    assert list(res.per_query["q1"].values()) == pytest.approx([2 / 5, 2 / 3, 1 / 2, 2 / 5, 1 / 2, ndcg, 1.0])
    assert list(res.per_query["q2"].values()) == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    assert res["P(empty=one)@5"] == pytest.approx((2 / 5 + 1) / 2)  # torchmetrics' pos: q2 counts as 1
    skipped = rankgate.evaluate(qrels, run, names, empty="skip")
    assert skipped.query_ids == ["q1"] and skipped["P(empty=one)@5"] == pytest.approx(2 / 5)  # skip: q2 left out


# -- ir_measures: Judged counting every qrels doc, whatever its grade ------------------------------
def _judged_collection(seed: int):
    """Grades -2..2 (trec_eval's -1 non-pool and -2 unjudged among them) and runs with ties."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(12):
        pool = [f"d{i}" for i in range(rng.randint(1, 15))]
        qrels[f"q{q}"] = {d: rng.choice([-2, -1, -1, 0, 1, 2]) for d in pool if rng.random() < 0.6} or {"d0": -1}
        picked = rng.sample(pool, rng.randint(1, len(pool)))
        run[f"q{q}"] = {d: float(rng.randint(0, 5)) for d in picked}
    return qrels, run


@pytest.mark.parametrize("seed", range(10))
def test_judged_negative_judged_equals_ir_measures(seed):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _judged_collection(seed)
    # ir_measures orders a tie by doc id ascending; hand rankgate that order with ties="input"
    ordered = {q: dict(sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))) for q, docs in run.items()}
    for k in (1, 3, 5, 10, 30):
        name = f"Judged(negative=judged)@{k}"
        got = rankgate.evaluate(qrels, ordered, [name, f"Judged@{k}"], ties="input").per_query
        expected = {r.query_id: r.value for r in ir_measures.judged.iter_calc([ir_measures.Judged @ k], qrels, run)}
        assert expected.keys() == got.keys()
        for qid, value in expected.items():
            assert got[qid][name] == pytest.approx(value, abs=1e-12), (seed, qid, k)
            assert got[qid][f"Judged@{k}"] <= got[qid][name]  # the default counts fewer docs as judged


def test_judged_hand_worked():
    # a (2), b (-1: trec_eval's non-pool), x (not in the qrels), c (0), e (-2: trec_eval's pooled but unjudged)
    qrels = {"q": {"a": 2, "b": -1, "c": 0, "e": -2}}
    run = {"q": {"a": 5.0, "b": 4.0, "x": 3.0, "c": 2.0, "e": 1.0}}
    res = rankgate.evaluate(qrels, run, ["Judged@2", "Judged(negative=judged)@2", "Judged@5",
                                         "Judged(negative=judged)@5", "Unjudged@5"])  # fmt: skip
    assert list(res.per_query["q"].values()) == [1 / 2, 2 / 2, 2 / 5, 4 / 5, 3 / 5]


# -- the options everywhere: listing, eval, compare, gate ---------------------------------------
def test_the_options_are_listed(capsys):
    code, out, err = invoke(capsys, "measures", "--format", "json")
    assert code == 0, err
    rows = {row["name"]: row for row in json.loads(out)}
    text = json.dumps([rows["P"], rows["Judged"], rows["nDCG"]])
    for fragment in ("min_k_retrieved", "adaptive_k", "empty_target_action", "negative=judged"):
        assert fragment in text, fragment
    takes_empty = {s.name for s in all_specs() if "empty" in {p.name for p in s.params}}
    assert takes_empty == {"P", "R", "AP", "RR", "nDCG", "Success", "Rprec"}


def _files(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b -1\nq2 0 c 0\nq3 0 d 1\n")
    (tmp_path / "a.txt").write_text("q1 Q0 a 1 2.0 a\nq1 Q0 b 2 1.0 a\nq2 Q0 c 1 1.0 a\nq3 Q0 d 1 1.0 a\n")
    (tmp_path / "b.txt").write_text("q1 Q0 b 1 2.0 b\nq2 Q0 c 1 1.0 b\nq3 Q0 x 1 1.0 b\n")
    return [str(tmp_path / n) for n in ("qrels.txt", "a.txt", "b.txt")]


def test_the_options_in_eval_compare_and_gate(capsys, tmp_path):
    qrels, a, b = _files(tmp_path)
    names = ["P(adaptive_k=True)@5", "P(empty_target_action=pos)@5", "Judged(negative=judged)@5"]
    flags = [x for n in names for x in ("-m", n)]
    code, out, err = invoke(capsys, "eval", qrels, a, *flags, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    # q1: 1 relevant of 2 returned; q2: nothing relevant (0, or 1 with empty=one); q3: 1 of 1;
    # b (grade -1) is judged only under negative=judged
    assert data["aggregate"] == pytest.approx({"P(denominator=min_k_retrieved)@5": (1 / 2 + 0 + 1) / 3,
                                               "P(empty=one)@5": (1 / 5 + 1 + 1 / 5) / 3,
                                               "Judged(negative=judged)@5": 1.0})  # fmt: skip
    code, out, err = invoke(capsys, "compare", qrels, a, b, *flags, "--empty", "skip", "--format", "json")
    assert code == 0, err
    compared = json.loads(out)  # --empty skip leaves q2 out of both runs: the pairs are q1 and q3
    assert compared["queries"]["compared"] == 2 and compared["settings"]["empty"] == "skip"
    first = compared["comparisons"][0]
    assert first["measure"] == "P(denominator=min_k_retrieved)@5" and first["baseline_mean"] == pytest.approx(0.75)
    assert (first["wins"], first["losses"]) == (0, 2)
    config = tmp_path / "gates.yaml"
    config.write_text("gates:\n  - name: p\n    metric: P(adaptive_k=True)@5\n    threshold: 0.2\n")
    code, out, err = invoke(capsys, "gate", "--qrels", qrels, "--run", a, "--config", str(config), "--format", "json")
    assert code == 0, err
    gate = json.loads(out)["gates"][0]
    assert gate["metric"] == "P(denominator=min_k_retrieved)@5" and gate["value"] == pytest.approx(0.5)


# -- kernels against their reference twins, on the awkward collections of tests/randomized.py ------
OPTIONS = [
    "P(denominator=min_k_retrieved)@1", "P(denominator=min_k_retrieved)@7", "P(denominator=min_k_retrieved,rel=2)@30",
    "P(empty=one)@5", "R(empty=one)", "R(empty=one,rel=2)@10", "AP(empty=one)", "AP(denominator=min_k_R,empty=one)@4",
    "RR(empty=one)@3", "nDCG(empty=one)", "nDCG(empty=one,min_grade=2)@5", "nDCG(empty=one,gain=exp)@10",
    "Success(empty=one)@3", "Rprec(empty=one,rel=2)", "Judged(negative=judged)@5", "Judged(negative=judged)@30",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(20))
def test_option_kernels_equal_their_reference(seed):
    from tests.randomized import random_collection
    from tests.test_kernels_vs_reference import trec_order

    qrels, run = random_collection(seed, n_queries=15)
    res = rankgate.evaluate(qrels, run, OPTIONS)
    assert [str(m) for m in res.measures] == OPTIONS  # the canonical names echo the options
    max_grade = max((g for d in qrels.values() for g in d.values()), default=0)
    for qid, values in res.per_query.items():
        ranking = trec_order(run.get(qid, {}))
        for m in res.measures:
            expected = m.spec.reference(ranking, qrels[qid], m, max_grade)
            assert values[str(m)] == pytest.approx(expected, abs=1e-12), (seed, qid, str(m))
    assert (rankgate.evaluate(qrels, run, OPTIONS, chunk_rows=5).values == res.values).all()


def test_adaptive_k_is_not_warned_about_short_rankings(tmp_path, capsys):
    # P(denominator=min_k_retrieved)@5 divides by the docs returned: a 2-doc ranking costs it
    # nothing, so only plain P@5 is named in the "fewer than the cutoff" warning.
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 5 r\nq1 Q0 d2 2 4 r\n")
    files = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    code, _, err = invoke(capsys, "eval", *files, "-m", "P(denominator=min_k_retrieved)@5")
    assert code == 0 and "fewer than the cutoff" not in err
    code, _, err = invoke(capsys, "eval", *files, "-m", "P(denominator=min_k_retrieved)@5", "-m", "P@5")
    assert code == 0 and "fewer than the cutoff of P@5\n" in err.replace("\r", "")


def test_warnings_say_which_measures_score_one_for_queries_without_relevant_docs(tmp_path, capsys):
    # With P(empty=one)@5 the "score 0" warnings were wrong for that measure: it scores 1 there.
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 0\nq3 0 c 0\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 3 r\nq2 Q0 x 1 3 r\n")
    files = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    code, out, err = invoke(
        capsys, "eval", *files, "-m", "P(empty=one)@5", "-m", "P@5", "--per-query", "--format", "json"
    )
    assert code == 0
    per_query = json.loads(out)["per_query"]
    assert per_query["q2"]["P(empty=one)@5"] == 1.0 and per_query["q3"]["P(empty=one)@5"] == 1.0
    assert "they score 0 on most measures, 1 on P(empty=one)@5" in err
    assert "(1 on P(empty=one)@5 where no doc is relevant)" in err
    code, _, err = invoke(capsys, "eval", *files, "-m", "P@5")
    assert code == 0 and "they score 0 on most measures (pass" in err


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "trec"])
def test_ci_in_a_format_that_cannot_hold_it_is_said(tmp_path, capsys, fmt):
    # eval --ci --format csv dropped the intervals silently.
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 3 r\nq2 Q0 x 1 3 r\n")
    files = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    code, _, err = invoke(capsys, "eval", *files, "-m", "AP", "--ci", "--format", fmt)
    assert code == 0 and f"--format {fmt} holds no confidence intervals" in err
    code, _, err = invoke(capsys, "eval", *files, "-m", "AP", "--ci", "--format", "json")
    assert code == 0 and "holds no confidence intervals" not in err
