"""Numbers read from text, and values echoed in messages, the same way in every reader."""

from __future__ import annotations

MAX_SHOWN = 60  # characters of a key or value echoed in a message


def plain_float(text: str) -> float:
    """``float(text)`` for what Arrow reads as a number; Python-only spellings raise `ValueError`.

    Python also reads ``1_000`` and digits of other scripts (``"٢"`` is 2.0); Arrow and
    trec_eval do not, so neither may a fallback parser.

    >>> plain_float(" 2.5 ")
    2.5
    >>> plain_float("\u0662")
    Traceback (most recent call last):
    ...
    ValueError: '٢' is not an ASCII number
    """
    if "_" in text or not text.isascii():
        raise ValueError(f"{text!r} is not an ASCII number")
    return float(text)


def shown(value: object) -> str:
    """``repr(value)``, shortened: a hostile file must not make a message megabytes long.

    >>> len(shown("9" * 100)), shown("9" * 100)[-4:], shown("q1")
    (60, '9...', "'q1'")
    """
    return clip(repr(value))


def clip(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut to ``limit`` characters, ``...`` marking the cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
