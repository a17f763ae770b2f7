"""The dashboard on a real PostgreSQL server (tests/postgres_support.py): the same pages and
numbers as on SQLite, read through a read-only connection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import postgres_support
from tests.dashboard_support import hand_sources, hand_store

pytestmark = pytest.mark.extra("serve", "postgres")

postgres_server = postgres_support.postgres_server  # fixtures
postgres_url = postgres_support.postgres_url


def _answers(client: Any) -> dict[str, Any]:
    out = {}
    for url in ("/api/overview", "/api/evaluations/2", "/api/evaluations/1/queries?sort=RR", "/api/compare?a=1&b=2"):
        r = client.get(url)
        assert r.status_code == 200, (url, r.text)
        out[url] = r.json()
    for url in ("/", "/evaluations/1", "/compare?a=1&b=2"):
        assert client.get(url).status_code == 200, url
    assert client.get("/evaluations/42").status_code == 404
    return out


def test_postgres_and_sqlite_stores_give_the_same_dashboard(postgres_url: str, tmp_path: Path):
    from starlette.testclient import TestClient

    from rankgate.dashboard.app import create_app

    sources = hand_sources(tmp_path)
    hand_store(postgres_url)
    hand_store(tmp_path / "results.db")
    with TestClient(create_app(postgres_url, sources=sources)) as pg:
        on_pg = _answers(pg)
        reader = pg.app.state.reader
        assert reader.store.read_only and reader.url.count("***") == 1  # the password is hidden
    with TestClient(create_app(str(tmp_path / "results.db"), sources=sources)) as lite:
        on_sqlite = _answers(lite)
    for url, data in on_pg.items():
        if url == "/api/overview":
            data.pop("store"), on_sqlite[url].pop("store")
        assert data == on_sqlite[url], url
    assert on_pg["/api/overview"]["total"] == 3
    assert [r["qid"] for r in on_pg["/api/evaluations/1/queries?sort=RR"]["rows"]] == ["q2", "q1", "q3"]
