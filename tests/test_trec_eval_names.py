"""trec_eval's measure names mean trec_eval's measures (issue 18 item 3).

A bare cut family is the family at trec_eval's default cutoffs (``ndcg_cut`` is nDCG at 5, 10,
..., 1000; ``success`` at 1, 5, 10), ``P.5,10`` and ``P_5,10`` are lists, and a name that could
be read two ways is refused with both readings. pytrec_eval (trec_eval 9.0.8) is the oracle:
given the same name it must report the same measures with the same values, per query and mean.
"""

from __future__ import annotations

import json

import pytest

import rankgate
from rankgate.cli.options import split_measures
from rankgate.errors import MeasureError
from rankgate.measures import parse_measures
from rankgate.measures.registry import TREC_EVAL_CUTOFFS
from tests.cli_support import invoke
from tests.randomized import random_collection

pytrec_eval = pytest.importorskip("pytrec_eval")

DEFAULT = TREC_EVAL_CUTOFFS
# trec_eval's key prefix of each rankgate family, as pytrec_eval writes its keys (ndcg_cut_10)
PREFIX = {"P": "P", "R": "recall", "nDCG": "ndcg_cut", "AP": "map_cut", "Success": "success"}


@pytest.mark.parametrize(
    ("name", "family", "cutoffs"),
    [
        ("ndcg_cut", "nDCG", DEFAULT), ("P", "P", DEFAULT), ("recall", "R", DEFAULT), ("map_cut", "AP", DEFAULT),
        ("success", "Success", (1, 5, 10)), ("P.5,10", "P", (5, 10)), ("P_5,10", "P", (5, 10)),
        ("ndcg_cut.10,5,10", "nDCG", (10, 5)), ("recall_1000,7", "R", (1000, 7)), ("map_cut.3", "AP", (3,)),
        ("success.1,5", "Success", (1, 5)),
    ],
)  # fmt: skip
def test_trec_eval_names_expand_as_trec_eval_does(name, family, cutoffs):
    assert [str(m) for m in parse_measures([name])] == [f"{family}@{k}" for k in cutoffs]


@pytest.mark.parametrize("name", ["ndcg_cut", "P", "recall", "map_cut", "success", "P.5,10", "P_5,10"])
def test_one_measure_wanted_refuses_a_name_of_several(name):
    with pytest.raises(rankgate.MeasureError, match=r"measures .*one is needed here"):
        rankgate.parse_measure(name)


@pytest.mark.parametrize(
    ("name", "readings"),
    [
        ("Recall", ["trec_eval's 'recall', R at cutoffs 5, 10", "write 'R'"]),
        ("NDCG_CUT", ["trec_eval's 'ndcg_cut', nDCG at cutoffs", "write 'nDCG'"]),
        ("Map_Cut", ["trec_eval's 'map_cut', AP at cutoffs", "write 'AP'"]),
        ("p", ["trec_eval's 'P', P at cutoffs", "write 'P@10'"]),
        ("SUCCESS", ["trec_eval's 'success', Success at cutoffs 1, 5, 10", "write 'Success@10'"]),
    ],
)
def test_a_name_read_two_ways_is_refused_with_both_readings(name, readings):
    with pytest.raises(rankgate.MeasureError, match="can be read two ways") as info:
        parse_measures([name])
    for reading in readings:
        assert reading in str(info.value)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("R", "R"), ("nDCG", "nDCG"), ("ndcg", "nDCG"), ("map", "AP"), ("AP", "AP"), ("recall@10", "R@10")],
)
def test_names_of_one_uncut_measure_keep_their_meaning(name, canonical):
    assert [str(m) for m in parse_measures([name])] == [canonical]


def test_lists_use_trec_eval_separators_only():
    with pytest.raises(rankgate.MeasureError, match="'P@5', 'P@10'"):
        parse_measures(["P@5,10"])


NAMES = ["ndcg_cut", "P", "recall", "map_cut", "success", "P.5,10", "P_3,7", "ndcg_cut.1,2,1000", "recall_5,100"]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("name", NAMES)
def test_expanded_names_equal_pytrec_eval(name, seed):
    deep = seed % 3 == 0  # rankings past rank 1000, so every default cutoff counts
    qrels, run = random_collection(seed, n_docs=1200 if deep else 40, max_depth=1100 if deep else 25)
    judged = {q: dict(d) for q, d in qrels.items() if d}
    expected = pytrec_eval.RelevanceEvaluator(judged, {name}).evaluate(run)
    res = rankgate.evaluate(qrels, run, [name], queries="intersection")
    keys = {m: f"{PREFIX[m.name]}_{m.cutoff}" for m in parse_measures([name])}
    assert set(res.per_query) == set(expected)
    for qid, values in expected.items():
        assert set(values) == set(keys.values()), name  # the same measures as trec_eval's
        for m, key in keys.items():
            assert res.per_query[qid][str(m)] == pytest.approx(values[key], abs=1e-9), (seed, qid, key)
    for m, key in keys.items():
        mean = sum(v[key] for v in expected.values()) / len(expected)
        assert res.aggregate[str(m)] == pytest.approx(mean, abs=1e-9), (seed, key)


@pytest.mark.parametrize(
    ("values", "split"),
    [
        (("P.5,10",), ["P.5,10"]), (("P_5,10,nDCG@10",), ["P_5,10", "nDCG@10"]),
        (("P@5,nDCG(gain=exp)@10",), ["P@5", "nDCG(gain=exp)@10"]), (("recall.5,100", "map"), ["recall.5,100", "map"]),
    ],
)  # fmt: skip
def test_dash_m_keeps_trec_eval_lists_whole(values, split):
    assert split_measures(values) == split


def test_eval_reads_trec_eval_names(capsys, tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\n")
    run.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n")
    code, out, _ = invoke(capsys, "eval", str(qrels), str(run), "-m", "P.5,10", "-m", "ndcg_cut", "--format", "json")
    assert code == 0
    assert json.loads(out)["measures"] == ["P@5", "P@10", *(f"nDCG@{k}" for k in DEFAULT)]


@pytest.mark.parametrize(
    ("name", "trec_eval_reading", "cut"),
    [
        ("map.5", "'map' over the whole ranking", "'AP@5' or trec_eval's 'map_cut.5'"),
        ("recip_rank.10", "'recip_rank' over the whole ranking", "'RR@10'"),
        ("num_ret.5", "'num_ret' over the whole ranking", "'NumRet@5'"),
        ("num_rel_ret.5,10", "'num_rel_ret' over the whole ranking", "'NumRelRet@5'"),
        ("num_nonrel_judged_ret.5", "'num_nonrel_judged_ret' over the whole ranking", "'NumNonrelJudgedRet@5'"),
        ("ndcg.10", "trec_eval refuses it", "'nDCG@10' or trec_eval's 'ndcg_cut.10'"),
        ("dcg.3", "trec_eval refuses it", "'DCG@3'"),
    ],
)
def test_dot_numbers_on_words_trec_eval_does_not_cut_are_refused(name, trec_eval_reading, cut):
    # trec_eval ignores `.5` on map (or refuses it on ndcg); rankgate's alias would cut at 5:
    # a silently different number either way, so both readings are named instead.
    with pytest.raises(rankgate.MeasureError) as caught:
        parse_measures([name])
    message = str(caught.value)
    assert "can be read two ways" in message and trec_eval_reading in message and cut in message


@pytest.mark.parametrize(("name", "expected"), [("map_5", "AP@5"), ("map@5", "AP@5"), ("unj.5", "Unjudged@5")])
def test_unambiguous_cut_spellings_still_read(name, expected):
    assert [str(m) for m in parse_measures([name])] == [expected]


@pytest.mark.parametrize("name", ["yaap", "YAAP", "prefs_simp", "prefs", "all_prefs", "qrels_jg", "P_avgjg", "yaap.3"])
def test_trec_eval_measures_rankgate_lacks_are_refused_by_name(capsys, tmp_path, name):
    """`rankgate eval` refuses them as `rankgate trec_eval` does (one list), not as unknown names."""
    from rankgate.measures.trec_names import TREC_EVAL_NOT_READ

    with pytest.raises(MeasureError, match="is not available in rankgate") as e:
        parse_measures([name])
    assert "Unknown measure" not in str(e.value) and "Did you mean" not in str(e.value)
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("q1 0 a 1\n")
    r.write_text("q1 Q0 a 1 1 t\n")
    code, out, err = invoke(capsys, "eval", "-m", name, str(q), str(r))
    assert code == 2 and out == "" and str(e.value) in err
    if name.partition(".")[0] in TREC_EVAL_NOT_READ:  # trec_eval's names are case-sensitive
        code, _, te_err = invoke(capsys, "trec_eval", "-m", name, str(q), str(r))
        assert code == 2 and str(e.value) in te_err
