"""Keeping the API key out of logs, files, errors and reprs."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

REDACTED = "***"


class Secret:
    """A string that never shows itself: ``repr``/``str`` print asterisks; `reveal` returns it.

    >>> key = Secret("sk-live-123456")
    >>> key, f"{key}"
    (Secret('***'), '***')
    >>> key.redact("bad key sk-live-123456 given")
    'bad key *** given'
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself: only for the Authorization header."""
        return self._value

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the secret replaced by ``***``."""
        return text.replace(self._value, REDACTED) if self._value and text else text

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __str__(self) -> str:
        return REDACTED

    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("a Secret cannot be pickled")


def secret_from_env(name: str) -> Secret | None:
    """The value of environment variable ``name`` as a `Secret`, or None when unset or empty."""
    value = os.environ.get(name, "").strip()
    return Secret(value) if value else None


def display_url(url: str) -> str:
    """``url`` without a user name, password or query string (which may carry a key), fit for messages.

    >>> display_url("https://user:pw@api.example.com/v1")
    'https://api.example.com/v1'
    >>> display_url("https://example.openai.azure.com/v1?api-key=abc")
    'https://example.openai.azure.com/v1?...'
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "<invalid URL>"
    if parts.username is None and parts.password is None and not parts.query and not parts.fragment:
        return url
    host = parts.hostname or ""
    if port:
        host += f":{port}"
    return urlunsplit((parts.scheme, host, parts.path, "..." if parts.query else "", ""))
