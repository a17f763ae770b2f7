"""A local HTTP server that speaks the OpenAI chat-completions API, for the labeling tests.

It answers ``POST /v1/chat/completions`` deterministically: it reads the query and passage
out of rankgate's prompt and grades the passage by a ``rel=N`` marker in its text (no marker:
0; under the binary prompt, grades 2 and 3 answer 1). Faults are injected per request:
``429`` (with ``Retry-After``), ``500``, ``503``,
``timeout`` (answers too late), ``malformed`` (a body that is not JSON), ``nochoices``,
``garbage`` (an answer in the wrong format), ``badlabel`` (a grade off the scale), ``400``,
``401echo`` (a 401 whose message echoes the Authorization header), ``echo`` (an answer in the
wrong format that echoes the Authorization header), ``nousage`` (no usage field), ``drop`` (the
connection closed without an answer), ``huge`` (a 200 body of ``huge_bytes`` bytes), ``bare``
(a bare grade, or Yes / No under the binary prompt).
With ``reply`` set, the answer's content is ``reply(first user message)`` instead of a relevance
verdict (synthetic questions, context judgments); the faults above still apply.
Every request is recorded, with whether an answer was actually sent.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PROMPT = re.compile(r"Query: (?P<query>.*?)\n\nPassage:\n(?P<passage>.*?)\n\nReply with", re.DOTALL)
FENCED = {
    name: re.compile(
        rf"^<<<{name} (?P<tag>\w+)>>>\n(?P<text>.*?)\n<<<END {name} (?P=tag)>>>$", re.DOTALL | re.MULTILINE
    )
    for name in ("QUERY", "PASSAGE")
}
MARKER = re.compile(r"rel=(\d)")


def texts_of(prompt: str) -> tuple[str, str]:
    """The (query, passage) texts of a prompt: inside their fences, else after ``Query:`` / ``Passage:``."""
    fenced = [FENCED[name].search(prompt) for name in ("QUERY", "PASSAGE")]
    if fenced[0] and fenced[1]:
        return fenced[0].group("text"), fenced[1].group("text")
    m = PROMPT.search(prompt)
    return (m.group("query"), m.group("passage")) if m else ("", prompt)


def grade_of(passage: str) -> int:
    """The grade the fake judge gives: the ``rel=N`` marker in the passage, else 0."""
    m = MARKER.search(passage)
    return int(m.group(1)) if m else 0


def words(text: str) -> int:
    return len(text.split())


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog of 5 drops connections when 8 workers open at once
    daemon_threads = True


@dataclass
class Record:
    """One request the server received."""

    query: str
    passage: str
    fault: str | None
    authorization: str
    body: dict[str, Any]
    answered: bool = False
    status: int = 0
    held: bool = False


@dataclass
class FakeChatServer:
    """Start with ``with FakeChatServer() as server:``; its base URL is ``server.url``.

    Attributes:
        faults: faults for requests whose last user message contains a key, in order.
        queue: faults for any request, in order (after ``faults``).
        retry_after: the Retry-After header of a 429 (None: no header).
        slow_seconds: how long a ``timeout`` fault waits before answering.
        hold_after: after this many answers, hold new requests until ``release()``.
        always: the fault of every request that ``faults`` and ``queue`` leave without one.
        huge_bytes: the size of a ``huge`` answer.
        judge: maps (query, passage) to the grade.
        reply: when set, maps the first user message to the answer's content (instead of a verdict).
    """

    faults: dict[str, list[str]] = field(default_factory=dict)
    queue: deque[str] = field(default_factory=deque)
    retry_after: str | None = "0"
    slow_seconds: float = 1.0
    hold_after: int | None = None
    always: str | None = None
    huge_bytes: int = 5_000_000
    judge: Callable[[str, str], int] = lambda query, passage: grade_of(passage)
    records: list[Record] = field(default_factory=list)
    reply: Callable[[str], str] | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._drop_held = False
        self.held = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------
    def __enter__(self) -> FakeChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                server._handle(self)

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        httpd = self._httpd
        self._thread = threading.Thread(target=lambda: httpd.serve_forever(poll_interval=0.02), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release(drop=True)
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def release(self, *, drop: bool = False) -> None:
        """Let held requests go: answered normally, or (``drop``) with the connection closed unanswered."""
        self._drop_held = drop
        self._released.set()

    # -- accounting ---------------------------------------------------------------------
    def answered(self) -> list[Record]:
        with self._lock:
            return [r for r in self.records if r.answered]

    def answered_per_pair(self) -> Counter[tuple[str, str]]:
        """How many answers (of any status) each (query, passage) got."""
        return Counter((r.query, r.passage) for r in self.answered() if r.status == 200)

    def in_transit(self) -> int:
        """Requests received and neither answered nor held (their answers may still come)."""
        with self._lock:
            return sum(1 for r in self.records if not r.answered and not r.held)

    def count(self, fault: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.records if r.fault == fault)

    # -- the handler --------------------------------------------------------------------
    def _next_fault(self, text: str) -> str | None:
        with self._lock:
            for key, plan in self.faults.items():
                if key in text and plan:
                    return plan.pop(0)
            return self.queue.popleft() if self.queue else self.always

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length", "0"))
        body = json.loads(h.rfile.read(length) or b"{}")
        if h.path != "/v1/chat/completions":
            self._send(h, None, 404, {"error": {"message": f"no route {h.path}"}})
            return
        messages = body.get("messages", [])
        first_user = next((m["content"] for m in messages if m["role"] == "user"), "")
        query, passage = texts_of(first_user)
        fault = self._next_fault(first_user)
        record = Record(query, passage, fault, h.headers.get("Authorization", ""), body)
        with self._lock:
            self.records.append(record)
            must_hold = self.hold_after is not None and sum(1 for r in self.records if r.answered) >= self.hold_after
            if must_hold:
                self.held += 1
                record.held = True
        if must_hold:
            self._released.wait()
            if self._drop_held:
                h.close_connection = True
                return
        prompt_tokens = sum(words(str(msg.get("content", ""))) for msg in messages)
        auth = record.authorization
        if fault in ("429", "500", "503", "400"):
            status = int(fault)
            message = {"429": "Rate limit reached", "400": "context length exceeded"}.get(fault, "server error")
            headers = {"Retry-After": self.retry_after} if fault == "429" and self.retry_after is not None else {}
            self._send(h, record, status, {"error": {"message": message}}, headers)
            return
        if fault == "401echo":
            self._send(h, record, 401, {"error": {"message": f"Incorrect API key provided: {auth}"}})
            return
        if fault == "malformed":
            self._send(h, record, 200, None, raw=b"this is not json {")
            return
        if fault == "drop":
            h.close_connection = True
            return
        if fault == "huge":
            self._send(h, record, 200, None, raw=b" " * self.huge_bytes)
            return
        if fault == "nochoices":
            self._send(h, record, 200, {"usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 0}})
            return
        if fault == "timeout":
            time.sleep(self.slow_seconds)
        label = self.judge(query, passage)
        if '"relevance": <0 or 1>' in first_user:  # the binary prompt: grades 2 and 3 are relevant
            label = int(label >= 2)
        content = json.dumps({"relevance": label, "reason": f"marker says {label}"})
        if self.reply is not None:
            content = self.reply(first_user)
        if fault == "garbage":
            content = f"The passage looks relevant, I would say {label}."
        elif fault == "badlabel":
            content = json.dumps({"relevance": 7, "reason": "very"})
        elif fault == "bare":  # a bare grade, or Yes / No under the binary prompt
            content = str(label) if '"relevance": <0 or 1>' not in first_user else ("Yes" if label else "No")
        elif fault == "echo":
            content = f"Your key is {auth}; relevance unknown"
        reply: dict[str, Any] = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        }
        if fault != "nousage":
            reply["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": words(content),
                "total_tokens": prompt_tokens + words(content),
            }
        self._send(h, record, 200, reply)

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        record: Record | None,
        status: int,
        payload: Any,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> None:
        data = raw if raw is not None else json.dumps(payload).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        if record is not None:
            with self._lock:
                record.answered = True
                record.status = status


def write_collection(folder: Path, n_queries: int = 3, docs_per_query: int = 4) -> dict[str, str]:
    """`make_collection` written to ``folder``: paths of "corpus", "queries" and "run"."""
    texts = dict(zip(("corpus", "queries", "run"), make_collection(n_queries, docs_per_query), strict=True))
    names = {"corpus": "corpus.jsonl", "queries": "queries.jsonl", "run": "run.txt"}
    for key, text in texts.items():
        (folder / names[key]).write_text(text)
    return {key: str(folder / names[key]) for key in texts}


def make_collection(n_queries: int = 3, docs_per_query: int = 4) -> tuple[str, str, str]:
    """(corpus JSONL, queries JSONL, run TREC) texts: doc j of query i carries ``rel=(j % 4)``."""
    corpus, queries, run = [], [], []
    for i in range(1, n_queries + 1):
        queries.append(json.dumps({"_id": f"q{i}", "text": f"question number {i}"}))
        for j in range(docs_per_query):
            did = f"d{i}_{j}"
            grade = (i + j) % 4
            corpus.append(json.dumps({"_id": did, "title": f"Doc {did}", "text": f"Passage {did} with rel={grade}."}))
            run.append(f"q{i} Q0 {did} {j + 1} {10 - j} sys")
    return "\n".join(corpus) + "\n", "\n".join(queries) + "\n", "\n".join(run) + "\n"


def expected_grade(query_id: str, doc_id: str) -> int:
    """The grade `make_collection` planted in ``doc_id`` (``d{i}_{j}`` -> (i + j) % 4)."""
    i, j = doc_id[1:].split("_")
    return (int(i) + int(j)) % 4
