"""Elasticsearch and OpenSearch adapters against a recorded-exchange server.

Neither server can run here, so a real HTTP server (on a free local port) replays request and
response pairs written to match the products' documented REST API: ``POST /INDEX/_search`` with a
``match`` query, Elasticsearch's top-level ``knn`` section (8.0+), OpenSearch's ``knn`` query (k-NN
plugin), the ``hits.hits[]._id/_score`` answer, and the ``{"error": {"type", "reason"}, "status"}``
error body. The server refuses any request that differs from the recording (status 418), so the
tests pin the exact bodies the adapters send.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankgate.errors import ConfigError
from rankgate.retrieve.base import QueryFailed, TransientFailure
from rankgate.retrieve.spec import open_retriever
from tests.cli_support import invoke
from tests.test_retrieve_db import VECTORS, FixedEncoder

pytestmark = pytest.mark.extra("elastic")


@dataclass
class Exchange:
    """One recorded request (method, path, JSON body) and the answer to give."""

    path: str
    request: dict[str, Any]
    status: int = 200
    answer: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    hold: threading.Event | None = None  # answer only once this is set (a server that hangs)


def search_answer(*hits: tuple[str, float], source: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A search response as Elasticsearch and OpenSearch document it."""
    rows = []
    for doc, score in hits:
        row: dict[str, Any] = {"_index": "docs", "_id": doc, "_score": score}
        if source is not None:
            row["_source"] = source[doc]
        rows.append(row)
    return {
        "took": 2,
        "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {
            "total": {"value": len(rows), "relation": "eq"},
            "max_score": hits[0][1] if hits else None,
            "hits": rows,
        },
    }


def error_answer(status: int, kind: str, reason: str) -> dict[str, Any]:
    return {
        "error": {"root_cause": [{"type": kind, "reason": reason}], "type": kind, "reason": reason},
        "status": status,
    }


class Recorded:
    """The server: answers each request with the next exchange, if the request is the recorded one."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.seen: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        recorded = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                recorded.seen.append((self.path, body, dict(self.headers)))
                want = recorded.exchanges.pop(0) if recorded.exchanges else None
                if want is None or (want.path, want.request) != (self.path, body):
                    expected = None if want is None else (want.path, want.request)
                    self._send(418, {"unexpected": [self.path, body], "expected": expected}, {})
                    return
                if want.hold is not None:
                    want.hold.wait(10)
                payload = want.answer if isinstance(want.answer, str) else json.dumps(want.answer)
                self._send(want.status, payload, want.headers)

            def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (the timeout case)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    server = Recorded()
    try:
        yield server
    finally:
        server.close()


def _knn_vector() -> list[float]:
    """The query "beta" as the FixedEncoder gives it: [0.6, 0.8] in float32, sent as JSON numbers."""
    return np.asarray([0.6, 0.8], dtype=np.float32).tolist()


def _factory() -> Any:
    encoder = FixedEncoder(VECTORS)
    return lambda model, params: encoder


def test_match_query_body_and_hits(recorded: Recorded) -> None:
    recorded.exchanges.append(
        Exchange(
            "/docs/_search",
            {"size": 3, "query": {"match": {"text": {"query": "brew tea"}}}, "_source": False},
            answer=search_answer(("d7", 3.2), ("d2", 1.25)),
        )
    )
    live = open_retriever(
        {"kind": "elasticsearch", "url": recorded.url, "index": "docs", "field": "text"}, key_path="es.yaml"
    )
    hits = live.search("q1", "brew tea", 3)
    assert [(h.doc_id, h.score) for h in hits] == [("d7", 3.2), ("d2", 1.25)]
    assert live.identity() == {
        "kind": "elasticsearch",
        "url": recorded.url,
        "index": "docs",
        "query": "match",
        "field": "text",
        "id_field": None,
        "num_candidates": None,
    }  # no timeout: it changes no answer, so it does not key the cache
    live.close()


def test_elasticsearch_knn_body(recorded: Recorded) -> None:
    body = {
        "size": 2,
        "knn": {"field": "emb", "query_vector": _knn_vector(), "k": 2, "num_candidates": 100},
        "_source": ["doc_id"],
    }
    answer = search_answer(("x1", 0.98), ("x2", 0.75), source={"x1": {"doc_id": "d-beta"}, "x2": {"doc_id": "d-alpha"}})
    recorded.exchanges.append(Exchange("/docs/_search", body, answer=answer))
    spec = {
        "kind": "elasticsearch",
        "url": recorded.url,
        "index": "docs",
        "query": "knn",
        "field": "emb",
        "id_field": "doc_id",
    }
    live = open_retriever(spec, key_path="es.yaml", encoder_factory=_factory())
    assert [(h.doc_id, h.score) for h in live.search("q1", "beta", 2)] == [("d-beta", 0.98), ("d-alpha", 0.75)]
    assert live.identity()["encoder"]["model"] == "fixed-2d"


def test_opensearch_knn_body(recorded: Recorded) -> None:
    body = {"size": 2, "query": {"knn": {"emb": {"vector": _knn_vector(), "k": 2}}}, "_source": False}
    recorded.exchanges.append(Exchange("/docs%20v2/_search", body, answer=search_answer(("d-beta", 0.9))))
    spec = {"kind": "opensearch", "url": recorded.url + "/", "index": "docs v2", "query": "knn", "field": "emb"}
    live = open_retriever(spec, key_path="os.yaml", encoder_factory=_factory())
    assert [h.doc_id for h in live.search("q1", "beta", 2)] == ["d-beta"]  # the index name is URL-quoted


def _match(recorded: Recorded, **spec: Any) -> Any:
    return open_retriever(
        {"kind": "opensearch", "url": recorded.url, "index": "docs", "field": "text", **spec}, key_path="os.yaml"
    )


MATCH_BODY = {"size": 5, "query": {"match": {"text": {"query": "q"}}}, "_source": False}


def test_429_and_5xx_are_transient_with_retry_after(recorded: Recorded) -> None:
    recorded.exchanges += [
        Exchange(
            "/docs/_search",
            MATCH_BODY,
            429,
            error_answer(429, "es_rejected_execution_exception", "queue full"),
            {"Retry-After": "7"},
        ),
        Exchange("/docs/_search", MATCH_BODY, 503, error_answer(503, "no_shard_available_action_exception", "none")),
    ]
    live = _match(recorded)
    with pytest.raises(TransientFailure, match="HTTP 429") as info:
        live.search("q1", "q", 5)
    assert info.value.retry_after == 7.0
    with pytest.raises(TransientFailure, match="HTTP 503") as info:
        live.search("q1", "q", 5)
    assert info.value.retry_after is None


@pytest.mark.parametrize(
    ("status", "answer", "message"),
    [
        (
            404,
            error_answer(404, "index_not_found_exception", "no such index [docs]"),
            "HTTP 404: index_not_found_exception: no such index",
        ),
        (
            400,
            error_answer(400, "search_phase_execution_exception", "all shards failed"),
            "HTTP 400: search_phase_execution_exception",
        ),
        (200, "{not json", "not a search response"),
        (200, {"hits": {"hits": {"_id": "d1"}}}, "hits.hits is not a list"),
        (200, {"hits": {"hits": [{"_score": 1.0}]}}, "hit 0 has no _id"),
    ],
)
def test_answers_that_cannot_be_used_fail_the_query(recorded: Recorded, status: int, answer: Any, message: str) -> None:
    recorded.exchanges.append(Exchange("/docs/_search", MATCH_BODY, status, answer))
    with pytest.raises(QueryFailed, match=message):
        _match(recorded).search("q1", "q", 5)


def test_an_empty_hit_list_is_an_empty_answer(recorded: Recorded) -> None:
    recorded.exchanges.append(Exchange("/docs/_search", MATCH_BODY, answer=search_answer()))
    assert list(_match(recorded).search("q1", "q", 5)) == []


def test_timeouts_and_refused_connections_are_transient(recorded: Recorded) -> None:
    hold = threading.Event()
    recorded.exchanges.append(Exchange("/docs/_search", MATCH_BODY, answer=search_answer(), hold=hold))
    try:
        with pytest.raises(TransientFailure, match="timed out"):
            _match(recorded, timeout=0.2).search("q1", "q", 5)
    finally:
        hold.set()
    closed = Recorded()
    closed.close()  # nothing listens on its port any more
    live = open_retriever(
        {"kind": "elasticsearch", "url": closed.url, "index": "docs", "field": "text"}, key_path="es.yaml"
    )
    with pytest.raises(TransientFailure, match="ConnectError"):
        live.search("q1", "q", 5)


def test_the_api_key_is_sent_but_never_shown(recorded: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKGATE_TEST_ES_KEY", "s3cr3t-key-value")
    recorded.exchanges.append(
        Exchange("/docs/_search", MATCH_BODY, 401, error_answer(401, "security_exception", "unable to authenticate"))
    )
    live = _match(recorded, api_key_env="RANKGATE_TEST_ES_KEY")
    with pytest.raises(QueryFailed) as info:
        live.search("q1", "q", 5)
    assert recorded.seen[0][2]["Authorization"] == "ApiKey s3cr3t-key-value"
    assert "s3cr3t" not in str(info.value) and "s3cr3t" not in json.dumps(live.identity())


BAD = [
    ({"url": "localhost:9200"}, "os.yaml.url: must be an http:// or https:// URL"),
    ({"query": "fuzzy"}, "os.yaml.query: must be one of match, knn"),
    ({"field": None}, "os.yaml.field: is required"),
    ({"model": "minilm"}, "os.yaml.model: a match query encodes nothing"),
    ({"username": "elastic"}, "os.yaml.password_env: basic auth needs username and password_env"),
    ({"verify": 3}, "os.yaml.verify: must be true, false or a CA bundle path"),
]


@pytest.mark.parametrize(("changes", "message"), BAD)
def test_bad_specs_name_the_key(changes: dict[str, Any], message: str) -> None:
    spec = {"kind": "opensearch", "url": "http://127.0.0.1:9200", "index": "docs", "field": "text", **changes}
    with pytest.raises(ConfigError, match=message):
        open_retriever({k: v for k, v in spec.items() if v is not None}, key_path="os.yaml")


def test_rankgate_retrieve_against_the_recorded_server_with_and_without_timeout(
    recorded: Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI path: a SPEC file, then the same with --timeout, which replaces the SPEC's timeout key."""
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tbrew tea\nq2\tgreen tea\n", encoding="utf-8")
    spec = tmp_path / "es.yaml"
    spec.write_text(f"kind: elasticsearch\nurl: {recorded.url}\nindex: docs\nfield: text\ntimeout: 0.001\n")

    def body(text: str) -> dict[str, Any]:
        return {"size": 2, "query": {"match": {"text": {"query": text}}}, "_source": False}

    answers = {"brew tea": search_answer(("d7", 3.2), ("d2", 1.25)), "green tea": search_answer(("d2", 2.5))}
    for _ in range(2):
        recorded.exchanges += [Exchange("/docs/_search", body(t), answer=a) for t, a in answers.items()]
    argv = ("retrieve", "--queries", str(queries), "--retriever", str(spec), "-k", "2", "--concurrency", "1")
    code, _, err = invoke(capsys, *argv, "-o", str(tmp_path / "a.txt"), "--timeout", "10", "--no-cache")
    assert code == 0, err
    expected = "q1 Q0 d7 1 3.2 a\nq1 Q0 d2 2 1.25 a\nq2 Q0 d2 1 2.5 a\n"
    assert (tmp_path / "a.txt").read_text() == expected
    spec.write_text(spec.read_text().replace("timeout: 0.001", "timeout: 10"))
    code, _, err = invoke(capsys, *argv, "-o", str(tmp_path / "b.txt"), "--no-cache")
    assert code == 0, err
    assert (tmp_path / "b.txt").read_text() == expected.replace(" a\n", " b\n")
    assert recorded.exchanges == [] and len(recorded.seen) == 4
