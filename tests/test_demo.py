"""`rankgate demo` with every extra: evaluation, the BM25/MiniLM benchmark, the gate, the HTML report."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from rankgate.report.demo import STORE_LABEL
from tests.bench_support import embedding_cache_dir  # noqa: F401  (session fixture)
from tests.cli_support import invoke

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _shared_embedding_cache(monkeypatch: pytest.MonkeyPatch, embedding_cache_dir: Path) -> None:  # noqa: F811
    # The demo caches MiniLM embeddings in the user cache folder; tests use the session's.
    monkeypatch.setenv("RANKGATE_CACHE_DIR", str(embedding_cache_dir))
    monkeypatch.delenv("RANKGATE_STORE", raising=False)


@pytest.mark.extra("bench", "report", "gate")
def test_demo_shows_every_part_and_writes_the_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = tmp_path / "out" / "demo.html"
    code, out, err = invoke(capsys, "demo", "--report", str(report))
    assert code == 0, err
    # evaluation
    assert "Retrieval quality" in out and "63 queries" in out
    # the benchmark table: BM25 and MiniLM with the exact and HNSW indexes, neighbor recall
    assert "Retrievers on the demo data" in out
    bench_lines = [line for line in out.splitlines() if "bm25" in line or "minilm" in line]
    assert any("hnsw" in line for line in bench_lines) and any("exact" in line for line in bench_lines)
    assert "nbr rec" in out
    assert "scores the run files shipped with the demo" in out  # why its bm25 row differs from the table above
    # the gate and its PR comment
    assert "The gate exits 1 here (fail)" in out
    assert "<!-- rankgate:gate:default -->" in out
    # the report
    assert f"HTML report: {report}" in out.replace("\n", "")
    html = report.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") or html.lower().startswith("<!doctype html>")
    assert "neighbor recall" in html.lower()  # the bench section is in the report
    assert report.stat().st_size < 3_000_000


@pytest.mark.extra("bench", "report", "gate")
def test_demo_json_has_bench_rows_and_report_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    code, out, err = invoke(capsys, "demo", "--format", "json", "--report", str(report))
    assert code == 0, err
    data = json.loads(out)
    assert data["report"] == str(report) and report.is_file()
    rows = {(r["retriever"], r["index"]): r for r in data["bench"]}
    indexes = {(retriever, str(index).split("(")[0]): row for (retriever, index), row in rows.items()}
    assert set(indexes) == {("bm25", "-"), ("minilm", "exact"), ("minilm", "hnsw")}
    exact, hnsw = indexes[("minilm", "exact")], indexes[("minilm", "hnsw")]
    assert 0.0 < hnsw["nbr recall"] <= 1.0
    # dense retrieval beats BM25 on this collection, and every value is a fraction
    for row in rows.values():
        assert 0.0 <= row["nDCG@10"] <= 1.0
    assert exact["nDCG@10"] > indexes[("bm25", "-")]["nDCG@10"]
    assert exact["nDCG@10"] >= hnsw["nDCG@10"] - 0.05
    assert data["gate"]["verdict"] == "fail"
    # The terminal's gate and the report's name the same baseline (today's stored dense run),
    # and the History section names the demo's store, not a temporary path that is gone.
    page = html.unescape(report.read_text(encoding="utf-8"))
    assert data["gate"]["baseline"].startswith("stored result 4 (dense, main ")
    assert data["gate"]["baseline"] in page
    assert STORE_LABEL in page and "rankgate-demo-" not in page


def test_demo_without_bench_and_report_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(capsys, "demo", "--no-bench", "--no-report")
    assert code == 0, err
    assert "Retrievers on the demo data" not in out and "HTML report" not in out
    assert list(tmp_path.iterdir()) == []
