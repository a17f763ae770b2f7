"""Build a live retriever from its spec: the ``kind`` picks the class in `rankgate.retrieve.base.KINDS`.

>>> load_kind({"kind": "solr"}, "retriever.yaml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankgate.errors.ConfigError: retriever.yaml.kind: unknown kind 'solr' (kinds: http, python, qdrant, ...)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rankgate.errors import ConfigError
from rankgate.retrieve.base import KINDS, LiveRetriever


def load_kind(config: Mapping[str, Any], where: str, **options: Any) -> LiveRetriever:
    """The retriever a spec mapping describes.

    Args:
        config: the spec (``{"kind": "lancedb", "path": ..., ...}``).
        where: key path prefix of error messages.
        options: keyword options of the class's ``from_config`` (the database kinds take
            ``encoder_factory``, so that ``bench`` shares its models with them); options a kind
            does not take are not passed to it.

    Raises:
        ConfigError: not a mapping, no or unknown ``kind``, or a bad key of the kind.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(
            f"must be a mapping with a kind. Got {type(config).__name__} instead.", key_path=where or None
        )
    kind = config.get("kind")
    key = f"{where}.kind" if where else "kind"
    if kind is None:
        raise ConfigError(f"is required (kinds: {', '.join(KINDS)})", key_path=key)
    if kind not in KINDS:
        raise ConfigError(f"unknown kind {kind!r} (kinds: {', '.join(KINDS)})", key_path=key)
    module, _, name = KINDS[kind].partition(":")
    cls = getattr(importlib.import_module(module), name)
    import inspect

    accepted = inspect.signature(cls.from_config).parameters
    passed = {k: v for k, v in options.items() if k in accepted}
    retriever: LiveRetriever = cls.from_config(config, where, **passed)
    return retriever


def read_spec(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A spec YAML file as a mapping (the bounded YAML loader: no duplicate keys, no alias bombs).

    Raises:
        ConfigError: naming the file, when it is missing, unreadable, not YAML or not a mapping.
    """
    from rankgate.io.yaml import YAMLSyntaxError, load_yaml

    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("retriever spec file not found", source=source) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read the retriever spec ({e})", source=source) from None
    try:
        data = load_yaml(text, source)
    except YAMLSyntaxError as e:
        line = f"line {e.line}: " if e.line is not None else ""
        raise ConfigError(f"{line}not valid YAML ({e.problem})", source=source) from None
    if not isinstance(data, dict):
        raise ConfigError("a retriever spec must be a mapping with a kind", source=source)
    return data
