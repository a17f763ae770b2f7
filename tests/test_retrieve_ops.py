"""`rankgate retrieve` operations: resume after kill -9, secrets kept out of every output, config errors."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankgate.data import demo_dir
from rankgate.io.texts import read_queries
from tests.cli_support import invoke
from tests.retrieve_support import TOKEN, FaultyService, write_spec

pytestmark = pytest.mark.extra("retrieve", "bench")

ROOT = Path(__file__).resolve().parents[1]
QUERIES = read_queries(demo_dir() / "queries.jsonl")


@pytest.fixture(scope="module")
def service() -> Iterator[FaultyService]:
    with FaultyService() as running:
        yield running


def _cached(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
    except sqlite3.OperationalError:  # the table is not created yet
        return 0


@pytest.mark.slow
def test_rerun_after_kill_asks_only_the_missing_queries(service: FaultyService, tmp_path: Path) -> None:
    spec = write_spec(tmp_path, service.url, "/paced")
    run, cache = tmp_path / "run.txt", tmp_path / "run.txt.cache.sqlite"
    argv = ["retrieve", "--queries", "demo", "--retriever", spec, "-k", "10", "-o", str(run), "--concurrency", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    child = subprocess.Popen([sys.executable, "-m", "rankgate", *argv], env=env, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while _cached(cache) < 10 and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)  # polling for the event (10 answers stored), not waiting a fixed time
    child.send_signal(signal.SIGKILL)
    child.wait()
    stored = _cached(cache)
    assert child.returncode == -signal.SIGKILL and 10 <= stored < 63
    assert not run.exists()
    before = service.asked("/paced")
    assert invoke_code(argv) == 0
    asked = service.asked("/paced") - before
    assert asked == 63 - stored
    lines = run.read_text().splitlines()
    assert {line.split()[0] for line in lines} == set(QUERIES)


def invoke_code(argv: list[str]) -> int:
    from tests.cli_support import exit_code

    return exit_code(*argv)


def test_secret_header_is_never_written(
    service: FaultyService, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCH_TOKEN", TOKEN)
    headers = {"Authorization": "Bearer ${SEARCH_TOKEN}"}
    good = write_spec(tmp_path, service.url, "/auth", name="good.yaml", headers=headers)
    bad = write_spec(tmp_path, service.url, "/echo500", name="bad.yaml", headers=headers)
    outputs = []
    for spec, name in ((good, "good"), (bad, "bad")):
        argv = ["retrieve", "--queries", "demo", "--retriever", spec, "-k", "5", "--retries", "1",
                "-o", str(tmp_path / f"{name}.txt"), "--jsonl", str(tmp_path / f"{name}.jsonl"),
                "--summary", str(tmp_path / f"{name}.json")]  # fmt: skip
        code, out, err = invoke(capsys, *argv)
        outputs += [out, err]
        assert code == (0 if name == "good" else 1), err
    echoed = f'HTTP 500 from {service.url}/echo500: {{"error": "broken for ***"}}'
    assert echoed in outputs[-1]  # the server echoed the header; the message has it scrubbed
    summary = json.loads((tmp_path / "good.json").read_text())
    assert summary["retriever"]["identity"]["headers"] == headers  # the template, never the value
    assert summary["answered"] == 63
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    assert any(p.name.endswith("-wal") or p.suffix == ".sqlite" for p in files)
    for path in files:
        assert TOKEN.encode() not in path.read_bytes(), path.name
    for text in outputs:
        assert TOKEN not in text


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("url: http://x/search\n", "spec.yaml: the 'kind' key is missing"),
        ("kind: solr\n", "spec.yaml: kind: unknown kind 'solr'"),
        ("kind: http\nurl: http://x/s\nid: id\n", "spec.yaml: hits: is required"),
        (
            "kind: http\nurl: http://x/s\nhits: results\nid: id\nhit: x\n",
            "spec.yaml: hit: unknown key (allowed here: kind, url, method",
        ),
        ("kind: http\nurl: http://x/s\nhits: 'results[?'\nid: id\n", "spec.yaml: hits: not a JMESPath expression"),
        (
            "kind: http\nurl: ftp://x/s\nhits: r\nid: id\n",
            "spec.yaml: url: must start with http:// or https://. Got 'ftp://x/s'",
        ),
        (
            "kind: http\nurl: http://x/s\nmethod: PUT\nhits: r\nid: id\n",
            "spec.yaml: method: must be GET or POST. Got 'PUT' instead.",
        ),
        (
            "kind: http\nurl: http://x/s\nhits: r\nid: id\ntimeout: -1\n",
            "spec.yaml: timeout: must be a number > 0. Got -1 instead.",
        ),
        (
            "kind: http\nurl: http://x/s\nhits: r\nid: id\nheaders: {X-Key: '${RANKGATE_TEST_UNSET}'}\n",
            "spec.yaml: headers.X-Key: environment variable RANKGATE_TEST_UNSET is not set",
        ),
        ("kind: python\ntarget: no_such_module_xyz:f\n", "spec.yaml: target: cannot import no_such_module_xyz"),
        ("kind: http\nkind: http\n", "spec.yaml:2: duplicate key 'kind'"),
        ("[1, 2]\n", "spec.yaml: expected a mapping with a 'kind' key"),
        ("kind: http\nurl: http://x/s\nhits: r\nid: id\ntimeout: .inf\n", "spec.yaml: timeout: must be a number > 0"),
        ("kind: lancedb\npath: nowhere\ntable: t\n", "spec.yaml: path: nowhere: no such folder"),
        ("kind: chroma\npath: .\ncollection: c\ncolour: red\n", "spec.yaml: colour: unknown key (allowed here: kind"),
        ("kind: qdrant\ncollection: c\n", "spec.yaml: give either url (a Qdrant server) or path (local mode)"),
    ],
)
def test_bad_specs_exit_2_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, config: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANKGATE_TEST_UNSET", raising=False)
    (tmp_path / "spec.yaml").write_text(config)
    code, out, err = invoke(capsys, "retrieve", "--queries", "demo", "--retriever", "spec.yaml", "-o", "run.txt")
    assert code == 2 and out == ""
    assert err.startswith(f"rankgate: error: {message}"), err
    assert "Traceback" not in err and not (tmp_path / "run.txt").exists()


def test_warnings_use_the_flag_spelling_and_singular_counts() -> None:
    """One query: singular words; several: plural; the hint names --scores ranks as typed on the CLI."""
    from rankgate.retrieve.base import Hit
    from rankgate.retrieve.outcome import Answer, RetrieveReport

    tied = Answer("q1", [Hit("d1", 1.0), Hit("d2", 1.0)], scores_tied=True, duplicates=["d1"])
    one = RetrieveReport({}, 10, [tied, Answer("q2")], 1.0)
    assert one.warnings() == [
        "1 duplicate hit was dropped from 1 query (the first copy of each document kept), e.g. q1: d1",
        "1 query returned no hits",
        "1 query has tied scores, which trec_eval orders by doc id, not as returned "
        "(--scores ranks, or scores='ranks' in Python, keeps the order)",
    ]
    two = RetrieveReport({}, 10, [Answer(q, scores_tied=True, scores_unordered=True) for q in ("q1", "q2")], 1.0)
    assert two.warnings() == [
        "2 queries returned no hits",
        "2 queries have tied scores, which trec_eval orders by doc id, not as returned "
        "(--scores ranks, or scores='ranks' in Python, keeps the order)",
        "2 queries have scores that do not descend with rank; trec_eval orders by score, so distances (smaller "
        "is better) are scored upside down: pass --scores ranks (scores='ranks' in Python) if the retriever's "
        "order is right, else negate the scores in the retriever",
    ]
