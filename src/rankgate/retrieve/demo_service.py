"""A small JSON search service on a local port, for the demo, the tests and the speed benchmark.

`SearchService` serves any ``search(text, k) -> [(doc_id, score), ...]`` function over HTTP with
the standard library's threading server (one thread per connection, HTTP/1.1 keep-alive):

- ``POST /search`` with ``{"q": TEXT, "size": K}``, or ``GET /search?q=TEXT&k=K``, answers
  ``{"results": [{"doc": {"id": ...}, "score": ...}, ...]}``;
- ``GET /health`` answers ``{"ok": true}``.

It counts requests per query text (``requests``), can sleep a fixed time per request (``delay``),
and a subclass can answer more paths (`SearchService.route`). `demo_search` is BM25 over the demo
collection (bm25s, from the bench extra); `demo_spec` is the ``http`` retriever SPEC that reads
this service's answers; `demo_retrieve` is the retrieve step of ``rankgate demo``.

``python -m rankgate.retrieve.demo_service [--port 8080] [--spec old.yaml]`` serves the demo BM25
until interrupted, for trying ``rankgate retrieve`` by hand (docs/retrieve.md's A/B walk-through):
it writes the SPEC that reads it, then prints one line, ``serving ... at URL``, on stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

Search = Callable[[str, int], Sequence[tuple[str, float]]]
Reply = tuple[int, dict[str, str], bytes]
MAX_BODY = 1_000_000


def demo_spec(url: str) -> dict[str, Any]:
    """The ``http`` SPEC of a `SearchService` at ``url`` (as a mapping; the same keys as a YAML file)."""
    return {
        "kind": "http",
        "url": f"{url}/search",
        "method": "POST",
        "json": {"q": "{query}", "size": "{k}"},
        "hits": "results",
        "id": "doc.id",
        "score": "score",
    }


class SearchService:
    """Serve ``search`` at ``http://HOST:PORT`` in a background thread (``port=0``: a free port).

    Use it as a context manager, or call `start` and `stop`.
    """

    def __init__(self, search: Search, *, host: str = "127.0.0.1", port: int = 0, delay: float = 0.0) -> None:
        self.search, self.delay = search, delay
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> SearchService:
        self._thread = threading.Thread(target=self._server.serve_forever, name="rankgate-search-service", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (Ctrl-C, SIGTERM)."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def __enter__(self) -> SearchService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def count(self, key: str) -> int:
        """Count one request under ``key``; returns how many came before it."""
        with self._lock:
            before = self.requests[key]
            self.requests[key] += 1
            return before

    def route(self, method: str, path: str, query: dict[str, str], body: Any, headers: dict[str, str]) -> Reply | None:
        """The reply to a request on a path other than /search and /health; None: 404. Subclasses add paths."""
        return None

    def answer(self, text: str, k: int) -> Reply:
        """The /search reply of one query."""
        self.count(text)
        if self.delay:
            time.sleep(self.delay)
        hits = self.search(text, k)
        return json_reply({"results": [{"doc": {"id": d}, "score": s} for d, s in hits]})


def json_reply(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(value).encode()


def _handler(service: SearchService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection per client worker
        disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart (delayed ACK)

        def do_GET(self) -> None:
            self._serve(None)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(min(length, MAX_BODY))
            try:
                self._serve(json.loads(raw or b"null"))
            except ValueError:
                self._send(json_reply({"error": "body is not JSON"}, 400))

        def _serve(self, body: Any) -> None:
            parts = urlsplit(self.path)
            query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
            headers = {key.lower(): value for key, value in self.headers.items()}
            reply = service.route(self.command, parts.path, query, body, headers)
            if reply is None and parts.path == "/health":
                reply = json_reply({"ok": True})
            elif reply is None and parts.path == "/search":
                given: dict[str, Any] = body if isinstance(body, dict) else dict(query)
                try:
                    text, k = str(given["q"]), int(given.get("size", given.get("k", 10)))
                except (KeyError, TypeError, ValueError):
                    reply = json_reply({"error": "expected q and size (or k)"}, 400)
                else:
                    reply = service.answer(text, k)
            self._send(reply or json_reply({"error": "not found"}, 404))

        def _send(self, reply: Reply) -> None:
            status, headers, data = reply
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the caller prints what matters
            return

    return Handler


def demo_search() -> Search:
    """BM25 (bm25s) over the demo collection's corpus: ``search(text, k)`` for `SearchService`.

    Raises:
        MissingExtraError: bm25s (the bench extra) is not installed.
    """
    from rankgate.bench.progress import SILENT
    from rankgate.bench.retrievers.bm25 import BM25Retriever
    from rankgate.data import demo_dir
    from rankgate.extras import require
    from rankgate.io.texts import read_corpus

    require("bm25s", "bench", purpose="the demo search service")
    corpus = read_corpus(demo_dir() / "corpus.jsonl")
    ids = list(corpus)
    bm25 = BM25Retriever()
    bm25.prepare(list(corpus.values()), SILENT)
    bm25.build(None, SILENT)
    lock = threading.Lock()

    def search(text: str, k: int) -> list[tuple[str, float]]:
        with lock:  # one index, searched by the server's threads
            positions, scores = bm25.search(bm25.encode_queries([text]), max(1, k)).row(0)
        return [(ids[int(p)], round(float(s), 6)) for p, s in zip(positions, scores, strict=True)]

    return search


DEMO_RETRIEVE_EXTRAS = ("retrieve", "bench")


def demo_retrieve(folder: str | os.PathLike[str], *, k: int = 100) -> Any:
    """The retrieve step of ``rankgate demo``: start the BM25 service, ask it every demo query, stop it.

    Writes ``folder/service_bm25.txt`` (the run) and returns the `RetrieveReport`, or None when
    an extra it needs (`DEMO_RETRIEVE_EXTRAS`) is missing.
    """
    from rankgate.data import demo_dir
    from rankgate.extras import installed
    from rankgate.io.texts import read_queries
    from rankgate.retrieve.runner import retrieve
    from rankgate.retrieve.spec import open_retriever

    if not all(installed(extra) for extra in DEMO_RETRIEVE_EXTRAS):
        return None
    queries = read_queries(demo_dir() / "queries.jsonl")
    with SearchService(demo_search()) as service:
        retriever = open_retriever(demo_spec(service.url))
        try:
            return retrieve(queries, retriever, k=k, output=Path(folder) / "service_bm25.txt", concurrency=4)
        finally:
            retriever.close()


def main(argv: Sequence[str] | None = None) -> None:
    """Serve BM25 over the demo corpus until interrupted (see the module docstring)."""
    import argparse
    import signal
    import sys

    import yaml

    from rankgate.io.source import atomic_writer

    parser = argparse.ArgumentParser(
        prog="python -m rankgate.retrieve.demo_service", description="BM25 over the demo corpus as a JSON search API."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0: a free port (default 8080)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to sleep per request")
    parser.add_argument("--spec", help="write the http retriever SPEC that reads this service here")
    args = parser.parse_args(argv)
    service = SearchService(demo_search(), host=args.host, port=args.port, delay=args.delay)
    if args.spec:
        Path(args.spec).parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(args.spec) as f:
            f.write(yaml.safe_dump(demo_spec(service.url), sort_keys=False))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"serving BM25 over the demo corpus at {service.url}/search (Ctrl-C stops it)", file=sys.stderr, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        service.serve_forever()


if __name__ == "__main__":
    main()
