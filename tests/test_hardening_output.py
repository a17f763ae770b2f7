"""Issue 23 items 9 and 11: a closed stdout keeps the exit code; every output format escapes what it must."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rankgate
from rankgate.data import demo_qrels_path, demo_run_path

QRELS = str(demo_qrels_path())
DENSE = str(demo_run_path("dense"))
DEMO_GATES = str(rankgate.data.demo_gates_path())


# ---------------------------------------------------------------------------------------------
# 23.9: a closed pipe on stdout
# ---------------------------------------------------------------------------------------------
def _run_into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``rankgate ARGV`` as a real process whose stdout is a pipe with no reader left."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte, as after `| head -1` read its line
    try:
        return subprocess.run(
            [sys.executable, "-m", "rankgate", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)


def _failing_config(tmp_path: Path) -> str:
    path = tmp_path / "gates.yaml"
    path.write_text("gates:\n  - name: recall_at_5\n    threshold: 0.99\n    severity: error\n")
    return str(path)


CLOSED_PIPE_CASES = [
    ("passing gate", lambda tmp: ["gate", "--qrels", QRELS, "--run", DENSE, "--config", DEMO_GATES], 0),
    ("failing gate", lambda tmp: ["gate", "--qrels", QRELS, "--run", DENSE, "--config", _failing_config(tmp)], 1),
    ("eval", lambda tmp: ["eval", QRELS, DENSE, "-m", "nDCG@10", "--per-query"], 0),
]


@pytest.mark.parametrize(("case", "argv", "code"), CLOSED_PIPE_CASES, ids=[c[0] for c in CLOSED_PIPE_CASES])
def test_a_closed_stdout_keeps_the_exit_code(tmp_path, case, argv, code):
    done = _run_into_closed_pipe(argv(tmp_path))
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert "BrokenPipe" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr


def test_a_reader_that_leaves_after_one_line_keeps_the_exit_code(tmp_path):
    """The issue's own shape, `rankgate gate ... | head -1` (whether a write fails depends on timing)."""
    argv = ["gate", "--qrels", QRELS, "--run", DENSE, "--config", DEMO_GATES]
    proc = subprocess.Popen(
        [sys.executable, "-m", "rankgate", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert first.startswith("rankgate gate: PASS")
    assert "Traceback" not in err and "Exception ignored" not in err, err


# ---------------------------------------------------------------------------------------------
# 23.11: eval's trec, csv and the summary row `all`
# ---------------------------------------------------------------------------------------------
def _qrels_and_run(tmp_path: Path, qids: list[str]) -> tuple[str, str]:
    """A JSONL qrels and run (the formats that can hold any query id): one relevant document each."""
    import json

    qrels, run = tmp_path / "qrels.jsonl", tmp_path / "run.jsonl"
    qrels.write_text("".join(json.dumps({"query_id": q, "doc_id": "d1", "relevance": 1}) + "\n" for q in qids))
    run.write_text("".join(json.dumps({"query_id": q, "doc_id": "d1", "score": 1.0}) + "\n" for q in qids))
    return str(qrels), str(run)


@pytest.mark.parametrize("qid", ["q\t1", "a\nb", "two words", "q\r"], ids=["tab", "newline", "space", "cr"])
def test_trec_output_refuses_a_query_id_it_cannot_hold(tmp_path, capsys, qid):
    from tests.cli_support import invoke

    qrels, run = _qrels_and_run(tmp_path, [qid, "q2"])
    code, out, err = invoke(capsys, "eval", qrels, run, "-m", "P@5", "--per-query", "--format", "trec")
    assert code == 2 and out == ""
    assert err.startswith("rankgate: error: query id ") and "--format trec" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1  # the id is shown escaped, on one line
    # the other formats hold it as it is
    code, out, _ = invoke(capsys, "eval", qrels, run, "-m", "P@5", "--per-query", "--format", "jsonl")
    assert code == 0 and json_qids(out)[:-1] == sorted([qid, "q2"], key=str.encode)


def test_trec_id_names_an_empty_id_as_empty():
    from rankgate.errors import InputError
    from rankgate.render.escape import trec_id

    with pytest.raises(InputError, match=r"query id '' is empty, which --format trec"):
        trec_id("")


def json_qids(out: str) -> list[str]:
    import json

    return [json.loads(line)["query_id"] for line in out.splitlines()]


CSV_CELLS = [
    ('=HYPERLINK("http://e.vil")', '\'=HYPERLINK("http://e.vil")'),
    ("+cmd", "'+cmd"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
    ("-1.5", "-1.5"),  # a number stays a number
    ("q-1", "q-1"),
    ("query", "query"),
]


@pytest.mark.parametrize(("qid", "cell"), CSV_CELLS, ids=[c[0] for c in CSV_CELLS])
def test_eval_csv_defuses_formulas_in_query_ids(tmp_path, capsys, qid, cell):
    import csv
    import io

    from tests.cli_support import invoke

    qrels, run = _qrels_and_run(tmp_path, [qid, "q2"])
    code, out, _ = invoke(capsys, "eval", qrels, run, "-m", "P@5", "--per-query", "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["query_id", "P@5"]
    assert sorted(r[0] for r in rows[1:-1]) == sorted([cell, "q2"])
    assert rows[-1][0] == "all" and all(float(r[1]) >= 0 for r in rows[1:])  # the values stay numbers


@pytest.mark.parametrize(
    ("value", "cell"),
    [("\tq", "'\tq"), ("\rq", "'\rq"), ("-inf", "-inf"), ("+1e3", "+1e3"), (-0.5, -0.5), (None, None), ("", "")],
)
def test_csv_cell_leaves_numbers_and_defuses_tab_and_cr(value, cell):
    """Readers trim ids, so a leading tab or CR reaches the CSV writer only from the library."""
    from rankgate.render.escape import csv_cell

    assert csv_cell(value) == cell


def test_eval_csv_defuses_formulas_in_tag_names_and_values(tmp_path, capsys):
    import csv
    import io
    import json

    from tests.cli_support import invoke

    qrels, run = _qrels_and_run(tmp_path, ["q1", "q2"])
    tags = tmp_path / "tags.jsonl"
    rows = [{"_id": "q1", "tags": {"=kind": "@evil"}}, {"_id": "q2", "tags": {"=kind": "ok"}}]
    tags.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = invoke(capsys, "eval", qrels, run, "-m", "P@5", "--tags", str(tags), "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert ["'=kind", "'@evil"] in [r[2:4] for r in rows] and ["'=kind", "ok"] in [r[2:4] for r in rows]


def test_bench_csv_defuses_formulas_and_keeps_numbers():
    from rankgate.render.bench import csv_text

    class Report:
        def rows(self):
            return [{"retriever": "=cmd|' /C calc'!A0", "index": "exact", "nDCG@10": -0.25, "k": 10}]

    text = csv_text(Report())  # type: ignore[arg-type]
    assert text.splitlines()[1] == "'=cmd|' /C calc'!A0,exact,-0.25,10"


SUMMARY_FORMATS = ["trec", "jsonl", "csv", "table"]


@pytest.mark.parametrize("fmt", SUMMARY_FORMATS)
def test_a_query_named_all_warns_once_where_the_summary_row_is(tmp_path, capsys, fmt):
    from tests.cli_support import invoke

    qrels, run = _qrels_and_run(tmp_path, ["all", "q2"])
    code, _, err = invoke(capsys, "eval", qrels, run, "-m", "P@5", "--per-query", "--format", fmt)
    assert code == 0
    assert err.count("a query is named 'all', like the summary row") == 1, err
    assert f"--format {fmt}" in err
    # without --per-query (one summary row) or in JSON (the aggregate kept apart) there is no collision
    for argv in (["--format", fmt], ["--per-query", "--format", "json"]):
        code, _, err = invoke(capsys, "eval", qrels, run, "-m", "P@5", *argv)
        assert code == 0 and "named 'all'" not in err


def test_no_collision_warning_for_ordinary_ids(tmp_path, capsys):
    from tests.cli_support import invoke

    qrels, run = _qrels_and_run(tmp_path, ["q1", "alle"])
    code, _, err = invoke(capsys, "eval", qrels, run, "-m", "P@5", "--per-query", "--format", "csv")
    assert code == 0 and "named 'all'" not in err


# ---------------------------------------------------------------------------------------------
# 23.11: the gate's Markdown comment and JUnit XML
# ---------------------------------------------------------------------------------------------
IMAGE = "![x](https://e.vil/p.png)"
HOSTILE_RUN = "@octocat [l](https://e.vil)"
HOSTILE_TAG = "![t](https://e.vil/t.png) @team"


def _hostile_gate(tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str], run_name: str = HOSTILE_RUN) -> str:
    """Gate the demo run with a gate, tag, run and baseline named to render Markdown if they could."""
    import json
    import shutil

    from tests.cli_support import invoke

    config = tmp_path / "gates.yaml"
    config.write_text(
        "gates:\n"
        f"  - {{name: {json.dumps(IMAGE)}, metric: R@5, threshold: 0.1}}\n"
        "  - {name: '@octocat *b* <img src=x>', metric: RR, threshold: 0.1,\n"
        f"     tags: {{topic: {json.dumps(HOSTILE_TAG)}}}}}\n"
    )
    tags = tmp_path / "tags.jsonl"
    with open(rankgate.data.demo_dir() / "queries.jsonl") as f:
        rows = [json.loads(line) for line in f]
    tags.write_text("".join(json.dumps({"_id": r["_id"], "tags": {"topic": HOSTILE_TAG}}) + "\n" for r in rows))
    baseline = tmp_path / "base](x)@me.txt"
    shutil.copy(DENSE, baseline)
    code, out, err = invoke(
        capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--baseline-run", str(baseline), "--config", str(config),
        "--tags", str(tags), "--name", run_name, "--format", fmt,
    )  # fmt: skip
    assert code == 0, err
    return out


def _outside_code(markdown: str) -> str:
    import re

    return re.sub(r"(`+)(?:(?!\1).)*?\1", "", markdown)


def test_markdown_comment_renders_user_text_literally(tmp_path, capsys):
    from rankgate.render.escape import markdown_text

    out = _hostile_gate(tmp_path, "markdown", capsys)
    prose = _outside_code(out)
    assert "![" not in out and "](" not in prose  # no image, no link
    assert "<img" not in out and "&lt;img src=x&gt;" in out
    assert "@octocat" not in prose and "@team" not in prose  # the mentions carry a zero-width joiner
    assert "*b*" not in out and "\\*b\\*" in out
    assert f"| {markdown_text(IMAGE)} |" in out  # the gate's name in the table, escaped
    assert markdown_text(HOSTILE_TAG) in out  # the tag in the headline and the breakdown
    assert "run `@octocat [l](https://e.vil)`" in out  # run and baseline names as code: nothing renders there
    assert "baseline run `base](x)@me`" in out


def test_markdown_run_name_with_backticks_stays_one_code_span(tmp_path, capsys):
    out = _hostile_gate(tmp_path, "markdown", capsys, run_name="a`![i](https://e.vil/i.png)`b")
    assert "run ``a`![i](https://e.vil/i.png)`b``" in out
    assert "![" not in _outside_code(out)


def test_junit_xml_replaces_characters_xml_forbids(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    out = _hostile_gate(tmp_path, "junit", capsys, run_name="run\x1b[31m\x00\x07")
    suite = ET.fromstring(out.encode())  # well-formed
    classes = {case.get("classname") for case in suite.iter("testcase")}
    assert classes == {"rankgate.run\ufffd[31m\ufffd\ufffd"}


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("a\x1b[31mb", "a\ufffd[31mb"),
        ("\x00\x08\x0b\x0c\x0e\x1f", "\ufffd" * 6),
        ("tab\tnl\ncr\r é ✅", "tab\tnl\ncr\r é ✅"),
    ],
)
def test_xml_text(text, cleaned):
    from rankgate.render.escape import xml_text

    assert xml_text(text) == cleaned


# ---------------------------------------------------------------------------------------------
# 23.11: what GitHub sends back is printed without control characters
# ---------------------------------------------------------------------------------------------
ENV = {"GITHUB_TOKEN": "ghs_x", "GITHUB_REPOSITORY": "acme/search", "GITHUB_REF": "refs/pull/3/merge"}


def test_the_comment_url_from_github_loses_its_escape_sequences():
    import httpx

    from rankgate.gate.github import post_or_update_comment

    url = "https://github.com/acme/search/pull/3#issuecomment-1\x1b]8;;https://e.vil\x07\x1b[2J\x9b1m"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=[])
        return httpx.Response(201, json={"id": 1, "html_url": url})

    posted = post_or_update_comment("x", env=ENV, transport=httpx.MockTransport(handler))
    assert posted.url == "https://github.com/acme/search/pull/3#issuecomment-1]8;;https://e.vil[2J1m"


def test_a_message_from_github_loses_its_escape_sequences():
    import httpx

    from rankgate.errors import BackendError
    from rankgate.gate.github import post_or_update_comment

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=[])
        return httpx.Response(422, json={"message": "Validation \x1b[31mFailed\x1b[0m"})

    with pytest.raises(BackendError) as exc:
        post_or_update_comment("x", env=ENV, transport=httpx.MockTransport(handler))
    assert "\x1b" not in str(exc.value) and "Validation [31mFailed[0m" in str(exc.value)


def test_cutoffs_csv_defuses_a_formula_like_run_name(capsys, tmp_path):
    """``cutoffs --format csv`` writes run names through csv_cell and the csv module, like eval."""
    import csv as csv_module
    import io as io_module

    from tests.cli_support import invoke

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "=HYPERLINK(x),y.txt"
    run.write_text("q1 Q0 d1 1 1.0 t\n")
    code, out, err = invoke(capsys, "cutoffs", str(qrels), str(run), "-m", "P", "-k", "1", "--format", "csv")
    assert code == 0, err
    rows = list(csv_module.reader(io_module.StringIO(out)))
    assert rows[0] == ["run", "measure", "k=1"]
    assert rows[1][0] == "'=HYPERLINK(x),y" and rows[1][2] == "1.0"
