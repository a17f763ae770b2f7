"""The results store: every evaluation kept with its provenance, and the baselines.

One SQLite file by default (``.rankgate/results.db``, or ``$RANKGATE_STORE``); a
PostgreSQL database when given a ``postgresql://`` URL. Both use one versioned schema
(`rankgate.store.schema`). See docs/store.md.

>>> import rankgate
>>> from rankgate.store.provenance import Provenance
>>> res = rankgate.evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 1.0}}, ["P@1"])
>>> with open_store(":memory:") as store:
...     rid = store.add(res, name="bm25", provenance=Provenance(branch="main", commit="4f2a9c1"))
...     _ = store.set_baseline(rid)
...     base = store.resolve("baseline")
...     (base.id, base.name, base.branch, base.aggregate, base.per_query["q2"])
(1, 'bm25', 'main', {'P@1': 0.5}, {'P@1': 0.0})
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from rankgate.errors import InputError
from rankgate.store.connect import DEFAULT_STORE_PATH, STORE_ENV, parse_location
from rankgate.store.result import StoredResult, check_baseline_compatible

if TYPE_CHECKING:
    from rankgate.evaluation.results import Results
    from rankgate.store.provenance import Provenance
    from rankgate.store.sql import SQLStore

__all__ = [
    "DEFAULT_STORE_PATH",
    "STORE_ENV",
    "ResultStore",
    "StoredResult",
    "check_baseline_compatible",
    "open_store",
]


class ResultStore(Protocol):
    """What the gate, the CLI and reports need from a results store.

    `SQLStore` is the real one (SQLite or PostgreSQL); ``open_store(":memory:")`` gives the
    same code on an in-memory SQLite database, for unit tests.
    """

    url: str

    def add(
        self,
        results: Results,
        *,
        name: str | None = None,
        qrels: Any = None,
        qrels_fingerprint: str | None = None,
        provenance: Provenance | None = None,
        labels: Mapping[str, Any] | None = None,
        figures: Mapping[str, float] | None = None,
    ) -> int: ...

    def get(self, rid: int) -> StoredResult: ...

    def list(
        self, *, branch: str | None = None, name: str | None = None, limit: int | None = 20
    ) -> list[StoredResult]: ...

    def latest(self, *, branch: str | None = None, name: str | None = None) -> StoredResult | None: ...

    def set_baseline(self, rid: int, *, key: str = "default") -> StoredResult: ...

    def baseline(self, *, key: str = "default") -> StoredResult | None: ...

    def baselines(self) -> dict[str, int]: ...

    def resolve(self, ref: str | int, *, name: str | None = None) -> StoredResult: ...

    def close(self) -> None: ...


def open_store(
    url_or_path: str | os.PathLike[str] | None = None, *, create: bool = True, read_only: bool = False
) -> SQLStore:
    """Open (and create or migrate, if needed) the results store.

    Args:
        url_or_path: None for ``$RANKGATE_STORE`` or else ``.rankgate/results.db``; a path or
            ``sqlite:///path.db``; ``:memory:``; or ``postgresql://user:password@host:5432/db``.
        create: create a missing SQLite file (and its folder). With False, a missing file
            is an `InputError`.
        read_only: open it for reading only (implies ``create=False``): nothing is created
            or migrated, SQLite's journal mode is left as it is, a database that holds no
            rankgate schema is an `InputError`, writes raise `BackendError`, and a store in a
            folder this process cannot write can be read. For commands that only read.

    Returns:
        The store; close it with ``close()`` or use it as a context manager.

    Raises:
        InputError: a malformed location, a missing file with ``create=False`` or
            ``read_only``, or (``read_only``) a database without rankgate's schema.
        BackendError: the database cannot be reached or read, or its schema is newer.
    """
    from rankgate._version import __version__

    location = parse_location(url_or_path)  # first: it names the extra to install when SQLAlchemy is missing
    if location.path is not None:
        path = location.path
        if path.is_dir():
            raise InputError(f"store path {path} is a directory; give a file such as {path / 'results.db'}")
        if not path.exists():
            if not create or read_only:
                raise InputError(
                    f"no results store at {path} (it is created by the first `rankgate store add`, or by "
                    f"`rankgate gate` given --store or ${STORE_ENV}; set --store or ${STORE_ENV} to use another)"
                )
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise InputError(f"cannot create the folder of store {path} ({e.strerror})") from None
    from rankgate.store.sql import SQLStore

    return SQLStore(location, rankgate_version=__version__, read_only=read_only)
