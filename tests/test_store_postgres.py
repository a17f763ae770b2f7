"""The results store on a real PostgreSQL server that the tests start (tests/postgres_support.py)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

import rankgate
from rankgate.errors import BackendError, InputError
from rankgate.store.base import check_baseline_compatible, open_store
from rankgate.store.provenance import Provenance
from tests import postgres_support
from tests.cli_support import invoke
from tests.postgres_support import PostgresServer
from tests.test_store import QRELS, RUN, evaluated, random_results

pytestmark = pytest.mark.extra("postgres")

postgres_server = postgres_support.postgres_server  # fixtures
postgres_url = postgres_support.postgres_url

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


def prov(branch: str, minutes: int) -> Provenance:
    return Provenance(created_at=T0 + timedelta(minutes=minutes), branch=branch, commit=f"{minutes:08x}")


def test_round_trip_and_queries(postgres_url: str) -> None:
    with open_store(postgres_url) as s:
        assert "***" in s.url and postgres_url.split(":")[2].split("@")[0] not in s.url
        big = random_results(10_000)
        a = s.add(evaluated(), name="bm25", qrels=QRELS, provenance=prov("main", 0), labels={"source": "test"})
        b = s.add(big, name="dense", qrels=QRELS, provenance=prov("main", 10))
        c = s.add(evaluated(), name="dense", provenance=prov("feature", 5))

        got = s.get(a)
        assert got.created_at == T0 and got.created_at.tzinfo is not None
        assert (got.name, got.branch, got.commit, got.labels) == ("bm25", "main", "00000000", {"source": "test"})
        assert got.aggregate == {"P@2": 1 / 3, "RR": 0.5, "NumRel": 4.0}
        assert got.per_query["q2"] == {"P@2": 0.5, "RR": 1.0, "NumRel": 1.0}
        res = evaluated()
        back = got.to_results()
        assert back.values.tobytes() == res.values.tobytes() and back.query_ids == res.query_ids
        assert s.get(b).to_results().values.tobytes() == big.values.tobytes()
        assert got.settings == res.settings and list(got.aggregate) == ["P@2", "RR", "NumRel"]

        assert [r.id for r in s.list()] == [b, c, a]
        assert [r.id for r in s.list(branch="main")] == [b, a]
        assert [r.id for r in s.list(name="dense", limit=1)] == [b]
        assert s.latest(branch="feature").id == c
        assert s.latest(branch="nope") is None

        assert s.baseline() is None
        s.set_baseline(a)
        s.set_baseline(b)  # upsert replaces
        s.set_baseline(c, key="feature")
        assert s.baseline().id == b and s.baselines() == {"default": b, "feature": c}
        assert s.resolve("baseline").id == b
        assert s.resolve("baseline:feature").id == c
        assert s.resolve("latest:main").id == b
        assert s.resolve(str(a)).id == a
        with pytest.raises(InputError, match=r"no stored result 99 in postgresql://postgres:\*\*\*@"):
            s.resolve("99")
        with pytest.raises(InputError, match=r"no stored result 99"):
            s.set_baseline(99)

        base = s.get(b)
        check_baseline_compatible(base, s.get(a).qrels_fingerprint, allow=False)
        with pytest.raises(InputError, match="stored without a qrels fingerprint"):
            check_baseline_compatible(s.get(c), base.qrels_fingerprint, allow=False)


def test_reopen_and_schema_version(postgres_url: str) -> None:
    import sqlalchemy as sa

    with open_store(postgres_url) as s:
        rid = s.add(evaluated(), provenance=prov("main", 0))
        assert s.opened_schema_version == 0
    with open_store(postgres_url) as s:
        assert s.opened_schema_version == 2
        assert s.get(rid).aggregate["RR"] == 0.5
        engine = s._engine
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE rankgate_meta SET value = '3' WHERE key = 'schema_version'"))
    with pytest.raises(BackendError, match="has schema version 3, newer than this rankgate"):
        open_store(postgres_url)


def test_concurrent_writers(postgres_url: str) -> None:
    """Several threads open a fresh database at once (schema creation races) and add."""
    errors: list[BaseException] = []

    def work(tag: str) -> None:
        try:
            with open_store(postgres_url) as s:
                for i in range(5):
                    s.add(evaluated(), name=f"{tag}-{i}", provenance=prov(tag, i))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(f"t{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with open_store(postgres_url) as s:
        found = s.list(limit=None)
    assert len(found) == 20 and len({r.id for r in found}) == 20


def test_wrong_password_names_no_password(postgres_server: PostgresServer) -> None:
    url = postgres_server.url("postgres", password="not-the-password-x9")
    with pytest.raises(BackendError) as info:
        open_store(url)
    text = str(info.value)
    assert "password authentication failed" in text
    assert "not-the-password-x9" not in text and postgres_server.password not in text


def test_missing_database(postgres_server: PostgresServer) -> None:
    with pytest.raises(BackendError, match='database "no_such_db" does not exist'):
        open_store(postgres_server.url("no_such_db"))


def test_cli_never_prints_the_password(
    postgres_url: str,
    postgres_server: PostgresServer,
    tmp_path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "bm25.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} 0 {s} x\n" for q, docs in RUN.items() for d, s in docs.items()))

    def cli(*argv: str) -> tuple[int, str]:
        code, out, err = invoke(capsys, *argv)
        assert postgres_server.password not in out + err
        return code, out + err

    code, text = cli("store", "add", str(qrels), str(run), "-m", "P@2,RR", "--store", postgres_url, "--branch", "main")
    assert code == 0 and text.splitlines()[0] == "1"
    assert "postgresql://postgres:***@" in text
    for argv in (["list"], ["show", "latest:main", "--per-query"], ["baseline", "set", "1"], ["baseline", "show"]):
        code, text = cli("store", *argv, "--store", postgres_url)
        assert code == 0, text
    code, text = cli("store", "show", "7", "--store", postgres_url)
    assert code == 2 and "no stored result 7 in postgresql://postgres:***@" in text
    code, text = cli("store", "list", "--store", postgres_server.url("postgres", password="wrong-pw-zz"))
    assert code == 2 and "password authentication failed" in text and "wrong-pw-zz" not in text
    assert "Traceback" not in text
    assert rankgate.__version__  # the package imported fine alongside
