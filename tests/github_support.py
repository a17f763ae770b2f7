"""A local HTTP server that behaves like the issue-comments part of the GitHub REST API.

It serves, for one repository and its open pull requests:

* ``GET  /repos/{owner}/{repo}/issues/{n}/comments?per_page=&page=`` (paginated with a
  ``Link`` header, like GitHub; ``max_per_page`` forces small pages in tests),
* ``POST /repos/{owner}/{repo}/issues/{n}/comments`` (201 and the new comment),
* ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` (200 and the updated comment),

checks the ``Authorization: Bearer`` header (401 "Bad credentials" otherwise), answers 404
for other repositories, pull requests and comments, and plays failures queued with `fail`.
Every request is recorded (method, path and query, headers).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "ghs_FAKEtoken0123456789abcdefSECRET"


@dataclass
class Failure:
    """An answer to play instead of the real one (``after=True``: do the work first, then fail)."""

    status: int
    message: str
    method: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    after: bool = False


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


class FakeGitHub:
    """The fake API; use as a context manager (`url` is its base URL)."""

    def __init__(self, *, repository: str = "acme/search", pulls: tuple[int, ...] = (7,), token: str = TOKEN):
        self.repository = repository
        self.pulls = set(pulls)
        self.token = token
        self.max_per_page = 100
        self.comments: dict[int, list[dict[str, Any]]] = {n: [] for n in pulls}
        self.requests: list[Seen] = []
        self.failures: deque[Failure] = deque()
        self.next_link_base: str | None = None  # pretend pagination points elsewhere
        self._next_id = 1000
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeGitHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    # -- test helpers -------------------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        """An Actions-like environment pointing at this server, for pull request 7."""
        base = {
            "GITHUB_ACTIONS": "true",
            "GITHUB_TOKEN": self.token,
            "GITHUB_REPOSITORY": self.repository,
            "GITHUB_REF": "refs/pull/7/merge",
            "GITHUB_API_URL": self.url,
            "GITHUB_EVENT_NAME": "pull_request",
        }
        base.update(extra)
        return base

    def add_comment(self, pr: int, body: str, *, login: str = "someone", bot: bool = False) -> dict[str, Any]:
        with self._lock:
            return self._create(pr, body, login=login, bot=bot)

    def fail(self, status: int, message: str, *, times: int = 1, method: str | None = None, **kw: Any) -> None:
        """Answer the next ``times`` requests (of ``method``, when given) with ``status``."""
        for _ in range(times):
            self.failures.append(Failure(status, message, method=method, **kw))

    def calls(self, method: str) -> list[Seen]:
        return [r for r in self.requests if r.method == method]

    # -- the API --------------------------------------------------------------------------
    def _create(self, pr: int, body: str, *, login: str = "github-actions[bot]", bot: bool = True) -> dict[str, Any]:
        self._next_id += 1
        comment = {
            "id": self._next_id,
            "body": body,
            "user": {"login": login, "type": "Bot" if bot else "User"},
            "html_url": f"https://github.com/{self.repository}/pull/{pr}#issuecomment-{self._next_id}",
            "url": f"{self.url}/repos/{self.repository}/issues/comments/{self._next_id}",
        }
        self.comments[pr].append(comment)
        return comment

    def handle(self, method: str, target: str, headers: dict[str, str], payload: bytes) -> tuple[int, Any, dict]:
        parts = urlsplit(target)
        query = parse_qs(parts.query)
        with self._lock:
            self.requests.append(Seen(method, parts.path, query, headers))
            failure = self._take_failure(method)
            if failure is not None and not failure.after:
                return failure.status, {"message": failure.message}, failure.headers
            if headers.get("authorization") != f"Bearer {self.token}":
                return 401, {"message": "Bad credentials"}, {}
            status, body, extra = self._route(method, parts.path, query, payload)
            if failure is not None:
                return failure.status, {"message": failure.message}, failure.headers
            return status, body, extra

    def _take_failure(self, method: str) -> Failure | None:
        for failure in list(self.failures):
            if failure.method in (None, method):
                self.failures.remove(failure)
                return failure
        return None

    def _route(self, method: str, path: str, query: dict[str, list[str]], payload: bytes) -> tuple[int, Any, dict]:
        words = path.strip("/").split("/")
        not_found: tuple[int, Any, dict] = (404, {"message": "Not Found"}, {})
        if len(words) < 5 or words[0] != "repos" or "/".join(words[1:3]) != self.repository or words[3] != "issues":
            return not_found
        if len(words) == 6 and words[5] == "comments" and words[4].isdigit() and int(words[4]) in self.pulls:
            pr = int(words[4])
            if method == "GET":
                return self._page(pr, path, query)
            if method == "POST":
                body = json.loads(payload)["body"]
                return 201, self._create(pr, body), {}
            return 405, {"message": "Method Not Allowed"}, {}
        if len(words) == 6 and words[4] == "comments" and words[5].isdigit() and method == "PATCH":
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == int(words[5]):
                        comment["body"] = json.loads(payload)["body"]
                        return 200, comment, {}
        return not_found

    def _page(self, pr: int, path: str, query: dict[str, list[str]]) -> tuple[int, Any, dict]:
        per_page = min(int(query.get("per_page", ["30"])[0]), self.max_per_page)
        page = int(query.get("page", ["1"])[0])
        comments = self.comments[pr]
        last = max(1, -(-len(comments) // per_page))
        chunk = comments[(page - 1) * per_page : page * per_page]
        headers = {}
        base = self.next_link_base or self.url
        links = []
        if page < last:
            links.append(f'<{base}{path}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{base}{path}?per_page={per_page}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{base}{path}?per_page={per_page}&page=1>; rel="first"')
        if links:
            headers["Link"] = ", ".join(links)
        return 200, chunk, headers


def _handler(api: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, body, extra = api.handle(self.command, self.path, headers, payload)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    return Handler
