"""The embedded vector databases, for real: LanceDB and Chroma on disk, Qdrant in local mode.

Each test writes a real database in a temporary folder (through `rankgate.retrieve.indexing`,
the code behind ``rankgate index``) and searches it through the adapter `load_kind` builds.
Oracles: hand-worked cosine values on three fixed vectors, and brute-force cosine in numpy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankgate.bench.encoders import HashingEncoder
from rankgate.errors import ConfigError
from rankgate.retrieve import LiveRetriever
from rankgate.retrieve.indexing import index_corpus, read_documents
from rankgate.retrieve.kinds import load_kind

pytestmark = pytest.mark.extra("bench", "lancedb", "chroma", "qdrant")

EMBEDDED = ("lancedb", "chroma", "qdrant")


class FixedEncoder:
    """Looks each text up in a table of vectors (the hand-worked cases)."""

    identity = "fixed-2d"
    dim = 2

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def encode(
        self, texts: Sequence[str], *, normalize: bool, batch_size: int = 64, progress: Any = None
    ) -> np.ndarray:
        out = np.asarray([self.table[t] for t in texts], dtype=np.float32)
        if normalize:
            out /= np.linalg.norm(out, axis=1, keepdims=True)
        if progress is not None:
            progress(len(texts))
        return out


VECTORS = {"alpha": [1.0, 0.0], "beta": [0.6, 0.8], "gamma": [0.0, 1.0], "east": [1.0, 0.0], "north": [0.0, 2.0]}


@pytest.fixture
def three_docs(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d-{t}", "text": t}) + "\n" for t in ("alpha", "beta", "gamma")))
    return corpus


def _factory(encoder: Any) -> Any:
    return lambda model, params: encoder


# Cosine similarity of each doc to the query "east" = [1, 0]: alpha 1, beta 0.6, gamma 0.
# LanceDB and Chroma give distances (1 - cos), negated into scores; Qdrant gives the similarity.
HAND_WORKED = {
    "lancedb": [("d-alpha", 0.0), ("d-beta", -0.4), ("d-gamma", -1.0)],
    "chroma": [("d-alpha", 0.0), ("d-beta", -0.4), ("d-gamma", -1.0)],
    "qdrant": [("d-alpha", 1.0), ("d-beta", 0.6), ("d-gamma", 0.0)],
}


@pytest.mark.parametrize("kind", EMBEDDED)
def test_hand_worked_cosine_order_and_scores(kind: str, three_docs: Path, tmp_path: Path) -> None:
    factory = _factory(FixedEncoder(VECTORS))
    result = index_corpus(three_docs, f"{kind}:{tmp_path / kind}:hand", encoder_factory=factory)
    assert result.documents == 3 and result.dim == 2
    live = load_kind(result.spec, "spec", encoder_factory=factory)
    try:
        assert isinstance(live, LiveRetriever) and live.kind == kind
        hits = live.search("q1", "east", 3)
        assert [h.doc_id for h in hits] == [d for d, _ in HAND_WORKED[kind]]
        assert [h.score for h in hits] == pytest.approx([s for _, s in HAND_WORKED[kind]], abs=1e-6)
        assert [h.doc_id for h in live.search("q2", "north", 2)] == ["d-gamma", "d-beta"]  # normalized: [0, 1]
        assert live.identity()["encoder"]["model"] == "fixed-2d"
    finally:
        live.close()


@pytest.fixture(scope="module")
def demo_databases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The demo corpus encoded by HashingEncoder(64), in each embedded database (built once)."""
    root = tmp_path_factory.mktemp("dbs")
    factory = _factory(HashingEncoder(64))
    return {kind: index_corpus("demo", f"{kind}:{root / kind}", encoder_factory=factory).spec for kind in EMBEDDED}


def _brute_force(query: str, k: int) -> tuple[list[str], np.ndarray]:
    ids, texts = read_documents("demo")
    enc = HashingEncoder(64)
    scores = enc.encode(texts, normalize=True) @ enc.encode([query], normalize=True)[0]
    order = np.argsort(-scores, kind="stable")
    return [ids[i] for i in order], scores[order]


QUERIES = ("offline map phone signal", "water the plant when soil is dry", "bread dough rise yeast")


@pytest.mark.parametrize("kind", EMBEDDED)
def test_databases_agree_with_brute_force_cosine(kind: str, demo_databases: dict[str, dict[str, Any]]) -> None:
    live = load_kind(demo_databases[kind], "spec", encoder_factory=_factory(HashingEncoder(64)))
    try:
        for query in QUERIES:
            k = 10
            hits = live.search("q", query, k)
            ids, scores = _brute_force(query, 200)
            assert len(hits) == k
            cos = np.asarray([h.score for h in hits]) + (1.0 if kind != "qdrant" else 0.0)  # back to similarities
            np.testing.assert_allclose(cos, scores[:k], atol=1e-5)
            boundary = scores[k - 1] - 1e-5  # ties at the k-th place may come in any order
            sure = {d for d, s in zip(ids, scores, strict=True) if s > boundary + 2e-5}
            assert sure <= {h.doc_id for h in hits}
    finally:
        live.close()


def test_the_spec_printed_by_index_is_what_the_adapter_reads(demo_databases: dict[str, dict[str, Any]]) -> None:
    assert demo_databases["lancedb"] == {
        "kind": "lancedb",
        "path": demo_databases["lancedb"]["path"],
        "table": "demo",
        "id_column": "doc_id",
        "vector_column": "vector",
        "metric": "cosine",
        "model": "minilm",
    }
    assert demo_databases["qdrant"]["id_field"] == "doc_id" and demo_databases["chroma"]["collection"] == "demo"


def test_an_existing_table_is_kept_unless_overwrite(three_docs: Path, tmp_path: Path) -> None:
    factory = _factory(FixedEncoder(VECTORS))
    for kind in EMBEDDED:
        target = f"{kind}:{tmp_path / kind}:hand"
        index_corpus(three_docs, target, encoder_factory=factory)
        with pytest.raises(ConfigError, match=r"exists.*--overwrite"):
            index_corpus(three_docs, target, encoder_factory=factory)
        again = index_corpus(three_docs, target, encoder_factory=factory, overwrite=True)
        live = load_kind(again.spec, "", encoder_factory=factory)
        try:
            assert len(live.search("q", "east", 10)) == 3  # replaced, not appended
        finally:
            live.close()


def _spec(kind: str, root: str, **changes: Any) -> dict[str, Any]:
    base = {
        "lancedb": {"kind": "lancedb", "path": f"{root}/lancedb", "table": "demo"},
        "chroma": {"kind": "chroma", "path": f"{root}/chroma", "collection": "demo"},
        "qdrant": {"kind": "qdrant", "path": f"{root}/qdrant", "collection": "demo", "id_field": "doc_id"},
    }[kind]
    return {k: v for k, v in {**base, **changes}.items() if v is not None}


BAD_SPECS = [
    ("lancedb", {"colour": "red"}, "spec.colour: unknown key"),
    ("lancedb", {"path": "/no/such/folder"}, "spec.path: /no/such/folder: no such folder"),
    ("lancedb", {"table": "nope"}, "spec.table: cannot open table 'nope'"),
    ("lancedb", {"id_column": "docid"}, "spec.id_column: table 'demo' has no column 'docid'"),
    ("lancedb", {"metric": "hamming2"}, "spec.metric: must be one of cosine, l2, dot"),
    ("lancedb", {"nprobes": 0}, "spec.nprobes: must be an int >= 1"),
    ("chroma", {"collection": "nope"}, "spec.collection: cannot open collection 'nope'.*collections: demo"),
    ("chroma", {"normalize": "yes"}, "spec.normalize: must be true or false"),
    ("qdrant", {"collection": "nope"}, r"spec.collection: no collection 'nope' \(collections: demo\)"),
    ("qdrant", {"url": "http://127.0.0.1:1"}, "spec: give either url"),
    ("qdrant", {"vector_name": "dense"}, "spec.vector_name: collection 'demo' has one unnamed vector"),
    ("qdrant", {"api_key_env": "RANKGATE_TEST_UNSET_KEY"}, "spec.api_key_env: the environment variable"),
]


@pytest.mark.parametrize(("kind", "changes", "message"), BAD_SPECS)
def test_bad_specs_name_the_key(
    kind: str, changes: dict[str, Any], message: str, demo_databases: dict[str, dict[str, Any]]
) -> None:
    root = str(Path(demo_databases[kind]["path"]).parent)
    with pytest.raises(ConfigError, match=message):
        load_kind(_spec(kind, root, **changes), "spec", encoder_factory=_factory(HashingEncoder(64)))


def test_unknown_and_missing_kinds() -> None:
    with pytest.raises(ConfigError, match=r"^r.yaml.kind: is required \(kinds: http, python"):
        load_kind({"path": "x"}, "r.yaml")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_kind(["lancedb"], "r.yaml")  # type: ignore[arg-type]


def test_index_target_errors(tmp_path: Path) -> None:
    for bad in ("faiss:/x", "lancedb", "lancedb:"):
        with pytest.raises(ConfigError, match="--into: expected lancedb:PATH"):
            index_corpus("demo", bad, encoder_factory=_factory(HashingEncoder(8)))
