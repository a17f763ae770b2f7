"""Names from other tools where `rankgate eval` reads measures: ir_measures' IPrec@0.5, glued digits, diversity."""

from __future__ import annotations

import pytest

import rankgate
from rankgate.measures.parse import read_name
from tests.cli_support import invoke
from tests.randomized import random_collection


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("IPrec@0.5", "IPrec(recall=0.5)"), ("IPrec@1", "IPrec(recall=1.0)"), ("IPrec@0", "IPrec"),
     ("IPrec@.25", "IPrec(recall=0.25)"), ("IPrec(rel=2)@0.5", "IPrec(recall=0.5,rel=2)")],
)  # fmt: skip
def test_iprec_at_sets_the_recall_level_as_in_ir_measures(name, canonical):
    assert [str(m) for m in read_name(name)] == [canonical]


@pytest.mark.parametrize(
    ("name", "words"),
    [("IPrec@2", "'recall' parameter of IPrec"), ("IPrec(recall=0.5)@0.2", "'recall' twice"),
     ("IPrec@x", "'@' sets IPrec's 'recall'")],
)  # fmt: skip
def test_iprec_at_refusals(name, words):
    with pytest.raises(rankgate.MeasureError, match=words):
        read_name(name)


@pytest.mark.parametrize("seed", range(6))
def test_iprec_at_equals_ir_measures(seed):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = random_collection(seed)  # scores in quarter steps: exact in pytrec_eval's float32
    names = ["IPrec@0.5", "IPrec@0.0", "IPrec@1.0", "IPrec@0.3"]
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, run)
    ours = rankgate.evaluate(qrels, run, names).aggregate  # both score a query missing from the run 0
    for name in names:
        assert ours[str(rankgate.parse_measure(name))] == pytest.approx(theirs[ir_measures.parse_measure(name)]), name


@pytest.mark.parametrize(
    ("name", "hint"),
    [("ndcg_cut10", "'ndcg_cut.10' (nDCG@10)"), ("P5", "'P.5' (P@5)"), ("ndcg10", "'nDCG@10'"),
     ("recall100", "'recall.100' (R@100)"), ("mrr10", "'RR@10'")],
)  # fmt: skip
def test_glued_digits_are_suggested_with_their_separator(name, hint):
    with pytest.raises(rankgate.MeasureError) as info:
        read_name(name)
    assert f"Did you mean {hint}?" in str(info.value)


@pytest.mark.parametrize(
    ("name", "call"),
    [("alpha_nDCG@10", "-m alpha-nDCG@10"), ("alpha-nDCG(alpha=0.3)@5", "-m alpha-nDCG(alpha=0.3)@5"),
     ("ERR_IA@20", "-m ERR-IA@20"), ("NRBP", "-m NRBP"), ("P_IA@10", "-m P-IA@10"), ("StRecall@5", "-m S-recall@5"),
     ("alpha_nDCG(judged_only=True)@10", "as in `-m alpha-nDCG@20`")],
)  # fmt: skip
def test_diversity_measures_point_to_rankgate_diversity(name, call):
    with pytest.raises(rankgate.MeasureError) as info:
        read_name(name)
    assert "rankgate diversity" in str(info.value) and call in str(info.value), str(info.value)


def test_diversity_measures_rankgate_lacks_say_so():
    with pytest.raises(rankgate.MeasureError, match="rankgate does not compute"):
        read_name("nNRBP")


def test_the_cli_gives_each_hint_in_one_line(capsys, tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("q1 0 d1 1\n")
    r.write_text("q1 Q0 d1 1 1.0 r\n")
    for name, words in (("ndcg_cut10", "'ndcg_cut.10'"), ("alpha_nDCG@10", "rankgate diversity")):
        code, out, err = invoke(capsys, "eval", str(q), str(r), "-m", name)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and words in err, err
    code, out, err = invoke(capsys, "eval", str(q), str(r), "-m", "IPrec@0.5", "--format", "json")
    assert code == 0 and '"IPrec(recall=0.5)": 1.0' in out, err
