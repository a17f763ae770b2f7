"""End-to-end tests of the `rankgate` command, run in-process (and once as a subprocess)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rankgate
from tests.cli_support import invoke

# q1 ranks d2 (0), d1 (1), d9 (unjudged); d3 (1) is not retrieved.   P@2 1/2, RR 1/2, NumRel 2
# q2 ranks d4 (2), d5 (0).                                            P@2 1/2, RR 1,   NumRel 1
# q3 is judged but not in the run (scores 0).                         P@2 0,   RR 0,   NumRel 1
# q5 has no relevant judgment and is not in the run.                  P@2 0,   RR 0,   NumRel 0
# q4 is only in the run (ignored).
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 2\nq2 0 d5 0\nq3 0 d7 1\nq5 0 d8 0\n"
RUN = "q1 Q0 d2 1 3.0 s\nq1 Q0 d1 2 2.0 s\nq1 Q0 d9 3 1.0 s\nq2 Q0 d4 1 5.0 s\nq2 Q0 d5 2 4.0 s\nq4 Q0 d1 1 1.0 s\n"
MEASURES = "P@2,RR,NumRel"
PER_QUERY = {
    "q1": {"P@2": 0.5, "RR": 0.5, "NumRel": 2.0},
    "q2": {"P@2": 0.5, "RR": 1.0, "NumRel": 1.0},
    "q3": {"P@2": 0.0, "RR": 0.0, "NumRel": 1.0},
    "q5": {"P@2": 0.0, "RR": 0.0, "NumRel": 0.0},
}
AGGREGATE = {"P@2": 0.25, "RR": 0.375, "NumRel": 4.0}
QUERIES = {"evaluated": 4, "missing_from_run": 2, "run_only": 1, "no_relevant": 1}


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    q = tmp_path / "qrels.txt"
    r = tmp_path / "bm25.run"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def eval_json(capsys, files, *extra: str) -> dict:
    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out)


# --------------------------------------------------------------------------------------
# rankgate eval --format json: the DESIGN.md contract
# --------------------------------------------------------------------------------------
def test_eval_json_contract(capsys, files):
    out = eval_json(capsys, files)
    for key in ("measures", "aggregate", "queries", "settings", "versions"):
        assert key in out
    assert "per_query" not in out
    assert out["measures"] == ["P@2", "RR", "NumRel"]
    assert out["aggregate"] == pytest.approx(AGGREGATE)
    assert out["queries"] == QUERIES
    settings = out["settings"]
    assert {k: settings[k] for k in ("queries", "ties", "rel", "empty", "duplicates", "judged_only")} == {
        "queries": "qrels",
        "ties": "trec",
        "rel": 1,
        "empty": "zero",
        "duplicates": "error",
        "judged_only": False,
    }
    assert out["versions"]["rankgate"] == rankgate.__version__


def test_eval_json_per_query(capsys, files):
    out = eval_json(capsys, files, "--per-query")
    assert list(out["per_query"]) == ["q1", "q2", "q3", "q5"]
    for qid, values in PER_QUERY.items():
        assert out["per_query"][qid] == pytest.approx(values)
    assert out["aggregate"] == pytest.approx(AGGREGATE)


def test_eval_measure_aliases_print_canonical_names(capsys, files):
    code, out, err = invoke(capsys, "eval", *files, "-m", "recip_rank", "-m", "P_2, num_rel", "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["measures"] == ["RR", "P@2", "NumRel"]
    assert result["aggregate"] == pytest.approx({"RR": 0.375, "P@2": 0.25, "NumRel": 4.0})


def test_eval_default_measures(capsys, files):
    code, out, err = invoke(capsys, "eval", *files, "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["measures"] == ["nDCG@10", "R@100", "RR@10", "AP", "P@10"]
    assert result["aggregate"]["RR@10"] == pytest.approx(0.375)
    assert result["aggregate"]["P@10"] == pytest.approx((0.1 + 0.1) / 4)


@pytest.mark.parametrize(
    ("options", "aggregate", "queries"),
    [
        (
            ["--queries", "intersection"],
            {"P@2": 0.5, "RR": 0.75, "NumRel": 3.0},
            {"evaluated": 2, "missing_from_run": 2, "run_only": 1, "no_relevant": 0},
        ),
        (
            ["--empty", "skip"],
            {"P@2": 1 / 3, "RR": 0.5, "NumRel": 4.0},
            {"evaluated": 3, "missing_from_run": 2, "run_only": 1, "no_relevant": 1},
        ),
        # With rel=2 only q2's d4 is relevant: q1 and q3 join q5 among the queries without one.
        # The threshold becomes part of each binary measure's name.
        (
            ["--rel", "2"],
            {"P(rel=2)@2": 0.5 / 4, "RR(rel=2)": 1 / 4, "NumRel(rel=2)": 1.0},
            {"evaluated": 4, "missing_from_run": 2, "run_only": 1, "no_relevant": 3},
        ),
    ],
    ids=["intersection", "empty-skip", "rel-2"],
)
def test_eval_semantic_options(capsys, files, options, aggregate, queries):
    out = eval_json(capsys, files, *options)
    assert out["aggregate"] == pytest.approx(aggregate)
    assert out["queries"] == queries


def test_eval_ties_input(capsys, tmp_path):
    q = tmp_path / "q.txt"
    r = tmp_path / "r.txt"
    q.write_text("q1 0 a 1\n")
    r.write_text("q1 Q0 a 1 1.0 s\nq1 Q0 b 2 1.0 s\n")  # tie: trec_eval puts b (greater id) first
    assert eval_json(capsys, (str(q), str(r)))["aggregate"]["RR"] == 0.5
    assert eval_json(capsys, (str(q), str(r)), "--ties", "input")["aggregate"]["RR"] == 1.0


def test_eval_run_name(capsys, files):
    assert eval_json(capsys, files)["run"] == "bm25"
    assert eval_json(capsys, files, "--name", "my-system")["run"] == "my-system"


# --------------------------------------------------------------------------------------
# The other output formats
# --------------------------------------------------------------------------------------
def test_eval_jsonl(capsys, files):
    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "jsonl", "--per-query")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["query_id"] for row in rows] == ["q1", "q2", "q3", "q5", "all"]
    for row in rows[:-1]:
        assert {k: v for k, v in row.items() if k != "query_id"} == pytest.approx(PER_QUERY[row["query_id"]])
    assert {k: v for k, v in rows[-1].items() if k != "query_id"} == pytest.approx(AGGREGATE)

    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "jsonl")
    assert code == 0, err
    assert [json.loads(line)["query_id"] for line in out.splitlines()] == ["all"]


def test_eval_csv(capsys, files):
    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "csv", "--per-query")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["query_id", "P@2", "RR", "NumRel"]
    assert [r[0] for r in rows[1:]] == ["q1", "q2", "q3", "q5", "all"]
    assert [float(x) for x in rows[1][1:]] == [0.5, 0.5, 2.0]
    assert [float(x) for x in rows[-1][1:]] == pytest.approx([0.25, 0.375, 4.0])

    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "csv")
    assert [r[0] for r in csv.reader(io.StringIO(out))] == ["query_id", "all"]


def test_eval_trec(capsys, files):
    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "trec", "--per-query")
    assert code == 0, err
    lines = out.splitlines()
    assert all(len(line.split("\t")) == 3 for line in lines)
    assert len(lines) == 3 * 4 + 3
    assert "P@2\tq1\t0.5000" in lines
    assert "RR\tq2\t1.0000" in lines
    assert "NumRel\tq1\t2" in lines  # counts print as integers, like trec_eval
    assert lines[-3:] == ["P@2\tall\t0.2500", "RR\tall\t0.3750", "NumRel\tall\t4"]

    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "trec")
    assert out.splitlines() == ["P@2\tall\t0.2500", "RR\tall\t0.3750", "NumRel\tall\t4"]


def test_eval_table(capsys, files):
    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES)
    assert code == 0, err
    assert "bm25" in out
    for name, value in (("P@2", "0.2500"), ("RR", "0.3750"), ("NumRel", "4")):
        row = next(line for line in out.splitlines() if f" {name} " in line)
        assert value in row
    assert "4 queries evaluated; 2 missing from the run, 1 only in the run, 1 without relevant docs" in out
    assert "settings: queries=qrels, ties=trec, rel=1, empty=zero, duplicates=error, judged_only=false" in out
    assert "\x1b[" not in out  # no colour codes in captured output
    _, out, _ = invoke(capsys, "eval", *files, "-m", MEASURES, "--rel", "2", "--ties", "input", "--judged-only")
    assert "settings: queries=qrels, ties=input, rel=2, empty=zero, duplicates=error, judged_only=true" in out

    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--per-query")
    assert code == 0, err
    q2 = next(line for line in out.splitlines() if " q2 " in line)
    assert "0.5000" in q2
    assert "1.0000" in q2


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "csv", "trec"])
def test_eval_output_file_holds_the_same_text(capsys, tmp_path, files, fmt):
    code, printed, _ = invoke(capsys, "eval", *files, "-m", MEASURES, "--per-query", "--format", fmt)
    assert code == 0
    target = tmp_path / "out" / f"result.{fmt}"
    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--per-query", "--format", fmt, "-o", str(target))
    assert code == 0, err
    assert out == ""
    assert target.read_text() == printed
    assert "warning:" in err  # warnings still reach the user


def test_warnings_go_to_stderr_and_json_stays_clean(capsys, files):
    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "json")
    assert code == 0
    result = json.loads(out)  # nothing but JSON on stdout
    assert "warning" not in out.replace('"warnings"', "")
    err_lines = err.splitlines()
    assert len(err_lines) == 3  # the run-only q4 returns one document: its own warning, no shallow-run one
    assert all(line.startswith("warning: ") for line in err_lines)
    assert "fewer than" not in err
    assert any("'q3'" in line and "--queries intersection" in line for line in err_lines)
    assert any("'q4'" in line for line in err_lines)
    assert any("--empty skip" in line for line in err_lines)
    assert [f"warning: {w}" for w in result["warnings"]] == err_lines


@pytest.mark.parametrize(
    ("option", "advice"),
    [(["--queries", "intersection"], "--queries intersection"), (["--empty", "skip"], "--empty skip")],
    ids=["intersection", "empty-skip"],
)
def test_warnings_do_not_advise_the_option_in_effect(capsys, files, option, advice):
    code, out, err = invoke(capsys, "eval", *files, "-m", MEASURES, "--format", "json", *option)
    assert code == 0
    assert json.loads(out)["queries"]["evaluated"] < 4  # the option took effect
    assert advice not in err


def test_eval_clean_input_has_no_warnings(capsys, tmp_path):
    q = tmp_path / "q.txt"
    r = tmp_path / "r.txt"
    q.write_text("q1 0 a 1\nq1 0 b 0\n")
    r.write_text("q1 Q0 b 1 2.0 s\nq1 Q0 a 2 1.0 s\n")
    code, out, err = invoke(capsys, "eval", str(q), str(r), "-m", "P@2,RR", "--format", "json")
    assert code == 0
    assert err == ""
    assert json.loads(out)["aggregate"] == {"P@2": 0.5, "RR": 0.5}


def test_eval_bad_usage_exits_2(capsys, files):
    code, out, err = invoke(capsys, "eval", *files, "--format", "yaml")
    assert code == 2
    assert out == ""
    assert "yaml" in err
    code, out, err = invoke(capsys, "eval", files[0])
    assert code == 2
    assert "RUN" in err


# --------------------------------------------------------------------------------------
# rankgate measures
# --------------------------------------------------------------------------------------
FAMILIES = ["P", "R", "nDCG", "RR", "AP", "Rprec", "Success", "Judged", "Bpref", "NumRel", "NumRet", "NumRelRet"]


def test_measures_table(capsys):
    code, out, err = invoke(capsys, "measures")
    assert code == 0, err
    for name in ("P@10", "nDCG@10", "RR@10", "Bpref", "ndcg_cut_10"):
        assert name in out


def test_measures_json(capsys):
    code, out, err = invoke(capsys, "measures", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    by_name = {row["name"]: row for row in rows}
    assert set(FAMILIES) <= set(by_name)
    ndcg = by_name["nDCG"]
    assert ndcg["higher_is_better"] is True
    assert ndcg["bounds"] == [0.0, 1.0]
    assert "gain" in [p["name"] for p in ndcg["parameters"]]
    assert by_name["NumRel"]["aggregate"] == "sum"
    assert by_name["NumRel"]["bounds"][1] is None  # unbounded, not Infinity (invalid JSON)
    assert by_name["P"]["cutoff"] == "required"


def test_measures_markdown(capsys):
    code, out, err = invoke(capsys, "measures", "--format", "markdown")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == "| measure | definition | parameters | trec_eval | aliases |"
    assert lines[1] == "|---|---|---|---|---|"
    assert len(lines) - 2 >= len(FAMILIES)
    assert any(line.startswith("| `nDCG@10`") for line in lines)


def test_measures_markdown_rows_have_five_cells(capsys):
    code, out, _ = invoke(capsys, "measures", "--format", "markdown")
    assert code == 0
    for line in out.strip().splitlines():
        cells = line.replace("\\|", "").split("|")
        assert len(cells) == 7, line  # 5 cells between 6 pipes


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("ndcg_cut.10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("P_5", "P@5"),
        ("recall@100", "R@100"),
        ("mrr@10", "RR@10"),
        ("map", "AP"),
        ("recip_rank", "RR"),
        ("hit_rate@5", "Success@5"),
        ("nDCG(gain=exp)@10", "nDCG(gain=exp)@10"),
        ("P(rel=1)@5", "P@5"),
    ],
)
def test_measures_name_resolution(capsys, name, canonical):
    code, out, err = invoke(capsys, "measures", name)
    assert code == 0, err
    assert out == f"{name}\t{canonical}\n"


def test_measures_several_names(capsys):
    code, out, _ = invoke(capsys, "measures", "ndcg_cut.10", "map")
    assert code == 0
    assert out.splitlines() == ["ndcg_cut.10\tnDCG@10", "map\tAP"]


def test_measures_unknown_name(capsys):
    code, out, err = invoke(capsys, "measures", "foo@10")
    assert code == 2
    assert out == ""
    assert err.startswith("rankgate: error: ")
    assert "foo@10" in err


# --------------------------------------------------------------------------------------
# rankgate demo
# --------------------------------------------------------------------------------------
def test_demo_table(capsys):
    code, out, err = invoke(capsys, "demo", "--no-bench", "--no-report")
    assert code == 0, err
    for name in ("dense", "bm25", "keyword_first", "nDCG@10", "63 queries"):
        assert name in out


def test_demo_json(capsys):
    code, out, err = invoke(capsys, "demo", "--format", "json", "--no-bench", "--no-report")
    assert code == 0, err
    result = json.loads(out)
    runs = result["runs"]
    assert list(runs) == ["dense", "bm25", "keyword_first"]
    ndcg = {name: run["aggregate"]["nDCG@10"] for name, run in runs.items()}
    assert ndcg["dense"] > ndcg["bm25"] > ndcg["keyword_first"]
    assert all(0.0 <= v <= 1.0 for v in ndcg.values())
    for run in runs.values():
        assert run["queries"]["evaluated"] == 63
        assert run["measures"][0] == "nDCG@10"
    assert set(result["nDCG@10_by_difficulty"]["dense"]) == {"easy", "medium", "hard"}


# --------------------------------------------------------------------------------------
# Help and version
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("verb", [None, "eval", "measures", "demo"])
def test_help_has_examples(capsys, verb):
    argv = ["--help"] if verb is None else [verb, "--help"]
    code, out, err = invoke(capsys, *argv)
    assert code == 0, err
    assert "Examples" in out
    assert "Usage: rankgate" in out
    if verb is None:
        for name in ("eval", "measures", "demo"):
            assert name in out
    else:
        assert f"rankgate {verb}" in out.split("Examples", 1)[1]


def test_short_help_option(capsys):
    code, out, _ = invoke(capsys, "eval", "-h")
    assert code == 0
    assert "--per-query" in out


def test_version_in_process(capsys):
    code, out, _ = invoke(capsys, "--version")
    assert code == 0
    assert out.strip() == f"rankgate, version {rankgate.__version__}"


def test_python_dash_m_version():
    proc = subprocess.run(
        [sys.executable, "-m", "rankgate", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"rankgate, version {rankgate.__version__}"


@pytest.mark.extra("gate")
def test_python_dash_m_exits_as_the_installed_command() -> None:
    """``python -m rankgate gate`` on a failing gate exits 1, like ``rankgate gate`` (it exited 0)."""
    import subprocess
    import sys

    from rankgate.data import DEMO_CANDIDATE, demo_gates_path, demo_qrels_path, demo_run_path

    run, base = str(demo_run_path(DEMO_CANDIDATE)), str(demo_run_path("dense"))
    argv = ["gate", "--qrels", str(demo_qrels_path()), "--run", run, "--config", str(demo_gates_path()),
            "--baseline-run", base, "--no-record"]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "rankgate", *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "FAIL" in done.stdout


def test_evaluation_verbs_start_numpy_without_blas_threads():
    """OpenBLAS's threads spin on the cores rankgate's workers need: verbs without matrix products
    start numpy with one (unless the user chose); bench, demo, retrieve, index and label keep them."""
    script = (
        "import os, sys; from rankgate.cli import LazyGroup, cli\n"
        "import click\n"
        "LazyGroup.get_command(cli, click.Context(cli), sys.argv[1])\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    seen = {}
    for verb in ("eval", "compare", "bench"):
        done = subprocess.run([sys.executable, "-c", script, verb], capture_output=True, text=True, env=env, check=True)
        seen[verb] = done.stdout.split()
    assert seen == {"eval": ["1"], "compare": ["1"], "bench": ["None"]}
    chosen = subprocess.run(
        [sys.executable, "-c", script, "eval"], capture_output=True, text=True, env={**env, "OPENBLAS_NUM_THREADS": "3"}
    )
    assert chosen.stdout.split() == ["3"]
