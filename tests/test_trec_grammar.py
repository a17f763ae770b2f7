"""TREC files read by trec_eval 10's grammar (get_trec_results.c, get_qrels.c).

Accepted as trec_eval accepts them: run fields after the sixth (ignored), comment lines,
any of C's blanks between fields. Refused as trec_eval refuses them, with rankgate's
``file:line``: too few run fields, a qrels line with other than four. Both the whole-file
reader and the streamed (out-of-core) reader, which must agree.
"""

from __future__ import annotations

import gzip

import pytest

from rankgate.errors import InputError
from rankgate.io import blocks
from rankgate.io.readers import read_qrels, read_run
from rankgate.io.run_tag import last_run_tag

PLAIN_RUN = {"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d3": 1.0}}
PLAIN_QRELS = {"q1": {"d1": 1, "d2": 2}}


def _put(tmp_path, text: bytes, name: str = "f.txt") -> str:
    path = tmp_path / name
    path.write_bytes(text)
    return str(path)


def _streamed(path: str, kind: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for b in blocks.iter_blocks(path, kind, block_bytes=16):  # tiny blocks: every line its own
        for q, d, v in zip(b.qid.to_pylist(), b.docid.to_pylist(), b.value.tolist(), strict=True):
            out.setdefault(q, {})[d] = v
    return out


RUNS_READ_ALIKE = [
    pytest.param(b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d3 1 1 t\n", id="plain"),
    pytest.param(b"q1 Q0 d1 1 2.5 t extra\nq1 Q0 d2 2 1.5 t a b c\nq2 Q0 d3 1 1 t 7\n", id="fields-after-sixth"),
    pytest.param(
        b"# header\nq1 Q0 d1 1 2.5 t\n   # indented comment\nq1 Q0 d2 2 1.5 t\nq2 Q0 d3 1 1 t\n", id="comments"
    ),
    pytest.param(b"# a b c d e\nq1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d3 1 1 t\n", id="comment-of-six-fields"),
    pytest.param(b"q1\x0bQ0 d1 1 2.5 t\nq1\fQ0\td2 2 1.5 t\r\nq2 Q0 d3 1 1 t x\r\n", id="c-blanks-crlf"),
    pytest.param(b"q1 Q0 d1 1 2.5 t x\rq1 Q0 d2 2 1.5 t\rq2 Q0 d3 1 1 t y z\r", id="cr-only"),
    pytest.param(b"\n\nq1 Q0 d1 1 2.5 t\n\n  \nq1 Q0 d2 2 1.5 t\nq2 Q0 d3 1 1 t", id="blank-lines-no-final-newline"),
]


@pytest.mark.parametrize("text", RUNS_READ_ALIKE)
def test_runs_read_as_trec_eval_reads_them(tmp_path, text):
    path = _put(tmp_path, text)
    assert read_run(path).to_dict() == PLAIN_RUN
    assert _streamed(path, "run") == PLAIN_RUN


QRELS_READ_ALIKE = [
    pytest.param(b"q1 0 d1 1\nq1 0 d2 2\n", id="plain"),
    pytest.param(b"# comment line\nq1 0 d1 1\n#another one here\nq1 0 d2 2\n", id="comments"),
    pytest.param(b"# a b c\nq1 0 d1 1\nq1 0 d2 2   \n", id="comment-of-four-fields"),
    pytest.param(b"q1\t0\td1\t1\r\nq1 \x0b 0 d2 2\r\n", id="c-blanks-crlf"),
]


@pytest.mark.parametrize("text", QRELS_READ_ALIKE)
def test_qrels_read_as_trec_eval_reads_them(tmp_path, text):
    path = _put(tmp_path, text)
    assert read_qrels(path).to_dict() == PLAIN_QRELS
    assert _streamed(path, "qrels") == PLAIN_QRELS


REFUSED = [
    ("run", b"q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1\n", "f.txt:2", "expected at least 6 fields"),
    ("run", b"# c\n\n# c\nq1 Q0 d1 1 x t\n", "f.txt:4", "score 'x' is not a number"),
    ("qrels", b"q1 0 d1 1\nq1 0 d2 1 extra\n", "f.txt:2", "expected 4 fields"),
    ("qrels", b"# c\nq1 0 d1\n", "f.txt:2", "found 3"),
    ("run", b"# only a comment\n   # and another\n", "f.txt", "only comments"),
]


@pytest.mark.parametrize(("kind", "text", "where", "words"), REFUSED)
def test_refused_with_file_and_line(tmp_path, kind, text, where, words):
    path = _put(tmp_path, text)
    read = read_run if kind == "run" else read_qrels
    with pytest.raises(InputError) as e:
        read(path)
    assert where in str(e.value) and words in str(e.value)


def test_duplicate_named_at_its_line_after_comments(tmp_path):
    path = _put(tmp_path, b"# c\nq1 Q0 d1 1 2 t x\n# c\nq1 Q0 d1 2 1 t\n")
    with pytest.raises(InputError, match=r"f\.txt:4: duplicate document 'd1'.*first at .*f\.txt:2"):
        read_run(path)


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        (b"q1 Q0 d1 1 2 first\nq1 Q0 d2 2 1 last extra\n", "last"),
        (b"q1 Q0 d1 1 2 first\nq1 Q0 d2 2 1 last\n\n  \n# comment\n", "last"),
        (b"q1 Q0 d1 1 2 only", "only"),
    ],
)
def test_runid_is_the_last_lines_tag(tmp_path, text, tag):
    assert last_run_tag(_put(tmp_path, text)) == tag
    assert last_run_tag(_put(tmp_path, gzip.compress(text), "f.txt.gz")) == tag


def test_runid_found_beyond_the_first_tail_read(tmp_path):
    text = b"q1 Q0 d1 1 2 mine\n" + b"#" * 200_000 + b"\n"
    assert last_run_tag(_put(tmp_path, text)) == "mine"


@pytest.mark.parametrize(
    ("kind", "text"),
    [("run", b"q1 Q0 d1 1 2 t\nq1 Q0 a\x00b 2 1 t\n"), ("qrels", b"q1 0 d1 1\nq1 0 d2 1\x00\n")],
    ids=["run-doc-id", "qrels-grade"],
)
def test_a_nul_byte_is_refused_where_trec_eval_would_end_the_field(tmp_path, kind, text):
    """trec_eval's C strings end at a NUL: it would read the doc id 'a' (or grade 1), not what the
    line shows. Refused at its line by the whole-file reader and the streamed one."""
    path = _put(tmp_path, text)
    read = read_run if kind == "run" else read_qrels
    with pytest.raises(InputError, match=r"f\.txt:2: a NUL byte"):
        read(path)
    with pytest.raises(InputError, match=r"f\.txt:2: a NUL byte"):
        _streamed(path, kind)


@pytest.mark.parametrize("name", ["qrels.txt", "qrels"])
def test_tab_separated_qrels_whose_first_query_is_a_header_word_are_read_as_trec(tmp_path, name):
    """A header holds no number; "topic<TAB>0<TAB>a<TAB>1" is a TREC line (a query named topic), not TSV."""
    path = _put(tmp_path, b"topic\t0\ta\t1\nq\t0\ta\t2\n", name)
    assert read_qrels(path).to_dict() == {"topic": {"a": 1}, "q": {"a": 2}}
    header = _put(tmp_path, b"query-id\tcorpus-id\tscore\nq\ta\t1\n", "beir.txt")
    assert read_qrels(header).to_dict() == {"q": {"a": 1}}  # a header still makes a TSV
