"""``rankgate index``: errors before any encoding, and the MiniLM round trip through ``bench``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.bench.encoders import HashingEncoder
from rankgate.retrieve.indexing import index_corpus
from tests.bench_support import factory_of
from tests.cli_support import invoke


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--corpus", "demo", "--into", "faiss:/tmp/x"), "--into: expected lancedb:PATH[:TABLE]"),
        (("--corpus", "no/such/corpus.jsonl", "--into", "lancedb:TMP"), "corpus file not found"),
    ],
)
def test_bad_targets_and_corpora_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: tuple[str, ...], message: str
) -> None:
    code, out, err = invoke(capsys, "index", *(a.replace("TMP", str(tmp_path)) for a in argv))
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


@pytest.mark.extra("bench", "lancedb")
def test_an_existing_table_is_refused_before_encoding(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    index_corpus("demo", f"lancedb:{tmp_path}:demo", encoder_factory=factory_of(HashingEncoder(8)))
    code, _, err = invoke(capsys, "index", "--corpus", "demo", "--into", f"lancedb:{tmp_path}:demo", "-q")
    assert code == 2 and "table 'demo' exists" in err and "--overwrite" in err


@pytest.mark.slow
@pytest.mark.extra("bench", "chroma")
def test_minilm_index_then_bench_shows_it_next_to_exact_search(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo corpus into Chroma with the bundled MiniLM, then bench: Chroma's HNSW next to exact search."""
    monkeypatch.setenv("RANKGATE_CACHE_DIR", str(tmp_path / "cache"))
    spec = tmp_path / "chroma.yaml"
    code, out, err = invoke(capsys, "index", "--corpus", "demo", "--into", f"chroma:{tmp_path / 'db'}", "-o", str(spec))
    assert code == 0, err
    assert "indexed 200 documents (199 distinct texts; 384 dimensions" in err
    assert spec.read_text().splitlines()[:3] == ["kind: chroma", f'path: "{tmp_path / "db"}"', 'collection: "demo"']
    code, out, err = invoke(
        capsys,
        "bench",
        "demo",
        "-r",
        "dense",
        "-r",
        f"live:{spec}",
        "-k",
        "10",
        "-m",
        "nDCG@10",
        "--latency-queries",
        "2",
        "--no-runs",
        "--format",
        "json",
    )
    assert code == 0, err
    rows = {r["retriever"]: r for r in json.loads(out)["results"]}
    dense, team = rows["dense"], rows["live:chroma"]
    assert team["neighbor_recall"] >= 0.95  # HNSW on 200 documents finds (almost) every exact neighbour
    assert abs(team["metrics"]["nDCG@10"] - dense["metrics"]["nDCG@10"]) <= 0.02
    assert dense["metrics"]["nDCG@10"] == pytest.approx(0.7776, abs=1e-4)  # the MiniLM row of docs/bench.md


@pytest.mark.extra("bench", "lancedb")
def test_the_summary_counts_distinct_texts_so_the_numbers_add_up(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo corpus holds two documents with one text: 200 documents, 199 distinct texts, each encoded once."""
    from rankgate.bench import factory
    from rankgate.retrieve.indexing import read_documents

    _ids, texts = read_documents("demo")
    assert (len(texts), len(set(texts))) == (200, 199)  # the fact the message reports
    monkeypatch.setenv("RANKGATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(factory, "default_encoder_factory", factory_of(HashingEncoder(8)))
    argv = ["index", "--corpus", "demo", "--into", f"lancedb:{tmp_path / 'db'}", "-o", str(tmp_path / "s.yaml")]
    code, _, err = invoke(capsys, *argv)
    assert code == 0, err
    assert "indexed 200 documents (199 distinct texts; 8 dimensions; 199 encoded, 0 from the cache)" in err
    code, _, err = invoke(capsys, *argv, "--overwrite")
    assert code == 0 and "(199 distinct texts; 8 dimensions; 0 encoded, 199 from the cache)" in err
