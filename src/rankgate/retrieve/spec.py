"""A retriever SPEC: a YAML file with a ``kind``, or a short form on the command line.

- ``retriever.yaml`` holding ``kind: http`` (or ``python``, ``qdrant``, ...) and that kind's keys;
- ``python:pkg.module:function``: the same as a file holding ``kind: python`` and
  ``target: pkg.module:function``.

`open_retriever` reads a SPEC and builds its adapter (`rankgate.retrieve.base.KINDS` names the
class; its module is imported only then). The helpers below check an adapter's keys, so that every
kind says what is wrong the same way: a `ConfigError` naming the file and the key path
(``retriever.yaml: headers.Authorization: ...``).

``${NAME}`` in a value (the `http` kind's header values) is replaced by the environment variable
``NAME`` when the retriever is built (`expand_env`); the expanded text is kept by the adapter only,
never in its identity, the cache, the outputs or a message.
"""

from __future__ import annotations

import importlib
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rankgate.errors import ConfigError
from rankgate.io.yaml import brief
from rankgate.retrieve.base import KINDS, LiveRetriever

PYTHON_PREFIX = "python:"
MAX_SPEC_BYTES = 1_000_000
_ENV = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MISSING: Any = object()


def read_spec(spec: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The configuration of a SPEC and the name its messages use (the file, or the short form).

    >>> read_spec("python:my_search:search")
    ({'kind': 'python', 'target': 'my_search:search'}, 'python:my_search:search')
    >>> read_spec({"kind": "http", "url": "http://localhost:8080/search"})[1]
    '<retriever>'
    """
    if isinstance(spec, Mapping):
        return dict(spec), "<retriever>"
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


def open_retriever(spec: str | os.PathLike[str] | Mapping[str, Any], *, timeout: float | None = None) -> LiveRetriever:
    """The adapter a SPEC describes (see the module docstring), ready to search.

    Args:
        spec: a YAML file, a short form (``python:module:function``) or the configuration itself.
        timeout: seconds for one request, replacing the SPEC's ``timeout`` key.

    Raises:
        ConfigError: the SPEC is missing, unreadable or wrong (the message names the key path).
        MissingExtraError: the kind's client library is not installed.
    """
    config, where = read_spec(spec)
    kind = config.get("kind", _MISSING)
    if kind is _MISSING:
        raise ConfigError(f"the 'kind' key is missing; one of: {', '.join(KINDS)}", source=where)
    if not isinstance(kind, str) or kind not in KINDS:
        raise ConfigError(f"unknown kind {brief(kind)}; one of: {', '.join(KINDS)}", source=where, key_path="kind")
    if timeout is not None:
        config["timeout"] = timeout
    module_name, _, class_name = KINDS[kind].partition(":")
    adapter = getattr(importlib.import_module(module_name), class_name)
    retriever: LiveRetriever = adapter.from_config(config, where)
    return retriever


def check_keys(
    config: Mapping[str, Any], where: str, *, required: Sequence[str], optional: Sequence[str], prefix: str = ""
) -> None:
    """Refuse unknown keys (naming the known ones) and missing required keys.

    >>> check_keys({"kind": "http", "url": "u", "hit": "x"}, "r.yaml", required=["url"], optional=["hits"])
    Traceback (most recent call last):
    ...
    rankgate.errors.ConfigError: r.yaml: hit: unknown key; known keys: kind, url, hits
    """
    known = ["kind", *required, *optional] if not prefix else [*required, *optional]
    for key in config:
        if key not in known:
            raise ConfigError(f"unknown key; known keys: {', '.join(known)}", source=where, key_path=prefix + str(key))
    for key in required:
        if key not in config:
            raise ConfigError("this key is required", source=where, key_path=prefix + key)


def text_value(config: Mapping[str, Any], key: str, where: str, *, default: Any = _MISSING) -> Any:
    """``config[key]`` as a non-empty string (``default`` when absent; required when no default)."""
    value = config.get(key, _MISSING)
    if value is _MISSING:
        if default is _MISSING:
            raise ConfigError("this key is required", source=where, key_path=key)
        return default
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"expected a non-empty string, got {brief(value)}", source=where, key_path=key)
    return value


def number_value(config: Mapping[str, Any], key: str, where: str, *, default: float | None) -> float | None:
    """``config[key]`` as a number > 0 (``default`` when absent)."""
    value = config.get(key, _MISSING)
    if value is _MISSING or (value is None and default is None):
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"expected a number > 0, got {brief(value)}", source=where, key_path=key)
    return float(value)


def mapping_value(config: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    """``config[key]`` as a mapping with string keys (empty when absent)."""
    value = config.get(key, _MISSING)
    if value is _MISSING or value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"expected a mapping, got {brief(value)}", source=where, key_path=key)
    for name in value:
        if not isinstance(name, str):
            raise ConfigError(f"keys must be strings, got {brief(name)}", source=where, key_path=key)
    return dict(value)


def env_names(text: str) -> list[str]:
    """The ``${NAME}`` references in ``text``.

    >>> env_names("Bearer ${SEARCH_TOKEN} for ${TEAM}")
    ['SEARCH_TOKEN', 'TEAM']
    """
    return [m.group(1) for m in _ENV.finditer(text)]


def expand_env(text: str, where: str, key_path: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with each ``${NAME}`` replaced by environment variable ``NAME``.

    Raises:
        ConfigError: a name is malformed or its variable is unset or empty (the message names the
            variable, never a value).

    >>> expand_env("Bearer ${T}", "r.yaml", "headers.Authorization", {"T": "abc"})
    'Bearer abc'
    >>> expand_env("Bearer ${T}", "r.yaml", "headers.Authorization", {})
    Traceback (most recent call last):
    ...
    rankgate.errors.ConfigError: r.yaml: headers.Authorization: environment variable T is not set (or empty)
    """
    env = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if not _ENV_NAME.fullmatch(name):
            raise ConfigError(f"${{{brief(name, 40)}}} is not a variable name", source=where, key_path=key_path)
        if not env.get(name):
            raise ConfigError(f"environment variable {name} is not set (or empty)", source=where, key_path=key_path)
        return env[name]

    return _ENV.sub(value, text)
