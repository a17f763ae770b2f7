"""A retriever SPEC: what it is, how it is read, and the one place its keys are checked.

A SPEC is

- a YAML file holding ``kind: http`` (or ``python``, ``qdrant``, ``lancedb``, ...) and that kind's keys;
- the short form ``python:pkg.module:function`` (the same as ``kind: python`` and
  ``target: pkg.module:function``);
- or the mapping itself (a bench matrix's ``spec:``, a test).

`open_retriever` reads a SPEC and builds its adapter (`rankgate.retrieve.base.KINDS` names the
class; its module, and the client library, are imported only then); ``rankgate retrieve`` and
``bench``'s live rows both call it. Every adapter reads its keys through `Keys`, so every kind
says what is wrong the same way: a `ConfigError` naming the file and key path
(``search.yaml: headers.Authorization: ...``) or, for a mapping inside a larger file, the key path
(``matrix.retrievers[2].spec.path: ...``).

``${NAME}`` in a value (the `http` kind's header values) is replaced by the environment variable
``NAME`` when the retriever is built (`expand_env`); the expanded text is kept by the adapter only,
never in its identity, the cache, the outputs or a message.
"""

from __future__ import annotations

import importlib
import inspect
import math
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankgate.errors import ConfigError
from rankgate.io.yaml import brief
from rankgate.retrieve.base import KINDS, Hit, LiveRetriever, TransientFailure

PYTHON_PREFIX = "python:"
MAX_SPEC_BYTES = 1_000_000
COMMON_KEYS = ("kind",)
"""Keys every SPEC holds besides its kind's own."""

_ENV = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REQUIRED: Any = object()


@dataclass(frozen=True)
class Where:
    """Where a SPEC came from, for messages: its file (or short form), and its key path inside a larger file.

    >>> str(Where("search.yaml").error("is required", "url"))
    'search.yaml: url: is required'
    >>> str(Where(prefix="matrix.retrievers[2].spec").error("is required", "path"))
    'matrix.retrievers[2].spec.path: is required'
    """

    source: str | None = None
    prefix: str = ""

    def path(self, key: str | None = None) -> str | None:
        """The key path of ``key`` (of the SPEC itself when None)."""
        if not key:
            return self.prefix or None
        return f"{self.prefix}.{key}" if self.prefix else key

    def error(self, message: str, key: str | None = None) -> ConfigError:
        return ConfigError(message, source=self.source, key_path=self.path(key))


def read_spec(spec: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The configuration of a SPEC and the file (or short form) its messages name (None for a mapping).

    >>> read_spec("python:my_search:search")
    ({'kind': 'python', 'target': 'my_search:search'}, 'python:my_search:search')
    >>> read_spec({"kind": "http", "url": "http://localhost:8080/search"})[1] is None
    True

    Raises:
        ConfigError: naming the file, when it is missing, unreadable, too big, not YAML or not a mapping.
    """
    if isinstance(spec, Mapping):
        return dict(spec), None
    if not isinstance(spec, str | os.PathLike):
        raise ConfigError(
            f"a retriever SPEC is a file, python:module:function or a mapping. Got {brief(spec)} instead."
        )
    text = os.fspath(spec)
    if text.startswith(PYTHON_PREFIX):
        return {"kind": "python", "target": text[len(PYTHON_PREFIX) :]}, text
    path = Path(text)
    if not path.is_file():
        raise ConfigError(
            "no such file; a retriever SPEC is a YAML file with a 'kind' (see docs/retrieve.md) "
            "or python:module:function",
            source=text,
        )
    try:
        with path.open("rb") as f:
            data = f.read(MAX_SPEC_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"cannot read it: {e.strerror or e}", source=text) from None
    if len(data) > MAX_SPEC_BYTES:
        raise ConfigError(
            f"a retriever SPEC is a small YAML file (this one is over {MAX_SPEC_BYTES:,} bytes)", source=text
        )
    try:
        decoded = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"not UTF-8 text (byte {e.start})", source=text) from None
    from rankgate.io.yaml import load_yaml

    config = load_yaml(decoded, text)
    if not isinstance(config, Mapping):
        raise ConfigError(f"expected a mapping with a 'kind' key, got {brief(config)}", source=text)
    return dict(config), text


def open_retriever(
    spec: str | os.PathLike[str] | Mapping[str, Any],
    *,
    timeout: float | None = None,
    key_path: str | None = None,
    **options: Any,
) -> LiveRetriever:
    """The adapter a SPEC describes (see the module docstring), ready to search.

    Args:
        spec: a YAML file, a short form (``python:module:function``) or the configuration itself.
        timeout: seconds for one request. A kind with a ``timeout`` key (http, python, qdrant,
            pgvector, elasticsearch, opensearch) gets it in place of the SPEC's; an embedded
            database (lancedb, chroma) is searched in a helper thread that is given up after it.
        key_path: the key path of a mapping SPEC inside a larger file, for messages
            (``matrix.retrievers[2].spec``).
        options: keyword options of the kind's ``from_config`` (the database kinds take
            ``encoder_factory``, so that ``bench`` shares its models with them); options a kind
            does not take are not passed to it.

    Raises:
        ConfigError: the SPEC is missing, unreadable or wrong (the message names the key path).
        MissingExtraError: the kind's client library is not installed.
    """
    config, source = read_spec(spec)
    where = Where(source, key_path or "")
    if "kind" not in config:
        raise where.error(f"the 'kind' key is missing; one of: {', '.join(KINDS)}")
    kind = config["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise where.error(f"unknown kind {brief(kind)}; one of: {', '.join(KINDS)}", "kind")
    module_name, _, class_name = KINDS[kind].partition(":")
    adapter = getattr(importlib.import_module(module_name), class_name)
    own_timeout = "timeout" in adapter.keys
    if timeout is not None and own_timeout:
        config["timeout"] = timeout
    accepted = inspect.signature(adapter.from_config).parameters
    retriever: LiveRetriever = adapter.from_config(config, where, **{k: v for k, v in options.items() if k in accepted})
    if timeout is not None and not own_timeout:
        return TimedRetriever(retriever, timeout)
    return retriever


class TimedRetriever:
    """A retriever of a kind without a timeout of its own: each search in a helper thread, given up after it.

    A search past the limit is a `TransientFailure` (retried by the runner); its thread is left to
    finish, since Python cannot stop one. Everything else (``kind``, ``identity``, ``encoder``)
    is the wrapped retriever's: the timeout does not change the answers, so it does not key the cache.
    """

    def __init__(self, retriever: LiveRetriever, timeout: float) -> None:
        self.retriever = retriever
        self.kind = retriever.kind
        self.timeout = timeout

    def identity(self) -> Mapping[str, Any]:
        return self.retriever.identity()

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        return call_within(self.timeout, lambda: self.retriever.search(query_id, text, k), f"{self.kind} search")

    def close(self) -> None:
        self.retriever.close()

    def __getattr__(self, name: str) -> Any:  # the adapter's own attributes (bench reads ``encoder``)
        return getattr(self.retriever, name)


def call_within(timeout: float, call: Callable[[], Any], name: str) -> Any:
    """``call()`` in a helper thread; `TransientFailure` when it has not returned after ``timeout`` s."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as e:  # handed to the caller's thread
            box["error"] = e

    worker = threading.Thread(target=run, name="rankgate-retrieve-call", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TransientFailure(f"{name} did not return within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


class Keys:
    """One SPEC's configuration, checked against the keys its kind knows; typed readers of its values.

    Args:
        config: the mapping (from YAML or Python).
        where: the `Where` of the SPEC, or a key path prefix (``"spec"``) for messages.
        allowed: the kind's keys (`COMMON_KEYS` are always allowed).

    Raises:
        ConfigError: ``config`` is not a mapping, or holds a key that is not allowed.

    >>> Keys({"kind": "lancedb", "path": "idx", "k1": 2}, Where("retriever.yaml"), ("path",))
    Traceback (most recent call last):
    ...
    rankgate.errors.ConfigError: retriever.yaml: k1: unknown key (allowed here: kind, path)
    >>> keys = Keys({"kind": "lancedb", "path": "idx"}, "spec", ("path", "metric"))
    >>> keys.text("path"), keys.choice("metric", ("cosine", "l2"), "cosine")
    ('idx', 'cosine')
    >>> keys.text("table")
    Traceback (most recent call last):
    ...
    rankgate.errors.ConfigError: spec.table: is required
    """

    def __init__(self, config: Any, where: Where | str, allowed: Sequence[str]) -> None:
        self.where = where if isinstance(where, Where) else Where(prefix=where)
        if not isinstance(config, Mapping):
            raise self.where.error(f"must be a mapping. Got {type(config).__name__} instead.")
        known = (*COMMON_KEYS, *allowed)
        for key in config:
            if not isinstance(key, str) or key not in known:
                raise self.error(str(key), f"unknown key (allowed here: {', '.join(known)})")
        self.config = config

    def error(self, key: str | None, message: str) -> ConfigError:
        """A `ConfigError` naming the file and the key path of ``key``."""
        return self.where.error(message, key)

    def has(self, key: str) -> bool:
        return self.config.get(key) is not None

    def text(self, key: str, default: Any = _REQUIRED) -> Any:
        """A non-empty string (``default`` when absent; required when no default is given)."""
        value = self.config.get(key)
        if value is None:
            if default is _REQUIRED:
                raise self.error(key, "is required")
            return default
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, f"must be a non-empty string. Got {brief(value)} instead.")
        return value

    def integer(self, key: str, default: int | None, *, low: int = 1) -> Any:
        value = self.config.get(key, default)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise self.error(key, f"must be an int >= {low}. Got {brief(value)} instead.")
        return value

    def number(self, key: str, default: float | None, *, low: float = 0.0) -> Any:
        """A finite number > ``low``."""
        value = self.config.get(key, default)
        if value is None:
            return None
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value <= low:
            raise self.error(key, f"must be a number > {low:g}. Got {brief(value)} instead.")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.config.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false. Got {brief(value)} instead.")
        return value

    def choice(self, key: str, choices: Sequence[str], default: str | None) -> Any:
        value = self.config.get(key, default)
        if value is None:
            return None
        if value not in choices:
            raise self.error(key, f"must be one of {', '.join(choices)}. Got {brief(value)} instead.")
        return value

    def mapping(self, key: str) -> dict[str, Any]:
        """A mapping with string keys (empty when absent)."""
        value = self.config.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.error(key, f"must be a mapping. Got {brief(value)} instead.")
        for name in value:
            if not isinstance(name, str):
                raise self.error(key, f"keys must be strings. Got {brief(name)} instead.")
        return dict(value)

    def existing_path(self, key: str) -> Path:
        """A path that must exist (an embedded database would otherwise create an empty one)."""
        text = self.text(key)
        path = Path(text).expanduser()
        if not path.exists():
            raise self.error(key, f"{text}: no such folder (build one with `rankgate index`)")
        return path

    def secret_from_env(self, key: str) -> str | None:
        """The value of the environment variable that ``key`` names (the secret never sits in the SPEC)."""
        name = self.text(key, None)
        if name is None:
            return None
        value = os.environ.get(name)
        if not value:
            raise self.error(key, f"the environment variable {name} is not set")
        return value


def env_names(text: str) -> list[str]:
    """The ``${NAME}`` references in ``text``.

    >>> env_names("Bearer ${SEARCH_TOKEN} for ${TEAM}")
    ['SEARCH_TOKEN', 'TEAM']
    """
    return [m.group(1) for m in _ENV.finditer(text)]


def expand_env(text: str, keys: Keys, key: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with each ``${NAME}`` replaced by environment variable ``NAME``.

    Raises:
        ConfigError: a name is malformed or its variable is unset or empty (the message names the
            variable, never a value).

    >>> keys = Keys({}, Where("r.yaml"), ())
    >>> expand_env("Bearer ${T}", keys, "headers.Authorization", {"T": "abc"})
    'Bearer abc'
    >>> expand_env("Bearer ${T}", keys, "headers.Authorization", {})
    Traceback (most recent call last):
    ...
    rankgate.errors.ConfigError: r.yaml: headers.Authorization: environment variable T is not set (or empty)
    """
    env = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if not _ENV_NAME.fullmatch(name):
            raise keys.error(key, f"${{{brief(name, 40)}}} is not a variable name")
        if not env.get(name):
            raise keys.error(key, f"environment variable {name} is not set (or empty)")
        return env[name]

    return _ENV.sub(value, text)


def without_timeout(settings: Mapping[str, Any]) -> dict[str, Any]:
    """An adapter's settings for its identity: a timeout changes no answer, so it does not key the cache."""
    return {key: value for key, value in settings.items() if key != "timeout"}
