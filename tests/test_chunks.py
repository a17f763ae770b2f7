"""A run of chunks read as a run of documents (--chunk-sep, --chunk-map, --chunk-agg).

The claim: a chunked run evaluates, with --chunk-sep, to exactly the numbers of the document
run obtained by dropping each document's later chunks (in evaluation order) and renaming the
chunks to their documents. The reference here is that sentence in plain Python.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankgate
from rankgate.core.chunks import ChunkCounts, ChunkTable, document_ids, to_documents
from rankgate.core.run import Run
from rankgate.errors import ConfigError
from rankgate.evaluation.settings import Settings
from tests.randomized import random_collection

MEASURES = ["AP", "nDCG@5", "nDCG", "RR", "P@3", "R@10", "Bpref", "Judged@5", "Success@1", "NumRet", "NumRelRet"]


def evaluation_order(items: dict[str, float], ties: str = "trec") -> list[tuple[str, float]]:
    """Score descending; among equal scores id descending byte-wise (trec_eval) or input order."""
    listed = list(items.items())
    if ties == "trec":
        listed = sorted(listed, key=lambda kv: kv[0].encode(), reverse=True)
    return sorted(listed, key=lambda kv: -kv[1])


def later_chunks_removed(run: dict[str, dict[str, float]], doc_of, ties: str = "trec") -> dict[str, list[str]]:
    """The reference: each query's chunk ranking, later chunks of a document dropped, ids renamed."""
    out: dict[str, list[str]] = {}
    for qid, chunks in run.items():
        seen: list[str] = []
        for chunk, _ in evaluation_order(chunks, ties):
            if doc_of(chunk) not in seen:
                seen.append(doc_of(chunk))
        out[qid] = seen
    return out


def same(a: rankgate.Results, b: rankgate.Results) -> None:
    assert a.query_ids == b.query_ids
    np.testing.assert_array_equal(a.values, b.values)  # exactly, not approximately


# -- hand-worked -------------------------------------------------------------------------


def test_hand_worked_first_max_sum() -> None:
    # q1's chunks in evaluation order: b#1 (3), a#0 (2), c#0 (2), a#2 (1.5), b#0 (1)
    # a#0 and c#0 tie at 2: trec order puts c#0 first (c > a), so the chunk order is b, c, a.
    run = {"q1": {"a#0": 2.0, "a#2": 1.5, "b#1": 3.0, "b#0": 1.0, "c#0": 2.0}}
    qrels = {"q1": {"a": 1}}
    first = rankgate.evaluate(qrels, run, ["RR"], settings={"chunk_sep": "#"})
    assert first["RR"] == 1 / 3  # b, c, a: a at rank 3
    summed = rankgate.evaluate(qrels, run, ["RR"], settings={"chunk_sep": "#", "chunk_agg": "sum"})
    assert summed["RR"] == 1 / 2  # sums: b 4.0, a 3.5, c 2.0
    docs, counts = to_documents(Run.from_dict(run), sep="#")
    assert docs.to_dict() == {"q1": {"b": 3.0, "c": 2.0, "a": 2.0}}
    assert counts == ChunkCounts(mapped=5, unmapped=0, collapsed=2, dropped=2)


def test_first_keeps_the_chunk_order_where_max_breaks_ties_by_doc_id() -> None:
    # A chunk map whose chunk ids order unlike their documents: x1 -> "b", x2 -> "a", tied scores.
    # Chunk order (ids descending): x2 then x1, i.e. a then b. Document ties (ids descending): b then a.
    table = ChunkTable.of(["x1", "x2"], ["b", "a"])
    run = Run.from_dict({"q1": {"x1": 1.0, "x2": 1.0}})
    first, _ = to_documents(run, table=table, agg="first")
    assert [d for _, d, _, _ in first.iter_rows()] == ["a", "b"]
    maxp, _ = to_documents(run, table=table, agg="max")
    assert [d for _, d, _, _ in maxp.iter_rows()] == ["b", "a"]


def test_document_ids_split_at_the_last_separator_and_count_the_rest() -> None:
    docs, mapped = document_ids(["a::1", "a::b::2", "plain", "::3", "x::"], sep="::")
    assert docs.to_pylist() == ["a", "a::b", "plain", "::3", "x"]
    assert mapped.tolist() == [True, True, False, False, True]
    table = ChunkTable.of(["c1", "c2"], ["d1", "d1"])
    docs, mapped = document_ids(["c2", "zz", "c1"], table=table)
    assert docs.to_pylist() == ["d1", "zz", "d1"] and mapped.tolist() == [True, False, True]


def test_counts_and_warnings_name_unmapped_ids() -> None:
    run = {"q1": {"a#0": 3.0, "zz": 2.0, "a#1": 1.0}, "q2": {"yy": 1.0}}
    res = rankgate.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, run, ["P@1"], settings={"chunk_sep": "#"})
    assert res.to_dict()["chunks"] == {
        "mapped": 2,
        "unmapped": 2,
        "collapsed": 1,
        "dropped": 1,
        "unmapped_ids": ["yy", "zz"],
    }
    assert any("2 run rows are not chunk ids by separator '#'" in w for w in res.warnings)
    settings_out = res.to_dict()["settings"]
    assert (settings_out["chunk_sep"], settings_out["chunk_agg"]) == ("#", "first")
    plain = rankgate.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["P@1"]).to_dict()
    assert "chunks" not in plain and "chunk_sep" not in plain["settings"]  # absent unless in use


@pytest.mark.parametrize(
    ("policies", "key"),
    [
        ({"chunk_sep": "#", "chunk_map": "m.csv"}, "chunk_map"),
        ({"chunk_sep": ""}, "chunk_sep"),
        ({"chunk_agg": "mean"}, "chunk_agg"),
        ({"span_overlap": 1.5}, "span_overlap"),
        ({"chunk_offsets": "o.csv", "chunk_sep": "#"}, "chunk_offsets"),
    ],
)
def test_settings_refuse_bad_chunk_policies(policies: dict, key: str) -> None:
    with pytest.raises(ConfigError) as e:
        Settings(**policies)
    assert e.value.key_path == key


# -- the property: any chunking, any ties ---------------------------------------------------


def chunked(run: dict[str, dict[str, float]], seed: int) -> dict[str, dict[str, float]]:
    """Cut each document of a run into 1-4 chunks: its best chunk keeps the document's score,
    the others score at most that (quarter steps: ties with other documents are common)."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, float]] = {}
    for qid, docs in run.items():
        out[qid] = {}
        for doc, score in docs.items():
            parts = rng.choice(9, size=int(rng.integers(1, 5)), replace=False)
            out[qid][f"{doc}#{parts[0]}"] = score
            for p in parts[1:]:
                out[qid][f"{doc}#{p}"] = score - float(rng.integers(0, 4)) / 4.0
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000), st.sampled_from(["trec", "input"]))
def test_chunked_run_equals_document_run_with_later_chunks_removed(seed: int, cut: int, ties: str) -> None:
    qrels, run = random_collection(seed)
    if not qrels:
        return
    chunks = chunked(run, cut)
    got = rankgate.evaluate(qrels, chunks, MEASURES, settings={"chunk_sep": "#", "ties": ties})
    reference = later_chunks_removed(chunks, lambda c: c.rsplit("#", 1)[0], ties)
    same(got, rankgate.evaluate(qrels, reference, MEASURES))  # a ranked list: no ties left to break
    # the best chunk carries the document's score, so that run is the document run itself
    same(got, rankgate.evaluate(qrels, run, MEASURES, ties=ties))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_chunk_map_with_ids_unlike_documents_keeps_the_chunk_order(seed: int, cut: int) -> None:
    qrels, run = random_collection(seed)
    if not qrels:
        return
    chunks = chunked(run, cut)
    rng = np.random.default_rng(cut)
    names = {c: f"c{rng.integers(10**6)}-{i}" for i, c in enumerate(sorted({c for d in chunks.values() for c in d}))}
    renamed = {q: {names[c]: s for c, s in d.items()} for q, d in chunks.items()}
    doc_of = {v: k.rsplit("#", 1)[0] for k, v in names.items()}
    table = ChunkTable.of(list(doc_of), list(doc_of.values()))
    folded, counts = to_documents(Run.from_dict(renamed) if renamed else Run.from_dict({}), table=table)
    assert counts.unmapped == 0 and counts.mapped == sum(len(d) for d in renamed.values())
    got = rankgate.evaluate(qrels, folded, MEASURES)
    same(got, rankgate.evaluate(qrels, later_chunks_removed(renamed, doc_of.__getitem__), MEASURES))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000), st.sampled_from(["max", "sum"]))
def test_max_and_sum_are_document_runs_of_those_scores(seed: int, cut: int, agg: str) -> None:
    qrels, run = random_collection(seed)
    if not qrels:
        return
    chunks = chunked(run, cut)
    docs: dict[str, dict[str, float]] = {}
    for qid, items in chunks.items():
        docs[qid] = {}
        for chunk, score in items.items():
            doc = chunk.rsplit("#", 1)[0]
            old = docs[qid].get(doc)
            docs[qid][doc] = score if old is None else (max(old, score) if agg == "max" else old + score)
    got = rankgate.evaluate(qrels, chunks, MEASURES, settings={"chunk_sep": "#", "chunk_agg": agg})
    same(got, rankgate.evaluate(qrels, docs, MEASURES))
