"""What `rankgate retrieve` reports about a run that did not go smoothly.

Latency figures that count failed and timed-out queries (at the time they took), the failure list
(grouped by error, pointing to outputs that exist), Ctrl-C (how many answers are saved, how to
resume), progress lines in a log, blank queries, and a missing dependency of a client library.
Every wait here waits for an event (an answer stored, a line written), never a fixed time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from rankgate.extras import MissingExtraError
from rankgate.retrieve.base import Hit, QueryFailed
from rankgate.retrieve.cache import AnswerCache
from rankgate.retrieve.progress import LogProgress
from rankgate.retrieve.runner import RetrieveInterrupted, retrieve
from rankgate.retrieve.spec import TimedRetriever
from tests.cli_support import invoke
from tests.test_retrieve_ops import _cached

ROOT = Path(__file__).resolve().parents[1]


class Stub:
    """An in-memory `LiveRetriever`: answers ``[q-a, q-b]``; the ids in ``hang`` block until released,
    the ids in ``fail`` raise `QueryFailed`, and the ``interrupt_at``-th call raises KeyboardInterrupt."""

    kind = "stub"

    def __init__(self, *, hang: Sequence[str] = (), fail: Sequence[str] = (), interrupt_at: int = 0) -> None:
        self.hang, self.fail, self.interrupt_at = set(hang), set(fail), interrupt_at
        self.release = threading.Event()
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def search(self, query_id: str, text: str, k: int) -> list[Hit]:
        with self._lock:
            self.texts.append(text)
            calls = len(self.texts)
        if calls == self.interrupt_at:
            raise KeyboardInterrupt
        if query_id in self.hang:
            self.release.wait()  # until the test ends: the runner's timeout gives up on it first
        if query_id in self.fail:
            raise QueryFailed(f"no index for {query_id}")
        return [Hit(f"{query_id}-a", 2.0), Hit(f"{query_id}-b", 1.0)]

    def close(self) -> None:
        self.release.set()


QUERIES = {f"q{i:02d}": f"text {i}" for i in range(20)}


def test_timed_out_queries_count_in_the_latency_at_least_at_the_timeout() -> None:
    """2 of 20 queries time out (0.2 s): they are the two slowest latencies, so p95 and p99 >= 200 ms,
    whatever the speed of the others; with a retry, a query's latency is both attempts (>= 400 ms)."""
    stub = Stub(hang=["q03", "q11"])
    try:
        report = retrieve(QUERIES, TimedRetriever(stub, 0.2), k=2, retries=1, backoff=0.0, allow_failures=True)
    finally:
        stub.close()
    summary = report.to_dict()
    assert summary["failed"] == 2 and summary["answered"] == 18
    assert summary["latency_ms"]["p95"] >= 400.0 and summary["latency_ms"]["p99"] >= 400.0
    failed = {a.query_id: a for a in report.failures}
    assert set(failed) == {"q03", "q11"}
    for answer in failed.values():
        assert answer.latency_ms is not None and answer.latency_ms >= 400.0  # two attempts of >= 0.2 s each
        assert answer.error is not None and answer.error.startswith("no answer after 2 attempts; last: ")
        assert answer.to_dict()["latency_ms"] >= 400.0  # the --jsonl line holds it too


def test_a_query_that_fails_at_once_counts_too_and_one_attempt_is_singular() -> None:
    stub = Stub(fail=["q00"])
    report = retrieve({"q00": "x", "q01": "y"}, stub, k=2, retries=0, allow_failures=True)
    (failure,) = report.failures
    assert failure.error == "no index for q00" and failure.latency_ms is not None
    stuck = Stub(hang=["q00"])
    try:
        report = retrieve({"q00": "x"}, TimedRetriever(stuck, 0.05), k=2, retries=0)
    finally:
        stuck.close()
    assert report.failures[0].error == "no answer after 1 attempt; last: stub search did not return within 0.05 s"
    summary = report.to_dict()
    assert summary["answered"] == 0 and summary["latency_ms"]["p50"] >= 50.0  # was None: no answered query


def test_cli_summary_and_text_count_the_failed_queries(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Through the CLI: a SPEC whose every query fails still has latency figures, and the text says
    that they hold the failed queries."""
    (in_tmp / "failing.py").write_text("def search(text, k):\n    raise ValueError('index not loaded')\n")
    argv = ["retrieve", "--queries", _queries(in_tmp, 3), "--retriever", "python:failing:search", "-k", "3",
            "-o", "run.txt", "--summary", "s.json", "--allow-failures"]  # fmt: skip
    code, out, err = invoke(capsys, *argv)
    assert code == 0, err
    summary = json.loads((in_tmp / "s.json").read_text())
    assert summary["failed"] == 3 and set(summary["latency_ms"]) == {"p50", "p95", "p99", "mean"}
    assert "(3 failed queries counted at the time they took)" in out
    assert "all 3 queries failed: ValueError: index not loaded (at " in err


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


MODULE = """
def search(query_id, text, k):
    if query_id in {"q01", "q02", "q03", "q04", "q05", "q06", "q07"}:
        raise ValueError("shard down")
    if query_id == "q08":
        raise KeyError("other")
    return [("d1", 2.0)]

def down(text, k):
    raise ConnectionRefusedError("connection refused")
"""


def _queries(folder: Path, n: int) -> str:
    path = folder / "queries.tsv"
    path.write_text("".join(f"q{i:02d}\ttext {i}\n" for i in range(n)))
    return str(path)


def test_failures_with_one_error_share_a_line_and_name_the_options_that_keep_the_list(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (in_tmp / "svc_fail.py").write_text(MODULE)
    base = ["retrieve", "--queries", _queries(in_tmp, 12), "--retriever", "python:svc_fail:search", "-k", "1"]
    code, _out, err = invoke(capsys, *base, "-o", "a.txt", "--retries", "0")
    assert code == 1
    assert [line for line in err.splitlines() if not line.startswith("asking ")] == [
        "failed: 7 queries (q01, q02, q03, q04, q05, ...): ValueError: shard down (at svc_fail.py:4)",
        "failed: q08: KeyError: 'other' (at svc_fail.py:6)",
        "pass --summary FILE or --jsonl FILE to keep the full list of failed queries",
        "rankgate: 8 of 12 queries failed; the run was not written (run again to ask only for them, "
        "or pass --allow-failures)",
    ]
    assert "JSON summary and the JSONL file" not in err  # neither was written
    code, _out, err = invoke(capsys, *base, "-o", "b.txt", "--jsonl", "b.jsonl", "--summary", "b.json")
    assert code == 1 and "the full list of failed queries is in b.json and b.jsonl" in err
    code, out, err = invoke(capsys, *base, "-o", "c.txt", "--format", "json")
    assert code == 1 and "the full list of failed queries is in the JSON on stdout" in err
    assert len(json.loads(out)["failures"]) == 8


def test_every_query_failing_alike_is_one_line(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (in_tmp / "svc_down.py").write_text(MODULE)
    argv = ["retrieve", "--queries", _queries(in_tmp, 30), "--retriever", "python:svc_down:down", "-k", "1",
            "-o", "run.txt", "--retries", "1", "--rate", "1000"]  # fmt: skip
    code, _out, err = invoke(capsys, *argv)
    assert code == 1
    failed = [line for line in err.splitlines() if "fail" in line and not line.startswith("asking ")]
    assert failed[0].startswith("all 30 queries failed: no answer after 2 attempts; last: ConnectionRefusedError")
    assert failed[1].startswith("rankgate: 30 of 30 queries failed; the run was not written")
    assert len(failed) == 2


def test_ctrl_c_in_the_library_says_how_many_answers_are_saved(tmp_path: Path) -> None:
    """The 6th search raises KeyboardInterrupt (one request in flight): the 5 answers before it are in
    the cache, and the interruption says so."""
    cache = tmp_path / "answers.sqlite"
    stub = Stub(interrupt_at=6)
    with pytest.raises(RetrieveInterrupted) as stopped:
        retrieve(QUERIES, stub, k=2, concurrency=1, cache=cache)
    assert isinstance(stopped.value, KeyboardInterrupt)
    assert (stopped.value.saved, stopped.value.total, stopped.value.store) == (5, 20, str(cache))
    assert stopped.value.in_flight == 1  # the 6th: sent, not answered, asked again by a rerun
    with AnswerCache(cache) as stored:
        assert stored.count() == 5
    again = Stub()
    report = retrieve(QUERIES, again, k=2, concurrency=1, cache=cache)
    assert len(again.texts) == 15 and not report.failures  # the same call asks only for the rest


PACED = """
import threading
GATE = threading.Event()

def search(query_id, text, k):
    if query_id >= "q10":
        GATE.wait()  # never set: the run hangs here until Ctrl-C
    return [("d1", 1.0)]
"""


@pytest.mark.slow
def test_ctrl_c_on_the_command_line_names_the_cache_and_how_to_resume(tmp_path: Path) -> None:
    """A real SIGINT, sent once the cache holds the 10 answers the service gives before it hangs."""
    (tmp_path / "paced.py").write_text(PACED)
    queries = _queries(tmp_path, 30)
    argv = ["retrieve", "--queries", queries, "--retriever", "python:paced:search", "-k", "1", "-o", "run.txt",
            "--concurrency", "1"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    child = subprocess.Popen(
        [sys.executable, "-m", "rankgate", *argv], env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    cache = tmp_path / "run.txt.cache.sqlite"
    deadline = time.monotonic() + 120
    while _cached(cache) < 10 and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # polling for the event (10 answers stored), not waiting a fixed time
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    assert _cached(cache) == 10
    assert (
        "rankgate: interrupted; 10 of 30 answers are saved in run.txt.cache.sqlite: "
        "run the same command again to ask only for the other 20 "
        "(the request in flight was not stored and will be asked again)"
    ) in err
    assert "Aborted" not in err


def test_log_progress_prints_a_line_at_every_tenth() -> None:
    lines: list[str] = []
    with LogProgress(lines.append).counted("asking stub", 63) as tick:
        for i in range(63):
            tick(i % 9 == 0)
    done = [int(line.split(": ")[1].split(" of ")[0]) for line in lines]
    assert done == [7, 13, 19, 26, 32, 38, 45, 51, 57, 63]
    assert lines[-1].startswith("asking stub: 63 of 63 queries done (100%), 7 failed; ")


def test_log_progress_heartbeat_prints_while_no_answer_comes() -> None:
    """The heartbeat's wait is replaced by one that returns at once twice (two beats), then waits
    for the end: the two lines say that nothing was answered yet."""
    lines: list[str] = []
    two = threading.Event()
    beats = iter([False, False])

    def wait(stop: threading.Event, seconds: float) -> bool:
        assert seconds == 30.0
        beat = next(beats, None)
        if beat is None:
            return stop.wait()
        return beat

    def write(line: str) -> None:
        lines.append(line)
        if len(lines) == 2:
            two.set()

    with LogProgress(write, wait=wait).counted("asking stub", 5):
        assert two.wait(30)  # the event: two heartbeat lines written
    assert [line.split(";")[0] for line in lines] == ["asking stub: 0 of 5 queries done (0%), 0 failed"] * 2


def test_cli_prints_progress_lines_when_stderr_is_not_a_terminal(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (in_tmp / "svc_ok.py").write_text("def search(text, k):\n    return [('d1', 1.0)]\n")
    argv = ["retrieve", "--queries", _queries(in_tmp, 20), "--retriever", "python:svc_ok:search", "-o", "r.txt"]
    code, _out, err = invoke(capsys, *argv)
    assert code == 0, err
    progress = [line for line in err.splitlines() if line.startswith("asking python: ")]
    assert [line.split(";")[0] for line in progress] == [
        f"asking python: {n} of 20 queries done ({n * 5}%), 0 failed" for n in range(2, 21, 2)
    ]


def test_blank_queries_are_sent_and_named_in_a_warning() -> None:
    stub = Stub()
    report = retrieve({"a": "", "b": "   ", "c": "tea"}, stub, k=2)
    assert sorted(stub.texts) == ["", "   ", "tea"]
    assert report.warnings()[0] == (
        "2 queries have empty or blank text, e.g. a, b; the retriever was asked all the same "
        "(give them text, or drop them from the queries file)"
    )
    assert report.to_dict()["warnings"][0] == report.warnings()[0]


def test_cli_reads_id_and_query_keys_and_warns_about_a_blank_text(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The documented leniency: ``id``/``query`` keys besides BEIR's ``_id``/``text``; a blank text warns."""
    (in_tmp / "q.jsonl").write_text('{"id": "b", "query": "x"}\n{"_id": "c", "text": "   "}\n')
    (in_tmp / "echo.py").write_text("def search(text, k):\n    return [(text or 'empty', 1.0)]\n")
    argv = ["retrieve", "--queries", "q.jsonl", "--retriever", "python:echo:search", "-o", "r.txt", "--format", "json"]
    code, out, err = invoke(capsys, *argv)
    assert code == 0, err
    assert "warning: 1 query has empty or blank text, e.g. c; the retriever was asked all the same" in err
    assert json.loads(out)["warnings"][0].startswith("1 query has empty or blank text, e.g. c;")
    assert (in_tmp / "r.txt").read_text().split("\n")[:2] == ["b Q0 x 1 1.0 r", "c Q0 empty 1 1.0 r"]


def test_a_missing_dependency_of_a_client_library_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client library imports but its own dependency is missing: the message names that one."""
    from rankgate.extras import require

    (tmp_path / "client_lib_xyz.py").write_text("import dependency_of_client_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError) as missing:
        require("client_lib_xyz", "lancedb", purpose="the lancedb retriever")
    message = str(missing.value)
    assert message.startswith("the lancedb retriever needs dependency_of_client_xyz: pip install 'rankgate[lancedb]'")
    assert "client_lib_xyz is installed, but its dependency dependency_of_client_xyz is not" in message
    with pytest.raises(MissingExtraError, match=r"^the lancedb retriever needs no_client_xyz: "):
        require("no_client_xyz", "lancedb", purpose="the lancedb retriever")
    # a name its installed dependency lacks (a version mismatch): the library is blamed, not json
    (tmp_path / "old_client_xyz.py").write_text("from json import not_there\n")
    with pytest.raises(MissingExtraError) as mismatch:
        require("old_client_xyz", "lancedb", purpose="the lancedb retriever")
    assert str(mismatch.value).startswith("the lancedb retriever needs old_client_xyz: ")
    assert "dependency json" not in str(mismatch.value)


BLOCKED = textwrap.dedent(
    """
    import sys

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "idna":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, Block())
    from rankgate.cli import main
    main(sys.argv[1:])
    """
)


@pytest.mark.extra("retrieve")
def test_cli_names_the_missing_dependency_of_httpx(tmp_path: Path) -> None:
    """httpx installed, its dependency idna not (blocked at import): exit 2, one line naming idna."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("kind: http\nurl: http://127.0.0.1:9/search\nhits: results\nid: id\n")
    argv = ["retrieve", "--queries", "demo", "--retriever", str(spec), "-o", str(tmp_path / "r.txt")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", BLOCKED, *argv], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("rankgate: error: the http retriever needs idna: pip install 'rankgate[retrieve]'")
    assert "httpx is installed, but its dependency idna is not" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
