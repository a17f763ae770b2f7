"""`rankgate trec_eval`: trec_eval's command line and output, on hand-worked files.

The values below are worked by hand from trec_eval's definitions; byte identity with the
trec_eval binary itself is checked in test_trec_eval_cli_oracle.py.
"""

from __future__ import annotations

import math

import pytest

from rankgate.compat import trec_eval as te
from rankgate.compat import trec_eval_requests as requests_module
from rankgate.errors import MeasureError
from tests.cli_support import invoke

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq3 0 x 1\n"
# the tag of the last line is the runid trec_eval prints; fields after the sixth are ignored
RUN = "q1 Q0 b 1 2.0 first\nq1 Q0 a 2 1.0 first extra words\nq2 Q0 c 1 1 last\n"


@pytest.fixture
def files(tmp_path):
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def _line(name: str, qid: str, value: str) -> str:
    return f"{name:<22}\t{qid}\t{value}\n"


MEASURES = ["-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map", "-m", "P.5"]
MEASURES += ["-m", "recip_rank", "-m", "runid"]


def test_summary_over_queries_in_both_files(capsys, files):
    code, out, err = invoke(capsys, "trec_eval", *MEASURES, *files)
    assert code == 0, err
    assert out == "".join(
        [
            _line("runid", "all", "last"),
            _line("num_q", "all", "2"),
            _line("num_ret", "all", "3"),
            _line("num_rel", "all", "2"),
            _line("num_rel_ret", "all", "2"),
            _line("map", "all", "0.7500"),  # q1: relevant a at rank 2 -> 1/2; q2: 1
            _line("recip_rank", "all", "0.7500"),
            _line("P_5", "all", "0.2000"),
        ]
    )


def test_complete_per_query_rows_and_missing_query(capsys, files):
    """-c: q3 (not in the run) is evaluated and keeps its num_rel; per-query rows in byte order."""
    code, out, err = invoke(capsys, "trec_eval", "-q", "-c", "-m", "num_rel", "-m", "num_ret", "-m", "map", *files)
    assert code == 0, err
    rows = [
        ("num_ret", "q1", "2"), ("num_rel", "q1", "1"), ("map", "q1", "0.5000"),
        ("num_ret", "q2", "1"), ("num_rel", "q2", "1"), ("map", "q2", "1.0000"),
        ("num_ret", "q3", "0"), ("num_rel", "q3", "1"), ("map", "q3", "0.0000"),
        ("num_ret", "all", "3"), ("num_rel", "all", "3"), ("map", "all", "0.5000"),
    ]  # fmt: skip
    assert out == "".join(_line(*r) for r in rows)


def test_level_for_rel_and_no_summary(capsys, files):
    """-l2: only q2's c is relevant; -n leaves the summary out."""
    code, out, _ = invoke(capsys, "trec_eval", "-q", "-n", "-l2", "-m", "num_rel_ret", "-m", "P.1", *files)
    assert code == 0
    assert out == "".join(
        _line(*r)
        for r in [
            ("num_rel_ret", "q1", "0"),
            ("P_1", "q1", "0.0000"),
            ("num_rel_ret", "q2", "1"),
            ("P_1", "q2", "1.0000"),
        ]
    )


def test_max_per_topic_and_judged_only(capsys, tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("q1 0 a 1\nq1 0 c 0\n")
    r.write_text("q1 Q0 u 1 3 t\nq1 Q0 a 2 2 t\nq1 Q0 c 3 1 t\n")  # u is unjudged
    code, out, _ = invoke(capsys, "trec_eval", "-M", "1", "-m", "num_ret", "-m", "recip_rank", str(q), str(r))
    assert code == 0 and out == _line("num_ret", "all", "1") + _line("recip_rank", "all", "0.0000")
    code, out, _ = invoke(capsys, "trec_eval", "-J", "-m", "num_ret", "-m", "recip_rank", str(q), str(r))
    assert code == 0 and out == _line("num_ret", "all", "2") + _line("recip_rank", "all", "1.0000")


def test_query_order_is_byte_order(capsys, tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    ids = ["q9", "q10", "Q1"]
    q.write_text("".join(f"{i} 0 d 1\n" for i in ids))
    r.write_text("".join(f"{i} Q0 d 1 1 t\n" for i in ids))
    code, out, _ = invoke(capsys, "trec_eval", "-q", "-n", "-m", "P.1", str(q), str(r))
    assert code == 0
    assert [line.split("\t")[1] for line in out.splitlines()] == ["Q1", "q10", "q9"]


@pytest.mark.parametrize(
    ("requests", "printed"),
    [
        (["P.10,5", "map"], ["map", "P_5", "P_10"]),  # table order; cutoffs sorted
        (["P.5", "P.10"], ["P_5"]),  # the first request with parameters wins, as in trec_eval
        (["P", "P.20"], ["P_20"]),
        (["success"], ["success_1", "success_5", "success_10"]),
        (["ndcg_cut"], [f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        (["map_cut.100", "recall.7"], ["recall_7", "map_cut_100"]),
    ],
)
def test_request_expansion(requests, printed):
    assert [p.name for p in te.expand_requests(requests)] == printed


def test_printed_names_map_to_canonical_measures():
    got = {
        p.name: str(p.measure) for p in te.expand_requests(["P.5", "ndcg_cut.10", "map", "recall.100", "recip_rank"])
    }
    assert got == {"P_5": "P@5", "ndcg_cut_10": "nDCG@10", "map": "AP", "recall_100": "R@100", "recip_rank": "RR"}


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        ("P_5", "not a trec_eval measure"),  # trec_eval: illegal measure
        ("ndcg_cut.", "no parameters after it"),
        ("P.0", "must be > 0"),
        ("P.5,5", "repeat"),
        ("P.x", "whole numbers"),
        ("ideal_dcg.1=0.5", "less than 1 apart"),
        ("ndcg.1=0.5,2=1.2", "less than 1 apart"),
        ("G.0=1,1=1.5", "less than 1 apart"),
        ("Rndcg.2=1e10", "gains up to"),
        ("ndcg.12=3", "grades 0 to 9"),
        ("G.-1=3", "grades 0 to 9"),  # trec_eval: the gain of docs outside the pool
        ("ndcg_rel.1=3,1=4", "each once"),
        ("G.1=3=4", "malformed pair parameters"),
        ("G.1=3,2", "malformed pair parameters"),
        ("rbp.3=3", "its own value"),
        ("rbp.1=x", "plain finite numbers"),
        ("11pt_avg..5,.25", "ascending"),
        ("11pt_avg.0.5,1.5", "ascending"),
        ("iprec_at_recall.1.5", "cannot be read"),
        ("Rprec_mult.-1", "cannot be read"),
        ("utility.1,2", "4 coefficients"),
        ("ndcg.1=3 -m dcg", "share one parameter table"),
        ("rbp.p=2", "between 0 and 1"),
        ("rbp_resid.p", "name=value"),
        ("set_F.x", "plain finite numbers"),
        ("set_F.-1", "must be >= 0"),
        ("relstring.1_0", "plain finite numbers"),
        ("yaap", "not available in rankgate"),
    ],
)
def test_bad_requests_exit_2(capsys, files, request_, words):
    args = [a for r in request_.split(" -m ") for a in ("-m", r)]
    code, out, err = invoke(capsys, "trec_eval", *args, *files)
    assert code == 2 and out == ""
    assert err.startswith("rankgate: error: ") and words in err and "Traceback" not in err


def test_parameters_trec_eval_ignores_are_ignored_with_a_note(capsys, files):
    code, out, err = invoke(capsys, "trec_eval", "-m", "map.5", "-m", "P.5", "-m", "P.10", "-m", "official.3", *files)
    assert code == 0, err
    names = [line.split("\t")[0].rstrip() for line in out.splitlines()]
    assert "map" in names and "P_5" in names and "P_10" not in names and "map_5" not in names
    assert "-m map.5 is -m map" in err and "-m P.10 is ignored" in err and "-m official.3 is -m official" in err
    code, out, err = invoke(capsys, "trec_eval", "-m", "ndcg_cut.1=3,2=9", *files)  # C's atol, as trec_eval
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["ndcg_cut_1", "ndcg_cut_2"]
    assert "takes cutoffs, not gains" in err


def test_missing_rankgate_measure_is_named(monkeypatch):
    def refuse(name):
        raise MeasureError(f"Unknown measure {name!r}.")

    monkeypatch.setattr(requests_module, "parse_measure", refuse)
    with pytest.raises(MeasureError, match=r"trec_eval's 'map' .* is not available in rankgate"):
        te.expand_requests(["map"])


def test_no_shared_query_exits_2(capsys, tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("q1 0 a 1\n")
    r.write_text("q2 Q0 a 1 1 t\n")
    code, _, err = invoke(capsys, "trec_eval", str(q), str(r), "-m", "map")
    assert code == 2 and "No queries with both results and relevance info" in err


def test_level_zero_is_refused(capsys, files):
    code, _, err = invoke(capsys, "trec_eval", "-l0", "-m", "map", *files)
    assert code == 2 and "-l >= 1" in err


def test_all_trec_runs(capsys, files):
    code, out, err = invoke(capsys, "trec_eval", "-q", "-c", "-m", "all_trec", *files)
    assert code == 0, err
    names = {line.split("\t")[0].rstrip() for line in out.splitlines()}
    assert {"runid", "num_q", "gm_map", "P_5", "set_F", "num_nonrel_judged_ret", "relstring", "unj_5", "rbp"} <= names
    # all_trec's rbp line is the reference build's, unremarked on every call (docs/semantics.md);
    # -m rbp by name says so once (tests/test_trec_eval_flags.py)
    assert "uninitialised" not in err


def test_parameter_forms_name_their_measures():
    got = {str(p.name): str(p.measure) for p in te.expand_requests(
        ["utility.3,-2,0,1", "set_F.0.25", "rbp.p=0.8", "rbp_resid", "unj.7", "ndcg_cut.23.4"], docs_in_collection=9
    )}  # fmt: skip
    assert got == {
        "utility_3,-2,0,1": "Utility(a=3.0,b=-2.0,d=1.0,num_docs=9)",
        "set_F_0.25": "SetF(beta=0.25)",
        "rbp_p=0.8": "GradedRBP(p=0.8)",
        "rbp_resid": "RBPResid",
        "unj_7": "Unjudged@7",
        "ndcg_cut_23": "nDCG@23",  # C's atol, as trec_eval
    }
    [ndcg] = te.expand_requests(["ndcg.1=3,2=9,x=5"])  # a name that is not a grade: ignored, as trec_eval
    assert (ndcg.name, str(ndcg.measure)) == ("ndcg_1=3,2=9,x=5", "GainNDCG(g1=3.0,g2=9.0)")
    got = {str(p.name): str(p.measure) for p in te.expand_requests(
        ["G.1=3,+2=9", "ndcg_rel.0=1", "Rndcg.2=-1,p=4", "rbp.p=0.5,1=0.25,q=1", "rbp_resid.1=4,p=0.3",
         "11pt_avg.0.25,.5", "11pt_avg", "iprec_at_recall.0.125", "Rprec_mult.1234567"]
    )}  # fmt: skip
    assert got == {
        "G_1=3,+2=9": "G(g1=3.0,g2=9.0)",
        "ndcg_rel_0=1": "nDCGRel(g0=1.0)",
        "Rndcg_2=-1,p=4": "RnDCG(g2=-1.0)",  # p is rbp's: ignored here, as trec_eval
        "rbp_p=0.5,1=0.25,q=1": "GradedRBP(g1=0.25,p=0.5)",
        "rbp_resid_1=4,p=0.3": "RBPResid(p=0.3)",  # rbp_resid has no gains: ignored, as trec_eval
        "11pt_avg_0.25,.5": "IPrecAvg(levels='0.25,0.5')",
        "iprec_at_recall_0.12": "IPrec(recall=0.125)",  # printed rounded, computed at the value given
        "Rprec_mult_1234567.": "RprecMult(mult=1234567.0)",  # trec_eval's name buffer cuts the name
    }


def test_relstring_and_empty_rankings(capsys, tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("q1 0 a 12\nq1 0 b -1\nq1 0 c 0\nq2 0 a 1\nq3 0 x 1\n")
    r.write_text("q1 Q0 a 1 9 t\nq1 Q0 b 2 8 t\nq1 Q0 z 3 7 t\nq1 Q0 c 4 6 t\nq2 Q0 z 1 1 t\n")
    code, out, _ = invoke(capsys, "trec_eval", "-q", "-c", "-J", "-m", "relstring.3", "-m", "11pt_avg", str(q), str(r))
    assert code == 0
    assert out.splitlines() == [
        "relstring_3           \tq1\t'>0'",  # grade 12 prints '>'; -J drops b (negative) and z (not judged)
        "11pt_avg              \tq1\t1.0000",
        "relstring_3           \tq2\t''",  # -J left q2 nothing: trec_eval's 0/0 below
        "11pt_avg              \tq2\t  -nan",
        "relstring_3           \tq3\t''",  # missing from the run (-c): trec_eval's stand-in doc, dropped by -J
        "11pt_avg              \tq3\t  -nan",
        "11pt_avg              \tall\t  -nan",
    ]


def test_max_zero_is_refused_and_text_only_requests_run(capsys, files):
    code, _, err = invoke(capsys, "trec_eval", "-M0", "-c", "-m", "official", *files)
    assert code == 2 and "-M >= 1" in err  # trec_eval's empty rankings: refused, not approximated
    code, out, _ = invoke(capsys, "trec_eval", "-m", "runid", "-m", "relstring", *files)
    assert code == 0 and out.startswith("runid ") and len(out.splitlines()) == 1  # relstring: per query only


def test_duplicate_run_line_hint_fits_trec_eval(capsys, tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "dup.txt"
    q.write_text("q1 0 d1 1\n")
    r.write_text("q1 Q0 d1 1 1 s\nq1 Q0 d1 2 0.5 s\n")
    code, out, err = invoke(capsys, "trec_eval", str(q), str(r))
    assert code == 2 and out == ""
    assert f"{r}:2: duplicate document 'd1'" in err
    assert "--duplicates)" not in err and "duplicates='first'" not in err  # no option this command lacks
    assert "trec_eval refuses them too; `rankgate eval --duplicates first|max` reads such a run" in err


@pytest.mark.parametrize(
    ("request_", "suggested", "not_suggested"),
    [("dcg_cut", "'ndcg_cut', 'dcg'", "DCG"), ("ndgc", "'ndcg'", "ndcgrel"), ("recip_rnk", "'recip_rank'", "RR")],
)
def test_suggestions_are_trec_eval_names(capsys, files, request_, suggested, not_suggested):
    code, _, err = invoke(capsys, "trec_eval", "-m", request_, *files)
    assert code == 2 and f"Did you mean {suggested}" in err
    assert repr(not_suggested) not in err


def test_ideal_dcg_of_a_query_with_only_negative_grades_is_0_with_a_note(capsys, tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("q1 0 a 2\nq1 0 b 1\nq2 0 x -1\n")
    r.write_text("q1 Q0 a 1 2 t\nq2 Q0 x 1 1 t\n")
    code, out, err = invoke(capsys, "trec_eval", "-q", "-m", "ideal_dcg", str(q), str(r))
    assert code == 0, err
    rows = {line.split("\t")[1]: line.split("\t")[2] for line in out.splitlines()}
    assert rows["q1"] == f"{2 + 1 / math.log2(3):.4f}" and rows["q2"] == "0.0000"  # trec_eval: q1's again
    assert "only negative grades (q2)" in err


@pytest.mark.parametrize("cutoffs", ["3000000000", "99999999999999999999", "5,2147483648"])
def test_too_large_cutoff_says_so_not_unavailable(capsys, files, cutoffs):
    code, out, err = invoke(capsys, "trec_eval", "-m", f"P.{cutoffs}", *files)
    assert code == 2 and out == ""
    assert "not available" not in err
    assert "cutoffs of trec_eval's 'P' must be at most 2147483647" in err
    code, _, err = invoke(capsys, "trec_eval", "-m", "P.2147483647", *files)
    assert code == 0, err


def test_duplicate_judgment_hint_fits_trec_eval(capsys, tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "run.txt"
    q.write_text("q1 0 d1 1\nq1 0 d1 2\n")
    r.write_text("q1 Q0 d1 1 1 s\n")
    code, out, err = invoke(capsys, "trec_eval", "-m", "map", str(q), str(r))
    assert code == 2 and out == ""
    assert f"{q}:2: duplicate judgment of document 'd1'" in err
    assert "--duplicates)" not in err and "duplicates='first'" not in err  # no option this command lacks
    assert "trec_eval refuses them too; `rankgate eval --duplicates first|max` reads such qrels" in err


def test_query_ids_with_non_ascii_spaces_are_printed_as_trec_eval_prints_them(capsys, tmp_path):
    """trec_eval splits on C's ASCII whitespace only: U+00A0, U+2028 or \\x1c are id characters, so
    ``-q`` prints them; a TREC run writer refuses only what a reader would split on."""
    from rankgate.core.run import Run
    from rankgate.errors import InputError
    from rankgate.io.writers import write_run

    ids = ["q\u00a0x", "q\u2028y", "q\x1cz"]
    (tmp_path / "q").write_text("".join(f"{q} 0 e 1\n" for q in ids))
    (tmp_path / "r").write_text("".join(f"{q} Q0 e 1 1 t\n" for q in ids))
    code, out, err = invoke(capsys, "trec_eval", "-q", "-m", "num_ret", str(tmp_path / "q"), str(tmp_path / "r"))
    assert code == 0, err
    lines = out.rstrip("\n").split("\n")  # not splitlines(): it would cut at U+2028 and \x1c
    assert [line.split("\t")[1] for line in lines] == [*sorted(ids, key=str.encode), "all"]
    write_run(Run.from_dict({ids[0]: {"d": 1.0}}), tmp_path / "ok.txt")
    with pytest.raises(InputError, match="holds whitespace"):
        write_run(Run.from_dict({"q\v1": {"d": 1.0}}), tmp_path / "bad.txt")
