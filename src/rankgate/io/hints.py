"""Hints for a run and qrels given the wrong way round, for every input format.

``rankgate eval QRELS RUN`` takes the judgments first. A TREC file says what it is by its
field count (`rankgate.io.trec.diagnose`); a JSON, JSONL, CSV, TSV or Parquet file has the same
shape either way (query, document, number), so its numbers tell:

- read as qrels, a file whose values are mostly not whole numbers holds scores, not grades:
  the error about the grade gets `swap_hint` (`run_as_qrels`);
- read as a run, a file whose every score is a small whole number, as grades are, may be
  qrels: `grade_like` says so, and the evaluation then checks whether every row is a judged
  document scored with its grade (one of its warnings, `rankgate.evaluation.facts`, in every
  format and engine; never an error: a legitimate run may score with small whole numbers).

Both checks are cheap: the first runs on the error path only, the second reads a few
thousand scores of a run with fractional scores before it stops.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from rankgate.errors import InputError

SWAP = "pass the qrels first, then the run"
# Grades as test collections write them: -2 (spam) to 4 (navigational), BEIR's 0-2.
GRADE_RANGE = (-4, 4)
_PROBE = 4096  # scores read before the full check: a run with fractional scores stops here
_BLOCK = 1 << 20  # then scores read at a time


def swap_hint(kind: str, unit: str | None = None, *, option: str | None = None) -> str:
    """The hint for input that looks like the other kind: ``kind`` is "run" or "qrels".

    ``option``: the command-line option that took the file, for a command that takes both files
    as options (``rankgate gate --qrels QRELS --run RUN``), where their order means nothing.

    >>> swap_hint("run", "line")
    'this looks like a run line: pass the qrels first, then the run'
    >>> swap_hint("qrels")
    'this looks like qrels: pass the qrels first, then the run'
    >>> swap_hint("qrels", "line", option="--run")
    'this looks like a qrels line: --run got a qrels file (the qrels go to --qrels)'
    """
    what = f"{kind} {unit}" if unit else kind
    article = "a " if kind == "run" or unit else ""
    if option is None:
        return f"this looks like {article}{what}: {SWAP}"
    goes = "the qrels go to --qrels" if kind == "qrels" else "the run goes to --run"
    return f"this looks like {article}{what}: {option} got a {kind} file ({goes})"


def name_option(error: InputError, options: Mapping[str, str]) -> InputError:
    """``error`` with its `swap_hint` naming the option that took the file instead of the order of
    arguments; ``options`` maps what the file was read as (``"run"``, ``"qrels"``) to that option.
    An error without the hint is returned as it is.

    >>> e = InputError("expected 6 fields; " + swap_hint("qrels", "line"), source="q.txt", line=1)
    >>> name_option(e, {"run": "--baseline-run", "qrels": "--qrels"}).message
    'expected 6 fields; this looks like a qrels line: --baseline-run got a qrels file (the qrels go to --qrels)'
    """
    for kind, read_as in (("qrels", "run"), ("run", "qrels")):
        if read_as in options:
            fixed = _swap_hint_replaced(error, kind, functools.partial(swap_hint, kind, option=options[read_as]))
            if fixed is not None:
                return fixed
    return error


def runs_only(error: InputError, command: str, qrels_option: str | None = None) -> InputError:
    """``error`` with its `swap_hint` saying that ``command`` reads runs where it got qrels (it takes
    no qrels there: "the qrels first" would mislead); ``qrels_option``: where its qrels go, if anywhere.

    >>> e = InputError("expected 6 fields; " + swap_hint("qrels", "line"), source="q.txt", line=1)
    >>> runs_only(e, "rankgate fuse", "--train-qrels").message
    'expected 6 fields; this looks like a qrels line: rankgate fuse reads runs here (qrels go to --train-qrels)'
    """
    where = f" (qrels go to {qrels_option})" if qrels_option else " and takes no qrels"
    reads = f"{command} reads runs here{where}"
    fixed = _swap_hint_replaced(error, "qrels", lambda unit: swap_hint("qrels", unit).replace(SWAP, reads))
    return error if fixed is None else fixed


def _swap_hint_replaced(error: InputError, kind: str, wording: Callable[[str | None], str]) -> InputError | None:
    """``error`` with its `swap_hint` for ``kind`` (a line's, or a file's) worded as ``wording(unit)``
    gives; None when its message holds no such hint."""
    for unit in ("line", None):
        hint = swap_hint(kind, unit)
        if hint in error.message:
            return _with_message(error, error.message.replace(hint, wording(unit)))
    return None


def with_hint(error: InputError, hint: str) -> InputError:
    """``error`` with ``; hint`` added to its message (same file, line and text)."""
    return _with_message(error, f"{error.message}; {hint}")


def _with_message(error: InputError, message: str) -> InputError:
    return InputError(message, source=error.source, line=error.line, text=error.text)


@contextlib.contextmanager
def run_hint(values: Callable[[], Any]) -> Iterator[None]:
    """Qrels read in the block: an `InputError` gets `run_as_qrels`'s hint when ``values()``
    (the values read as grades, asked for only then) look like a run's scores."""
    try:
        yield
    except InputError as e:
        hint = run_as_qrels(values())
        if hint is None:
            raise
        raise with_hint(e, hint) from None


def run_as_qrels(values: Any) -> str | None:
    """`swap_hint` for values read as grades when most of them are not whole numbers (scores,
    then); None otherwise. For the error path: it reads every value."""
    array = _numbers(values)
    if not len(array):
        return None
    with np.errstate(invalid="ignore"):
        fractional = np.isfinite(array) & (array != np.round(array))
    return swap_hint("run") if 2 * int(np.count_nonzero(fractional)) > len(array) else None


def grade_like(scores: np.ndarray) -> tuple[int, int] | None:
    """``(lowest, highest)`` when every score is a whole number within `GRADE_RANGE` (as qrels
    grades are), else None.

    Reads the first `_PROBE` scores, and the rest (in blocks: no temporary as large as the run)
    only while they pass, so a run with fractional scores costs microseconds.

    >>> grade_like(np.array([2.0, 0.0, 1.0, 0.0])), grade_like(np.array([12.5, 3.25]))
    ((0, 2), None)
    """
    if not len(scores):
        return None
    low, high = GRADE_RANGE
    found_low, found_high = high, low
    starts = [0, *range(_PROBE, len(scores), _BLOCK)]
    for start, stop in zip(starts, [*starts[1:], len(scores)], strict=True):
        part = scores[start:stop]
        part_low, part_high = part.min(), part.max()
        if not (low <= part_low and part_high <= high and bool((part == np.round(part)).all())):
            return None
        found_low, found_high = min(found_low, int(part_low)), max(found_high, int(part_high))
    return found_low, found_high


def mapping_values(mapping: dict[str, Any]) -> list[Any]:
    """The numbers of a ``{qid: {docid: value}}`` mapping (lists of doc ids hold none)."""
    out: list[Any] = []
    for docs in mapping.values():
        if isinstance(docs, dict):
            out.extend(docs.values())
    return out


def _numbers(values: Iterable[Any] | np.ndarray) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        return values
    out = []
    for v in values:
        if isinstance(v, bool):
            continue
        try:
            out.append(float(v))
        except (TypeError, ValueError, OverflowError):
            continue
    return np.asarray(out, dtype=np.float64)
