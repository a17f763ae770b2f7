"""Reading one database adapter's settings: known keys only, typed values, errors that name the key path.

>>> keys = Keys({"kind": "lancedb", "path": "idx", "k1": 2}, "retriever.yaml", ("path",))
Traceback (most recent call last):
...
rankgate.errors.ConfigError: retriever.yaml.k1: unknown key (allowed here: kind, name, path)
>>> keys = Keys({"kind": "lancedb", "path": "idx"}, "spec", ("path", "metric"))
>>> keys.text("path"), keys.choice("metric", ("cosine", "l2"), "cosine")
('idx', 'cosine')
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rankgate.errors import ConfigError

COMMON_KEYS = ("kind", "name")
"""Keys every spec may hold besides the adapter's own."""

_REQUIRED: Any = object()


class Keys:
    """One adapter's configuration mapping, checked against the keys it knows.

    Args:
        config: the mapping (from YAML or Python).
        where: the key path prefix of error messages (``"retriever.yaml"``, ``"matrix.retrievers[2].spec"``).
        allowed: the adapter's keys (`COMMON_KEYS` are always allowed).

    Raises:
        ConfigError: ``config`` is not a mapping, or holds a key that is not allowed.
    """

    def __init__(self, config: Any, where: str, allowed: Sequence[str]) -> None:
        self.where = where
        if not isinstance(config, Mapping):
            raise ConfigError(f"must be a mapping. Got {type(config).__name__} instead.", key_path=where or None)
        known = (*COMMON_KEYS, *allowed)
        for key in config:
            if not isinstance(key, str) or key not in known:
                raise ConfigError(f"unknown key (allowed here: {', '.join(known)})", key_path=self.path(str(key)))
        self.config = config

    def path(self, key: str) -> str:
        """The key path of ``key``."""
        return f"{self.where}.{key}" if self.where else key

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(message, key_path=self.path(key))

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
            raise self.error(key, f"must be a non-empty string. Got {value!r} instead.")
        return value

    def integer(self, key: str, default: int | None, *, low: int = 1) -> Any:
        value = self.config.get(key, default)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise self.error(key, f"must be an int >= {low}. Got {value!r} instead.")
        return value

    def number(self, key: str, default: float | None, *, low: float = 0.0) -> Any:
        value = self.config.get(key, default)
        if value is None:
            return None
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= low:
            raise self.error(key, f"must be a number > {low:g}. Got {value!r} instead.")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.config.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false. Got {value!r} instead.")
        return value

    def choice(self, key: str, choices: Sequence[str], default: str | None) -> Any:
        value = self.config.get(key, default)
        if value is None:
            return None
        if value not in choices:
            raise self.error(key, f"must be one of {', '.join(choices)}. Got {value!r} instead.")
        return value

    def existing_path(self, key: str) -> Path:
        """A path that must exist (an embedded database would otherwise create an empty one)."""
        text = self.text(key)
        path = Path(text).expanduser()
        if not path.exists():
            raise self.error(key, f"{text}: no such folder (build one with `rankgate index`)")
        return path

    def secret_from_env(self, key: str) -> str | None:
        """The value of the environment variable that ``key`` names (the secret never sits in the spec)."""
        name = self.text(key, None)
        if name is None:
            return None
        value = os.environ.get(name)
        if not value:
            raise self.error(key, f"the environment variable {name} is not set")
        return value
