"""The ``http`` kind: any JSON search API, described by a URL, a request template and JMESPath.

Keys (see docs/retrieve.md for a complete example):

- ``url`` (required): ``http://`` or ``https://``; ``{query}``, ``{query_id}``, ``{k}`` may appear
  in it (percent-encoded);
- ``method``: ``GET`` or ``POST`` (default: POST when ``json`` is given, else GET);
- ``headers``: values may hold ``${ENV_VAR}``, read when the retriever is built and kept only in
  the HTTP client (the identity holds the template, or a digest of a literal value);
- ``params`` (the query string) and ``json`` (the POST body): templates in which ``{query}``,
  ``{query_id}`` and ``{k}`` are filled in, in one pass (a query holding ``{k}`` stays as typed);
  a value that is exactly ``"{k}"`` becomes the integer k;
- ``hits`` (required): a JMESPath expression to the list of hits in the answer;
- ``id`` (required) and ``score``: JMESPath inside one hit (no ``score``: scores from ranks);
- ``timeout``: seconds for one request (default 30).

429, 408, 425, 5xx, timeouts and connection errors are `TransientFailure` (with the server's
``Retry-After``); other 4xx, an answer that is not JSON, ``hits`` that is not a list, and a hit
without an id or score are `QueryFailed`. Messages name the URL without its query string and
never a header value.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from rankgate.extras import require
from rankgate.io.yaml import brief, cut
from rankgate.retrieve.base import Hit, QueryFailed, TransientFailure
from rankgate.retrieve.ratelimit import retry_after_seconds
from rankgate.retrieve.secret import Secret, display_url
from rankgate.retrieve.spec import Keys, Where, env_names, expand_env

KEYS = ("url", "method", "headers", "params", "json", "hits", "id", "score", "timeout")
RETRY_STATUS = frozenset({408, 425, 429})
DEFAULT_TIMEOUT = 30.0
_PLACEHOLDER = re.compile(r"\{(query|query_id|k)\}")


def fill(template: Any, query_id: str, text: str, k: int, *, encode: bool = False) -> Any:
    """``template`` with ``{query}``, ``{query_id}`` and ``{k}`` filled in, through lists and mappings.

    >>> fill({"q": "{query}", "size": "{k}", "tag": "k={k}", "n": 3}, "q1", "tea {k}", 10)
    {'q': 'tea {k}', 'size': 10, 'tag': 'k=10', 'n': 3}
    >>> fill("/search/{query_id}?q={query}", "q 1", "a&b", 5, encode=True)
    '/search/q%201?q=a%26b'
    """
    if isinstance(template, str):
        if template == "{k}":
            return k
        values = {"query": text, "query_id": query_id, "k": str(k)}
        if encode:
            values = {name: quote(v, safe="") for name, v in values.items()}
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
    if isinstance(template, Mapping):
        return {key: fill(v, query_id, text, k, encode=encode) for key, v in template.items()}
    if isinstance(template, list):
        return [fill(v, query_id, text, k, encode=encode) for v in template]
    return template


class HttpRetriever:
    """A JSON search API (see the module docstring).

    Args:
        url, method, params, json, hits, id, score, timeout: as the keys of the same names.
        headers: the header templates as written (``${VAR}`` unexpanded), for the identity.
        sent_headers: the headers actually sent (expanded); kept in the client only.
        secrets: more texts to scrub from messages (the values of the ``${VAR}`` references).
        transport: an ``httpx.BaseTransport`` for tests (``httpx.MockTransport``).
    """

    kind = "http"
    keys = KEYS

    def __init__(
        self,
        *,
        url: str,
        hits: str,
        id: str,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        sent_headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        score: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        secrets: Sequence[str] = (),
        transport: Any = None,
    ) -> None:
        httpx = require("httpx", "retrieve", purpose="the http retriever")
        jmespath = require("jmespath", "retrieve", purpose="the http retriever")
        self.url, self.method, self.timeout = url, method, timeout
        self.params, self.json = dict(params or {}), json
        self.headers = dict(headers or {})
        self.expressions = {"hits": hits, "id": id, "score": score}
        self._hits = jmespath.compile(hits)
        self._id = jmespath.compile(id)
        self._score = jmespath.compile(score) if score else None
        sent = dict(sent_headers if sent_headers is not None else self.headers)
        values = sorted({*sent.values(), *secrets} - {""}, key=len, reverse=True)  # longest first
        self._secrets = [Secret(v) for v in values]  # every header value (a literal one may be a key) and ${VAR}
        self._where = display_url(url)
        self._client = httpx.Client(
            headers={"User-Agent": "rankgate-retrieve", **sent},
            timeout=httpx.Timeout(timeout),
            transport=transport,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        )
        self._httpx = httpx

    @classmethod
    def from_config(cls, config: Mapping[str, Any], where: Where | str, *, transport: Any = None) -> HttpRetriever:
        """Check the keys (a `ConfigError` names the key path) and build the retriever."""
        keys = Keys(config, where, KEYS)
        url = keys.text("url")
        if not url.startswith(("http://", "https://")):
            raise keys.error("url", f"must start with http:// or https://. Got {display_url(url)!r} instead.")
        body = config.get("json")
        method = keys.text("method", "POST" if body is not None else "GET").upper()
        if method not in ("GET", "POST"):
            raise keys.error("method", f"must be GET or POST. Got {brief(method)} instead.")
        params = keys.mapping("params")
        if method == "GET" and body is not None:
            raise keys.error("json", "a GET request has no body: use params, or method: POST")
        headers = keys.mapping("headers")
        sent, secrets = {}, []
        for name, value in headers.items():
            if not isinstance(value, str):
                raise keys.error(f"headers.{name}", f"must be a string. Got {brief(value)} instead.")
            sent[name] = expand_env(value, keys, f"headers.{name}")
            secrets += [os.environ[var] for var in env_names(value)]
        expressions = {key: keys.text(key) for key in ("hits", "id")}
        score = keys.text("score", None)
        _compile_all(keys, {**expressions, "score": score})
        return cls(
            url=url,
            method=method,
            headers=headers,
            sent_headers=sent,
            secrets=secrets,
            params=params,
            json=body,
            score=score,
            timeout=keys.number("timeout", DEFAULT_TIMEOUT),
            transport=transport,
            **expressions,
        )

    def identity(self) -> dict[str, Any]:
        """Everything that shapes the answers; a header value that is not a ``${VAR}`` template is digested."""
        headers = {
            name: value if env_names(value) else "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:16]
            for name, value in sorted(self.headers.items())
        }
        return {
            "kind": self.kind,
            "url": self.url,
            "method": self.method,
            "headers": headers,
            "params": self.params,
            "json": self.json,
            **self.expressions,
        }

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        """POST or GET one query; the hits as the API ranked them."""
        url = fill(self.url, query_id, text, k, encode=True)
        params = fill(self.params, query_id, text, k) or None
        body = fill(self.json, query_id, text, k) if self.json is not None else None
        try:
            response = self._client.request(self.method, url, params=params, json=body)
        except self._httpx.TimeoutException:
            raise TransientFailure(f"no answer within {self.timeout:g} s from {self._where}") from None
        except self._httpx.HTTPError as e:
            raise TransientFailure(f"{type(e).__name__} from {self._where}: {self._scrub(cut(str(e), 200))}") from None
        status = response.status_code
        if status in RETRY_STATUS or status >= 500:
            wait = retry_after_seconds(response.headers.get("retry-after"))
            detail = self._scrub(cut(" ".join(response.text.split()), 200))
            raise TransientFailure(f"HTTP {status} from {self._where}: {detail}".rstrip(": "), retry_after=wait)
        if not 200 <= status < 300:
            raise QueryFailed(f"HTTP {status} from {self._where}: {self._scrub(cut(response.text.strip(), 200))}")
        try:
            answer = response.json()
        except ValueError:
            raise QueryFailed(
                f"the answer from {self._where} is not JSON: {self._scrub(brief(response.text[:200]))}"
            ) from None
        return self._parse(answer)

    def _parse(self, answer: Any) -> list[Hit]:
        """The hits of one JSON answer (`QueryFailed` when one cannot be read)."""
        found = self._hits.search(answer)
        expr = self.expressions
        if found is None:
            raise QueryFailed(f"the hits expression {expr['hits']!r} matches nothing in the answer")
        if not isinstance(found, list):
            raise QueryFailed(f"the hits expression {expr['hits']!r} gives a {type(found).__name__}, not a list")
        hits = []
        for rank, hit in enumerate(found, 1):
            doc = self._id.search(hit)
            if isinstance(doc, bool) or not isinstance(doc, str | int) or doc == "":
                what = "no id" if doc is None or doc == "" else f"an id that is not a string: {brief(doc)}"
                raise QueryFailed(f"hit {rank} has {what} (id expression {expr['id']!r})")
            score = None
            if self._score is not None:
                score = self._score.search(hit)
                if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                    raise QueryFailed(f"hit {rank} has no numeric score (score expression {expr['score']!r})")
            hits.append(Hit(str(doc), None if score is None else float(score)))
        return hits

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = secret.redact(text)
        return text

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"HttpRetriever({self.method} {self._where})"


def _compile_all(keys: Keys, expressions: Mapping[str, str | None]) -> None:
    """Compile each JMESPath expression once, so that a typo is a `ConfigError` naming its key."""
    jmespath = require("jmespath", "retrieve", purpose="the http retriever")
    for key, expression in expressions.items():
        if expression is None:
            continue
        try:
            jmespath.compile(expression)
        except jmespath.exceptions.JMESPathError as e:
            message = cut(" ".join(str(e).split()), 200)
            raise keys.error(key, f"not a JMESPath expression: {message}") from None
