"""JSON parsing for input files: strict where `json.loads` is lenient or crashes.

`json.loads` keeps the last of two equal keys (a run or qrels would lose a row without a word),
raises `RecursionError` on deeply nested input and `ValueError` on an integer of more than 4,300
digits. `loads` turns all three into an `InputError` naming the file (and line, where known);
a syntax error stays a `json.JSONDecodeError` so each reader can word it.
"""

from __future__ import annotations

import json
from typing import Any

from rankgate.errors import InputError
from rankgate.io.values import shown


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def loads(text: str | bytes, source: str, line: int | None = None) -> Any:
    """``json.loads(text)`` that refuses duplicate keys, deep nesting and giant integers.

    >>> loads('{"q1": {"d1": 1, "d1": 0}}', "run.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankgate.errors.InputError: run.json: duplicate key 'd1' in a JSON object (the later value ...)
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        message = f"duplicate key {shown(e.key)} in a JSON object (the later value would silently replace the earlier)"
        raise InputError(message, source=source, line=line) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", source=source, line=line) from None
    except json.JSONDecodeError:
        raise
    except ValueError as e:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise InputError(f"invalid JSON: {e}", source=source, line=line) from None
