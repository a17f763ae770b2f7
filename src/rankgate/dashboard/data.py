"""The dashboard's read-only view of a results store: summaries cached, per-query values on demand.

`StoreReader` opens the store read-only (`rankgate.store.base.open_store`) and keeps a summary
of every stored result (id, time, system, branch, commit, aggregates, labels, operational
figures) in memory, without the per-query blobs. Stored results are never changed or removed
by rankgate, so the cache is refreshed incrementally: each request asks the database for the
count and the largest id (one indexed query), reads only the rows added since, and reads
everything again when the count says that rows went away. Full results (with their per-query
values) are read one at a time, when a page needs them, and the last few are kept.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

from rankgate.dashboard.ops import operational
from rankgate.errors import InputError

if TYPE_CHECKING:
    from rankgate.store.result import StoredResult

VERDICTS = ("pass", "warn", "fail")
SUMMARY_COLUMNS = (
    "id",
    "created_at",
    "name",
    "branch",
    "commit",
    "qrels_fingerprint",
    "n_queries",
    "measures",
    "aggregate",
    "labels",
    "provenance",
)
OPTIONAL_COLUMNS = ("figures", "operational", "ops")  # read when the schema has them (figures: v2)
MAX_LIMIT = 20_000


@dataclass(frozen=True)
class Summary:
    """One stored result without its per-query values."""

    id: int
    created_at: datetime
    name: str
    branch: str | None
    commit: str | None
    qrels_fingerprint: str | None
    n_queries: int
    measures: list[str]
    aggregate: dict[str, float | None]
    labels: dict[str, Any]
    ops: dict[str, float] = field(default_factory=dict)

    @property
    def verdict(self) -> str | None:
        """The gate's verdict when a gate stored this result (``labels.verdict``)."""
        value = self.labels.get("verdict")
        return value if value in VERDICTS else None

    @property
    def when(self) -> str:
        return self.created_at.strftime("%Y-%m-%d %H:%M:%S")

    @property
    def title(self) -> str:
        """``#12 dense main@4f2a9c1e``."""
        where = "@".join(b for b in (self.branch or "", (self.commit or "")[:8]) if b)
        return " ".join(b for b in (f"#{self.id}", self.name, where) if b)

    def tags(self) -> list[str]:
        """Labels as ``key=value`` strings, for filtering and display."""
        return [f"{k}={_label_text(v)}" for k, v in sorted(self.labels.items())]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": self.created_at.isoformat(),
            "name": self.name,
            "branch": self.branch,
            "commit": self.commit,
            "qrels_fingerprint": self.qrels_fingerprint,
            "n_queries": self.n_queries,
            "measures": list(self.measures),
            "aggregate": {k: _finite(v) for k, v in self.aggregate.items()},
            "labels": dict(self.labels),
            "verdict": self.verdict,
            "operational": dict(self.ops),
        }


@dataclass(frozen=True)
class Filters:
    """What the overview and the lists show: branch, system name, label, date range, newest N."""

    branch: str | None = None
    name: str | None = None
    tag: str | None = None
    since: date | None = None
    until: date | None = None
    limit: int = 1000

    @classmethod
    def parse(cls, params: Mapping[str, str], *, default_limit: int = 1000) -> Filters:
        """From query parameters; empty values mean no filter.

        Raises:
            InputError: a date that is not YYYY-MM-DD, or a limit that is not a number in range.
        """

        def text(key: str) -> str | None:
            value = (params.get(key) or "").strip()
            return value or None

        limit = text("limit")
        try:
            n = int(limit) if limit is not None else default_limit
        except ValueError:
            raise InputError(f"limit must be a whole number. Got {limit!r} instead.") from None
        if not 1 <= n <= MAX_LIMIT:
            raise InputError(f"limit must be between 1 and {MAX_LIMIT}. Got {n} instead.")
        return cls(
            branch=text("branch"),
            name=text("name"),
            tag=text("tag"),
            since=_date(text("since"), "since"),
            until=_date(text("until"), "until"),
            limit=n,
        )

    def matches(self, s: Summary) -> bool:
        if self.branch is not None and s.branch != self.branch:
            return False
        if self.name is not None and s.name != self.name:
            return False
        if self.tag is not None and not _has_tag(s, self.tag):
            return False
        day = s.created_at.date()
        if self.since is not None and day < self.since:
            return False
        return self.until is None or day <= self.until

    def to_dict(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "name": self.name,
            "tag": self.tag,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "limit": self.limit,
        }


def _date(value: str | None, key: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InputError(f"{key} must be a date as YYYY-MM-DD. Got {value[:40]!r} instead.") from None


def _has_tag(s: Summary, tag: str) -> bool:
    key, sep, value = tag.partition("=")
    if key not in s.labels:
        return False
    return not sep or _label_text(s.labels[key]) == value


def _label_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _finite(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value


class StoreReader:
    """Summaries of every stored result (cached, refreshed incrementally) and full results on demand.

    Args:
        url: the store's URL or path; opened read-only (a missing file is an `InputError`).
        keep: how many full results (with per-query values) to keep decoded.
    """

    def __init__(self, url: str | None, *, keep: int = 16) -> None:
        from rankgate.store.base import open_store
        from rankgate.store.connect import create_engine

        self.store = open_store(url, read_only=True)
        if self.store.location.path is None and self.store.location.dialect == "sqlite":
            self.store.close()
            raise InputError("an in-memory store is empty and cannot be shared: give a store file or URL")
        self.url = self.store.url
        self._engine = create_engine(self.store.location, read_only=True)
        self._lock = threading.Lock()
        self._summaries: dict[int, Summary] = {}
        self._ordered: list[Summary] = []
        self._max_id = 0
        self._full: OrderedDict[int, StoredResult] = OrderedDict()
        self._derived: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._keep = keep

    def close(self) -> None:
        self._engine.dispose()
        self.store.close()

    # -- summaries ------------------------------------------------------------------------
    def summaries(self) -> list[Summary]:
        """Every stored result, oldest first (by time, then id)."""
        import sqlalchemy as sa

        from rankgate.store.connect import backend_errors
        from rankgate.store.schema import results_table as t

        with backend_errors(self.store.location, "list results"), self._engine.connect() as conn:
            count, top = conn.execute(sa.select(sa.func.count(t.c.id), sa.func.max(t.c.id))).one()
            with self._lock:
                if int(count or 0) == len(self._summaries) and int(top or 0) == self._max_id:
                    return self._ordered
                start = self._max_id if int(count or 0) > len(self._summaries) else 0
                rows = conn.execute(self._select().where(t.c.id > start)).mappings().all()
                if start == 0:
                    self._summaries = {}
                for row in rows:
                    s = _summary(row)
                    self._summaries[s.id] = s
                self._max_id = max(self._summaries, default=0)
                self._ordered = sorted(self._summaries.values(), key=lambda s: (s.created_at, s.id))
                return self._ordered

    @staticmethod
    def _select() -> Any:
        import sqlalchemy as sa

        from rankgate.store.schema import results_table as t

        columns = [t.c[name] for name in SUMMARY_COLUMNS]
        columns += [t.c[name] for name in OPTIONAL_COLUMNS if name in t.c]
        return sa.select(*columns).order_by(t.c.id)

    def summary(self, rid: int) -> Summary | None:
        """The summary of result ``rid``, or None."""
        self.summaries()  # refreshes the cache
        return self._summaries.get(rid)

    def filtered(self, filters: Filters) -> tuple[list[Summary], int]:
        """The newest ``filters.limit`` results that match (oldest first), and how many match in all."""
        matching = [s for s in self.summaries() if filters.matches(s)]
        return matching[-filters.limit :], len(matching)

    def facets(self) -> dict[str, list[str]]:
        """Branches, system names and labels (``key=value``) present, for the filter lists."""
        branches: set[str] = set()
        names: set[str] = set()
        tags: set[str] = set()
        for s in self.summaries():
            if s.branch:
                branches.add(s.branch)
            names.add(s.name)
            tags.update(t for t in s.tags() if len(t) <= 80)
        return {"branches": sorted(branches), "names": sorted(names), "tags": sorted(tags)[:500]}

    def baselines(self) -> dict[str, int]:
        return self.store.baselines()

    # -- full results -----------------------------------------------------------------------
    def result(self, rid: int) -> StoredResult:
        """The stored result ``rid`` with its per-query values (`InputError` when there is none)."""
        with self._lock:
            if rid in self._full:
                self._full.move_to_end(rid)
                return self._full[rid]
        found = self.store.get(rid)
        _ = found.values  # decode now, outside any page's timing of later calls
        with self._lock:
            self._full[rid] = found
            while len(self._full) > self._keep:
                self._full.popitem(last=False)
        return found

    def derived(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """``make()`` computed once per ``key`` (e.g. confidence intervals of a result), the last few kept."""
        with self._lock:
            if key in self._derived:
                self._derived.move_to_end(key)
                return self._derived[key]
        value = make()
        with self._lock:
            self._derived[key] = value
            while len(self._derived) > 4 * self._keep:
                self._derived.popitem(last=False)
        return value


def _summary(row: Any) -> Summary:
    """A `Summary` from a row mapping of `SUMMARY_COLUMNS`."""
    when: datetime = row["created_at"]
    when = when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)
    measures = [str(m) for m in row["measures"] or []]
    aggregate = dict(row["aggregate"] or {})
    labels = row["labels"] if isinstance(row["labels"], dict) else {}
    return Summary(
        id=int(row["id"]),
        created_at=when,
        name=str(row["name"]),
        branch=row["branch"],
        commit=row["commit"],
        qrels_fingerprint=row["qrels_fingerprint"],
        n_queries=int(row["n_queries"]),
        measures=measures,
        aggregate={m: _number(aggregate.get(m)) for m in measures},
        labels=labels,
        ops=operational(row),
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None
