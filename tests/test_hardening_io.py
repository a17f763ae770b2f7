"""Hostile input files and output targets (issue 23): what the io layer guarantees.

Outputs: only regular files are replaced by rename; a symlink stays a link, devices and pipes are
written into. Inputs: every malformed file is an `InputError` naming ``file[:line]`` (exit 2 with
one line through the CLI), never a traceback or a hang.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankgate
from rankgate.io import write_run
from tests.cli_support import invoke

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d3 1 1.0 sys\n"
RUN_DICT = {"q1": {"d1": 2.0, "d2": 1.0}}


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")


# --------------------------------------------------------------------------------------
# 23.1 Output targets that are not regular files
# --------------------------------------------------------------------------------------
def test_symlink_target_is_replaced_and_the_link_kept(tmp_path, files, capsys):
    real = tmp_path / "real" / "out.txt"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    code, _, err = invoke(capsys, "eval", *files, "-m", "P@1", "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert "P@1" in real.read_text()
    assert sorted(os.listdir(real.parent)) == ["out.txt"]  # no temporary file left beside it
    assert sorted(os.listdir(tmp_path)) == ["link.txt", "qrels.txt", "real", "run.txt"]


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.run"
    link.symlink_to(tmp_path / "new.run")
    write_run(rankgate.Run.from_dict(RUN_DICT), link)
    assert link.is_symlink() and (tmp_path / "new.run").read_text().startswith("q1 Q0 d1 1")


def _read_fifo(path: Path, into: list[bytes]) -> None:
    with open(path, "rb") as f:
        into.append(f.read())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("through_cli", [True, False])
def test_fifo_target_is_written_into(tmp_path, files, capsys, through_cli):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=_read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    if through_cli:
        code, _, err = invoke(capsys, "eval", *files, "-m", "P@1", "-o", str(fifo))
        assert code == 0, err
    else:
        write_run(rankgate.Run.from_dict(RUN_DICT), fifo)
    reader.join(10)
    assert not reader.is_alive()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert (b"P@1" if through_cli else b"q1 Q0 d1 1 2.0") in got[0]
    assert sorted(os.listdir(tmp_path)) == ["out.fifo", "qrels.txt", "run.txt"]


def _device_node(tmp_path: Path) -> Path:
    """A private character device like /dev/null where the test may make one (root), else /dev/null."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        with open(node, "wb") as f:  # a container may forbid using the node it let us make
            f.write(b"")
    except (OSError, AttributeError):
        return Path("/dev/null")
    return node


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
@pytest.mark.parametrize("through_cli", [True, False])
def test_device_target_stays_a_device(tmp_path, files, capsys, through_cli):
    device = _device_node(tmp_path)
    before = os.stat(device)
    assert stat.S_ISCHR(before.st_mode)
    if through_cli:
        code, _, err = invoke(capsys, "eval", *files, "-m", "P@1", "-o", str(device))
        assert code == 0, err
    else:
        write_run(rankgate.Run.from_dict(RUN_DICT), device)
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert not [n for n in os.listdir(device.parent) if n.startswith(f".{device.name}.")]  # no temp file


def test_dev_stdout_is_written_into_not_replaced(tmp_path, files):
    """``-o /dev/stdout`` with stdout redirected to a file: the text lands in that file, which stays."""
    import subprocess
    import sys

    out = tmp_path / "stdout.txt"
    with open(out, "wb") as f:
        done = subprocess.run(
            [sys.executable, "-m", "rankgate", "eval", *files, "-m", "P@1", "-o", "/dev/stdout"],
            stdout=f,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert "P@1" in out.read_text()
    assert sorted(os.listdir(tmp_path)) == ["qrels.txt", "run.txt", "stdout.txt"]


def test_regular_file_target_is_still_replaced_atomically(tmp_path):
    target = tmp_path / "out.run"
    target.write_text("old\n")
    inode = os.stat(target).st_ino
    write_run(rankgate.Run.from_dict(RUN_DICT), target)
    assert target.read_text().startswith("q1 Q0 d1 1") and os.stat(target).st_ino != inode


# --------------------------------------------------------------------------------------
# Rejected input through `rankgate eval`: (name, qrels, run, substrings of the one-line message)
# A file is (name, bytes) or text for qrels.txt / run.txt.
# --------------------------------------------------------------------------------------
def _parquet(**columns: list) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(columns), sink)
    return bytes(sink.getvalue())


REJECTED = [
    # 23.6: duplicate keys, booleans
    ("json-qrels-duplicate-doc", ("q.json", '{"q1": {"d1": 1, "d1": 0}}'), RUN, ["q.json", "duplicate key 'd1'"]),
    ("json-qrels-duplicate-query", ("q.json", '{"q1": {"d1": 1},\n "q1": {"d2": 1}}'), RUN, ["duplicate key 'q1'"]),
    ("json-run-duplicate-doc", QRELS, ("r.json", '{"q1": {"d1": 2.0, "d1": 1.0}}'), ["r.json", "duplicate key 'd1'"]),
    (
        "jsonl-duplicate-key",
        QRELS,
        ("r.jsonl", '{"qid": "q1", "docid": "d1", "score": 1}\n{"qid": "q1", "docid": "d2", "score": 1, "score": 2}\n'),
        ["r.jsonl:2", "duplicate key 'score'"],
    ),
    ("json-qrels-true-grade", ("q.json", '{"q1": {"d1": true}}'), RUN, ["q.json", "grade true is not a number"]),
    ("json-run-false-score", QRELS, ("r.json", '{"q1": {"d1": false}}'), ["r.json", "score false is not a number"]),
    ("jsonl-qrels-true-grade", ("q.jsonl", '{"qid": "q1", "docid": "d1", "grade": true}\n'), RUN, ["q.jsonl:1"]),
    # 23.13: trec_eval reads a grade with atoi ("1e3" is 1 to it): refuse what the two read differently
    (
        "qrels-grade-1e3",
        "q1 0 d1 1e3\nq1 0 d2 0\n",
        RUN,
        ["qrels.txt:1", "grade '1e3' is not written as an integer", "trec_eval would read it as 1"],
    ),
    ("qrels-grade-2E0", "q1 0 d1 1\nq1 0 d2 2E0\n", RUN, ["qrels.txt:2", "grade '2E0'", "read it as 2"]),
    ("qrels-grade-.5e1", "q1 0 d1 .5e1\n", RUN, ["qrels.txt:1", "grade '.5e1'", "read it as 0"]),
    # 23.8 / 23.7: numbers in other scripts' digits, giant numbers
    ("run-score-arabic-digits", QRELS, "q1 Q0 d1 1 \u0662.0 s\n", ["run.txt:1", "score '\u0662.0' is not a number"]),
    ("qrels-grade-arabic-digits", "q1 0 d1 \u0662\n", RUN, ["qrels.txt:1", "grade '\u0662' is not a whole number"]),
    ("qrels-grade-5000-digits", "q1 0 d1 " + "9" * 5000 + "\n", RUN, ["qrels.txt:1", "is too large"]),
    ("run-score-5000-digits", QRELS, "q1 Q0 d1 1 " + "9" * 5000 + " s\n", ["run.txt:1", "not a finite number"]),
    ("csv-score-arabic-digits", QRELS, ("r.csv", "qid,docid,score\nq1,d1,\u0662\n"), ["r.csv:2", "score '\u0662'"]),
    ("json-grade-5000-digits", ("q.json", '{"q1": {"d1": ' + "9" * 5000 + "}}"), RUN, ["q.json", "invalid JSON"]),
    (
        "jsonl-nested-deep",
        QRELS,
        ("r.jsonl", '{"qid": ' + "[" * 100000 + "]" * 100000 + "}\n"),
        ["r.jsonl:1", "JSON nested too deeply"],
    ),
    (
        "json-nested-deep",
        ("q.json", '{"q1": ' + "[" * 100000 + "]" * 100000 + "}"),
        RUN,
        ["q.json", "JSON nested too deeply"],
    ),
    # 23.8: a quoted value spanning lines does not shift the line named
    (
        "csv-quoted-newline-bad-score",
        QRELS,
        ("r.csv", 'qid,docid,score\n"q\n1",d1,1\nq1,d2,x\n'),
        ["r.csv:4", "score 'x' is not a number"],
    ),
    (
        "csv-quoted-newline-bad-width",
        QRELS,
        ("r.csv", 'qid,docid,score\n"q\n1",d1,1\n\nq1,d2\n'),
        ["r.csv:5", "expected 3 fields like the header, found 2"],
    ),
    (
        "long-line-then-bad-line",
        QRELS,
        "q1 Q0 " + "d" * 9_000_000 + " 1 2.0 s\nq1 Q0 d1 2 1.0\n",
        ["run.txt:2", "expected at least 6 fields", "found 5"],
    ),
    # 23.7: inputs that ended in a traceback
    (
        "csv-duplicate-header",
        QRELS,
        ("r.csv", "qid,docid,score,score\nq1,d1,1,2\n"),
        ["r.csv:1", "column 'score' appears twice in the header"],
    ),
    (
        "csv-duplicate-header-case",
        ("q.csv", "\nqid,docid,grade,Grade\nq1,d1,1,2\n"),
        RUN,
        ["q.csv:2", "'Grade' appears twice"],
    ),
    ("cr-only-bad-score", QRELS, "q1 Q0 d1 1 2.0 s\rq1 Q0 d2 2 x s\r", ["run.txt:2", "score 'x' is not a number"]),
    ("device-as-input", QRELS, ("dev", b""), ["is a device or socket, not a file or a pipe"]),
    (
        "csv-long-line-then-bad-line",
        QRELS,
        ("r.csv", "qid,docid,score,tag\nq1,d2,1," + "t" * 9_000_000 + "\nq1,d1\n"),
        ["r.csv:3", "expected 4 fields like the header, found 2"],
    ),
    (
        "parquet-bool-grade",
        ("q.parquet", _parquet(qid=["q1"], docid=["d1"], grade=[True])),
        RUN,
        ["q.parquet row 1", "grade column holds true/false"],
    ),
]


def _put(tmp_path: Path, spec: str | tuple[str, str | bytes], default: str) -> str:
    name, content = spec if isinstance(spec, tuple) else (default, spec)
    if name == "dev":  # a device that never ends: must be refused, not read
        return "/dev/zero"
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


def _streamable(spec: str | tuple[str, str | bytes]) -> bool:
    """Whether out-of-core evaluation reads this file (TREC text and Parquet only)."""
    return not isinstance(spec, tuple) or spec[0].endswith(".parquet") or spec[0] == "dev"


REJECTED_BOTH_ENGINES = [pytest.param(*r, None, id=r[0]) for r in REJECTED] + [
    pytest.param(*r, "2", id=f"{r[0]}-partitions") for r in REJECTED if _streamable(r[1]) and _streamable(r[2])
]


@pytest.mark.parametrize(("name", "qrels", "run", "expected", "partitions"), REJECTED_BOTH_ENGINES)
def test_rejected_input_exits_2_with_one_line(tmp_path, capsys, name, qrels, run, expected, partitions):
    """In memory and out of core (``--partitions``) alike."""
    q, r = _put(tmp_path, qrels, "qrels.txt"), _put(tmp_path, run, "run.txt")
    extra = ["--partitions", partitions] if partitions else []
    before = sorted(os.listdir(tmp_path))
    code, out, err = invoke(capsys, "eval", q, r, "-m", "P@1", *extra)
    assert code == 2, (out, err)
    assert "Traceback" not in err and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankgate: error: "), err
    assert len(lines[0]) < 400  # a hostile value is shortened, not echoed whole
    for part in expected:
        assert part in lines[0]
    assert sorted(os.listdir(tmp_path)) == before


# --------------------------------------------------------------------------------------
# 23.6 A tags file that gives a query twice
# --------------------------------------------------------------------------------------
TAGS_TWICE = [
    ("tags.jsonl", '{"qid": "q1", "topic": "a"}\n{"qid": "q2", "topic": "b"}\n{"qid": "q1", "topic": "c"}\n', 3, 1),
    ("tags.csv", "qid,topic\nq1,a\nq2,b\n\nq1,c\n", 5, 2),
    ("tags.tsv", "qid\ttopic\nq1\ta\nq1\tc\n", 3, 2),
]


@pytest.mark.parametrize(("name", "text", "line", "first"), TAGS_TWICE, ids=[t[0] for t in TAGS_TWICE])
def test_tags_file_with_a_query_twice_names_both_lines(tmp_path, name, text, line, first):
    from rankgate.errors import InputError
    from rankgate.io.tags import read_query_tags

    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as e:
        read_query_tags(path)
    assert str(e.value).startswith(f"{path}:{line}: query 'q1' is given twice (first on line {first})")


def test_tags_json_mapping_with_a_query_twice(tmp_path):
    from rankgate.errors import InputError
    from rankgate.io.tags import read_query_tags

    path = tmp_path / "tags.json"
    path.write_text('{"q1": {"topic": "a"}, "q1": {"topic": "b"}}')
    with pytest.raises(InputError, match="duplicate key 'q1'"):
        read_query_tags(path)


@pytest.mark.parametrize("partitions", [None, "2"])
def test_a_line_longer_than_arrows_block_is_read(tmp_path, files, capsys, partitions):
    """trec_eval reads a line of any length (a 9 MB run tag here); so must both readers."""
    run = tmp_path / "long.txt"
    run.write_text("q1 Q0 d1 1 2.0 " + "t" * 9_000_000 + "\nq1 Q0 d2 2 1.0 s\nq2 Q0 d3 1 1.0 s\n")
    extra = ["--partitions", partitions] if partitions else []
    code, out, err = invoke(capsys, "eval", files[0], str(run), "-m", "P@1", "--format", "json", *extra)
    assert code == 0, err
    assert json.loads(out)["aggregate"] == {"P@1": 1.0}


# --------------------------------------------------------------------------------------
# 23.7 CR-only line endings: both engines read them alike; inputs that cannot be sought in
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("partitions", [None, "2"])
@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n"])
def test_line_endings_read_alike_in_both_engines(tmp_path, files, capsys, ending, partitions):
    run = tmp_path / "run_cr.txt"
    run.write_bytes(RUN.replace("\n", ending).encode())
    extra = ["--partitions", partitions] if partitions else []
    code, out, err = invoke(capsys, "eval", files[0], str(run), "-m", "P@1,P@2", "--format", "json", *extra)
    assert code == 0, err
    assert json.loads(out)["aggregate"] == {"P@1": 1.0, "P@2": 0.5}


def test_a_csv_row_longer_than_arrows_block_is_read(tmp_path, files, capsys):
    run = tmp_path / "long.csv"
    run.write_text("qid,docid,score,tag\nq1,d1,2," + "t" * 9_000_000 + "\nq1,d2,1,x\nq2,d3,1,x\n")
    code, out, err = invoke(capsys, "eval", files[0], str(run), "-m", "P@1", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["aggregate"] == {"P@1": 1.0}


@pytest.fixture
def fresh_stdin():
    """Standard input is copied once per process: forget the copy between tests."""
    import rankgate.io.source as source

    source._remove_spooled()
    yield
    source._remove_spooled()


def _feed_fifo(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("partitions", [None, "2"])
def test_a_pipe_is_read_once_not_sought_in(tmp_path, files, capsys, partitions, fresh_stdin):
    """``<(cat run)`` is a pipe: read it whole once (Arrow seeks in what it reads)."""
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=_feed_fifo, args=(fifo, RUN.encode()), daemon=True)
    writer.start()
    extra = ["--partitions", partitions] if partitions else []
    code, out, err = invoke(capsys, "eval", files[0], str(fifo), "-m", "P@1", "--format", "json", *extra)
    writer.join(10)
    assert code == 0, err
    assert json.loads(out)["aggregate"] == {"P@1": 1.0}


def test_dash_reads_standard_input(files, capsys, monkeypatch, fresh_stdin):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(RUN.encode())))
    code, out, err = invoke(capsys, "eval", files[0], "-", "-m", "P@1", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["aggregate"] == {"P@1": 1.0}


@pytest.mark.parametrize("path", ["-", "/dev/stdin"])
def test_piped_standard_input_through_the_command(files, path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "rankgate", "eval", files[0], path, "-m", "P@1", "--format", "json"],
        input=RUN.encode(),
        capture_output=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["aggregate"] == {"P@1": 1.0}


# --------------------------------------------------------------------------------------
# Fuzz: random and mutated files never raise anything but InputError (and never hang)
# --------------------------------------------------------------------------------------
SEEDS = {
    "trec": (RUN.encode(), QRELS.encode()),
    "json": (b'{"q1": {"d1": 2.0, "d2": 1.0}, "q2": ["d3"]}', b'{"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}'),
    "jsonl": (
        b'{"qid": "q1", "docid": "d1", "score": 2.0}\n{"qid": "q2", "docid": "d3", "score": 1}\n',
        b'{"qid": "q1", "docid": "d1", "grade": 1}\n{"qid": "q2", "docid": "d3", "grade": 0}\n',
    ),
    "csv": (b'qid,docid,score\nq1,d1,2.0\n"q2",d3,1\n', b"query-id,corpus-id,score\nq1,d1,1\nq2,d3,0\n"),
    "tsv": (b"qid\tdocid\tscore\nq1\td1\t2.0\n", b"query-id\tcorpus-id\tscore\nq1\td1\t1\n"),
}
# Bytes that tend to break parsers: separators, quotes, brackets, line ends, digits of other scripts.
_NASTY = [
    *(b" ", b"\t", b"\r", b"\n", b"\r\n", b'"', b",", b"{", b"}", b"[", b"]", b":", b"\x00", b"\xff", b"\xef\xbb\xbf"),
    *(b"1e3", b"-", b".", b"nan", b"inf", b"true", b"\xd9\xa2", b"9" * 400, b"[" * 3000, b"q1", b"d1", b"Q0"),
]


def _mutate(seed: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    data = bytearray(seed)
    for kind, at, which in edits:
        at = at % (len(data) + 1)
        if kind == 0:
            data[at:at] = _NASTY[which % len(_NASTY)]
        elif kind == 1:
            del data[at : at + 1 + which % 8]
        else:
            data[at:at] = data[: which % (len(data) + 1)]  # repeat a prefix: duplicate lines and keys
    return bytes(data)


_edits = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10**6), st.integers(0, 10**6)), max_size=6)


@pytest.mark.parametrize("fmt", list(SEEDS))
@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=300), _edits.map(lambda e: e)), which=st.integers(0, 1))
def test_readers_raise_only_input_errors(tmp_path, fmt, data, which):
    from rankgate.errors import InputError
    from rankgate.io import read_qrels, read_run
    from rankgate.io.tags import read_query_tags

    content = data if isinstance(data, bytes) else _mutate(SEEDS[fmt][which], data)
    path = tmp_path / f"fuzz.{fmt}"
    path.write_bytes(content)
    calls = [lambda r=reader, f=f: r(path, format=f) for reader in (read_run, read_qrels) for f in (fmt, None)]
    for call in [*calls, lambda: read_query_tags(path)]:
        try:
            call()
        except InputError as e:
            assert len(str(e)) < 2000
