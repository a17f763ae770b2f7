"""Span judgments: chunk judgments derived from gold character spans, span recall and precision.

Hand-worked cases first (offsets drawn on a 40-character document), then the measures against
a brute-force oracle that counts characters as Python sets, then the command line.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankgate
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.core.spans import ChunkOffsets, SpanJudgments, chunk_qrels
from rankgate.rag.spans import span_measures, spans_of_chunk_qrels
from tests.cli_support import invoke

#            0         10        20        30        40
# doc d:     |---------|---------|---------|---------|
# gold:                [g2 10..20)    [g1 25..32)
# chunks A:  [a0 0..12)[a1 12..24)[a2 24..36)[a3 36..40)
CHUNKS_A = ChunkOffsets.of([("a0", "d", 0, 12), ("a1", "d", 12, 24), ("a2", "d", 24, 36), ("a3", "d", 36, 40)])
GOLD = SpanJudgments.of([("q", "d", 10, 20, 2), ("q", "d", 25, 32, 1)])


def test_partial_overlap_split_span_and_uncovered_chunk() -> None:
    # a0 holds 2 of g2's characters (partial); g2 is split across a0 and a1; a2 holds all of g1;
    # a3 overlaps nothing: judged 0, as a chunk of a judged document.
    assert chunk_qrels(GOLD, CHUNKS_A).to_dict() == {"q": {"a0": 2, "a1": 2, "a2": 1, "a3": 0}}


def test_chunk_spanning_two_spans_takes_the_larger_grade() -> None:
    wide = ChunkOffsets.of([("w0", "d", 0, 8), ("w1", "d", 8, 40)])  # w1 holds part of g2 and all of g1
    assert chunk_qrels(GOLD, wide).to_dict() == {"q": {"w0": 0, "w1": 2}}
    low_first = SpanJudgments.of([("q", "d", 25, 32, 1), ("q", "d", 10, 20, 3)])  # order does not matter
    assert chunk_qrels(low_first, wide).to_dict() == {"q": {"w0": 0, "w1": 3}}


def test_overlap_threshold_is_a_share_of_the_shorter() -> None:
    # a0 & g2: 2 shared of min(12, 10) = 0.2; a1 & g2: 8 of 10 = 0.8; a2 & g1: 7 of 7 = 1.0
    assert chunk_qrels(GOLD, CHUNKS_A, overlap=0.2).to_dict()["q"]["a0"] == 2
    assert chunk_qrels(GOLD, CHUNKS_A, overlap=0.21).to_dict()["q"] == {"a0": 0, "a1": 2, "a2": 1, "a3": 0}
    assert chunk_qrels(GOLD, CHUNKS_A, overlap=1.0).to_dict()["q"] == {"a0": 0, "a1": 0, "a2": 1, "a3": 0}


def test_chunks_of_unjudged_documents_stay_unjudged() -> None:
    chunks = ChunkOffsets.of([("a0", "d", 0, 40), ("b0", "other", 0, 50)])
    assert chunk_qrels(GOLD, chunks).to_dict() == {"q": {"a0": 2}}


def test_span_recall_and_precision_hand_worked() -> None:
    # ranking a1, a2, a0: gold characters 10 (g2) + 7 (g1) = 17
    run = Run.from_dict({"q": ["a1", "a2", "a0"]})
    res = span_measures(GOLD, CHUNKS_A, run, [1, 2, 3])
    assert res.aggregate == {
        "SpanRecall@1": 8 / 17,  # a1 [12, 24) holds g2's 12..20
        "SpanPrecision@1": 8 / 12,
        "SpanRecall@2": 15 / 17,  # + a2 [24, 36) holds g1 whole
        "SpanPrecision@2": 15 / 24,
        "SpanRecall@3": 17 / 17,  # + a0 [0, 12) holds g2's 10..12
        "SpanPrecision@3": 17 / 36,
    }


def test_overlapping_chunks_and_spans_count_characters_once() -> None:
    spans = SpanJudgments.of([("q", "d", 10, 20, 1), ("q", "d", 15, 25, 1), ("q", "d", 0, 5, 0)])  # gold: 10..25
    windows = ChunkOffsets.of([("s0", "d", 0, 20), ("s1", "d", 10, 30)])  # a sliding window, overlap 10
    res = span_measures(spans, windows, Run.from_dict({"q": ["s0", "s1"]}), [2])
    assert res.aggregate == {"SpanRecall@2": 15 / 15, "SpanPrecision@2": 15 / 30}  # union 0..30, not 40
    strict = span_measures(spans, windows, Run.from_dict({"q": ["s0", "s1"]}), [2], settings=rankgate.Settings(rel=2))
    assert strict.aggregate["SpanRecall@2"] == 0.0  # no span of grade >= 2: no gold character


def test_query_set_unknown_ids_and_empty_rankings() -> None:
    spans = SpanJudgments.of([("q1", "d", 10, 20, 1), ("q2", "d", 0, 4, 1)])
    run = Run.from_dict({"q1": ["zz", "a1"], "q3": ["a0"]})
    res = span_measures(spans, CHUNKS_A, run, [1, 2])
    assert res.query_ids == ["q1", "q2"] and res.per_query["q2"] == dict.fromkeys(res.names, 0.0)
    assert res.per_query["q1"]["SpanRecall@1"] == 0.0 and res.per_query["q1"]["SpanRecall@2"] == 0.8
    assert res.queries == {"evaluated": 2, "missing_from_run": 1, "run_only": 1, "no_relevant": 0}
    assert res.warnings == ["1 retrieved ids in the top 2 are not in the chunk offsets; they cover no text"]
    inter = span_measures(spans, CHUNKS_A, run, [1], settings=rankgate.Settings(queries="intersection"))
    assert inter.query_ids == ["q1"]


# -- qrels from one chunking score a run over another -------------------------------------------

CHUNKS_B = ChunkOffsets.of([("b0", "d", 0, 18), ("b1", "d", 14, 32), ("b2", "d", 28, 40)])  # windows, overlap 4


def test_qrels_from_one_chunking_score_a_run_over_another() -> None:
    qrels_a = Qrels.from_dict({"q": {"a0": 0, "a1": 2, "a2": 1, "a3": 0}})  # judged on chunking A
    spans = spans_of_chunk_qrels(qrels_a, CHUNKS_A)  # a1 -> [12, 24) grade 2, a2 -> [24, 36) grade 1, ...
    qrels_b = chunk_qrels(spans, CHUNKS_B)
    # b0 [0,18) meets a1's [12,24): 2; b1 [14,32) meets a1 and a2: 2; b2 [28,40) meets a2: 1
    assert qrels_b.to_dict() == {"q": {"b0": 2, "b1": 2, "b2": 1}}
    res = rankgate.evaluate(qrels_b, {"q": ["b2", "b0", "b1"]}, ["P@1", "nDCG@3", "RR(rel=2)"])
    ideal = 2 + 2 / np.log2(3) + 1 / np.log2(4)
    assert res["P@1"] == 1.0 and res["RR(rel=2)"] == 0.5
    assert res["nDCG@3"] == pytest.approx((1 + 2 / np.log2(3) + 2 / np.log2(4)) / ideal, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=8), st.lists(st.integers(0, 3), min_size=8, max_size=8))
def test_judgments_survive_a_round_trip_through_spans(lengths: list[int], grades: list[int]) -> None:
    """Judged tiling chunks, as spans, judge the same chunks the same way."""
    ends = np.cumsum(lengths)
    chunks = ChunkOffsets.of(
        [(f"c{i}", "d", int(e - n), int(e)) for i, (n, e) in enumerate(zip(lengths, ends, strict=True))]
    )
    qrels = Qrels.from_dict({"q": {f"c{i}": grades[i] for i in range(len(lengths))}})
    assert chunk_qrels(spans_of_chunk_qrels(qrels, chunks), chunks).to_dict() == qrels.to_dict()


def _oracle(spans: list, chunks: dict, ranking: list, k: int) -> tuple[float, float]:
    """Characters as sets of (doc, i): the definition, character by character."""
    gold = {(d, i) for d, s, e in spans for i in range(s, e)}
    shown = {(chunks[c][0], i) for c in ranking[:k] for i in range(chunks[c][1], chunks[c][2])}
    both = len(gold & shown)
    return (both / len(gold) if gold else 0.0), (both / len(shown) if shown else 0.0)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000))
def test_span_measures_match_a_character_set_oracle(seed: int) -> None:
    rng = np.random.default_rng(seed)
    chunks = {}
    for doc in ("d", "e"):
        for i in range(int(rng.integers(1, 6))):
            start = int(rng.integers(0, 50))
            chunks[f"{doc}{i}"] = (doc, start, start + int(rng.integers(1, 20)))
    extent = {doc: max(e for d, _, e in chunks.values() if d == doc) for doc in {d for d, _, _ in chunks.values()}}
    spans = []
    for _ in range(int(rng.integers(1, 4))):
        doc = str(rng.choice(sorted(extent)))
        start = int(rng.integers(0, extent[doc]))
        spans.append((doc, start, int(rng.integers(start + 1, extent[doc] + 1))))
    ranking = list(rng.permutation(sorted(chunks)))
    res = span_measures(
        SpanJudgments.of([("q", d, s, e, 1) for d, s, e in spans]),
        ChunkOffsets.of([(c, *v) for c, v in chunks.items()]),
        Run.from_dict({"q": ranking}),
        [1, 3, 10],
    )
    for k in (1, 3, 10):
        recall, precision = _oracle(spans, chunks, ranking, k)
        assert res.aggregate[f"SpanRecall@{k}"] == pytest.approx(recall, abs=1e-15)
        assert res.aggregate[f"SpanPrecision@{k}"] == pytest.approx(precision, abs=1e-15)


# -- the command line ---------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path):
    spans = tmp_path / "gold.jsonl"
    spans.write_text(
        '{"query_id": "q", "doc_id": "d", "start": 10, "end": 20, "grade": 2}\n'
        '{"query_id": "q", "doc_id": "d", "start": 25, "end": 32, "grade": 1}\n'
    )
    offsets = tmp_path / "chunks_b.csv"
    offsets.write_text("chunk_id,doc_id,start,end\nb0,d,0,18\nb1,d,14,32\nb2,d,28,40\n")
    run = tmp_path / "run_b.trec"
    run.write_text("q Q0 b2 1 3 x\nq Q0 b0 2 2 x\nq Q0 b1 3 1 x\n")
    return str(spans), str(offsets), str(run), tmp_path


def test_cli_eval_with_span_judgments_and_the_spans_verb(capsys, files) -> None:
    spans, offsets, run, _ = files
    code, out, err = invoke(capsys, "eval", spans, run, "--chunk-offsets", offsets, "-m", "P@1,RR", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    # b0 meets g2 (2), b1 meets both (2), b2 meets g1 (1): the run's top chunk b2 is relevant
    assert data["aggregate"] == {"P@1": 1.0, "RR": 1.0}
    assert data["settings"]["chunk_offsets"] == offsets and data["settings"]["span_overlap"] == 0.0
    code, out, err = invoke(capsys, "eval", spans, run, "--chunk-offsets", offsets, "-m", "P@1", "--span-overlap",
                            "0.9", "--format", "json")  # fmt: skip
    assert json.loads(out)["aggregate"] == {"P@1": 0.0}  # b2 holds 4 of g1's 7 characters: 0.57 < 0.9
    code, out, err = invoke(capsys, "spans", spans, run, "--chunk-offsets", offsets, "--k", "1,3", "--format", "json")
    assert code == 0, err
    # gold 17 characters; b2 [28,40) holds 4 (28..32); all three cover 0..40, all 17
    assert json.loads(out)["aggregate"] == {
        "SpanRecall@1": 4 / 17,
        "SpanPrecision@1": 4 / 12,
        "SpanRecall@3": 1.0,
        "SpanPrecision@3": 17 / 40,
    }


@pytest.mark.parametrize(
    ("which", "text", "where", "says"),
    [
        ("spans", '{"query_id": "q", "doc_id": "d", "start": 5, "end": 5, "grade": 1}\n', ":1", "start 5 >= end 5"),
        ("spans", "query_id,doc_id,start,end,grade\nq,d,0,4,1\nq,d,30,41,1\n", ":3", "beyond document 'd'"),
        ("spans", "query_id,doc_id,start,end,grade\nq,zz,0,4,1\n", ":2", "document 'zz' has no chunk"),
        ("spans", "query_id,doc_id,start,end,grade\nq,d,-1,4,1\n", ":2", "before the document's first character"),
        ("spans", "query_id,doc_id,start,end,grade\nq,d,1.5,4,1\n", ":2", "not a whole number"),
        ("offsets", "chunk_id,doc_id,start,end\nb0,d,0,18\nb0,d,18,40\n", ":3", "chunk 'b0' is given twice"),
        ("offsets", "chunk_id,doc_id,start,end\nb0,d,9,3\n", ":2", "start 9 >= end 3"),
    ],
)  # fmt: skip
def test_bad_spans_and_offsets_exit_2_naming_file_and_line(capsys, files, which, text, where, says) -> None:
    spans, offsets, run, tmp = files
    bad = tmp / ("bad.jsonl" if text.startswith("{") else "bad.csv")
    bad.write_text(text)
    args = (
        (str(bad), run, "--chunk-offsets", offsets) if which == "spans" else (spans, run, "--chunk-offsets", str(bad))
    )
    for verb in ("eval", "spans"):
        code, out, err = invoke(capsys, verb, *args)
        assert code == 2 and out == "", (verb, err)
        assert f"{bad}{where}" in err and says in err and "Traceback" not in err
