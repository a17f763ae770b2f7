"""Table-driven tests of bad (and awkward but valid) input, through the CLI in-process.

Every rejected input must exit 2 with one message on stderr that names the file, the line
(where there is one) and the offending text, and never a traceback. Every accepted input
must give the hand-computed values.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankgate
from rankgate.cli import main
from rankgate.core.qrels import Qrels
from rankgate.errors import InputError
from tests.cli_support import invoke

# q1 ranks d2 (grade 0), d1 (grade 1), d9 (unjudged); d3 (grade 1) is not retrieved.
# q2 ranks d4 (grade 2), d5 (grade 0).
# P@2: q1 1/2, q2 1/2 -> 0.5.  RR: q1 1/2, q2 1 -> 0.75.  AP: q1 (1/2)/2, q2 1 -> 0.625.
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 2\nq2 0 d5 0\n"
RUN = "q1 Q0 d2 1 3.0 sys\nq1 Q0 d1 2 2.0 sys\nq1 Q0 d9 3 1.0 sys\nq2 Q0 d4 1 5.0 sys\nq2 Q0 d5 2 4.0 sys\n"
EXPECTED = {"P@2": 0.5, "RR": 0.75, "AP": 0.625}

FileSpec = Any  # str | bytes | tuple[file name, str | bytes]


def _write(tmp_path: Path, spec: FileSpec, default_name: str) -> Path:
    name, content = spec if isinstance(spec, tuple) else (default_name, spec)
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def _eval(tmp_path: Path, capsys: pytest.CaptureFixture[str], qrels: FileSpec, run: FileSpec, *extra: str):
    q = _write(tmp_path, qrels, "qrels.txt")
    r = _write(tmp_path, run, "run.txt")
    return invoke(capsys, "eval", str(q), str(r), *extra)


# --------------------------------------------------------------------------------------
# Rejected input: (name, qrels, run, exit code, substrings of stderr)
# --------------------------------------------------------------------------------------
def _empty_parquet() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"qid": pa.array([], pa.string()), "docid": pa.array([], pa.string()),
                             "score": pa.array([], pa.float64())}), sink)  # fmt: skip
    return bytes(sink.getvalue())


BAD_INPUT = [
    (
        "run-5-fields",
        QRELS,
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0\n",
        2,
        ["run.txt:2", "expected at least 6 fields", "found 5", "q1 Q0 d2 2 1.0"],
    ),
    (
        "qrels-3-fields",
        "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3\n",
        RUN,
        2,
        ["qrels.txt:3", "expected 4 fields", "found 3", "q1 0 d3"],
    ),
    (
        "run-passed-as-qrels",
        RUN,
        QRELS,
        2,
        ["qrels.txt:1", "looks like a run line", "pass the qrels first", "q1 Q0 d2 1 3.0 sys"],
    ),
    (
        "qrels-passed-as-run",
        QRELS,
        QRELS,
        2,
        ["run.txt:1", "looks like a qrels line", "pass the qrels first", "q1 0 d1 1"],
    ),
    (
        "score-not-a-number",
        QRELS,
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 high sys\n",
        2,
        ["run.txt:2", "score 'high' is not a number", "q1 Q0 d2 2 high sys"],
    ),
    (
        "grade-not-a-number",
        "q1 0 d1 1\nq1 0 d2 yes\n",
        RUN,
        2,
        ["qrels.txt:2", "grade 'yes'", "whole number", "q1 0 d2 yes"],
    ),
    (
        "grade-not-whole",
        "q1 0 d1 1\nq1 0 d2 2.5\n",
        RUN,
        2,
        ["qrels.txt:2", "grade '2.5'", "whole number", "q1 0 d2 2.5"],
    ),
    (
        "grade-too-large",
        "q1 0 d1 99999999999999999999\n",
        RUN,
        2,
        ["qrels.txt:1", "99999999999999999999"],
    ),
    (
        "score-nan",
        QRELS,
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 NaN sys\n",
        2,
        ["run.txt:2", "NaN", "finite", "q1 Q0 d2 2 NaN sys"],
    ),
    (
        "score-inf",
        QRELS,
        "q1 Q0 d1 1 inf sys\n",
        2,
        ["run.txt:1", "'inf'", "finite", "q1 Q0 d1 1 inf sys"],
    ),
    (
        "score-minus-inf",
        QRELS,
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 -inf sys\n",
        2,
        ["run.txt:2", "'-inf'", "finite", "q1 Q0 d2 2 -inf sys"],
    ),
    (
        "score-overflows-to-inf",
        QRELS,
        "q1 Q0 d1 1 1e400 sys\n",
        2,
        ["run.txt:1", "1e400", "finite"],
    ),
    (
        "score-python-only-spelling",
        QRELS,
        "q1 Q0 d1 1 1_000 sys\n",
        2,
        ["run.txt:1", "'1_000'", "not a number"],
    ),
    (
        "grade-nan",
        "q1 0 d1 nan\n",
        RUN,
        2,
        ["qrels.txt:1", "grade 'nan'", "whole number"],
    ),
    (
        "no-break-space-is-not-a-separator",
        QRELS,
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0\u00a0sys\n",
        2,
        ["run.txt:2", "expected at least 6 fields", "found 5"],
    ),
    ("empty-run", QRELS, "", 2, ["run.txt", "empty", "qid Q0 docid rank score tag"]),
    ("empty-qrels", "", RUN, 2, ["qrels.txt", "empty", "qid iteration docid grade"]),
    ("whitespace-only-run", QRELS, " \n\t\n\r\n  \n", 2, ["run.txt", "empty"]),
    ("whitespace-only-qrels", "\n\n   \n", RUN, 2, ["qrels.txt", "empty"]),
    (
        "duplicate-in-run",
        QRELS,
        "q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 2.0 sys\nq1 Q0 d1 3 1.0 sys\n",
        2,
        ["run.txt:3", "run.txt:1", "duplicate", "'d1'", "'q1'", "--duplicates"],
    ),
    (
        "duplicate-in-qrels",
        "q1 0 d1 1\nq2 0 d4 1\nq1 0 d1 0\n",
        RUN,
        2,
        ["qrels.txt:3", "qrels.txt:1", "duplicate", "'d1'", "'q1'", "--duplicates"],
    ),
    (
        "duplicate-in-run-after-blank-lines-and-crlf",
        QRELS,
        "q1 Q0 d1 1 3.0 sys\r\n\r\n\r\nq1 Q0 d2 2 2.0 sys\r\n  \r\nq1 Q0 d1 3 1.0 sys\r\n",
        2,
        ["run.txt:6", "run.txt:1", "duplicate"],
    ),
    (
        "invalid-utf8-doc-id-in-run",
        QRELS,
        b"q1 Q0 d1 1 3.0 sys\nq1 Q0 d\xff2 2 2.0 sys\n",
        2,
        ["run.txt:2", "UTF-8", "xff2"],
    ),
    (
        "invalid-utf8-doc-id-in-qrels",
        b"q1 0 d\xfe1 1\n",
        RUN,
        2,
        ["qrels.txt:1", "UTF-8", "xfe1"],
    ),
    (
        "error-after-blank-lines",
        QRELS,
        "q1 Q0 d1 1 3.0 sys\n\n\n   \nq1 Q0 d2 2 oops sys\n",
        2,
        ["run.txt:5", "'oops'", "q1 Q0 d2 2 oops sys"],
    ),
    (
        "error-after-bom-and-crlf",
        QRELS,
        "\ufeffq1 Q0 d1 1 3.0 sys\r\nq1 Q0 d2 2 oops sys\r\n",
        2,
        ["run.txt:2", "'oops'", "q1 Q0 d2 2 oops sys"],
    ),
    (
        "json-malformed",
        QRELS,
        ("run.json", '{"q1": {"d1": 2.0,\n "d2": 1.0,\n "d3": }}\n'),
        2,
        ["run.json:3", "invalid JSON"],
    ),
    (
        "json-top-level-list",
        QRELS,
        ("run.json", "[1, 2, 3]"),
        2,
        ["run.json", "expected a JSON object", "list"],
    ),
    (
        "json-query-maps-to-string",
        QRELS,
        ("run.json", '{"q1": "d1"}'),
        2,
        ["run.json", "'q1'", "d1"],
    ),
    (
        "json-score-is-text",
        QRELS,
        ("run.json", '{"q1": {"d1": "high"}}'),
        2,
        ["run.json", "'d1'", "score must be a number", "high"],
    ),
    (
        "json-qrels-grade-is-number",
        ("qrels.json", '{"q1": 3}'),
        RUN,
        2,
        ["qrels.json", "'q1'", "3"],
    ),
    (
        "json-invalid-utf8",
        QRELS,
        ("run.json", b'{"q1": {"d1": 2.0},\n "q2": {"d\xff": 1.0}}'),
        2,
        ["run.json:2", "UTF-8"],
    ),
    (
        "csv-missing-grade-column",
        ("qrels.csv", "query-id,corpus-id\nq1,d1\n"),
        RUN,
        2,
        ["qrels.csv", "no grade column", "found query-id, corpus-id"],
    ),
    (
        "csv-missing-score-column",
        QRELS,
        ("run.csv", "qid,docid\nq1,d1\n"),
        2,
        ["run.csv", "no score column", "found qid, docid"],
    ),
    (
        "csv-short-row",
        ("qrels.csv", "query-id,corpus-id,score\nq1,d1,1\nq2,d4\n"),
        RUN,
        2,
        ["qrels.csv:3", "expected 3 fields", "q2,d4"],
    ),
    (
        "csv-grade-not-a-number",
        ("qrels.csv", "query-id,corpus-id,score\nq1,d1,1\nq2,d4,high\n"),
        RUN,
        2,
        ["qrels.csv:3", "'high'", "not a number"],
    ),
    (
        "csv-invalid-utf8",
        ("qrels.csv", b"query-id,corpus-id,score\nq1,d1,1\nq2,d\xff4,1\n"),
        RUN,
        2,
        ["qrels.csv:3", "UTF-8"],
    ),
    (
        "csv-error-after-blank-lines",
        QRELS,
        ("run.csv", "qid,docid,score\nq1,d1,2\n\n\nq1,d2,x\n"),
        2,
        ["run.csv:5", "score 'x' is not a number"],
    ),
    (
        "csv-duplicate-after-blank-lines-and-crlf",
        QRELS,
        ("run.csv", "\ufeffqid,docid,score\r\n\r\nq1,d1,2\r\nq1,d2,1\r\n\r\nq1,d1,0.5\r\n"),
        2,
        ["run.csv:6", "run.csv:3", "duplicate", "'d1'"],
    ),
    (
        "csv-whitespace-only-line",
        QRELS,
        ("run.csv", "qid,docid,score\nq1,d1,2\n   \nq1,d2,1\n"),
        2,
        ["run.csv:3", "expected 3 fields", "found 1"],
    ),
    (
        "csv-score-python-only-spelling",
        QRELS,
        ("run.csv", "qid,docid,score\nq1,d1,2\nq1,d2,1_5\n"),
        2,
        ["run.csv:3", "'1_5'", "not a number"],
    ),
    (
        "jsonl-score-python-only-spelling",
        QRELS,
        ("run.jsonl", '{"qid": "q1", "docid": "d1", "score": "1_5"}\n'),
        2,
        ["run.jsonl:1", "'1_5'", "not a number"],
    ),
    (
        "jsonl-score-not-a-number",
        QRELS,
        ("run.jsonl", '{"qid": "q1", "docid": "d1", "score": 2.0}\n{"qid": "q1", "docid": "d2", "score": "abc"}\n'),
        2,
        ["run.jsonl:2", "score 'abc' is not a number"],
    ),
    (
        "jsonl-malformed-line",
        QRELS,
        ("run.jsonl", '{"qid": "q1", "docid": "d1", "score": 2.0}\n\n{"qid": "q1", "docid": \n'),
        2,
        ["run.jsonl:3", "invalid JSON", '{"qid": "q1", "docid":'],
    ),
    (
        "jsonl-line-not-an-object",
        QRELS,
        ("run.jsonl", '{"qid": "q1", "docid": "d1", "score": 2.0}\n[1, 2]\n'),
        2,
        ["run.jsonl:2", "JSON object", "[1, 2]"],
    ),
    (
        "jsonl-missing-score",
        QRELS,
        ("run.jsonl", '{"qid": "q1", "docid": "d1", "score": 2.0}\n{"qid": "q1", "docid": "d2"}\n'),
        2,
        ["run.jsonl:2", "missing score"],
    ),
    (
        "gzip-magic-but-corrupt",
        QRELS,
        b"\x1f\x8b this is not gzip",
        2,
        ["run.txt", "decompress"],
    ),
    (
        "gzip-cut-short",  # a valid start, then the file ends: the decoder's end-of-stream error, named
        QRELS,
        gzip.compress(("".join(f"q1 Q0 d{i} {i} {1 / (i + 1):.6f} t\n" for i in range(20_000))).encode())[:4000],
        2,
        ["run.txt", "decompress"],
    ),
    (
        "parquet-magic-but-corrupt",
        QRELS,
        ("run.parquet", b"PAR1 not parquet"),
        2,
        ["run.parquet", "Parquet"],
    ),
    ("run-blank-lines-only", QRELS, "\n\n  \n", 2, ["run.txt", "empty"]),
    ("csv-run-header-only", QRELS, ("run.csv", "qid,docid,score\n"), 2, ["run.csv", "header but no rows"]),
    ("tsv-qrels-header-only", ("qrels.tsv", "query-id\tcorpus-id\tscore\n"), RUN, 2, ["qrels.tsv", "no rows"]),
    ("parquet-run-no-rows", QRELS, ("run.parquet", _empty_parquet()), 2, ["run.parquet", "holds no rows"]),
    ("qrels-empty-json", ("qrels.json", '{"q1": {}}'), RUN, 2, ["qrels.json", "no judgments"]),
    (
        "jsonl-run-missing-qid",
        QRELS,
        ("run.jsonl", '{"qid": "q1", "docid": "d1", "score": 1}\n{"docid": "d2", "score": 0.5}\n'),
        2,
        ["run.jsonl:2", "missing query id"],
    ),
    (
        "json-qrels-huge-int-grade",
        ("qrels.json", '{"q1": {"d1": 100000000000000000000000000000}}'),
        RUN,
        2,
        ["qrels.json", "'d1'", "out of range"],
    ),
    (
        "tsv-qrels-huge-float-grade",
        ("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1e30\n"),
        RUN,
        2,
        ["qrels.tsv:2", "out of range"],
    ),
]


@pytest.mark.parametrize(
    ("name", "qrels_text", "run_text", "exit_code", "expected"),
    BAD_INPUT,
    ids=[case[0] for case in BAD_INPUT],
)
def test_bad_input_is_reported(tmp_path, capsys, name, qrels_text, run_text, exit_code, expected):
    q = _write(tmp_path, qrels_text, "qrels.txt")
    r = _write(tmp_path, run_text, "run.txt")
    with pytest.raises(SystemExit) as exc:
        main(["eval", str(q), str(r), "-m", "P@2", "--format", "json"])
    out, err = capsys.readouterr()
    assert exc.value.code == exit_code
    assert out == ""
    assert "Traceback" not in err
    assert err.startswith("rankgate: error: ")
    assert len(err.strip().splitlines()) == 1, err
    for fragment in expected:
        assert fragment in err, f"{fragment!r} not in {err!r}"


# --------------------------------------------------------------------------------------
# Unknown or malformed measure names
# --------------------------------------------------------------------------------------
BAD_MEASURES = [
    ("nDCG@ten", ["nDCG@ten", "cutoff"]),
    ("foo@10", ["foo@10", "rankgate measures"]),
    ("p", ["p", "two ways", "P@10"]),  # "P" itself is trec_eval's P at nine cutoffs (issue 18 item 3)
    ("P(rel=0)@5", ["'rel'", "P", "0"]),
    ("RBP(p=2)", ["'p'", "RBP", "2"]),
    ("nDCG@0", ["nDCG", "0"]),
    ("__import__('os')", ["__import__"]),
    ("nDCG(gain=cubic)@10", ["gain", "cubic"]),
    ("P@1_0", ["P@1_0", "whole number"]),
    ("P(rel=2,rel=3)@5", ["'rel'", "twice"]),
]


@pytest.mark.parametrize(("measure", "expected"), BAD_MEASURES, ids=[m for m, _ in BAD_MEASURES])
def test_bad_measure_name_is_reported(tmp_path, capsys, measure, expected):
    q = _write(tmp_path, QRELS, "qrels.txt")
    r = _write(tmp_path, RUN, "run.txt")
    with pytest.raises(SystemExit) as exc:
        main(["eval", str(q), str(r), "-m", measure])
    out, err = capsys.readouterr()
    assert exc.value.code == 2
    assert out == ""
    assert "Traceback" not in err
    assert err.startswith("rankgate: error: ")
    for fragment in expected:
        assert fragment in err, f"{fragment!r} not in {err!r}"


# --------------------------------------------------------------------------------------
# Files that cannot be opened
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_missing_file(tmp_path, capsys, which):
    q = _write(tmp_path, QRELS, "qrels.txt")
    r = _write(tmp_path, RUN, "run.txt")
    missing = tmp_path / "nope.txt"
    args = [str(missing), str(r)] if which == "qrels" else [str(q), str(missing)]
    with pytest.raises(SystemExit) as exc:
        main(["eval", *args])
    out, err = capsys.readouterr()
    assert exc.value.code == 2
    assert out == ""
    assert "Traceback" not in err
    assert err.startswith("rankgate: error: ")
    assert "nope.txt" in err
    assert "not found" in err


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_directory_as_file(tmp_path, capsys, which):
    q = _write(tmp_path, QRELS, "qrels.txt")
    r = _write(tmp_path, RUN, "run.txt")
    folder = tmp_path / "a_folder"
    folder.mkdir()
    args = [str(folder), str(r)] if which == "qrels" else [str(q), str(folder)]
    with pytest.raises(SystemExit) as exc:
        main(["eval", *args])
    out, err = capsys.readouterr()
    assert exc.value.code == 2
    assert out == ""
    assert "Traceback" not in err
    assert "a_folder" in err
    assert "directory" in err


def test_directory_as_file_in_the_library(tmp_path):
    with pytest.raises(InputError, match="is a directory") as exc:
        rankgate.read_run(tmp_path)
    assert exc.value.source == str(tmp_path)


# --------------------------------------------------------------------------------------
# Accepted input: (name, qrels, run, expected aggregate values)
# --------------------------------------------------------------------------------------
def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


_FIELDS_Q = [line.split() for line in QRELS.splitlines()]
_FIELDS_R = [line.split() for line in RUN.splitlines()]

ACCEPTED = [
    ("plain", QRELS, RUN, EXPECTED),
    ("utf8-bom", "\ufeff" + QRELS, "\ufeff" + RUN, EXPECTED),
    ("crlf", _crlf(QRELS), _crlf(RUN), EXPECTED),
    ("bom-and-crlf", "\ufeff" + _crlf(QRELS), "\ufeff" + _crlf(RUN), EXPECTED),
    ("tabs", QRELS.replace(" ", "\t"), RUN.replace(" ", "\t"), EXPECTED),
    ("repeated-spaces-and-tabs", QRELS.replace(" ", "   "), RUN.replace(" ", " \t  "), EXPECTED),
    (
        "leading-and-trailing-spaces",
        "".join(f"  {line}  \n" for line in QRELS.splitlines()),
        "".join(f"\t {line} \t\n" for line in RUN.splitlines()),
        EXPECTED,
    ),
    ("blank-lines-in-between", "\n" + QRELS.replace("\n", "\n\n"), "\n\n" + RUN.replace("\n", "\n \n"), EXPECTED),
    ("no-trailing-newline", QRELS.rstrip("\n"), RUN.rstrip("\n"), EXPECTED),
    ("crlf-no-trailing-newline", _crlf(QRELS).rstrip("\r\n"), _crlf(RUN).rstrip("\r\n"), EXPECTED),
    # CSV: BOM, CRLF, blank lines, spaces around fields, quoted header names.
    (
        "csv-spaces-around-fields",
        ("qrels.csv", "query_id, doc_id, relevance\n" + "".join(f"{a} , {b} , {g}\n" for a, _, b, g in _FIELDS_Q)),
        ("run.csv", '"qid","docid","score"\n' + "".join(f" {a}, {b}, {s}\n" for a, _, b, _, s, _ in _FIELDS_R)),
        EXPECTED,
    ),
    (
        "csv-bom-crlf-blank-lines",
        ("qrels.csv", "\ufeffqid,docid,grade\r\n\r\n" + "".join(f"{a},{b},{g}\r\n" for a, _, b, g in _FIELDS_Q)),
        (
            "run.tsv",
            "\ufeffqid\tdocid\tscore\r\n" + "".join(f"{a}\t{b}\t{s}\r\n\r\n" for a, _, b, _, s, _ in _FIELDS_R),
        ),
        EXPECTED,
    ),
    # A grade written as a float that is a whole number is that grade (as in the JSON/CSV readers).
    ("whole-number-grade-as-float", QRELS.replace("d4 2", "d4 2.0"), RUN, EXPECTED),
    # Negative grades are judged non-relevant; the rank column is ignored, scores decide.
    (
        "negative-grade-and-rank-column-ignored",
        QRELS.replace("d2 0", "d2 -1"),
        RUN.replace(" 1 3.0 ", " 7 3.0 "),
        EXPECTED,
    ),
    # trec_eval breaks ties in score by doc id descending: d2 before d1 although d1 is listed first.
    (
        "tied-scores",
        QRELS,
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 2.0 sys\nq1 Q0 d9 3 1.0 sys\nq2 Q0 d4 1 5.0 sys\nq2 Q0 d5 2 4.0 sys\n",
        EXPECTED,
    ),
    # Query ids that look like header words are not a header in TREC files.
    (
        "query-ids-like-header-words",
        QRELS.replace("q1", "query1").replace(" ", "\t"),
        RUN.replace("q1", "query1").replace(" ", "\t"),
        EXPECTED,
    ),
]


@pytest.mark.parametrize(
    ("name", "qrels_text", "run_text", "expected"),
    ACCEPTED,
    ids=[case[0] for case in ACCEPTED],
)
def test_awkward_but_valid_input_is_accepted(tmp_path, capsys, name, qrels_text, run_text, expected):
    code, out, err = _eval(tmp_path, capsys, qrels_text, run_text, "-m", "P@2,RR,AP", "--format", "json")
    assert code == 0, err
    assert "error" not in err
    result = json.loads(out)
    assert result["aggregate"] == pytest.approx(expected)
    assert result["queries"]["evaluated"] == 2


# --------------------------------------------------------------------------------------
# --duplicates first / max
# --------------------------------------------------------------------------------------
# q1: d2 first at 3.0, then again at 0.5; d1 first at 2.0, then again at 5.0.
# first -> d2 3.0, d1 2.0, d3 1.0: RR 1/2, P@1 0;   max -> d1 5.0, d2 3.0, d3 1.0: RR 1, P@1 1.
DUP_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\n"
DUP_RUN = "q1 Q0 d2 1 3.0 s\nq1 Q0 d1 2 2.0 s\nq1 Q0 d3 3 1.0 s\nq1 Q0 d2 4 0.5 s\nq1 Q0 d1 5 5.0 s\n"
# qrels: d1 judged 0 then 2; d2 judged 1 then 0. The run ranks d1 then d2.
# first -> d1 0, d2 1: RR 1/2, NumRel 1, nDCG@2 = (1/log2 3) / 1.
# max   -> d1 2, d2 1: RR 1, NumRel 2, nDCG@2 = 1 (the ideal order).
DUP_QRELS_2 = "q1 0 d1 0\nq1 0 d2 1\nq1 0 d1 2\nq1 0 d2 0\n"
DUP_RUN_2 = "q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\n"
ONE_OVER_LOG2_3 = 0.6309297535714575

DUPLICATES = [
    ("run-first", DUP_QRELS, DUP_RUN, "first", "RR,P@1,P@3,NumRet", {"RR": 0.5, "P@1": 0.0, "P@3": 2 / 3, "NumRet": 3}),
    ("run-max", DUP_QRELS, DUP_RUN, "max", "RR,P@1,P@3,NumRet", {"RR": 1.0, "P@1": 1.0, "P@3": 2 / 3, "NumRet": 3}),
    (
        "qrels-first",
        DUP_QRELS_2,
        DUP_RUN_2,
        "first",
        "RR,NumRel,nDCG@2",
        {"RR": 0.5, "NumRel": 1, "nDCG@2": ONE_OVER_LOG2_3},
    ),
    ("qrels-max", DUP_QRELS_2, DUP_RUN_2, "max", "RR,NumRel,nDCG@2", {"RR": 1.0, "NumRel": 2, "nDCG@2": 1.0}),
]


@pytest.mark.parametrize(
    ("name", "qrels_text", "run_text", "policy", "measures", "expected"),
    DUPLICATES,
    ids=[case[0] for case in DUPLICATES],
)
def test_duplicates_policy(tmp_path, capsys, name, qrels_text, run_text, policy, measures, expected):
    code, out, err = _eval(
        tmp_path, capsys, qrels_text, run_text, "-m", measures, "--duplicates", policy, "--format", "json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["aggregate"] == pytest.approx(expected)
    assert result["settings"]["duplicates"] == policy


def test_duplicates_error_is_the_default(tmp_path, capsys):
    code, out, err = _eval(tmp_path, capsys, DUP_QRELS, DUP_RUN, "-m", "RR")
    assert code == 2
    assert out == ""
    assert "run.txt:4" in err
    assert "run.txt:1" in err


# --------------------------------------------------------------------------------------
# Messages from the library (not the CLI) show plain values
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("qrels", "run", "shown"),
    [
        ({"q1": {"d1": 1}}, {"q1": {"d1": float("nan")}}, "(nan)"),
        ({"q1": {"d1": 1}}, {"q1": {"d1": float("-inf")}}, "(-inf)"),
        ("qrels.csv", {"q1": {"d1": 1.0}}, "2.5"),
    ],
    ids=["nan-score-dict", "inf-score-dict", "grade-2.5-csv"],
)
def test_messages_show_plain_numbers(tmp_path, qrels, run, shown):
    if qrels == "qrels.csv":
        qrels = tmp_path / "qrels.csv"
        qrels.write_text("query-id,corpus-id,score\nq1,d1,1\nq1,d2,2.5\n")
    with pytest.raises(InputError) as exc:
        rankgate.evaluate(qrels, run, "P@1")
    message = str(exc.value)
    assert "np.float64" not in message, message
    assert shown in message
    if isinstance(qrels, Path):
        assert "qrels.csv:3" in message
    else:
        assert "'q1'" in message
        assert "'d1'" in message


@pytest.mark.parametrize(
    ("grades", "expected"),
    [
        ([3.0, -0.0, -2.0, 2.0**53, -(2.0**53)], [3, 0, -2, 2**53, -(2**53)]),
        ([1.0, 2.5], "row 2: grade must be a whole number (got 2.5)"),
        ([1.0, float("nan")], "row 2: grade must be a whole number (got nan)"),
        ([float("inf"), 1.0], "row 1: grade must be a whole number (got inf)"),
        ([1.0, float("-inf")], "row 2: grade must be a whole number (got -inf)"),
        ([1.0, 2.0**53 + 2], "row 2: grade 9007199254740994.0 is out of range"),
        ([-(2.0**53) - 2, 1.0], "row 1: grade -9007199254740994.0 is out of range"),
        ([1.0, 1e30], "row 2: grade 1e+30 is out of range"),
        ([1.0, 2.0**63], "row 2: grade 9.223372036854776e+18 is out of range"),
    ],
    ids=["whole", "half", "nan", "inf", "minus-inf", "above-2^53", "below-minus-2^53", "1e30", "2^63"],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_grades_are_whole_numbers_in_range(grades, expected, dtype):
    """Grades parsed as floats (as a TREC qrels file's are) take a one-pass check; every value it
    does not pass goes to the full check, which names the row (and float32 grades the same)."""
    values = np.array(grades, dtype=dtype)
    out_of_range = isinstance(expected, str) and "out of range" in expected
    if dtype == np.float32 and out_of_range and float(np.abs(values).max()) <= 2.0**53:
        pytest.skip("2^53 + 2 is 2^53 in float32: in range")
    docs = [f"d{i}" for i in range(len(grades))]
    if isinstance(expected, list):
        q = Qrels(["q1"] * len(grades), docs, values)
        assert q.grades.dtype == np.int64
        assert q.grades.tolist() == np.array(grades, dtype=dtype).astype(np.int64).tolist()
        if dtype == np.float64:
            assert q.grades.tolist() == expected
        return
    if dtype == np.float32 and out_of_range:  # float32 spells the value otherwise
        expected = expected.split(": grade")[0] + ": grade"
    with pytest.raises(InputError, match=re.escape(expected)):
        Qrels(["q1"] * len(grades), docs, values)


# --------------------------------------------------------------------------------------
# Degenerate input found in review: each once gave a traceback or a silent wrong number
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("run", [{"q1": []}, {"q1": {}}])
def test_run_without_results_scores_zero(run):
    res = rankgate.evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, run, ["P@5", "nDCG@10", "AP", "Rprec"])
    assert res.aggregate == {"P@5": 0.0, "nDCG@10": 0.0, "AP": 0.0, "Rprec": 0.0}
    assert res.queries["missing_from_run"] == 2
    assert any("no results" in w for w in res.warnings)


def test_no_query_evaluated_is_null_with_a_warning():
    res = rankgate.evaluate({"q1": {"d1": 1}}, {"q9": {"d1": 1.0}}, "P@5", queries="intersection")
    assert res.to_dict()["aggregate"] == {"P@5": None}
    assert any("no query was evaluated" in w for w in res.warnings)


def test_categorical_query_ids_with_unused_categories():
    pd = pytest.importorskip("pandas")
    run = pd.DataFrame(
        {
            "query_id": pd.Categorical(["q1", "q1"], categories=["q0", "q1", "q2"]),
            "doc_id": ["d1", "d2"],
            "score": [2.0, 1.0],
        }
    )
    res = rankgate.evaluate({"q1": {"d1": 1}}, run, "P@1")
    assert res.aggregate == {"P@1": 1.0}
    assert res.queries["run_only"] == 0  # the unused categories are not queries of the run


@pytest.mark.parametrize("measure", ["nDCG(gain=exp)@10", "ERR@10"])
def test_exponential_gain_refuses_grades_that_overflow(tmp_path, capsys, measure):
    code, out, err = _eval(tmp_path, capsys, "q1 0 d1 2000\nq1 0 d2 1\n", RUN, "-m", measure, "--format", "json")
    assert code == 2 and out == ""
    assert "overflows" in err and "2000" in err and "Traceback" not in err


def test_exponential_gain_accepts_the_largest_safe_grade():
    res = rankgate.evaluate({"q1": {"d1": 1023, "d2": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}}, "nDCG(gain=exp)@10")
    assert res["nDCG(gain=exp)@10"] == 1.0


def test_unwritable_output_is_an_input_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = _eval(tmp_path, capsys, QRELS, RUN, "-m", "P@2", "-o", str(blocker / "out.json"))
    assert code == 2
    assert "cannot write" in err and "Traceback" not in err


@pytest.mark.parametrize("engine", [["--memory", "4GB"], ["--partitions", "2"], []])
def test_a_missing_run_file_is_exit_2_on_every_engine(capsys, tmp_path, engine):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    code, _, err = invoke(capsys, "eval", str(qrels), str(tmp_path / "nope.txt"), "-m", "P@1", *engine)
    assert code == 2 and "nope.txt: file not found" in err and "Traceback" not in err


def test_stdin_run_with_partitions(tmp_path):
    """``-`` is standard input on the out-of-core path too (it was sized as a file and crashed)."""
    import subprocess
    import sys

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    run = "q1 Q0 d1 1 2.0 x\nq2 Q0 d3 1 1.0 x\n"
    argv = [
        sys.executable,
        "-m",
        "rankgate",
        "eval",
        str(qrels),
        "-",
        "-m",
        "P@1",
        "--partitions",
        "2",
        "--format",
        "json",
    ]
    done = subprocess.run(argv, input=run, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"P@1": 0.5' in done.stdout
