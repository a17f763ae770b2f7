"""A real search service for the `rankgate retrieve` tests: BM25 over the demo corpus, plus faults.

`FaultyService` is `rankgate.retrieve.demo_service.SearchService` (a standard-library HTTP server
on a free port, in a thread) with these paths, each taking the /search body ``{"q", "size"}``:

- ``/search``: BM25 (bm25s) over the demo corpus;
- ``/limited``: the first request of each query answers 429 with ``Retry-After: 0.3``;
- ``/flaky``: the first request of each query answers 500, the next one the hits;
- ``/slow-once``: the first request of each query sleeps ``SLOW`` seconds before answering;
- ``/slow``: every request sleeps ``SLOW`` seconds;
- ``/malformed``: 200 with a body that is not JSON;
- ``/empty``: ``{"results": []}``;
- ``/noid``: hits without ``doc.id``;
- ``/auth``: hits when ``Authorization`` is ``Bearer TOKEN`` (`TOKEN`), else 401 echoing the header;
- ``/echo500``: always 500 with the Authorization header echoed in the body;
- ``/failsome``: 500 for queries whose text holds ``FAIL_WORD``, hits for the others;
- ``/paced``: hits after ``PACE`` seconds (for the kill test: a run that lasts a few seconds).

``service.requests`` counts requests by ``"PATH TEXT"``; ``service.times`` keeps each request's
arrival (monotonic) by the same key.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

import yaml

from rankgate.retrieve.demo_service import Reply, SearchService, demo_search, json_reply

SLOW = 0.6
PACE = 0.03
TOKEN = "s3cr3t-token-0123456789"
FAIL_WORD = "coffee"  # 6 of the 63 demo queries


class FaultyService(SearchService):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(demo_search(), **kwargs)
        self.times: dict[str, list[float]] = defaultdict(list)
        self._times_lock = threading.Lock()

    def route(self, method: str, path: str, query: dict[str, str], body: Any, headers: dict[str, str]) -> Reply | None:
        if path == "/search" or not isinstance(body, dict) or "q" not in body:
            return None
        text, k = str(body["q"]), int(body.get("size", 10))
        key = f"{path} {text}"
        with self._times_lock:
            self.times[key].append(time.monotonic())
        before = self.count(key)
        return self._fault(path, text, k, before, headers)

    def _fault(self, path: str, text: str, k: int, before: int, headers: dict[str, str]) -> Reply | None:
        if path == "/limited" and before == 0:
            return json_reply({"error": "slow down"}, 429, {"Retry-After": "0.3"})
        if path == "/flaky" and before == 0:
            return json_reply({"error": "boom"}, 500)
        if path == "/paced":
            time.sleep(PACE)
        if path == "/slow" or (path == "/slow-once" and before == 0):
            time.sleep(SLOW)
        if path == "/malformed":
            return 200, {"Content-Type": "application/json"}, b'{"results": [oops'
        if path == "/empty":
            return json_reply({"results": []})
        if path == "/noid":
            return json_reply({"results": [{"doc": {"title": "x"}, "score": 1.0}]})
        if path == "/auth" and headers.get("authorization") != f"Bearer {TOKEN}":
            return json_reply({"error": f"bad credentials {headers.get('authorization')}"}, 401)
        if path == "/echo500":
            return json_reply({"error": f"broken for {headers.get('authorization')}"}, 500)
        if path == "/failsome" and FAIL_WORD in text.lower().split():
            return json_reply({"error": "index shard down"}, 500)
        return self.answer_hits(text, k)

    def answer_hits(self, text: str, k: int) -> Reply:
        hits = self.search(text, k)
        return json_reply({"results": [{"doc": {"id": d}, "score": s} for d, s in hits]})

    def asked(self, path: str) -> int:
        """Requests so far on ``path`` (all queries)."""
        return sum(n for key, n in self.requests.items() if key.split(" ", 1)[0] == path)


def spec(url: str, path: str = "/search", **extra: Any) -> dict[str, Any]:
    """The http SPEC of one path of the service."""
    return {
        "kind": "http",
        "url": f"{url}{path}",
        "method": "POST",
        "json": {"q": "{query}", "size": "{k}"},
        "hits": "results",
        "id": "doc.id",
        "score": "score",
        **extra,
    }


def write_spec(folder: Any, url: str, path: str = "/search", name: str = "spec.yaml", **extra: Any) -> str:
    """The SPEC written as a YAML file in ``folder``; its path."""
    target = folder / name
    target.write_text(yaml.safe_dump(spec(url, path, **extra), sort_keys=False), encoding="utf-8")
    return str(target)
