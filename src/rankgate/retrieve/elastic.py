"""Elasticsearch and OpenSearch, through their REST search API (``POST /INDEX/_search``) with httpx.

Why httpx and not the official clients: the one request used here is the same JSON on every
release; ``elasticsearch-py`` 9 sends a ``compatible-with=9`` header that Elasticsearch 8 servers
refuse (and the 8 client refuses 9 servers), ``opensearch-py`` is a third client for the same
call, and both would add a dependency that only wraps this one POST. httpx is already rankgate's
HTTP client, gives timeouts and connection errors as types, and serves both products.

Spec keys: ``url`` (the cluster, ``https://host:9200``), ``index``, ``query`` (``match``, BM25 on a
text ``field``, the default; or ``knn`` on a vector ``field``), ``field``, ``id_field`` (a
``_source`` field holding the document id; default ``_id``), ``num_candidates`` (Elasticsearch
kNN; default ``max(100, 2k)``), ``api_key_env`` (sent as ``Authorization: ApiKey ...``) or
``username`` with ``password_env`` (basic auth), ``verify`` (false, or a CA bundle path),
``timeout`` (seconds, default 30), and for ``knn`` the encoder keys of `rankgate.retrieve.encode`.

The request bodies, by product and query:

- match: ``{"size": k, "query": {"match": {FIELD: {"query": TEXT}}}, "_source": ...}``
- Elasticsearch knn (8.0+): ``{"size": k, "knn": {"field": FIELD, "query_vector": [...], "k": k,
  "num_candidates": N}, "_source": ...}``
- OpenSearch knn (k-NN plugin): ``{"size": k, "query": {"knn": {FIELD: {"vector": [...], "k": k}}}, "_source": ...}``

``_source`` is false, or ``[ID_FIELD]`` when the id comes from the source. 429 and 5xx answers
(with ``Retry-After``), timeouts and connection errors are transient; other answers fail the query.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from rankgate.bench.factory import EncoderFactory
from rankgate.extras import require
from rankgate.retrieve.base import Hit, QueryFailed, TransientFailure
from rankgate.retrieve.encode import ENCODER_KEYS, QueryEncoder
from rankgate.retrieve.spec import Keys, Where, without_timeout

KEYS = (
    "url",
    "index",
    "query",
    "field",
    "id_field",
    "num_candidates",
    "api_key_env",
    "username",
    "password_env",
    "verify",
    "timeout",
    *ENCODER_KEYS,
)


class _SearchRetriever:
    """The REST search of one index; subclasses say how a kNN body is written."""

    kind = "elasticsearch"
    keys = KEYS

    def __init__(self, client: Any, settings: Mapping[str, Any], encoder: QueryEncoder | None) -> None:
        self.client = client
        self.settings = dict(settings)
        self.encoder = encoder
        self._path = f"/{quote(settings['index'], safe=',*')}/_search"

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], where: Where | str, *, encoder_factory: EncoderFactory | None = None
    ) -> _SearchRetriever:
        keys = Keys(config, where, KEYS)
        url = keys.text("url")
        if not url.startswith(("http://", "https://")):
            raise keys.error("url", f"must be an http:// or https:// URL. Got {url!r} instead.")
        settings = {
            "url": url.rstrip("/"),
            "index": keys.text("index"),
            "query": keys.choice("query", ("match", "knn"), "match"),
            "field": keys.text("field"),
            "id_field": keys.text("id_field", None),
            "num_candidates": keys.integer("num_candidates", None),
            "timeout": keys.number("timeout", 30.0),
        }
        if settings["query"] == "match":
            used = [k for k in ENCODER_KEYS if keys.has(k)]
            if used:
                raise keys.error(used[0], "a match query encodes nothing: encoder keys apply to query: knn")
        verify = keys.config.get("verify", True)
        if not isinstance(verify, bool | str):
            raise keys.error("verify", f"must be true, false or a CA bundle path. Got {verify!r} instead.")
        httpx = require("httpx", "elastic", purpose=f"the {cls.kind} retriever")
        client = httpx.Client(base_url=settings["url"], headers=_auth(keys), timeout=settings["timeout"], verify=verify)
        encoder = QueryEncoder.from_keys(keys, encoder_factory) if settings["query"] == "knn" else None
        return cls(client, settings, encoder)

    def identity(self) -> Mapping[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, **without_timeout(self.settings)}
        if self.encoder is not None:
            out["encoder"] = self.encoder.identity()
        return out

    def body(self, text: str, k: int) -> dict[str, Any]:
        """The JSON body of one search (see the module docstring)."""
        s = self.settings
        body: dict[str, Any] = {"size": k}
        if s["query"] == "match":
            body["query"] = {"match": {s["field"]: {"query": text}}}
        else:
            assert self.encoder is not None  # set for knn by from_config
            body.update(self.knn(self.encoder.vector(text).tolist(), k))
        body["_source"] = [s["id_field"]] if s["id_field"] else False
        return body

    def knn(self, vector: list[float], k: int) -> dict[str, Any]:
        """Elasticsearch's top-level ``knn`` section (8.0 and later)."""
        candidates = self.settings["num_candidates"] or max(100, 2 * k)
        return {
            "knn": {
                "field": self.settings["field"],
                "query_vector": vector,
                "k": k,
                "num_candidates": max(candidates, k),
            }
        }

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        httpx = require("httpx", "elastic")
        where = f"{self.kind} {self._path}"
        try:
            response = self.client.post(self._path, json=self.body(text, k))
        except httpx.TimeoutException:
            raise TransientFailure(f"{where}: timed out") from None
        except httpx.TransportError as e:
            raise TransientFailure(f"{where}: {type(e).__name__}") from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise TransientFailure(f"{where}: HTTP {status}", retry_after=_retry_after(response.headers))
        if status >= 400:
            raise QueryFailed(f"{where}: HTTP {status}{_error_type(response)}")
        return self._hits(response, where)

    def _hits(self, response: Any, where: str) -> list[Hit]:
        try:
            hits = response.json()["hits"]["hits"]
        except (ValueError, KeyError, TypeError):
            raise QueryFailed(f"{where}: the answer is not a search response (no hits.hits)") from None
        if not isinstance(hits, list):
            raise QueryFailed(f"{where}: hits.hits is not a list")
        out = []
        id_field = self.settings["id_field"]
        for i, hit in enumerate(hits):
            doc = hit.get("_id") if not id_field else (hit.get("_source") or {}).get(id_field)
            if doc is None or isinstance(doc, dict | list):
                raise QueryFailed(f"{where}: hit {i} has no {id_field or '_id'}")
            score = hit.get("_score")
            out.append(Hit(str(doc), float(score) if isinstance(score, int | float) else None))
        return out

    def close(self) -> None:
        self.client.close()


class ElasticsearchRetriever(_SearchRetriever):
    """Elasticsearch 7.x and later (kNN: 8.0 and later)."""

    kind = "elasticsearch"


class OpenSearchRetriever(_SearchRetriever):
    """OpenSearch 1.x and later (kNN: the k-NN plugin's ``knn`` query)."""

    kind = "opensearch"

    def knn(self, vector: list[float], k: int) -> dict[str, Any]:
        return {"query": {"knn": {self.settings["field"]: {"vector": vector, "k": k}}}}


def _auth(keys: Keys) -> dict[str, str]:
    """The Authorization header from the secrets the spec names by environment variable."""
    api_key = keys.secret_from_env("api_key_env")
    username = keys.text("username", None)
    password = keys.secret_from_env("password_env")
    if api_key is not None and (username or password):
        raise keys.error("api_key_env", "give api_key_env or username/password_env, not both")
    if api_key is not None:
        return {"Authorization": f"ApiKey {api_key}"}
    if (username is None) != (password is None):
        raise keys.error(
            "username" if username is None else "password_env", "basic auth needs username and password_env"
        )
    if username is not None and password is not None:
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        return {"Authorization": f"Basic {token}"}
    return {}


def _retry_after(headers: Any) -> float | None:
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _error_type(response: Any) -> str:
    """``: TYPE: REASON`` from an Elasticsearch/OpenSearch error body, when it has one."""
    try:
        error = json.loads(response.text).get("error")
    except (ValueError, AttributeError):
        return ""
    if isinstance(error, dict):
        reason = str(error.get("reason", ""))[:200]
        return f": {error.get('type', 'error')}: {reason}" if reason else f": {error.get('type', 'error')}"
    return f": {str(error)[:200]}" if error else ""
