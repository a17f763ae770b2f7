"""The dashboard app in-process (Starlette's test client) on the hand-worked store of
tests/dashboard_support.py: pages, JSON endpoints, values worked by hand, the safety rules."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.dashboard_support import BASE_RR, CAND_RR, HOSTILE_QID, hand_sources, hand_store
from tests.report_support import XSS, XSS_IMG

pytestmark = pytest.mark.extra("serve")


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dash") / "results.db"
    hand_store(path)
    return path


@pytest.fixture(scope="module")
def client(store_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from starlette.testclient import TestClient

    from rankgate.dashboard.app import create_app

    app = create_app(str(store_path), sources=hand_sources(tmp_path_factory.mktemp("files")))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def test_overview_json_holds_every_result_oldest_first_with_hand_worked_means(client: Any):
    data = client.get("/api/overview").json()
    assert data["total"] == data["shown"] == 3
    base, cand, hostile = data["evaluations"]
    assert (base["id"], cand["id"], hostile["id"]) == (1, 2, 3)
    assert base["aggregate"] == {"RR": pytest.approx(5 / 6), "P@1": pytest.approx(2 / 3)}
    assert cand["aggregate"] == {"RR": pytest.approx(0.5), "P@1": pytest.approx(1 / 3)}
    assert cand["verdict"] == "fail" and base["verdict"] is None
    assert cand["operational"] == {"latency_ms.p50": 3.0, "latency_ms.p95": 7.0, "latency_ms.p99": 12.0, "qps": 100.0}
    assert data["baselines"] == {"default": 1}


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("branch=main", [1]),
        ("tag=source%3Dgate", [2]),
        ("tag=source", [1, 2]),
        ("name=cand", [2]),
        ("since=2026-01-02", [2, 3]),
        ("until=2026-01-02", [1, 2]),
        ("since=2026-01-02&until=2026-01-02", [2]),
        ("limit=1", [3]),  # the newest
        ("branch=nope", []),
    ],
)
def test_overview_filters(client: Any, query: str, ids: list[int]):
    data = client.get(f"/api/overview?{query}").json()
    assert [e["id"] for e in data["evaluations"]] == ids


@pytest.mark.parametrize("query", ["since=yesterday", "until=2026-13-01", "limit=0", "limit=x"])
def test_bad_filters_are_400_with_a_message(client: Any, query: str):
    r = client.get(f"/api/overview?{query}")
    assert r.status_code == 400
    assert r.json()["error"]
    page = client.get(f"/?{query}")
    assert page.status_code == 400 and "Traceback" not in page.text


def test_overview_page_draws_a_chart_per_measure_and_the_operational_figures(client: Any):
    r = client.get("/")
    assert r.status_code == 200
    for chart in ('data-chart="m0"', 'data-chart="m1"', 'data-chart="o0"', 'data-chart="o3"'):
        assert chart in r.text
    assert "latency p95 (ms)" in r.text and "throughput (queries/s)" in r.text
    assert '<script src="/static/plotly.min.js' in r.text  # served by the app: no CDN
    assert "https://" not in r.text


def test_evaluation_json_intervals_equal_an_independent_bootstrap(client: Any):
    import numpy as np

    from rankgate.stats.bootstrap import bootstrap_ci_columns

    data = client.get("/api/evaluations/1").json()
    assert data["aggregate"]["RR"] == pytest.approx(5 / 6)
    values = np.array([[BASE_RR[q], p] for q, p in (("q1", 1.0), ("q2", 0.0), ("q3", 1.0))])
    low, high = bootstrap_ci_columns(values, n_resamples=2000, confidence=0.95, seed=0)
    assert data["ci"]["RR"] == pytest.approx([low[0], high[0]])
    assert data["ci"]["P@1"] == pytest.approx([low[1], high[1]])
    assert data["qrels_fingerprint"] and data["commit"] == "a" * 40 and data["branch"] == "main"
    # Per tag (tier A: q1 q2, tier B: q3), from the tags file.
    tiers = {r["value"]: r for r in data["by_tag"]}
    assert tiers["A"]["n"] == 2 and tiers["A"]["aggregate"]["RR"] == pytest.approx(0.75)
    assert tiers["B"]["aggregate"]["RR"] == pytest.approx(1.0)


def test_evaluation_page_shows_provenance_intervals_tags_and_ops(client: Any):
    page = client.get("/evaluations/2").text
    assert "b" * 40 in page and "feature/x" in page
    assert 'id="rg-tags"' in page and 'data-api="/api/evaluations/2/queries"' in page
    assert "latency p99 (ms)" in page and "12.00" in page
    assert '<span class="badge badge-fail">fail</span>' in page
    assert "/compare?a=1&amp;b=2" in page  # compare with the baseline


@pytest.mark.parametrize(
    ("query", "qids"),
    [
        ("", ["q1", "q2", "q3"]),
        ("sort=RR&order=desc", ["q1", "q3", "q2"]),  # 1, 1 (stable: file order), 1/2
        ("sort=RR&order=asc", ["q2", "q1", "q3"]),
        ("sort=qid&order=desc", ["q3", "q2", "q1"]),
        ("q=Q2", ["q2"]),
        ("q=third", ["q3"]),  # the query's text
        ("limit=2&offset=1", ["q2", "q3"]),
    ],
)
def test_per_query_rows_are_paged_sorted_and_searched(client: Any, query: str, qids: list[str]):
    data = client.get(f"/api/evaluations/1/queries?{query}").json()
    assert [r["qid"] for r in data["rows"]] == qids
    assert data["total"] == 3
    for r in data["rows"]:
        assert r["values"]["RR"] == pytest.approx(BASE_RR[r["qid"]])


@pytest.mark.parametrize("query", ["sort=nDCG@10", "order=up", "limit=501", "offset=-1"])
def test_bad_per_query_parameters_are_400(client: Any, query: str):
    assert client.get(f"/api/evaluations/1/queries?{query}").status_code == 400


def test_compare_json_matches_hand_worked_deltas_and_compare_results(client: Any):
    import scipy.stats

    data = client.get("/api/compare?a=1&b=2&measure=RR").json()
    assert [(d["qid"], d["delta"]) for d in data["deltas"]] == [
        ("q3", pytest.approx(-1.0)),
        ("q1", pytest.approx(-0.5)),
        ("q2", pytest.approx(0.5)),
    ]
    row = next(r for r in data["comparison"]["comparisons"] if r["measure"] == "RR")
    assert row["delta"] == pytest.approx(0.5 - 5 / 6)
    assert (row["wins"], row["ties"], row["losses"]) == (1, 0, 2)
    base = [BASE_RR[q] for q in ("q1", "q2", "q3")]
    cand = [CAND_RR[q] for q in ("q1", "q2", "q3")]
    assert row["p_value"] == pytest.approx(scipy.stats.ttest_rel(cand, base).pvalue)  # an independent oracle
    assert data["warnings"] == []  # same qrels, same settings


def test_compare_page_lists_worst_queries_first_and_shows_both_rankings(client: Any):
    page = client.get("/compare?a=1&b=2&measure=RR").text
    worst = page.index('id="rg-worst"')
    assert page.index(">q3<", worst) < page.index(">q1<", worst) < page.index(">q2<", worst)
    assert 'data-chart="delta"' in page and 'id="rankings"' in page
    # Query q3 (the worst) by default: base retrieved d6 (grade 1), cand d7 (unjudged).
    rankings = page[page.index('id="rankings"') :]
    assert "third question" in rankings and "document 6 about topic 0" in rankings
    assert "grade 1" in rankings and "unjudged" in rankings


def test_rankings_json_has_grades_and_text_in_evaluation_order(client: Any):
    data = client.get("/api/rankings?a=1&b=2&query=q1").json()
    assert [(d["doc"], d["grade"]) for d in data["a"]] == [("d1", 1), ("d3", 0), ("d2", 1)]
    assert [d["doc"] for d in data["b"]] == ["d3", "d1", "d2"]
    assert data["a"][0]["text"] == "document 1 about topic 1"


@pytest.mark.parametrize(
    "url", ["/evaluations/999", "/evaluations/abc", "/evaluations/0", "/compare?a=1&b=77", "/nowhere"]
)
def test_a_bad_id_or_page_is_a_404_page(client: Any, url: str):
    r = client.get(url)
    assert r.status_code == 404
    assert "<html" in r.text and "Traceback" not in r.text


@pytest.mark.parametrize("url", ["/api/evaluations/999", "/api/evaluations/x/queries", "/api/compare?a=1&b=77"])
def test_a_bad_id_in_the_api_is_a_json_404(client: Any, url: str):
    r = client.get(url)
    assert r.status_code == 404 and "error" in r.json()


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("/api/compare?a=2", "b is required"),
        ("/api/compare?b=2", "a is required"),
        ("/api/compare?a=2&b=", "b is required"),
        ("/api/compare?a=x&b=2", "a must be the id of a stored evaluation"),
        ("/api/rankings?a=1&b=two&query=q1", "b must be the id of a stored evaluation"),
        ("/compare?a=1&b=-3", "b must be the id of a stored evaluation"),
    ],
)
def test_a_missing_or_malformed_a_or_b_is_a_400(client: Any, url: str, words: str):
    r = client.get(url)
    assert r.status_code == 400 and words in r.text and "(none)" not in r.text
    if url.startswith("/api/"):
        assert r.json() == {"error": r.json()["error"], "status": 400}


def test_hostile_strings_are_escaped_in_every_page(client: Any):
    for url in ("/", "/evaluations/3", "/compare?a=3&b=1"):
        page = client.get(url).text
        assert XSS not in page and XSS_IMG not in page, url
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in client.get("/evaluations/3").text
    rows = client.get("/api/evaluations/3/queries").json()["rows"]
    assert HOSTILE_QID in [r["qid"] for r in rows]  # JSON keeps it as data; the page script sets textContent


def test_an_unexpected_error_is_a_500_page_without_details(client: Any, monkeypatch: pytest.MonkeyPatch):
    from rankgate.dashboard import pages

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("secret detail /etc/passwd")

    monkeypatch.setattr(pages, "overview", broken)
    for url, kind in (("/", "text/html"), ("/api/evaluations/1", "application/json")):
        if url.startswith("/api"):
            monkeypatch.setattr(pages, "evaluation_json", broken)
        r = client.get(url)
        assert r.status_code == 500 and r.headers["content-type"].startswith(kind)
        assert "secret detail" not in r.text and "Traceback" not in r.text


def test_security_headers_and_the_plotly_bundle(client: Any):
    r = client.get("/static/plotly.min.js", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
    assert "plotly" in r.text[:2000].lower()
    page = client.get("/")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    assert client.get("/static/../app.py").status_code == 404


def test_the_store_is_read_only(store_path: Path, client: Any):
    before = hashlib.sha256(store_path.read_bytes()).hexdigest()
    for url in ("/", "/evaluations/1", "/api/compare?a=1&b=2", "/api/evaluations/2/queries"):
        assert client.get(url).status_code == 200
    assert client.post("/").status_code == 405
    assert hashlib.sha256(store_path.read_bytes()).hexdigest() == before
    assert client.app.state.reader.store.read_only


def test_new_results_appear_without_a_restart(tmp_path: Path):
    from starlette.testclient import TestClient

    import rankgate
    from rankgate.dashboard.app import create_app
    from rankgate.store.base import open_store

    path = tmp_path / "live.db"
    hand_store(path)
    with TestClient(create_app(str(path))) as c:
        assert c.get("/api/overview").json()["total"] == 3
        with open_store(path) as store:
            store.add(rankgate.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["RR"]), name="late")
        data = c.get("/api/overview").json()
        assert data["total"] == 4 and data["evaluations"][-1]["name"] == "late"


# -- the token and the binding ------------------------------------------------------------------

TOKEN = "s3cret-token-0123456789"


@pytest.fixture(scope="module")
def guarded(store_path: Path) -> Any:
    from starlette.testclient import TestClient

    from rankgate.dashboard.app import create_app

    with TestClient(create_app(str(store_path), token=TOKEN)) as c:
        yield c


@pytest.mark.parametrize("url", ["/", "/api/overview", "/static/plotly.min.js", "/evaluations/1"])
def test_without_the_token_or_with_a_wrong_one_every_request_is_401(guarded: Any, url: str):
    guarded.cookies.clear()
    assert guarded.get(url).status_code == 401
    assert guarded.get(url, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert guarded.get(url + ("&" if "?" in url else "?") + "token=wrong").status_code == 401
    assert guarded.get(url, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_the_token_in_the_address_once_sets_a_cookie(guarded: Any):
    guarded.cookies.clear()
    first = guarded.get(f"/?token={TOKEN}")
    assert first.status_code == 200 and "httponly" in first.headers["set-cookie"].lower()
    assert guarded.get("/api/overview").status_code == 200  # the cookie carries it now
    guarded.cookies.clear()


def test_bound_to_localhost_a_foreign_host_header_is_refused(store_path: Path):
    from starlette.testclient import TestClient

    from rankgate.dashboard.app import create_app
    from rankgate.dashboard.server import allowed_hosts

    with TestClient(create_app(str(store_path), allowed_hosts=allowed_hosts("127.0.0.1", None))) as c:
        assert c.get("/", headers={"Host": "evil.example"}).status_code == 400
        assert c.get("/", headers={"Host": "127.0.0.1:8765"}).status_code == 200
        assert c.get("/", headers={"Host": "localhost"}).status_code == 200


def test_binding_beyond_localhost_needs_a_token(monkeypatch: pytest.MonkeyPatch):
    from rankgate.dashboard.server import TOKEN_ENV, check_binding
    from rankgate.errors import ConfigError

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert check_binding("127.0.0.1", None) is None
    with pytest.raises(ConfigError, match="--token"):
        check_binding("0.0.0.0", None)
    with pytest.raises(ConfigError, match="at least 16"):
        check_binding("0.0.0.0", "short")
    assert check_binding("0.0.0.0", TOKEN) == TOKEN
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert check_binding("10.1.2.3", None) == TOKEN


def test_cli_refuses_an_open_binding_without_a_token(capsys: pytest.CaptureFixture[str], store_path: Path, monkeypatch):
    from tests.cli_support import invoke

    monkeypatch.delenv("RANKGATE_TOKEN", raising=False)
    code, out, err = invoke(capsys, "serve", "--store", str(store_path), "--host", "0.0.0.0")
    assert code == 2 and out == ""
    assert "--token" in err and "Traceback" not in err


def test_cli_names_a_missing_store(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    from tests.cli_support import invoke

    code, _, err = invoke(capsys, "serve", "--store", str(tmp_path / "none.db"))
    assert code == 2 and "no results store at" in err


def test_demo_ends_by_saying_how_to_open_the_dashboard(capsys: pytest.CaptureFixture[str]):
    from tests.cli_support import invoke

    code, out, _ = invoke(capsys, "demo", "--no-bench", "--no-report")
    assert code == 0
    assert "rankgate serve --store results.db" in " ".join(out.split())


def test_figures_the_gate_stores_are_shown(tmp_path: Path) -> None:
    # `rankgate gate --bench` records operational figures in the store's `figures` column
    # (schema v2) under rankgate.gate.figures' names; the dashboard reads them from there.
    from starlette.testclient import TestClient

    import rankgate
    from rankgate.dashboard.app import create_app
    from rankgate.store.base import open_store
    from tests.report_support import write_collection

    (tmp_path / "c").mkdir()
    files = write_collection(tmp_path / "c")
    res = rankgate.evaluate(files["qrels"], files["base"], ["RR"])
    store_path = tmp_path / "fig.db"
    with open_store(store_path) as store:
        store.add(res, name="a", figures={"latency_p95_ms": 8.5, "qps": 120.0, "index_mb": 3.25, "build_s": 1.5})
    app = create_app(str(store_path))
    with TestClient(app, raise_server_exceptions=False) as c:
        (row,) = c.get("/api/overview").json()["evaluations"]
    assert row["operational"] == {"latency_ms.p95": 8.5, "qps": 120.0, "index_mb": 3.25, "build_s": 1.5}
