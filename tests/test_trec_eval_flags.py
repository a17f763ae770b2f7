"""`rankgate trec_eval`: trec_eval's -v, the options it refuses, the rbp note, and hints naming trec_eval's spelling."""

from __future__ import annotations

import pytest

from tests.cli_support import invoke


@pytest.fixture
def files(tmp_path):
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    r.write_text("q1 Q0 b 1 2.0 mine\nq1 Q0 a 2 1.0 mine\nq2 Q0 c 1 1.0 mine\n")
    return str(q), str(r)


@pytest.mark.parametrize("flag", ["-v", "--version"])
def test_version_flag_prints_on_stderr_and_exits_0_as_trec_eval(capsys, flag):
    code, out, err = invoke(capsys, "trec_eval", flag)  # no files needed, as in trec_eval
    assert code == 0 and out == ""
    assert err.startswith("trec_eval version 10.0-rc2 ") and "rankgate" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [["-R", "prefs"], ["-Rqrels_jg"], ["--Rel_info_format=prefs"], ["-T", "other"], ["-D", "2"], ["-Z", "z.txt"],
     ["-o"]],
)  # fmt: skip
def test_options_rankgate_does_not_honour_are_refused_in_one_line(capsys, files, args):
    code, out, err = invoke(capsys, "trec_eval", *args, "-m", "map", *files)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "does not read trec_eval's -" in err, err


@pytest.mark.parametrize("args", [["-R", "qrels"], ["-T", "trec_results"], ["-D", "0"]])
def test_their_default_values_change_nothing_and_are_read(capsys, files, args):
    code, out, err = invoke(capsys, "trec_eval", *args, "-m", "map", *files)
    assert code == 0, err
    assert out == invoke(capsys, "trec_eval", "-m", "map", *files)[1]


def test_rbp_note_only_when_rbp_is_named(capsys, files):
    code, _, err = invoke(capsys, "trec_eval", "-m", "all_trec", *files)
    assert code == 0 and "rbp" not in err  # a CI job running all_trec per run gets no repeated note
    for named in (["-m", "rbp"], ["-m", "rbp.p=0.5"], ["-m", "all_trec", "-m", "rbp"]):
        code, out, err = invoke(capsys, "trec_eval", *named, *files)
        assert code == 0 and "rbp" in out
        notes = [line for line in err.splitlines() if "rbp" in line]
        assert len(notes) == 1 and "uninitialised" in notes[0], err


@pytest.mark.parametrize(
    ("request_", "hint"),
    [
        ("ndcg@10", "'ndcg_cut.10' (-m ndcg_cut.10)"), ("nDCG@10", "'ndcg_cut.10'"), ("ndcg_cut_10", "'ndcg_cut.10'"),
        ("ndcg10", "'ndcg_cut.10'"), ("P@5", "'P.5' (-m P.5)"), ("P_5", "'P.5'"), ("recall@100", "'recall.100'"),
        ("map@100", "'map_cut.100'"), ("P(rel=2)@5", "-l 2 -m P.5"), ("IPrec@0.5", "'iprec_at_recall.0.5'"),
        ("GradedRBP", "'rbp'"), ("NumRet", "'num_ret'"), ("IPrec", "'iprec_at_recall.0.0'"),
        ("RprecMult(mult=0.4)", "'Rprec_mult.0.4'"),
        ("mrr@10", "trec_eval has no RR@10; `rankgate eval -m 'RR@10'` computes it"),
        ("nDCG(gain=exp)@10", "trec_eval has no nDCG(gain=exp)@10"),
    ],
)  # fmt: skip
def test_a_rankgate_name_gets_trec_evals_spelling(capsys, files, request_, hint):
    code, out, err = invoke(capsys, "trec_eval", "-m", request_, *files)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert hint in err, err
    assert "'Rndcg'" not in err  # no longer the nearest trec_eval words of "ndcg@10"


def test_each_suggested_spelling_computes_the_named_measure(capsys, files):
    """The hint is checked by reading it back: the suggested -m gives the rankgate measure's value."""
    from rankgate.compat.trec_eval_requests import trec_eval_spelling

    for name in ("nDCG@10", "P@5", "AP@100", "R@100", "IPrec(recall=0.5)", "IPrec", "Bpref", "Success@5"):
        request = trec_eval_spelling(name).split("(-m ")[1].split(")")[0]
        code, out, _ = invoke(capsys, "trec_eval", "-m", request, *files)
        assert code == 0
        value = float(out.strip().split("\t")[-1])
        code, ours, _ = invoke(capsys, "eval", *files, "-m", name, "--queries", "intersection", "--format", "trec")
        assert code == 0 and float(ours.strip().splitlines()[-1].split("\t")[-1]) == pytest.approx(value, abs=5e-5)


def test_an_unknown_word_still_gets_close_trec_eval_names(capsys, files):
    code, _, err = invoke(capsys, "trec_eval", "-m", "ndgc_cut", *files)
    assert code == 2 and "'ndcg_cut'" in err
