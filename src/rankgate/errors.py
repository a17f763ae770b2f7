"""Exceptions raised by rankgate.

The tree::

    RankgateError
    ├── InputError(ValueError)     bad data: format, schema, duplicates (carries file:line)
    │   └── DuplicateError         duplicate (query, doc) pairs, with the remedy apart
    ├── MeasureError(ValueError)   unknown measure name, bad syntax or parameter
    ├── ConfigError(ValueError)    bad configuration (carries the key path)
    └── BackendError               a judge, retriever or store failed
        └── MissingExtraError      an optional dependency is missing; names the extra to install
                                   (rankgate.extras; also an ImportError)
    Interrupted(KeyboardInterrupt) Ctrl-C stopped work whose results are stored as they come
                                   (retrieve's answers, label's judgments): how many, and where

The CLI maps every `RankgateError` to a message on stderr and exit code 2
(`BackendError` also exits 2: the run could not be carried out), and `Interrupted` to a line
saying what is kept and that the same command resumes (exit 130).
"""

from __future__ import annotations


class RankgateError(Exception):
    """Base class of every error rankgate raises on purpose."""

    exit_code = 2


class InputError(RankgateError, ValueError):
    """Input data is malformed or inconsistent.

    Args:
        message: what is wrong, and how to fix it where we know.
        source: the file (or "<dict>", "<DataFrame>") the data came from.
        line: 1-based line number in ``source``, when known.
        text: the offending text (shortened in the message).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        text: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.text = text
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.source is not None:
            where = self.source if self.line is None else f"{self.source}:{self.line}"
            where += ": "
        shown = ""
        if self.text is not None:
            snippet = self.text if len(self.text) <= 120 else self.text[:117] + "..."
            shown = f" (got {snippet!r})"
        return f"{where}{self.message}{shown}"


class DuplicateError(InputError):
    """Duplicate (query, doc) pairs in a run or qrels.

    ``remedy`` says how to keep one copy: by default in the library's words (`LIBRARY_REMEDY`);
    the CLI words it for the command that ran (``--duplicates``, or none), and a caller whose
    command words it otherwise (``rankgate trec_eval``) raises `with_remedy` of its own.
    """

    LIBRARY_REMEDY = "pass duplicates='first' or 'max' to keep one copy"

    def __init__(self, problem: str, *, remedy: str = LIBRARY_REMEDY) -> None:
        self.problem = problem
        self.remedy = remedy
        super().__init__(f"{problem}; {remedy}")

    def with_remedy(self, remedy: str) -> DuplicateError:
        return DuplicateError(self.problem, remedy=remedy)


class MeasureError(RankgateError, ValueError):
    """A measure name or parameter is unknown or malformed."""


class ConfigError(RankgateError, ValueError):
    """A configuration value is wrong; ``key_path`` says where (e.g. ``gates[1].threshold``)."""

    def __init__(self, message: str, *, key_path: str | None = None, source: str | None = None):
        self.key_path = key_path
        self.source = source
        prefix = ""
        if source:
            prefix += f"{source}: "
        if key_path:
            prefix += f"{key_path}: "
        super().__init__(prefix + message)


class BackendError(RankgateError):
    """An external part (judge endpoint, model, index, store) failed."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped work whose results are stored as they arrive: ``saved`` of the ``total``
    ``noun`` (answers, judgments, verdicts) are in ``store``, so the same call asks only for the rest.

    A `KeyboardInterrupt`, so that a caller that does not know it still stops. ``store`` is None
    when nothing is kept (no cache, an in-memory store); ``in_flight`` requests had been sent and
    their answers were not stored; ``refresh``: the call asked everything again (a rerun with it
    would too).
    """

    def __init__(
        self,
        saved: int = 0,
        total: int = 0,
        store: str | None = None,
        *,
        noun: str,
        in_flight: int = 0,
        refresh: bool = False,
    ) -> None:
        super().__init__()
        self.saved, self.total, self.store, self.noun = saved, total, store, noun
        self.in_flight, self.refresh = in_flight, refresh

    def __str__(self) -> str:  # from the fields, which the caller may fill in later (the noun, the counts)
        return f"interrupted: {self.saved:,} of {self.total:,} {self.noun} saved"
