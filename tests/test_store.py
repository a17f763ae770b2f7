"""The results store on SQLite: round trip, listing, baselines, references, schema, errors."""

from __future__ import annotations

import math
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

import rankgate
from rankgate.errors import BackendError, InputError
from rankgate.evaluation.results import Results
from rankgate.measures.parse import parse_measure
from rankgate.store import schema as store_schema
from rankgate.store.base import StoredResult, check_baseline_compatible, open_store
from rankgate.store.fingerprint import qrels_fingerprint, query_fingerprint
from rankgate.store.provenance import Provenance

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 1}, "q2": {"d4": 2, "d5": 0}, "q3": {"d7": 1}}
RUN = {"q1": {"d2": 3.0, "d1": 2.0, "d9": 1.0}, "q2": {"d4": 5.0, "d5": 4.0}}
T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


def evaluated(measures: tuple[str, ...] = ("P@2", "RR", "NumRel"), run: dict | None = None) -> Results:
    return rankgate.evaluate(QRELS, run or RUN, list(measures))


def prov(branch: str | None = "main", minutes: int = 0, commit: str | None = "4f2a9c1e") -> Provenance:
    return Provenance(created_at=T0 + timedelta(minutes=minutes), branch=branch, commit=commit)


def random_results(n_queries: int, n_measures: int = 10, seed: int = 0) -> Results:
    names = ["P@1", "P@5", "P@10", "R@5", "R@10", "R@100", "nDCG@10", "RR@10", "AP", "nDCG@100"][:n_measures]
    rng = np.random.default_rng(seed)
    values = rng.random((n_queries, n_measures))
    values[::7] = 1 / 3  # some exact fractions, some zeros
    values[::11] = 0.0
    return Results(
        measures=[parse_measure(n) for n in names],
        query_ids=[f"q{i}" for i in range(n_queries)],
        values=values,
        queries={"evaluated": n_queries, "missing_from_run": 0, "run_only": 0, "no_relevant": 0},
        settings={"queries": "qrels", "ties": "trec", "rel": 1},
        run_name="synthetic",
        versions={"rankgate": rankgate.__version__},
    )


@pytest.fixture
def store(tmp_path: Path):
    with open_store(tmp_path / "results.db") as s:
        yield s


# -- round trip ------------------------------------------------------------------------------
def test_round_trip_is_exact(store) -> None:
    res = evaluated()
    rid = store.add(res, name="bm25", qrels=QRELS, provenance=prov(), labels={"source": "test", "k": 1.2})
    got = store.get(rid)
    assert isinstance(got, StoredResult)
    assert (got.id, got.name, got.branch, got.commit) == (rid, "bm25", "main", "4f2a9c1e")
    assert got.created_at == T0 and got.created_at.tzinfo is not None
    assert got.measures == ["P@2", "RR", "NumRel"]
    assert got.aggregate == {"P@2": 1 / 3, "RR": 0.5, "NumRel": 4.0}
    assert got.per_query == {
        "q1": {"P@2": 0.5, "RR": 0.5, "NumRel": 2.0},
        "q2": {"P@2": 0.5, "RR": 1.0, "NumRel": 1.0},
        "q3": {"P@2": 0.0, "RR": 0.0, "NumRel": 1.0},
    }
    assert got.queries == {"evaluated": 3, "missing_from_run": 1, "run_only": 0, "no_relevant": 0}
    assert got.settings == res.settings and got.versions == res.versions
    assert got.labels == {"source": "test", "k": 1.2}
    assert got.qrels_fingerprint == qrels_fingerprint(rankgate.Qrels.from_dict(QRELS))
    assert got.query_fingerprint == query_fingerprint(["q1", "q2", "q3"])
    assert got.warnings == res.warnings and got.warnings  # q3 is missing from the run
    assert got.provenance["branch"] == "main" and got.provenance["created_at"] == T0.isoformat()

    back = got.to_results()
    assert back.query_ids == res.query_ids
    assert back.values.dtype == np.float64
    assert back.values.tobytes() == res.values.tobytes()  # bit for bit
    assert back.aggregate == res.aggregate
    assert back.names == res.names and back.measures == res.measures
    assert back.run_name == "bm25"


def test_round_trip_of_10000_queries_is_bitwise_and_fast(store) -> None:
    res = random_results(10_000)
    start = time.perf_counter()
    rid = store.add(res, provenance=prov())
    elapsed = time.perf_counter() - start
    back = store.get(rid).to_results()
    assert back.values.tobytes() == res.values.tobytes()
    assert back.query_ids == res.query_ids
    assert back.aggregate == res.aggregate
    assert elapsed < 1.0, f"adding 10,000 queries x 10 measures took {elapsed:.2f} s"


def test_parameterised_measures_round_trip(store) -> None:
    res = rankgate.evaluate(QRELS, RUN, ["P@2", "nDCG(gain=exp)@10", "R@5"], rel=2)
    back = store.get(store.add(res, provenance=prov())).to_results()
    assert back.names == ["P(rel=2)@2", "nDCG(gain=exp)@10", "R(rel=2)@5"]
    assert back.measures == res.measures
    assert back["R(rel=2)@5"] == res["R(rel=2)@5"]


def test_zero_query_result_stores_null_aggregate(store) -> None:
    res = Results(
        measures=[parse_measure("P@1")],
        query_ids=[],
        values=np.zeros((0, 1)),
        queries={"evaluated": 0, "missing_from_run": 0, "run_only": 0, "no_relevant": 0},
        settings={},
    )
    got = store.get(store.add(res, name="empty", provenance=prov()))
    assert got.aggregate == {"P@1": None}
    assert got.to_dict()["aggregate"] == {"P@1": None}
    assert math.isnan(got.to_results().aggregate["P@1"])


def test_default_name_and_detected_provenance(store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKGATE_BRANCH", "feature/x")
    monkeypatch.setenv("RANKGATE_COMMIT", "abc123")
    before = datetime.now(timezone.utc)
    got = store.get(store.add(rankgate.evaluate(QRELS, rankgate.Run.from_dict(RUN, name="dense"), ["P@2"])))
    assert got.name == "dense"
    assert (got.branch, got.commit) == ("feature/x", "abc123")
    assert before - timedelta(seconds=1) <= got.created_at <= datetime.now(timezone.utc) + timedelta(seconds=1)


def test_to_dict_is_json_able(store) -> None:
    import json

    got = store.get(store.add(evaluated(), name="bm25", provenance=prov()))
    data = json.loads(json.dumps(got.to_dict(per_query=True), allow_nan=False))
    assert data["id"] == got.id and data["created_at"] == "2024-05-01T12:00:00+00:00"
    assert data["per_query"]["q2"] == {"P@2": 0.5, "RR": 1.0, "NumRel": 1.0}
    assert "per_query" not in got.to_dict()


# -- listing -------------------------------------------------------------------------------
def test_list_is_newest_first_and_filters(store) -> None:
    a = store.add(evaluated(), name="bm25", provenance=prov("main", 0))
    b = store.add(evaluated(), name="dense", provenance=prov("main", 10))
    c = store.add(evaluated(), name="dense", provenance=prov("feature", 5))
    d = store.add(evaluated(), name="bm25", provenance=prov("main", 10))  # same time as b: id breaks the tie
    assert [r.id for r in store.list()] == [d, b, c, a]
    assert [r.id for r in store.list(branch="main")] == [d, b, a]
    assert [r.id for r in store.list(name="dense")] == [b, c]
    assert [r.id for r in store.list(branch="main", name="bm25", limit=1)] == [d]
    assert [r.id for r in store.list(limit=None)] == [d, b, c, a]
    assert store.list(branch="nope") == []
    assert store.latest(branch="feature").id == c
    assert store.latest(name="dense").id == b
    assert store.latest(branch="nope") is None


def test_listed_results_load_per_query_values_on_use(store) -> None:
    res = random_results(500)
    store.add(res, provenance=prov())
    listed = store.list()[0]
    assert listed.n_queries == 500
    assert listed.to_results().values.tobytes() == res.values.tobytes()


def test_listed_results_after_close_say_so(tmp_path: Path) -> None:
    s = open_store(tmp_path / "r.db")
    s.add(evaluated(), provenance=prov())
    listed = s.list()[0]
    s.close()
    with pytest.raises(BackendError, match="was closed before result 1's per-query values were read"):
        listed.to_results()
    with pytest.raises(BackendError, match="is closed"):
        s.list()


@pytest.mark.parametrize("limit", [0, -1, 1.5, True])
def test_list_rejects_bad_limit(store, limit) -> None:
    with pytest.raises(InputError, match="'limit' parameter must be an int >= 1"):
        store.list(limit=limit)


# -- baselines and references --------------------------------------------------------------
def test_baselines_one_per_key(store) -> None:
    a = store.add(evaluated(), name="bm25", provenance=prov("main", 0))
    b = store.add(evaluated(), name="dense", provenance=prov("main", 1))
    assert store.baseline() is None
    assert store.set_baseline(a).id == a
    assert store.baseline().id == a
    store.set_baseline(b)  # replaces
    store.set_baseline(a, key="nightly")
    assert store.baseline().id == b
    assert store.baseline(key="nightly").id == a
    assert store.baselines() == {"default": b, "nightly": a}
    with pytest.raises(InputError, match=r"no stored result 99 in .*results\.db"):
        store.set_baseline(99)
    assert store.baseline().id == b  # unchanged by the failed call


def test_resolve_references(store) -> None:
    a = store.add(evaluated(), name="bm25", provenance=prov("main", 0))
    b = store.add(evaluated(), name="dense", provenance=prov("feature", 5))
    c = store.add(evaluated(), name="bm25", provenance=prov("main", 3))
    store.set_baseline(a)
    store.set_baseline(b, key="dense")
    assert store.resolve(str(a)).id == a
    assert store.resolve(b).id == b
    assert store.resolve("#3").id == c
    assert store.resolve("latest").id == b
    assert store.resolve("latest:main").id == c
    with pytest.raises(InputError, match="no stored result named 'dense' on branch 'main'"):
        store.resolve("latest:main", name="dense")
    assert store.resolve("latest", name="bm25").id == c
    assert store.resolve("baseline").id == a
    assert store.resolve("baseline:dense").id == b


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("17", r"no stored result 17 in .*results\.db"),
        ("latest:nope", r"no stored result on branch 'nope' in"),
        (
            "baseline:nightly",
            r"no baseline set for key 'nightly' in .*; set one with: rankgate store baseline set ID --key nightly",
        ),
        (
            "head",
            r"cannot read result reference 'head': use an id \(17\), latest, latest:BRANCH, baseline or baseline:KEY",
        ),
        ("latest-main", r"cannot read result reference 'latest-main'"),
        ("0", r"a result id is an int >= 1. Got 0 instead"),
    ],
)
def test_resolve_errors(store, ref: str, message: str) -> None:
    store.add(evaluated(), provenance=prov())
    with pytest.raises(InputError, match=message):
        store.resolve(ref)


def test_latest_on_empty_store(store) -> None:
    assert store.latest() is None
    with pytest.raises(InputError, match="no stored result in"):
        store.resolve("latest")
    with pytest.raises(InputError, match="no baseline set for key 'default'"):
        store.resolve("baseline")


def test_check_baseline_compatible(store) -> None:
    qrels = rankgate.Qrels.from_dict(QRELS)
    fp = qrels_fingerprint(qrels)
    base = store.get(store.add(evaluated(), qrels=qrels, provenance=prov()))
    check_baseline_compatible(base, fp, allow=False)
    other = qrels_fingerprint(rankgate.Qrels.from_dict({**QRELS, "q3": {"d7": 2}}))
    with pytest.raises(InputError) as info:
        check_baseline_compatible(base, other, allow=False)
    assert str(info.value) == (
        f"baseline {base.id} was evaluated on different qrels (fingerprint {fp[:8]}.. vs {other[:8]}..); "
        "pass --allow-qrels-change to compare anyway"
    )
    check_baseline_compatible(base, other, allow=True)
    unknown = store.get(store.add(evaluated(), provenance=prov()))
    with pytest.raises(InputError, match="stored without a qrels fingerprint"):
        check_baseline_compatible(unknown, fp, allow=False)
    check_baseline_compatible(unknown, fp, allow=True)


# -- add() argument checks -----------------------------------------------------------------
def test_add_checks_its_arguments(store) -> None:
    res = evaluated()
    with pytest.raises(InputError, match=r"takes the Results of rankgate\.evaluate, not a dict"):
        store.add({"P@1": 0.5})
    with pytest.raises(InputError, match="name must be a non-empty string"):
        store.add(res, name=" ", provenance=prov())
    with pytest.raises(InputError, match="name is longer than 255 characters"):
        store.add(res, name="x" * 256, provenance=prov())
    with pytest.raises(InputError, match=r"qrels_fingerprint 00000000.. does not match the qrels given"):
        store.add(res, qrels=QRELS, qrels_fingerprint="0" * 64, provenance=prov())
    with pytest.raises(InputError, match="provenance must be a Provenance"):
        store.add(res, provenance={"branch": "main"})
    with pytest.raises(InputError, match="labels must be a dict"):
        store.add(res, provenance=prov(), labels=["a"])
    assert store.list() == []  # nothing half-written


def test_labels_keep_what_json_cannot_hold_as_text(store, tmp_path: Path) -> None:
    got = store.get(store.add(evaluated(), provenance=prov(), labels={"config": tmp_path / "g.yaml", "n": np.int64(3)}))
    assert got.labels == {"config": str(tmp_path / "g.yaml"), "n": 3}


# -- locations, schema, damaged files ------------------------------------------------------
def test_default_location_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANKGATE_STORE", raising=False)
    with open_store() as s:
        assert s.url == str(Path(".rankgate") / "results.db")
    assert (tmp_path / ".rankgate" / "results.db").is_file()
    monkeypatch.setenv("RANKGATE_STORE", str(tmp_path / "env.db"))
    with open_store() as s:
        s.add(evaluated(), provenance=prov())
    with open_store(f"sqlite:///{tmp_path / 'env.db'}") as s:
        assert len(s.list()) == 1


def test_in_memory_store() -> None:
    with open_store(":memory:") as s:
        rid = s.add(evaluated(), provenance=prov())
        assert s.get(rid).aggregate["RR"] == 0.5
        assert s.url == "sqlite:// (in memory)"
    with open_store("sqlite://") as s:
        assert s.list() == []  # a new, empty one each time


def test_missing_file_with_create_false(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no results store at .*missing\.db \(it is created by the first"):
        open_store(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"is a directory; give a file such as"):
        open_store(tmp_path)


def test_corrupt_file_is_a_backend_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all\n" * 100)
    with pytest.raises(BackendError, match=r"results store .*bad\.db: cannot open the store: file is not a database"):
        open_store(bad)


def test_damaged_per_query_blob_is_a_backend_error(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with open_store(path) as s:
        rid = s.add(evaluated(), provenance=prov())
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE rankgate_results SET per_query_values = x'00010203' WHERE id = ?", (rid,))
    with open_store(path) as s, pytest.raises(BackendError, match=r"result 1: per-query values are corrupt"):
        s.get(rid)


@pytest.mark.parametrize(
    ("url", "error", "message"),
    [
        ("mysql://u@h/db", InputError, r"unsupported store URL scheme 'mysql://'"),
        ("postgresql://u:pw@h:notaport/db", InputError, r"cannot read store URL 'postgresql://u:\*\*\*@h:notaport/db'"),
        ("postgresql://u@127.0.0.1:5432", InputError, r"names no database"),
        ("", InputError, r"empty store location"),
    ],
)
def test_bad_urls(url: str, error: type, message: str) -> None:
    with pytest.raises(error, match=message) as info:
        open_store(url)
    assert "pw@" not in str(info.value)


@pytest.mark.extra("postgres")
def test_unreachable_postgres_is_a_backend_error_without_password() -> None:
    from tests.postgres_support import free_port

    url = f"postgresql://ci:hunter2secret@127.0.0.1:{free_port()}/rankgate"
    with pytest.raises(BackendError) as info:
        open_store(url)
    text = str(info.value)
    assert text.startswith("results store postgresql://ci:***@127.0.0.1:")
    assert "cannot open the store" in text and "Connection refused" in text
    assert "hunter2secret" not in text


def test_schema_version_is_recorded(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    open_store(path).close()
    with sqlite3.connect(path) as conn:
        meta = dict(conn.execute("SELECT key, value FROM rankgate_meta"))
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert meta["schema_version"] == str(store_schema.SCHEMA_VERSION) == "2"
    assert meta["created_by"] == f"rankgate {rankgate.__version__}"
    assert mode == "wal"


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    open_store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE rankgate_meta SET value = '7' WHERE key = 'schema_version'")
    with pytest.raises(
        BackendError, match=r"has schema version 7, newer than this rankgate .* reads \(up to 2\): upgrade"
    ):
        open_store(path)


def test_older_schema_is_migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlalchemy as sa

    path = tmp_path / "r.db"
    with open_store(path) as s:
        rid = s.add(evaluated(), provenance=prov())

    def to_v3(conn) -> None:
        conn.execute(sa.text("ALTER TABLE rankgate_results ADD COLUMN note TEXT"))

    monkeypatch.setattr(store_schema, "SCHEMA_VERSION", 3)
    monkeypatch.setattr(store_schema, "MIGRATIONS", {**store_schema.MIGRATIONS, 2: to_v3})
    with open_store(path) as s:
        assert s.opened_schema_version == 2
        assert s.get(rid).aggregate["RR"] == 0.5  # old results still read
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM rankgate_meta WHERE key = 'schema_version'").fetchone()[0] == "3"
        assert "note" in [row[1] for row in conn.execute("PRAGMA table_info(rankgate_results)")]
    with open_store(path) as s:
        assert s.opened_schema_version == 3


def test_a_version_1_store_gains_the_figures_column(tmp_path: Path) -> None:
    """The real migration 1 -> 2: old results read with no figures; new ones keep theirs."""
    path = tmp_path / "r.db"
    with open_store(path) as s:
        old = s.add(evaluated(), provenance=prov())
    with sqlite3.connect(path) as conn:  # make it the version-1 store an older rankgate wrote
        conn.execute("ALTER TABLE rankgate_results DROP COLUMN figures")
        conn.execute("UPDATE rankgate_meta SET value = '1' WHERE key = 'schema_version'")
    with open_store(path) as s:
        assert s.opened_schema_version == 1
        assert s.get(old).figures == {} and s.get(old).aggregate["RR"] == 0.5
        new = s.add(evaluated(), provenance=prov(), figures={"latency_p95_ms": 12.5, "qps": 80})
        assert s.get(new).figures == {"latency_p95_ms": 12.5, "qps": 80.0}
        assert s.list()[0].to_dict()["figures"] == {"latency_p95_ms": 12.5, "qps": 80.0}
        with pytest.raises(InputError, match="finite numbers"):
            s.add(evaluated(), provenance=prov(), figures={"qps": float("nan")})
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM rankgate_meta WHERE key = 'schema_version'").fetchone()[0] == "2"


def test_missing_migration_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.db"
    open_store(path).close()
    monkeypatch.setattr(store_schema, "SCHEMA_VERSION", 3)
    monkeypatch.setattr(store_schema, "MIGRATIONS", {})
    with pytest.raises(
        BackendError, match="has schema version 2 and this rankgate has no migration from version 2 to 3"
    ):
        open_store(path)
    with sqlite3.connect(path) as conn:  # the failed migration left it untouched
        assert conn.execute("SELECT value FROM rankgate_meta WHERE key = 'schema_version'").fetchone()[0] == "2"


def test_ids_are_never_reused(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with open_store(path) as s:
        s.add(evaluated(), provenance=prov())
        last = s.add(evaluated(), provenance=prov())
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM rankgate_results WHERE id = ?", (last,))
    with open_store(path) as s:
        assert s.add(evaluated(), provenance=prov()) == last + 1


def test_missing_sqlalchemy_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # import sqlalchemy -> ImportError
    with pytest.raises(BackendError, match=r"the results store needs SQLAlchemy: pip install 'rankgate\[gate\]'"):
        open_store(tmp_path / "r.db")


def test_missing_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(BackendError, match=r"needs psycopg 3: pip install 'rankgate\[postgres\]'"):
        open_store("postgresql://u@127.0.0.1:5432/db")
