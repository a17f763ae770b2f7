"""trec_eval's parameter forms as rankgate measure names: gain maps, recall levels, rbp's p.

``G.1=3,2=9`` (and ``G_1=3,2=9``, the name trec_eval prints) is ``G(g1=3.0,g2=9.0)`` wherever
rankgate reads a measure name; ``11pt_avg.0.25,0.5`` is ``IPrecAvg(levels='0.25,0.5')``. The
values are checked against trec_eval's own output (tests/golden/trec_eval_cli, written by the
binary), through the API rather than ``rankgate trec_eval``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import rankgate
from rankgate.measures import parse_measures
from tests.cli_support import invoke

GOLDEN = Path(__file__).resolve().parent / "golden" / "trec_eval_cli"


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("G.1=3,2=9", "G(g1=3.0,g2=9.0)"), ("G_1=3,+2=9", "G(g1=3.0,g2=9.0)"),
        ("ndcg.1=3,2=9", "GainNDCG(g1=3.0,g2=9.0)"),
        ("ndcg_rel.0=1", "nDCGRel(g0=1.0)"), ("NDCG_REL_0=1,1=2", "nDCGRel(g0=1.0,g1=2.0)"),
        ("Rndcg.2=-1", "RnDCG(g2=-1.0)"), ("rbp_resid.p=0.5", "RBPResid(p=0.5)"), ("rbp_resid_p=.5", "RBPResid(p=0.5)"),
        ("11pt_avg.0.25,.5", "IPrecAvg(levels='0.25,0.5')"), ("11pt_avg_0.25,0.5", "IPrecAvg(levels='0.25,0.5')"),
        ("11pt_avg.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", "IPrecAvg"), ("11pt_avg", "IPrecAvg"),
        ("IPrecAvg(levels='0.5')", "IPrecAvg(levels='0.5')"), ("iprec_at_recall.0.125", "IPrec(recall=0.125)"),
        ("dcg.1=3,2=-9", "GainDCG(g1=3.0,g2=-9.0)"), ("ideal_dcg", "IdealDCG"), ("ideal_dcg_0=1", "IdealDCG(g0=1.0)"),
        ("G(g1=3.0,g2=9.0)", "G(g1=3.0,g2=9.0)"), ("GradedRBP(g1=0.25,p=0.5)", "GradedRBP(g1=0.25,p=0.5)"),
    ],
)  # fmt: skip
def test_parameter_forms_read_as_canonical_measures(name, canonical):
    assert [str(m) for m in parse_measures([name])] == [canonical]
    assert str(rankgate.parse_measure(canonical)) == canonical  # the canonical name reads back


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("rbp.p=0.5", "GradedRBP(p=0.5)' ), or binary rank-biased precision, RBP(p=0.5)"),
        ("rbp.1=3", "binary RBP, which has no gains"),
        ("ndcg.x=3", "trec_eval would ignore 'x'"), ("Rndcg.p=3", "would ignore 'p'"),
        ("G.12=3", "grades 0 to 9"), ("G.1=3,1=4", "each once"), ("G.1=3=4", "malformed pair parameters"),
        ("G.1=1e999", "plain finite numbers"), ("11pt_avg.0.5,0.2", "ascending"), ("11pt_avg.2", "ascending"),
        ("IPrecAvg(levels='0.5,0.2')", "ascending numbers from 0 to 1"), ("IPrecAvg(levels='.5')", "as Python prints"),
        ("rbp_resid.p=1.5", "between 0 and 1"), ("rbp.3=3", "its own value"),
    ],
)  # fmt: skip
def test_parameter_forms_rankgate_cannot_honour_are_refused(name, words):
    with pytest.raises(rankgate.MeasureError) as info:
        parse_measures([name])
    assert words.replace("' ), ", "'), ") in str(info.value)


def _golden_rows(case: str) -> dict[str, dict[str, str]]:
    """``printed name -> query -> value text`` of a committed trec_eval output."""
    rows: dict[str, dict[str, str]] = {}
    for line in (GOLDEN / f"{case}.out").read_text().splitlines():
        name, query, value = line.split("\t")
        rows.setdefault(name.strip(), {})[query] = value
    return rows


# (golden case, printed name there, rankgate name): -q rows of queries in both files
CASES = [
    ("gains", "G_1=3,2=9", "G.1=3,2=9"), ("gains", "ndcg_rel_0=1,2=5", "ndcg_rel.0=1,2=5"),
    ("gains", "Rndcg_1=2,2=2", "Rndcg_1=2,2=2"), ("gains", "rbp_p=0.5,1=3", "GradedRBP(p=0.5,g1=3)"),
    ("gains", "rbp_resid_p=0.3,1=5,x=2", "rbp_resid.p=0.3"), ("gains", "ndcg_0=1,3=5,x=2", "ndcg.0=1,3=5"),
    ("cuts", "11pt_avg_.1,.9", "IPrecAvg(levels='0.1,0.9',rel=2)"),
    ("cuts", "rbp_2=0.5", "GradedRBP(g2=0.5)"), ("ideal_dcg-gains", "ideal_dcg_0=1,2=5", "ideal_dcg.0=1,2=5"),
    ("ideal_dcg", "ideal_dcg", "ideal_dcg"), ("ideal_dcg", "dcg", "GainDCG"),
]  # fmt: skip


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_api_values_equal_trec_eval_per_query(seed):
    qrels = rankgate.read_qrels(GOLDEN / f"qrels.{seed}")
    run = rankgate.read_run(GOLDEN / f"run.{seed}")
    results = rankgate.evaluate(qrels, run, [name for _, _, name in CASES])
    in_run = set(run.query_ids.tolist()) if hasattr(run.query_ids, "tolist") else set(run.query_ids)
    checked = 0
    for case, printed, name in CASES:
        canonical = str(parse_measures([name])[0])
        for query, text in _golden_rows(f"s{seed}-{case}")[printed].items():
            if query == "all" or query not in in_run:
                continue
            assert f"{results.per_query[query][canonical]:.4f}" == text, (seed, case, printed, query)
            checked += 1
    assert checked > 50


def test_eval_cli_reads_a_gain_map(capsys):
    code, out, err = invoke(
        capsys, "eval", str(GOLDEN / "qrels.1"), str(GOLDEN / "run.1"), "-m", "G.1=3,2=9", "-m", "11pt_avg.0.5,1"
    )
    assert code == 0, err
    assert "G(g1=3.0,g2=9.0)" in out and "IPrecAvg(levels='0.5,1.0')" in out


DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_empty_value_and_close_gains_behave_as_the_docs_say(capsys, tmp_path):
    """`rbp.p=` is p=0 (C's atof of ""); gains < 1 apart: refused by `trec_eval` only, read by `eval`."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 d1 1\n1 0 d2 2\n1 0 d3 0\n")
    r.write_text("1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n1 Q0 d3 3 1 t\n")
    code, empty, err = invoke(capsys, "trec_eval", "-m", "rbp.p=", str(q), str(r))
    assert code == 0, err
    code, zero, _ = invoke(capsys, "trec_eval", "-m", "rbp.p=0", str(q), str(r))
    assert code == 0 and empty.split("\t")[2] == zero.split("\t")[2] == "0.5000\n"  # p=0: d1's grade 1 of 2
    code, out, err = invoke(capsys, "trec_eval", "-m", "ndcg.1=0.5,2=1.2", str(q), str(r))
    assert code == 2 and out == "" and "less than 1 apart" in err
    code, out, err = invoke(capsys, "eval", "-m", "ndcg.1=0.5,2=1.2", "--format", "json", str(q), str(r))
    assert code == 0, err
    value = json.loads(out)["aggregate"]["GainNDCG(g1=0.5,g2=1.2)"]
    assert value == pytest.approx((0.5 + 1.2 / math.log2(3)) / (1.2 + 0.5 / math.log2(3)))  # DCG / ideal, by hand
    semantics, trec_eval_md = (DOCS / "semantics.md").read_text(), (DOCS / "trec_eval.md").read_text()
    assert "an empty value, as in `rbp.p=`" in semantics and "an empty value (`rbp.p=`, `ndcg.1=`) is 0" in trec_eval_md
    for text in (semantics, trec_eval_md):
        assert "`rankgate eval -m ndcg.1=0.5,2=1.2` is read" in " ".join(text.split())
