"""`SQLStore`: the results store on SQLite or PostgreSQL, through SQLAlchemy Core."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from types import TracebackType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from rankgate.errors import BackendError, InputError
from rankgate.store import codec as store_codec
from rankgate.store import schema as store_schema
from rankgate.store.connect import WRITE_OPTION, StoreLocation, backend_errors, create_engine
from rankgate.store.fingerprint import qrels_fingerprint as compute_qrels_fingerprint
from rankgate.store.fingerprint import query_fingerprint
from rankgate.store.provenance import Provenance, detect
from rankgate.store.result import StoredResult, figures_of, plain
from rankgate.store.schema import baselines_table, ensure_schema, read_version, results_table

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from rankgate.evaluation.results import Results

PerQuery = tuple[list[str], Any]  # query ids and the float64 matrix

PG_SCHEMA_LOCK = 0x72616E6B67617465  # "rankgate": pg_advisory_xact_lock key while creating/migrating
MAX_NAME = 255
_SUMMARY_COLUMNS = [c for c in results_table.c if c.name not in ("per_query_ids", "per_query_values")]


class SQLStore:
    """Stored evaluations and baselines in one SQLite file or PostgreSQL database.

    Use `rankgate.store.base.open_store` to get one. Every write is one transaction; SQLite
    writers queue on the file's lock (busy timeout), so concurrent processes all land.
    Opened with ``read_only=True``, it changes nothing: a database without rankgate's schema
    is refused, and every write raises a `BackendError`.
    """

    def __init__(self, location: StoreLocation, *, rankgate_version: str, read_only: bool = False) -> None:
        self.location = location
        self.url = location.display
        self.read_only = read_only
        self._engine = create_engine(location, read_only=read_only)
        self._closed = False
        # Tests set this to act (sleep, crash) inside a write transaction, before it commits.
        self._before_commit: Callable[[], None] | None = None
        try:
            self.opened_schema_version = self._open_schema(rankgate_version)
        except BaseException:
            self._engine.dispose()
            raise

    def _open_schema(self, rankgate_version: str) -> int:
        with self._read("open the store") as conn:
            found = read_version(conn)
            if self.read_only:
                _check_readable(found, self.url)
            if found is not None and found >= store_schema.SCHEMA_VERSION:
                # Up to date (or newer: refused). Only reads, so opening never waits for a writer.
                return ensure_schema(conn, self.url, rankgate_version=rankgate_version)
        with self._write("open the store") as conn:  # create or migrate, one process at a time
            if self.location.dialect == "postgresql":
                conn.execute(sa.select(sa.func.pg_advisory_xact_lock(PG_SCHEMA_LOCK)))
            return ensure_schema(conn, self.url, rankgate_version=rankgate_version)

    # -- plumbing ----------------------------------------------------------------------
    @contextlib.contextmanager
    def _transaction(self, action: str, *, write: bool) -> Iterator[Connection]:
        """One transaction; database errors become a `BackendError` saying what failed."""
        if self._closed:
            raise BackendError(f"results store {self.url} is closed")
        if write and self.read_only:
            raise BackendError(f"results store {self.url} was opened read-only: cannot {action}")
        with backend_errors(self.location, action), self._engine.connect() as conn:
            if write:
                conn.execution_options(**{WRITE_OPTION: True})  # SQLite: BEGIN IMMEDIATE
            with conn.begin():
                yield conn

    def _write(self, action: str) -> contextlib.AbstractContextManager[Connection]:
        return self._transaction(action, write=True)

    def _read(self, action: str) -> contextlib.AbstractContextManager[Connection]:
        return self._transaction(action, write=False)

    def close(self) -> None:
        """Release the connections; the store object cannot be used afterwards."""
        self._closed = True
        self._engine.dispose()

    def __enter__(self) -> SQLStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SQLStore {self.url}>"

    # -- writing -----------------------------------------------------------------------
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
    ) -> int:
        """Record one evaluation, in one transaction; returns its id.

        Args:
            results: what `rankgate.evaluate` returned.
            name: the system's name (default: the run's name).
            qrels: the judgments evaluated against (a `Qrels`, path or dict); their fingerprint is kept.
            qrels_fingerprint: the fingerprint, when the qrels themselves are not at hand.
            provenance: time, commit, branch, CI run (default: `rankgate.store.provenance.detect`).
            labels: free JSON-able key/values, e.g. ``{"source": "gate", "config": "gates.yaml"}``.
            figures: operational figures measured with it, e.g. ``{"latency_p95_ms": 12.5, "qps": 80}``
                (finite numbers; see `rankgate.gate.figures`).

        Raises:
            InputError: bad arguments (e.g. a fingerprint that contradicts ``qrels``).
            BackendError: the store could not be written.
        """
        row = self._row(results, name, qrels, qrels_fingerprint, provenance, labels)
        row["figures"] = _check_figures(figures)
        with self._write("add a result") as conn:
            new_id = conn.execute(sa.insert(results_table).values(**row)).inserted_primary_key
            if self._before_commit is not None:
                self._before_commit()
        assert new_id is not None  # an INSERT always has one
        return int(new_id[0])

    def _row(
        self,
        results: Results,
        name: str | None,
        qrels: Any,
        fingerprint: str | None,
        provenance: Provenance | None,
        labels: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        from rankgate.evaluation.results import Results

        if not isinstance(results, Results):
            raise InputError(f"store.add() takes the Results of rankgate.evaluate, not a {type(results).__name__}")
        name = name if name is not None else (results.run_name or "run")
        _check_text("name", name, MAX_NAME, required=True)
        if qrels is not None:
            from rankgate.io.coerce import as_qrels

            computed = compute_qrels_fingerprint(as_qrels(qrels))
            if fingerprint is not None and fingerprint != computed:
                raise InputError(
                    f"qrels_fingerprint {fingerprint[:8]}.. does not match the qrels given ({computed[:8]}..)"
                )
            fingerprint = computed
        if fingerprint is not None:
            _check_text("qrels_fingerprint", fingerprint, 64, required=True)
        prov = provenance if provenance is not None else detect()
        if not isinstance(prov, Provenance):
            raise InputError(f"provenance must be a Provenance, not a {type(prov).__name__}")
        _check_text("branch", prov.branch, MAX_NAME)
        _check_text("commit", prov.commit, 64)
        if labels is not None and not isinstance(labels, Mapping):
            raise InputError(f"labels must be a dict of key/values, not a {type(labels).__name__}")
        try:
            # Values JSON cannot hold (paths, dates) are kept as their str().
            stored_labels = json.loads(json.dumps(plain(dict(labels or {})), default=str, allow_nan=False))
        except (TypeError, ValueError) as e:
            raise InputError(f"labels must be JSON-able key/values ({e})") from None
        ids, values = store_codec.encode(results.query_ids, results.values)
        return {
            "created_at": self._to_db_time(prov.created_at),
            "name": name,
            "commit": prov.commit,
            "branch": prov.branch,
            "ci_url": prov.ci_url,
            "qrels_fingerprint": fingerprint,
            "query_fingerprint": query_fingerprint(results.query_ids),
            "n_queries": len(results.query_ids),
            "measures": results.names,
            "aggregate": plain(results.aggregate),
            "queries": plain(results.queries),
            "settings": plain(results.settings),
            "versions": plain(results.versions),
            "labels": stored_labels,
            "provenance": plain(prov.to_dict()),
            "warnings": list(results.warnings),
            "per_query_codec": store_codec.CODEC,
            "per_query_ids": ids,
            "per_query_values": values,
        }

    def set_baseline(self, rid: int, *, key: str = "default") -> StoredResult:
        """Make result ``rid`` the baseline for ``key`` (one baseline per key); returns it."""
        rid = _check_id(rid)
        _check_text("key", key, MAX_NAME, required=True)
        with self._write("set the baseline") as conn:
            if conn.execute(sa.select(results_table.c.id).where(results_table.c.id == rid)).first() is None:
                raise InputError(f"no stored result {rid} in {self.url}")
            values = {"key": key, "result_id": rid, "set_at": self._to_db_time(datetime.now(timezone.utc))}
            from sqlalchemy.dialects import postgresql, sqlite

            dialect: Any = postgresql if self.location.dialect == "postgresql" else sqlite
            statement = dialect.insert(baselines_table).values(**values)
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[baselines_table.c.key],
                    set_={"result_id": statement.excluded.result_id, "set_at": statement.excluded.set_at},
                )
            )
            if self._before_commit is not None:
                self._before_commit()
        return self.get(rid)

    # -- reading -----------------------------------------------------------------------
    def get(self, rid: int) -> StoredResult:
        """The stored result ``rid``, with its per-query values.

        Raises:
            InputError: there is no such result.
        """
        rid = _check_id(rid)
        with self._read(f"read result {rid}") as conn:
            row = conn.execute(sa.select(results_table).where(results_table.c.id == rid)).first()
        if row is None:
            raise InputError(f"no stored result {rid} in {self.url}")
        ids, values = self._decode(row.id, row)
        return self._result(row, lambda: (ids, values))

    def list(self, *, branch: str | None = None, name: str | None = None, limit: int | None = 20) -> list[StoredResult]:
        """Stored results, newest first (by time, then id); per-query values load on first use."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InputError(f"The 'limit' parameter must be an int >= 1 or None. Got {limit!r} instead.")
        query = sa.select(*_SUMMARY_COLUMNS)
        if branch is not None:
            query = query.where(results_table.c.branch == branch)
        if name is not None:
            query = query.where(results_table.c.name == name)
        query = query.order_by(results_table.c.created_at.desc(), results_table.c.id.desc()).limit(limit)
        with self._read("list results") as conn:
            rows = conn.execute(query).all()
        return [self._result(row, self._loader(row.id)) for row in rows]

    def latest(self, *, branch: str | None = None, name: str | None = None) -> StoredResult | None:
        """The newest result (on ``branch``, named ``name``), or None."""
        found = self.list(branch=branch, name=name, limit=1)
        return found[0] if found else None

    def baseline(self, *, key: str = "default") -> StoredResult | None:
        """The baseline set for ``key``, or None."""
        _check_text("key", key, MAX_NAME, required=True)
        with self._read("read the baseline") as conn:
            rid = conn.execute(sa.select(baselines_table.c.result_id).where(baselines_table.c.key == key)).scalar()
        return None if rid is None else self.get(int(rid))

    def baselines(self) -> dict[str, int]:
        """Every baseline key and the id of its result."""
        with self._read("read the baselines") as conn:
            rows = conn.execute(sa.select(baselines_table.c.key, baselines_table.c.result_id)).all()
        return {str(k): int(v) for k, v in sorted(rows)}

    def resolve(self, ref: str | int, *, name: str | None = None) -> StoredResult:
        """A result from a reference: ``17``, ``latest``, ``latest:BRANCH``, ``baseline``, ``baseline:KEY``.

        Args:
            ref: the reference.
            name: with ``latest``, only results of this system name.

        Raises:
            InputError: a malformed reference, or nothing matches.
        """
        if isinstance(ref, int) and not isinstance(ref, bool):
            return self.get(ref)
        text = str(ref).strip()
        if text.lstrip("#").isdigit():
            return self.get(int(text.lstrip("#")))
        head, _, arg = text.partition(":")
        if head == "latest" and (arg or not _):
            found = self.latest(branch=arg or None, name=name)
            if found is None:
                where = f" on branch {arg!r}" if arg else ""
                named = f" named {name!r}" if name else ""
                raise InputError(f"no stored result{named}{where} in {self.url}")
            return found
        if head == "baseline" and (arg or not _):
            key = arg or "default"
            base = self.baseline(key=key)
            if base is None:
                raise InputError(
                    f"no baseline set for key {key!r} in {self.url}; set one with: "
                    f"rankgate store baseline set ID" + (f" --key {key}" if key != "default" else "")
                )
            return base
        raise InputError(
            f"cannot read result reference {text!r}: use an id (17), latest, latest:BRANCH, baseline or baseline:KEY"
        )

    # -- rows <-> results ----------------------------------------------------------------
    def _loader(self, rid: int) -> Callable[[], PerQuery]:
        def load() -> PerQuery:
            if self._closed:
                raise BackendError(
                    f"results store {self.url} was closed before result {rid}'s per-query values were read"
                )
            with self._read(f"read result {rid}") as conn:
                row = conn.execute(
                    sa.select(
                        results_table.c.id,
                        results_table.c.n_queries,
                        results_table.c.measures,
                        results_table.c.per_query_codec,
                        results_table.c.per_query_ids,
                        results_table.c.per_query_values,
                    ).where(results_table.c.id == rid)
                ).first()
            if row is None:
                raise InputError(f"no stored result {rid} in {self.url}")
            return self._decode(rid, row)

        return load

    def _decode(self, rid: int, row: Any) -> PerQuery:
        return store_codec.decode(
            row.per_query_ids,
            row.per_query_values,
            n_queries=int(row.n_queries),
            n_measures=len(row.measures),
            codec=row.per_query_codec,
            where=f"results store {self.url}, result {rid}",
        )

    def _result(self, row: Any, load: Callable[[], PerQuery]) -> StoredResult:
        measures = list(row.measures)
        aggregate = dict(row.aggregate)
        return StoredResult(
            id=int(row.id),
            created_at=self._from_db_time(row.created_at),
            name=row.name,
            commit=row.commit,
            branch=row.branch,
            ci_url=row.ci_url,
            qrels_fingerprint=row.qrels_fingerprint,
            query_fingerprint=row.query_fingerprint,
            settings=dict(row.settings),
            measures=measures,
            aggregate={m: aggregate.get(m) for m in measures},
            queries=dict(row.queries),
            versions=dict(row.versions),
            labels=dict(row.labels),
            provenance=dict(row.provenance),
            warnings=list(row.warnings),
            n_queries=int(row.n_queries),
            figures=figures_of(getattr(row, "figures", None), row.labels),
            _load=load,
        )

    def _to_db_time(self, when: datetime) -> datetime:
        when = when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)
        # SQLite has no time zones: keep UTC wall time; PostgreSQL's timestamptz takes the aware value.
        return when.replace(tzinfo=None) if self.location.dialect == "sqlite" else when

    @staticmethod
    def _from_db_time(when: datetime) -> datetime:
        return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)


def _check_readable(found: int | None, where: str) -> None:
    """Refuse, without changing it, a database a read-only opening cannot use as it is."""
    if found is None:
        raise InputError(
            f"{where}: holds no rankgate results store (no {store_schema.meta_table.name} table with a "
            "schema_version); left unchanged. Give the store that `rankgate store add` or `rankgate gate` wrote"
        )
    if found < store_schema.SCHEMA_VERSION:
        raise BackendError(
            f"the store {where} has schema version {found}, older than this rankgate's "
            f"({store_schema.SCHEMA_VERSION}): a command that writes (rankgate store add) upgrades it"
        )


def _check_figures(figures: Mapping[str, float] | None) -> dict[str, float] | None:
    if figures is None:
        return None
    import math

    if not isinstance(figures, Mapping) or not all(
        isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        for k, v in figures.items()
    ):
        raise InputError(f"figures must map names to finite numbers. Got {str(figures)[:80]!r} instead.")
    return {k: float(v) for k, v in figures.items()} or None


def _check_id(rid: Any) -> int:
    if isinstance(rid, bool) or not isinstance(rid, int) or rid < 1:
        raise InputError(f"a result id is an int >= 1. Got {rid!r} instead.")
    return int(rid)


def _check_text(what: str, value: str | None, limit: int, *, required: bool = False) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str) or (required and not value.strip()):
        raise InputError(f"{what} must be a non-empty string. Got {value!r} instead.")
    if len(value) > limit:
        raise InputError(f"{what} is longer than {limit} characters: {value[:40]!r}...")
