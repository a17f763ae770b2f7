"""Chunked runs on every verb, on a BEIR-layout collection built here.

The document run is real retrieval (TF-IDF over the collection's documents); the chunk run
retrieves the passages `rankgate bench` cuts (`rankgate.bench.chunking`). Every verb that reads
a run, given --chunk-sep, scores the chunk run exactly as the document run obtained by dropping
each document's later chunks; and bad chunk maps stop with exit 2 naming file:line.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rankgate.bench.chunking import ChunkSpec, chunk_corpus
from rankgate.bench.datasets import load_dataset
from tests.cli_support import invoke

VOCAB = [f"w{i}" for i in range(60)]
MEASURES = "nDCG@10,AP,RR,P@5,R@20,Bpref,NumRet"


def _tfidf_scores(query: str, texts: list[str]) -> np.ndarray:
    docs = [Counter(t.split()) for t in texts]
    df = Counter(w for d in docs for w in d)
    idf = {w: np.log((1 + len(docs)) / (1 + n)) + 1 for w, n in df.items()}
    return np.array([sum(d[w] * idf.get(w, 0.0) for w in query.split()) for d in docs])


def _write_run(path: Path, ranked: dict[str, list[tuple[str, float]]]) -> None:
    lines = [
        f"{qid} Q0 {doc} {rank} {score!r} tfidf\n"
        for qid, rows in ranked.items()
        for rank, (doc, score) in enumerate(rows, start=1)
    ]
    path.write_text("".join(lines))


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A BEIR folder, its document run, the chunk run, and the chunk run with later chunks removed."""
    rng = np.random.default_rng(17)
    root = tmp_path_factory.mktemp("beir")
    (root / "qrels").mkdir()
    n_docs, n_queries = 40, 12
    texts = [" ".join(rng.choice(VOCAB, size=int(rng.integers(20, 70)))) for _ in range(n_docs)]
    ids = [f"doc{i}" for i in range(n_docs)]
    with (root / "corpus.jsonl").open("w") as f:
        for did, text in zip(ids, texts, strict=True):
            f.write(json.dumps({"_id": did, "title": "", "text": text}) + "\n")
    qrels_lines = ["query-id\tcorpus-id\tscore"]
    with (root / "queries.jsonl").open("w") as f:
        for q in range(n_queries):
            source = int(rng.integers(n_docs))
            words = rng.choice(texts[source].split(), size=3)
            f.write(json.dumps({"_id": f"q{q}", "text": " ".join(words)}) + "\n")
            qrels_lines.append(f"q{q}\t{ids[source]}\t2")
            for other in rng.choice(n_docs, size=3, replace=False):
                if other != source:
                    qrels_lines.append(f"q{q}\t{ids[other]}\t{int(rng.integers(0, 2))}")
    (root / "qrels" / "test.tsv").write_text("\n".join(qrels_lines) + "\n")

    data = load_dataset(root)
    passages = chunk_corpus(data.doc_ids, data.doc_texts, ChunkSpec(size=12, overlap=4))
    doc_run, chunk_run, reference = {}, {}, {}
    for qid, text in zip(data.query_ids, data.query_texts, strict=True):
        d = _tfidf_scores(text, data.doc_texts)
        top = [(data.doc_ids[i], float(d[i])) for i in np.argsort(-d, kind="stable")[:25]]
        doc_run[qid] = top
        c = _tfidf_scores(text, passages.texts)
        order = sorted(range(len(c)), key=lambda i: passages.ids[i].encode(), reverse=True)
        order = sorted(order, key=lambda i: -c[i])[:60]  # trec_eval's order: score, then id descending
        chunk_run[qid] = [(passages.ids[i], float(c[i])) for i in order]
        seen: list[str] = []
        for chunk, _ in chunk_run[qid]:
            doc = chunk.rsplit("#", 1)[0]
            if doc not in seen:
                seen.append(doc)
        reference[qid] = [(doc, float(len(seen) - r)) for r, doc in enumerate(seen)]  # ranked, no ties
    # The chunked form of the document run: each document's best chunk keeps its score.
    from_docs = {
        qid: [(f"{doc}#{j}", score - j * 0.5) for doc, score in rows for j in range(int(rng.integers(1, 4)))]
        for qid, rows in doc_run.items()
    }
    files = {"qrels": str(root / "qrels" / "test.tsv")}
    for name, run in {"doc": doc_run, "chunks": chunk_run, "reference": reference, "from_docs": from_docs}.items():
        _write_run(root / f"{name}.trec", run)
        files[name] = str(root / f"{name}.trec")
    return files


def _eval(capsys: pytest.CaptureFixture[str], qrels: str, run: str, *extra: str) -> dict:
    code, out, err = invoke(capsys, "eval", qrels, run, "-m", MEASURES, "--format", "json", "--per-query", *extra)
    assert code == 0, err
    return json.loads(out)


def test_eval_chunk_run_equals_document_run_with_later_chunks_removed(capsys, collection) -> None:
    got = _eval(capsys, collection["qrels"], collection["chunks"], "--chunk-sep", "#")
    want = _eval(capsys, collection["qrels"], collection["reference"])
    assert got["per_query"] == want["per_query"] and got["aggregate"] == want["aggregate"]
    assert got["chunks"]["unmapped"] == 0 and got["chunks"]["dropped"] > 0
    assert got["aggregate"]["nDCG@10"] > 0.1  # real retrieval: not a vacuous equality of zeros
    unmapped = _eval(capsys, collection["qrels"], collection["chunks"])  # what users got before
    assert unmapped["aggregate"]["nDCG@10"] == 0.0


def test_chunked_document_run_scores_as_the_document_run(capsys, collection) -> None:
    got = _eval(capsys, collection["qrels"], collection["from_docs"], "--chunk-sep", "#")
    want = _eval(capsys, collection["qrels"], collection["doc"])
    assert got["per_query"] == want["per_query"]
    out_of_core = _eval(capsys, collection["qrels"], collection["from_docs"], "--chunk-sep", "#", "--partitions", "3")
    assert out_of_core["per_query"] == want["per_query"] and out_of_core["chunks"] == got["chunks"]
    assert out_of_core["warnings"] == got["warnings"]


def test_compare_and_cutoffs_read_chunks_too(capsys, collection) -> None:
    q, chunks, ref = collection["qrels"], collection["chunks"], collection["reference"]
    code, out, err = invoke(capsys, "compare", q, ref, chunks, "-m", "nDCG@10", "--format", "json", "--chunk-sep", "#")
    assert code == 0, err
    row = json.loads(out)["comparisons"][0]
    assert row["delta"] == 0.0 and row["ties"] == 12
    code, out, err = invoke(capsys, "cutoffs", q, chunks, "--k", "5,10", "--format", "json", "--chunk-sep", "#")
    assert code == 0, err
    table = json.loads(out)["runs"]["chunks"]
    assert table["nDCG@10"] == _eval(capsys, q, ref)["aggregate"]["nDCG@10"]


@pytest.mark.extra("gate")
def test_gate_and_store_add_read_chunks_too(capsys, collection, tmp_path) -> None:
    q, chunks, ref = collection["qrels"], collection["chunks"], collection["reference"]
    config = tmp_path / "gates.yaml"
    config.write_text("gates:\n  - name: ndcg\n    metric: nDCG@10\n    regression_max: 0.0\n")
    code, out, err = invoke(
        capsys, "gate", "--qrels", q, "--run", chunks, "--config", str(config), "--baseline-run", ref,
        "--chunk-sep", "#", "--format", "json", "--no-record",
    )  # fmt: skip
    assert code == 0, err
    gate = json.loads(out)["gates"][0]
    assert gate["delta"] == 0.0 and gate["value"] == _eval(capsys, q, ref)["aggregate"]["nDCG@10"]
    config.write_text("settings:\n  chunk_sep: '#'\ngates:\n  - name: ndcg\n    metric: nDCG@10\n    threshold: 0.01\n")
    code, out, err = invoke(capsys, "gate", "--qrels", q, "--run", chunks, "--config", str(config), "--no-record")
    assert code == 0, err  # the separator from the gate file's settings
    store = str(tmp_path / "r.db")
    code, out, err = invoke(capsys, "store", "add", q, chunks, "-m", "nDCG@10", "--store", store, "--chunk-sep", "#")
    assert code == 0, err
    code, out, err = invoke(capsys, "store", "show", out.strip(), "--format", "json", "--store", store)
    stored = json.loads(out)
    assert stored["aggregate"]["nDCG@10"] == _eval(capsys, q, ref)["aggregate"]["nDCG@10"]
    assert stored["settings"]["chunk_sep"] == "#"


def test_chunk_map_file_gives_the_same_numbers(capsys, collection, tmp_path) -> None:
    rows = {line.split()[2] for line in Path(collection["chunks"]).read_text().splitlines()}
    mapping = tmp_path / "map.jsonl"
    mapping.write_text("".join(json.dumps({"chunk_id": c, "doc_id": c.rsplit("#", 1)[0]}) + "\n" for c in rows))
    got = _eval(capsys, collection["qrels"], collection["chunks"], "--chunk-map", str(mapping))
    want = _eval(capsys, collection["qrels"], collection["reference"])
    assert got["per_query"] == want["per_query"] and got["settings"]["chunk_map"] == str(mapping)


@pytest.mark.parametrize(
    ("name", "text", "where", "says"),
    [
        ("dup.csv", "chunk_id,doc_id\na#0,a\na#1,a\na#0,b\n", "dup.csv:4", "chunk 'a#0' is given twice (first at"),
        ("missing.csv", "chunk_id,doc_id\na#0,a\na#1,\n", "missing.csv:3", "missing document id"),
        ("nochunk.jsonl", '{"chunk_id": "a#0", "doc_id": "a"}\n{"chunk_id": "", "doc_id": "a"}\n', "nochunk.jsonl:2",
         "missing chunk id"),
        ("nocolumn.csv", "chunk,parent\na#0,a\n", "nocolumn.csv", "no document id column"),
    ],
)  # fmt: skip
def test_bad_chunk_map_exits_2_naming_file_and_line(capsys, collection, tmp_path, name, text, where, says) -> None:
    path = tmp_path / name
    path.write_text(text)
    code, out, err = invoke(capsys, "eval", collection["qrels"], collection["chunks"], "--chunk-map", str(path))
    assert code == 2 and out == ""
    assert where in err and says in err and "Traceback" not in err
