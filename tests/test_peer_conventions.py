"""Each peer convention, as a named option, against the peer's own function on randomized inputs.

scikit-learn (ndcg_score, dcg_score), ranx (evaluate), torchmetrics (retrieval functions) and
sentence-transformers (InformationRetrievalEvaluator.compute_metrics) are test-only oracles;
BEIR's ignore_identical_ids is hand-coded from its source (it pops the self id, then scores).
"""

from __future__ import annotations

import json
import random

import pytest

import rankgate
from tests.cli_support import invoke


def _collection(seed: int, *, ties: bool, n_queries: int = 12):
    """Qrels (every doc of a query judged, grades 0..3) and a run over the same docs."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(rng.randint(2, 14))]
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2, 3]) for d in docs}
        scores = [rng.randint(0, 4) if ties else rng.random() for _ in docs]
        run[f"q{q}"] = dict(zip(docs, (float(s) for s in scores), strict=True))
    return qrels, run


# -- scikit-learn: tie-averaged gains (McSherry-Najork) ----------------------------------------
@pytest.mark.parametrize("seed", range(8))
def test_ties_average_equals_sklearn(seed):
    from sklearn.metrics import dcg_score, ndcg_score

    qrels, run = _collection(seed, ties=True)
    for k in (None, 1, 3, 5):
        cut = "" if k is None else f"@{k}"
        names = [f"nDCG(ties=average){cut}", f"DCG(ties=average){cut}"]
        # chunk_rows=3 splits the queries into blocks: a tie group never spans two of them
        got = rankgate.evaluate(qrels, run, names, chunk_rows=3).per_query
        for qid, judged in qrels.items():
            docs = list(judged)
            y_true, y_score = [[judged[d] for d in docs]], [[run[qid][d] for d in docs]]
            expected_ndcg = ndcg_score(y_true, y_score, k=k) if sum(y_true[0]) else 0.0
            assert got[qid][names[0]] == pytest.approx(expected_ndcg, abs=1e-12), (seed, qid, k)
            assert got[qid][names[1]] == pytest.approx(dcg_score(y_true, y_score, k=k), abs=1e-12), (seed, qid, k)


def test_ties_average_hand_worked():
    # a and b tie above the cutoff with c below: gains 2 and 0 average to 1 at ranks 1 and 2
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    res = rankgate.evaluate(qrels, run, ["DCG(ties=average)@1", "DCG(ties=average)@2", "DCG@2"])
    assert res["DCG(ties=average)@1"] == pytest.approx(1.0)  # mean gain 1 at rank 1
    assert res["DCG(ties=average)@2"] == pytest.approx(1.0 + 1.0 / 1.584962500721156)
    assert res["DCG@2"] == pytest.approx(0.0 + 2.0 / 1.584962500721156)  # trec: b before a (doc id descending)


def test_ties_average_refuses_condensed_lists():
    with pytest.raises(rankgate.InputError, match="judged_only"):
        rankgate.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "nDCG(ties=average)@5", judged_only=True)


# -- ranx: hits, f1, dcg, the -lN suffix --------------------------------------------------------
RANX_NAMES = ["hits@5", "hits@3-l2", "f1@5", "f1@4-l2", "dcg@5", "dcg_burges@3", "ndcg@5-l2", "precision@4-l3",
              "map@5-l2", "recall@5-l2", "ndcg_burges@10-l2"]  # fmt: skip


@pytest.mark.slow  # ranx compiles its numba kernels on first use (about a minute without a warm cache)
def test_ranx_names_equal_ranx():
    ranx = pytest.importorskip("ranx")
    for seed in range(4):
        qrels, run = _collection(seed, ties=False)
        keep = [q for q in qrels if any(g > 0 for g in qrels[q].values())]  # ranx needs a relevant doc per query
        ranx_qrels = ranx.Qrels({q: {d: g for d, g in qrels[q].items() if g > 0} for q in keep})
        got = rankgate.evaluate({q: qrels[q] for q in keep}, {q: run[q] for q in keep}, RANX_NAMES)
        expected = ranx.evaluate(ranx_qrels, ranx.Run({q: run[q] for q in keep}), RANX_NAMES)
        for name in RANX_NAMES:
            canonical = str(rankgate.parse_measure(name))
            assert got.aggregate[canonical] == pytest.approx(expected[name], abs=1e-12), (seed, name)


def test_hits_is_a_mean_and_numrelret_a_sum():
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
    res = rankgate.evaluate(qrels, run, ["hits@10", "NumRelRet@10"])
    assert res.aggregate == {"Hits@10": 1.5, "NumRelRet@10": 3.0}


# -- torchmetrics: AP over the relevant retrieved, set precision --------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_torchmetrics_average_precision_and_set_precision(seed):
    torch = pytest.importorskip("torch")
    tm = pytest.importorskip("torchmetrics.functional.retrieval")
    qrels, run = _collection(seed, ties=False)
    for k in (2, 5):
        name = f"AP(denominator=retrieved_relevant)@{k}"
        got = rankgate.evaluate(qrels, run, [name, "SetP"]).per_query
        for qid, judged in qrels.items():
            docs = list(judged)
            preds = torch.tensor([run[qid][d] for d in docs], dtype=torch.float64)
            target = torch.tensor([judged[d] >= 1 for d in docs])
            ap = float(tm.retrieval_average_precision(preds, target, top_k=k))  # float32: agree to 1e-7
            assert got[qid][name] == pytest.approx(ap, abs=1e-7), (seed, qid, k)
            set_precision = float(tm.retrieval_precision(preds, target))  # torchmetrics returns float32 here
            assert got[qid]["SetP"] == pytest.approx(set_precision, abs=1e-7)


# -- sentence-transformers: MAP@k divides by min(k, R) ------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_sentence_transformers_map_at_k(seed):
    pytest.importorskip("sentence_transformers")
    from sentence_transformers.evaluation import InformationRetrievalEvaluator

    qrels, run = _collection(seed, ties=False)
    ks = [1, 3, 10]
    got = rankgate.evaluate(qrels, run, [f"AP(denominator=min_k_R)@{k}" for k in ks]).per_query
    for qid, judged in qrels.items():
        relevant = {d for d, g in judged.items() if g >= 1}
        if not relevant:
            continue
        evaluator = InformationRetrievalEvaluator(
            {qid: "text"}, {d: "text" for d in judged}, {qid: relevant}, map_at_k=ks, write_csv=False
        )
        hits = [{"corpus_id": d, "score": s} for d, s in run[qid].items()]
        expected = evaluator.compute_metrics([hits])["map@k"]
        for k in ks:
            assert got[qid][f"AP(denominator=min_k_R)@{k}"] == pytest.approx(expected[k], abs=1e-12), (qid, k)


# -- BEIR: ignore_identical_ids ------------------------------------------------------------------
def _beir_pop_identical(run):
    """BEIR's EvaluateRetrieval.evaluate with ignore_identical_ids=True: pop every doc named as its query."""
    results = {q: dict(docs) for q, docs in run.items()}
    for qid, rels in results.items():
        for pid in list(rels):
            if qid == pid:
                results[qid].pop(pid)
    return results


@pytest.mark.parametrize("seed", range(6))
def test_drop_self_equals_beir(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(seed)
    qrels, run = _collection(seed, ties=False)
    for qid in qrels:  # some queries retrieve themselves, at the top or lower
        if rng.random() < 0.6:
            run[qid][qid] = rng.choice([2.0, rng.random()])
            if rng.random() < 0.5:
                qrels[qid][qid] = 1  # BEIR drops it even when it is judged relevant
    names = {"ndcg_cut_10": "nDCG@10", "map_cut_10": "AP@10", "recall_5": "R@5", "P_5": "P@5"}
    popped = _beir_pop_identical(run)
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(popped)
    got = rankgate.evaluate(qrels, run, list(names.values()), queries="intersection", drop_self=True)
    assert got.settings["drop_self"] is True
    for qid, values in expected.items():
        for theirs, ours in names.items():
            assert got.per_query[qid][ours] == pytest.approx(values[theirs], abs=1e-12), (qid, ours)
    assert not any("own id" in w or "query id" in w for w in got.warnings)


def test_drop_self_on_the_command_line(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 q1 1 9.0 x\nq1 Q0 d1 2 1.0 x\n")
    code, plain, _ = invoke(capsys, "eval", str(qrels), str(run), "-m", "RR", "--format", "json")
    assert code == 0
    code, dropped, err = invoke(capsys, "eval", str(qrels), str(run), "-m", "RR", "--drop-self", "--format", "json")
    assert code == 0, err
    assert json.loads(plain)["aggregate"]["RR"] == 0.5
    assert "drop_self" not in json.loads(plain)["settings"]
    out = json.loads(dropped)
    assert out["aggregate"]["RR"] == 1.0 and out["settings"]["drop_self"] is True
