"""`rankgate retrieve` against a real HTTP search service (tests/retrieve_support.py) and its faults."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankgate.data import demo_dir
from rankgate.io.readers import read_run
from rankgate.io.texts import read_queries
from rankgate.retrieve import QueryFailed, TransientFailure
from rankgate.retrieve.runner import retrieve
from rankgate.retrieve.spec import open_retriever
from tests.cli_support import invoke
from tests.retrieve_support import FAIL_WORD, SLOW, FaultyService, spec, write_spec

pytestmark = pytest.mark.extra("retrieve", "bench")

QUERIES = read_queries(demo_dir() / "queries.jsonl")


@pytest.fixture(scope="module")
def service() -> Iterator[FaultyService]:
    with FaultyService() as running:
        yield running


def _ask(url: str, path: str, queries: dict[str, str], **options: object) -> object:
    retriever = open_retriever(spec(url, path))
    try:
        return retrieve(queries, retriever, k=10, backoff=0.01, **options)  # type: ignore[arg-type]
    finally:
        retriever.close()


def test_run_matches_the_service_answers(
    service: FaultyService, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run holds exactly what BM25 answered, in its order, with its scores; JSON summary keys for the gate."""
    path = write_spec(tmp_path, service.url)
    code, out, err = invoke(
        capsys,
        "retrieve",
        "--queries",
        "demo",
        "--retriever",
        path,
        "-k",
        "10",
        "-o",
        str(tmp_path / "run.txt"),
        "--jsonl",
        str(tmp_path / "run.jsonl"),
        "--format",
        "json",
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["queries"] == summary["answered"] == 63 and summary["failed"] == 0
    assert set(summary["latency_ms"]) == {"p50", "p95", "p99", "mean"} and summary["qps"] > 0 and summary["wall_s"] > 0
    assert summary["latency_ms"]["p50"] <= summary["latency_ms"]["p95"] <= summary["latency_ms"]["p99"]
    run = read_run(tmp_path / "run.txt").to_dict()
    for qid in ("q01", "q03", "q40"):
        expected = service.search(QUERIES[qid], 10)
        assert run[qid] == {d: pytest.approx(s) for d, s in expected}
    lines = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert [row["query_id"] for row in lines] == list(QUERIES)
    assert all(row["error"] is None and row["latency_ms"] > 0 for row in lines)


def test_429_waits_for_retry_after(service: FaultyService) -> None:
    queries = dict(list(QUERIES.items())[:4])
    report = _ask(service.url, "/limited", queries, concurrency=2)
    assert not report.failures and report.retries == 4  # type: ignore[attr-defined]
    for text in queries.values():
        first, second = service.times[f"/limited {text}"]
        assert second - first >= 0.3 - 0.01  # the server's Retry-After, not the 0.01 s backoff


def test_500_then_success_is_retried(service: FaultyService) -> None:
    queries = dict(list(QUERIES.items())[:3])
    report = _ask(service.url, "/flaky", queries)
    assert not report.failures  # type: ignore[attr-defined]
    assert [a.attempts for a in report.answers] == [2, 2, 2]  # type: ignore[attr-defined]
    assert report.retry_reasons == {"HTTP 500": 3}  # type: ignore[attr-defined]


def test_timeout_is_retried_then_reported(service: FaultyService) -> None:
    queries = {"q1": "timeout one", "q2": "timeout two"}
    retriever = open_retriever(spec(service.url, "/slow-once"), timeout=SLOW / 3)
    try:
        report = retrieve(queries, retriever, k=5, backoff=0.01)
    finally:
        retriever.close()
    assert not report.failures and [a.attempts for a in report.answers] == [2, 2]
    stuck = open_retriever(spec(service.url, "/slow"), timeout=SLOW / 3)
    try:
        report = retrieve({"q3": "always slow"}, stuck, k=5, retries=1, backoff=0.01)
    finally:
        stuck.close()
    assert report.failures[0].error == (
        f"no answer after 2 attempts; last: no answer within {SLOW / 3:g} s from {service.url}/slow"
    )


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("/malformed", "is not JSON"),
        ("/noid", "hit 1 has no id (id expression 'doc.id')"),
    ],
)
def test_unusable_answers_fail_the_query_without_retry(service: FaultyService, path: str, error: str) -> None:
    before = service.asked(path)
    report = _ask(service.url, path, {"q1": f"question for {path}"})
    (failure,) = report.failures  # type: ignore[attr-defined]
    assert error in failure.error and failure.attempts == 1
    assert service.asked(path) - before == 1


def test_empty_hit_list_is_an_answer(service: FaultyService, tmp_path: Path) -> None:
    report = _ask(service.url, "/empty", {"q1": "nothing here"}, output=tmp_path / "run.txt")
    assert not report.failures and report.answers[0].hits == []  # type: ignore[attr-defined]
    assert report.warnings() == ["1 query returned no hits"]  # type: ignore[attr-defined]
    assert (tmp_path / "run.txt").read_text() == ""


def test_failed_queries_leave_no_run_file(
    service: FaultyService, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1 and no run while any query fails; --allow-failures writes the rest and exits 0."""
    path = write_spec(tmp_path, service.url, "/failsome")
    run = tmp_path / "run.txt"
    argv = ["retrieve", "--queries", "demo", "--retriever", path, "-o", str(run), "--retries", "0", "-k", "5"]
    code, _out, err = invoke(capsys, *argv)
    failing = sorted(qid for qid, text in QUERIES.items() if FAIL_WORD in text.lower().split())
    assert code == 1 and not run.exists()
    assert (
        "6 of 63 queries failed; the run was not written (run again to ask only for them, or pass --allow-failures)"
        in err
    )
    named = ", ".join(failing[:5])  # one line for the six queries that failed alike, naming five
    assert f"failed: 6 queries ({named}, ...): no answer after 1 attempt; last: HTTP 500 from {service.url}" in err
    assert "pass --summary FILE or --jsonl FILE to keep the full list of failed queries" in err
    asked = service.asked("/failsome")
    code, _out, err = invoke(capsys, *argv, "--allow-failures")
    assert code == 0 and service.asked("/failsome") - asked == 6  # the 57 answers came from the cache
    assert "6 of 63 queries failed; the run was written without them (run again to ask only for them)\n" in err
    assert sorted(set(QUERIES) - set(read_run(run).to_dict())) == failing
    assert not list(tmp_path.glob(".run.txt.*.tmp"))  # no temporary file left behind


def test_templates_fill_query_id_and_k_in_one_pass(service: FaultyService) -> None:
    """A query holding "{k}" is sent as typed; "{k}" alone becomes the integer."""
    config = spec(service.url, json={"q": "{query}", "size": "{k}", "note": "{query_id}/{k}"})
    retriever = open_retriever(config)
    try:
        report = retrieve({"q9": "coffee {k} grind"}, retriever, k=3)
    finally:
        retriever.close()
    assert service.requests["coffee {k} grind"] == 1 and len(report.answers[0].hits) <= 3


def test_failure_kinds_are_the_interface_ones() -> None:
    assert issubclass(TransientFailure, Exception) and issubclass(QueryFailed, Exception)
