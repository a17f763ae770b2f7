"""The same tiny collection in every supported format gives the same evaluation."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rankgate
import rankgate.io
import rankgate.io.source
from rankgate.cli import main
from rankgate.io import read_qrels, read_run, write_qrels, write_run
from tests.cli_support import exit_code

# Graded judgments; q3 is judged but absent from the run (it scores 0), q4 is only in the run.
QRELS = {"q1": {"d1": 1, "d2": 0, "d5": 2}, "q2": {"d3": 2, "d4": 0}, "q3": {"d9": 1}}
RUN = {
    "q1": {"d2": 2.0, "d3": 1.5, "d5": 1.0, "d1": 0.5},
    "q2": {"d3": 3.25, "d4": 1.0},
    "q4": {"d1": 1.0},
}
MEASURES = ["P@2", "RR", "nDCG@3", "AP", "NumRelRet", "Judged@2"]
# q1 ranks d2 (0), d3 (unjudged), d5 (2), d1 (1); relevant d1, d5.
#   P@2 0; RR 1/3; AP (1/3 + 2/4) / 2 = 5/12; nDCG@3 = (2/log2 4) / (2 + 1/log2 3); Judged@2 1/2.
# q2 ranks d3 (2), d4 (0): P@2 1/2; RR 1; AP 1; nDCG@3 1; Judged@2 1.
# q3: every measure 0.  Means over the 3 qrels queries; NumRelRet is a sum (2 + 1).
IDEAL_Q1 = 2 + 1 / 1.584962500721156
EXPECTED = {
    "P@2": 0.5 / 3,
    "RR": (1 / 3 + 1) / 3,
    "nDCG@3": (1 / IDEAL_Q1 + 1) / 3,
    "AP": (5 / 12 + 1) / 3,
    "NumRelRet": 3.0,
    "Judged@2": (0.5 + 1) / 3,
}
EXPECTED_QUERIES = {"evaluated": 3, "missing_from_run": 1, "run_only": 1, "no_relevant": 0}


def _rows(mapping: dict[str, dict[str, float]]) -> list[tuple[str, str, float]]:
    return [(q, d, v) for q, docs in mapping.items() for d, v in docs.items()]


def trec_qrels_text() -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, d, g in _rows(QRELS))


def trec_run_text() -> str:
    lines = []
    for q, docs in RUN.items():
        ranked = sorted(docs.items(), key=lambda kv: -kv[1])
        lines += [f"{q} Q0 {d} {rank} {s} sys" for rank, (d, s) in enumerate(ranked, start=1)]
    return "\n".join(lines) + "\n"


def check(results: rankgate.Results) -> None:
    assert results.aggregate == pytest.approx(EXPECTED)
    assert results.queries == EXPECTED_QUERIES


@pytest.fixture
def trec_files(tmp_path: Path) -> tuple[Path, Path]:
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(trec_qrels_text())
    r.write_text(trec_run_text())
    return q, r


def test_python_dicts():
    check(rankgate.evaluate(QRELS, RUN, MEASURES))


def test_trec_files(trec_files):
    q, r = trec_files
    check(rankgate.evaluate(q, r, MEASURES))
    check(rankgate.evaluate(str(q), str(r), MEASURES))
    assert read_qrels(q).to_dict() == QRELS
    assert read_run(r).to_dict() == RUN
    assert read_run(r).name == "run"


# --------------------------------------------------------------------------------------
# Compressed files: detected by content, with or without a suffix
# --------------------------------------------------------------------------------------
def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as stream:
        stream.write(data)
    return sink.getvalue().to_pybytes()


COMPRESSORS = {
    "gzip": (gzip.compress, ".gz"),
    "bz2": (bz2.compress, ".bz2"),
    "xz": (lzma.compress, ".xz"),
    "zstd": (_zstd, ".zst"),
}


@pytest.mark.parametrize("suffix", [True, False], ids=["with-suffix", "no-suffix"])
@pytest.mark.parametrize("codec", list(COMPRESSORS))
def test_compressed_trec(tmp_path, codec, suffix):
    compress, ext = COMPRESSORS[codec]
    q = tmp_path / ("qrels.txt" + (ext if suffix else ""))
    r = tmp_path / ("bm25.trec" + (ext if suffix else ""))
    q.write_bytes(compress(trec_qrels_text().encode()))
    r.write_bytes(compress(trec_run_text().encode()))
    assert q.read_bytes()[:2] != b"q1"  # really compressed
    check(rankgate.evaluate(q, r, MEASURES))
    assert read_run(r).name == "bm25"


def test_zstd_written_by_pyarrow_stream(tmp_path):
    """A zstd file written with pyarrow's CompressedOutputStream straight to a path."""
    r = tmp_path / "run"
    with pa.CompressedOutputStream(str(r), "zstd") as stream:
        stream.write(trec_run_text().encode())
    assert r.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert read_run(r).to_dict() == RUN


def test_compressed_json_and_jsonl_without_suffix(tmp_path):
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_bytes(gzip.compress(json.dumps(QRELS).encode()))
    rows = [json.dumps({"qid": qid, "docid": d, "score": s}) for qid, d, s in _rows(RUN)]
    r.write_bytes(lzma.compress(("\n".join(rows) + "\n").encode()))
    check(rankgate.evaluate(q, r, MEASURES))


# --------------------------------------------------------------------------------------
# JSON, JSONL, CSV/TSV, Parquet
# --------------------------------------------------------------------------------------
def test_json_mappings(tmp_path):
    q = tmp_path / "qrels.json"
    r = tmp_path / "run.json"
    q.write_text(json.dumps(QRELS, indent=2))
    r.write_text(json.dumps(RUN))
    check(rankgate.evaluate(q, r, MEASURES))


def test_json_ranked_lists(tmp_path):
    """``{qid: [docid, ...]}``: for a run the list order is the ranking; for qrels, grade 1."""
    q = tmp_path / "qrels.json"
    r = tmp_path / "run.json"
    q.write_text(json.dumps({"q1": ["d1", "d5"], "q2": ["d3"], "q3": ["d9"]}))
    r.write_text(json.dumps({"q1": ["d2", "d3", "d5", "d1"], "q2": ["d3", "d4"], "q4": ["d1"]}))
    assert read_qrels(q).to_dict() == {"q1": {"d1": 1, "d5": 1}, "q2": {"d3": 1}, "q3": {"d9": 1}}
    ranked = read_run(r)
    assert [d for qid, d, _, _ in ranked.iter_rows() if qid == "q1"] == ["d2", "d3", "d5", "d1"]
    binary = {q: {d: 1 for d, g in docs.items() if g > 0} for q, docs in QRELS.items()}
    want = rankgate.evaluate(binary, RUN, MEASURES).aggregate
    got = rankgate.evaluate(q, r, MEASURES)
    assert got.aggregate == pytest.approx(want)
    # Binary measures do not see grades, so they equal the graded collection's values.
    for name in ("P@2", "RR", "AP", "NumRelRet"):
        assert got[name] == pytest.approx(EXPECTED[name])
    # nDCG does: with all gains 1, q1 scores (1/log2 4) / (1 + 1/log2 3).
    assert got["nDCG@3"] == pytest.approx((0.5 / (1 + 1 / 1.584962500721156) + 1) / 3)


@pytest.mark.parametrize(
    ("qid_key", "doc_key"),
    [("qid", "docid"), ("query_id", "doc_id"), ("query-id", "corpus-id")],
)
def test_jsonl(tmp_path, qid_key, doc_key):
    q = tmp_path / "qrels.jsonl"
    r = tmp_path / "run.jsonl"
    q.write_text("".join(json.dumps({qid_key: a, doc_key: b, "relevance": g}) + "\n" for a, b, g in _rows(QRELS)))
    r.write_text("".join(json.dumps({qid_key: a, doc_key: b, "score": s}) + "\n" for a, b, s in _rows(RUN)))
    check(rankgate.evaluate(q, r, MEASURES))


def test_jsonl_extra_keys_and_numeric_ids(tmp_path):
    r = tmp_path / "run.ndjson"
    r.write_text('{"qid": 1, "docid": 10, "score": 2, "text": "x"}\n{"qid": 1, "docid": 11, "score": 1.5}\n')
    assert read_run(r).to_dict() == {"1": {"10": 2.0, "11": 1.5}}


@pytest.mark.parametrize(("ext", "sep"), [(".csv", ","), (".tsv", "\t")])
def test_delimited_with_header(tmp_path, ext, sep):
    q = tmp_path / ("qrels" + ext)
    r = tmp_path / ("run" + ext)
    q.write_text(
        sep.join(["query_id", "doc_id", "grade"]) + "\n" + "".join(f"{a}{sep}{b}{sep}{g}\n" for a, b, g in _rows(QRELS))
    )
    r.write_text(
        sep.join(["qid", "docid", "score"]) + "\n" + "".join(f"{a}{sep}{b}{sep}{s}\n" for a, b, s in _rows(RUN))
    )
    check(rankgate.evaluate(q, r, MEASURES))


def test_delimited_ids_stay_text(tmp_path):
    """Ids are text even when they look like numbers, whatever the header's spacing or quoting."""
    for i, header in enumerate(["qid,docid,score", "qid, docid, score", '"qid","docid","score"']):
        r = tmp_path / f"run{i}.csv"
        r.write_text(f"{header}\nq1, 001, 1.5\nq1,1,2\n007,2,1e3\n")
        assert read_run(r).to_dict() == {"007": {"2": 1000.0}, "q1": {"1": 2.0, "001": 1.5}}


def test_beir_qrels_tsv(tmp_path, trec_files):
    _, r = trec_files
    q = tmp_path / "test.tsv"
    q.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{a}\t{b}\t{g}\n" for a, b, g in _rows(QRELS)))
    check(rankgate.evaluate(q, r, MEASURES))
    # BEIR's qrels have no recognisable extension in some dumps: the header is sniffed.
    plain = tmp_path / "qrels_test"
    plain.write_bytes(q.read_bytes())
    check(rankgate.evaluate(plain, r, MEASURES))


def test_parquet(tmp_path):
    q = tmp_path / "qrels.parquet"
    r = tmp_path / "run.parquet"
    qa, qb, qg = zip(*_rows(QRELS), strict=True)
    ra, rb, rs = zip(*_rows(RUN), strict=True)
    pq.write_table(pa.table({"query_id": qa, "doc_id": qb, "relevance": pa.array(qg, pa.int32())}), q)
    pq.write_table(pa.table({"qid": ra, "docid": rb, "score": pa.array(rs, pa.float32())}), r)
    check(rankgate.evaluate(q, r, MEASURES))
    # Detected by content too.
    bare = tmp_path / "run.bin"
    bare.write_bytes(r.read_bytes())
    check(rankgate.evaluate(q, bare, MEASURES))


def _frame_columns(mapping, value_name):
    a, b, v = zip(*_rows(mapping), strict=True)
    return {"query_id": list(a), "doc_id": list(b), value_name: list(v)}


def test_pandas_frames():
    q = pd.DataFrame(_frame_columns(QRELS, "relevance"))
    r = pd.DataFrame(_frame_columns(RUN, "score"))
    check(rankgate.evaluate(q, r, MEASURES))


def test_polars_frames():
    q = pl.DataFrame(_frame_columns(QRELS, "grade"))
    r = pl.DataFrame(_frame_columns(RUN, "score"))
    check(rankgate.evaluate(q, r, MEASURES))


def test_frames_with_integer_ids():
    q = pd.DataFrame({"qid": [1, 1], "docid": [10, 11], "grade": [1, 0]})
    r = pl.DataFrame({"qid": [1, 1], "docid": [11, 10], "score": [2.0, 1.0]})
    res = rankgate.evaluate(q, r, ["RR", "P@1"])
    assert res.aggregate == {"RR": 0.5, "P@1": 0.0}
    assert res.query_ids == ["1"]


def test_every_format_agrees_per_query(tmp_path, trec_files):
    """Not only the means: every query's values agree between formats."""
    q, r = trec_files
    want = rankgate.evaluate(QRELS, RUN, MEASURES)
    got = rankgate.evaluate(q, r, MEASURES)
    assert got.query_ids == want.query_ids == ["q1", "q2", "q3"]
    for qid in want.query_ids:
        assert got.per_query[qid] == pytest.approx(want.per_query[qid])
    assert want.per_query["q1"] == pytest.approx(
        {"P@2": 0.0, "RR": 1 / 3, "nDCG@3": 1 / IDEAL_Q1, "AP": 5 / 12, "NumRelRet": 2.0, "Judged@2": 0.5}
    )


# --------------------------------------------------------------------------------------
# Format overrides
# --------------------------------------------------------------------------------------
def test_format_override_in_the_library(tmp_path):
    r = tmp_path / "run.json"  # misleading: TREC text inside
    r.write_text(trec_run_text())
    with pytest.raises(rankgate.InputError):
        read_run(r)
    assert read_run(r, format="trec").to_dict() == RUN


def test_unknown_format_is_an_input_error(tmp_path, trec_files):
    _, r = trec_files
    with pytest.raises(rankgate.InputError, match="unknown format 'xml'"):
        read_run(r, format="xml")


def test_format_overrides_in_the_cli(tmp_path, capsys):
    q = tmp_path / "qrels.csv"  # really TREC
    r = tmp_path / "run.txt"  # really JSONL
    q.write_text(trec_qrels_text())
    r.write_text("".join(json.dumps({"qid": a, "docid": b, "score": s}) + "\n" for a, b, s in _rows(RUN)))
    with pytest.raises(SystemExit) as exc:
        main(["eval", str(q), str(r), "-m", "AP"])
    assert exc.value.code == 2
    assert "qrels.csv" in capsys.readouterr().err
    exit_code("eval", str(q), str(r), "-m", ",".join(MEASURES), "--qrels-format", "trec", "--run-format", "jsonl",
              "--format", "json")  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["aggregate"] == pytest.approx(EXPECTED)


# --------------------------------------------------------------------------------------
# Writers: round trip and atomicity
# --------------------------------------------------------------------------------------
def test_write_run_round_trip(tmp_path):
    run = rankgate.Run.from_dict(RUN, name="sys")
    path = tmp_path / "out" / "sys.run"
    write_run(run, path)
    lines = path.read_text().splitlines()
    assert lines[0] == "q1 Q0 d2 1 2.0 sys"
    assert lines[3] == "q1 Q0 d1 4 0.5 sys"
    back = read_run(path)
    assert back.to_dict() == run.to_dict()
    assert back.name == "sys"


def test_write_run_keeps_scores_exact_and_ties_in_trec_order(tmp_path):
    run = rankgate.Run.from_dict({"q1": {"a": 0.1 + 0.2, "b": 1e-300, "c": 0.1 + 0.2}})
    path = tmp_path / "r.trec"
    write_run(run, path, tag="t")
    # Ties in score: doc id descending, so c ranks above a.
    assert path.read_text().splitlines()[:2] == [f"q1 Q0 c 1 {0.1 + 0.2!r} t", f"q1 Q0 a 2 {0.1 + 0.2!r} t"]
    assert read_run(path).to_dict() == run.to_dict()


def test_write_qrels_round_trip(tmp_path):
    qrels = rankgate.Qrels.from_dict({**QRELS, "q5": {"d1": -1}})
    path = tmp_path / "qrels.txt"
    write_qrels(qrels, path)
    assert read_qrels(path).to_dict() == qrels.to_dict()
    assert "q5 0 d1 -1" in path.read_text().splitlines()


class _Boom(RuntimeError):
    pass


def _folder_listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_write_run_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "run.txt"
    path.write_text("old contents\n")

    def fail(fd):
        raise _Boom("disk full")

    # Fail after the text has gone to the temporary file, before it replaces the target.
    monkeypatch.setattr(rankgate.io.source.os, "fsync", fail)
    with pytest.raises(_Boom):
        write_run(rankgate.Run.from_dict(RUN), path)
    assert path.read_text() == "old contents\n"
    assert _folder_listing(tmp_path) == ["run.txt"]


class _FailingQrels(rankgate.Qrels):
    """Yields one query's judgments, then fails: the writer has written part of the file."""

    def __init__(self):
        super().__init__(["q1", "q1"], ["d1", "d2"], [1, 0])

    def to_dict(self):
        def items():
            yield "q1", {"d1": 1, "d2": 0}
            raise _Boom("interrupted")

        class _Mapping(dict):
            def items(self):
                return items()

        return _Mapping()


def test_write_qrels_is_atomic(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("old contents\n")
    with pytest.raises(_Boom):
        write_qrels(_FailingQrels(), path)
    assert path.read_text() == "old contents\n"
    assert _folder_listing(tmp_path) == ["qrels.txt"]


def test_failed_write_to_a_new_file_leaves_nothing(tmp_path, monkeypatch):
    def fail(src, dst):
        raise _Boom("rename failed")

    monkeypatch.setattr(rankgate.io.source.os, "replace", fail)
    with pytest.raises(_Boom):
        write_run(rankgate.Run.from_dict(RUN), tmp_path / "new.run")
    assert _folder_listing(tmp_path) == []


# --------------------------------------------------------------------------------------
# Writers in every format, compressed or not; DataFrames
# --------------------------------------------------------------------------------------
WRITE_NAMES = ["x.trec", "x.json", "x.jsonl", "x.csv", "x.tsv", "x.parquet", "x.trec.gz", "x.jsonl.bz2",
               "x.csv.xz", "x.tsv.zst", "x.json.gz"]  # fmt: skip
AWKWARD_RUN = {
    "q1": {"d2": 0.1 + 0.2, "d10": 0.30000000000000004, "d1": -1e-300, 'd"q,1': 7.5},
    "q2": {"d3": 3.25, "d\u00e9": 1.0},
}


@pytest.mark.parametrize("name", WRITE_NAMES)
def test_written_runs_and_qrels_read_back_the_same(tmp_path, name):
    run = rankgate.Run.from_dict(AWKWARD_RUN, name="sys")
    qrels = rankgate.Qrels.from_dict({**QRELS, "q5": {"d1": -1, 'd"q,1': 3}})
    write_run(run, tmp_path / "run" / name)
    write_qrels(qrels, tmp_path / "qrels" / name)
    if name.endswith((".gz", ".bz2", ".xz", ".zst")):
        assert rankgate.io.source.sniff_codec(tmp_path / "run" / name) is not None  # really compressed
    back_run = read_run(tmp_path / "run" / name)
    assert back_run.to_dict() == run.to_dict()  # exact float64 scores, odd ids included
    assert read_qrels(tmp_path / "qrels" / name).to_dict() == qrels.to_dict()
    a = rankgate.evaluate(qrels, run, MEASURES)
    b = rankgate.evaluate(tmp_path / "qrels" / name, tmp_path / "run" / name, MEASURES)
    assert a.aggregate == b.aggregate


def test_written_columns_and_layouts(tmp_path):
    run = rankgate.Run.from_dict({"q1": {"a": 1.0, "b": 1.0, "c": 2.0}})
    write_run(run, tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text().splitlines() == [
        "query_id,doc_id,rank,score", "q1,c,1,2.0", "q1,b,2,1.0", "q1,a,3,1.0"  # ties: doc id descending
    ]  # fmt: skip
    write_qrels(rankgate.Qrels.from_dict({"q1": {"a": 2}}), tmp_path / "q.tsv")
    assert (tmp_path / "q.tsv").read_text() == "query-id\tcorpus-id\tscore\nq1\ta\t2\n"  # BEIR's qrels layout
    write_run(run, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == {"q1": {"c": 2.0, "b": 1.0, "a": 1.0}}
    write_run(run, tmp_path / "r.out", format="jsonl", ties="input")
    first = json.loads((tmp_path / "r.out").read_text().splitlines()[0])
    assert first == {"query_id": "q1", "doc_id": "c", "rank": 1, "score": 2.0}
    assert pq.read_table(_parquet(run, tmp_path)).column_names == ["query_id", "doc_id", "rank", "score"]
    with pytest.raises(rankgate.InputError, match="Parquet compresses itself"):
        write_run(run, tmp_path / "r.parquet.gz")
    with pytest.raises(rankgate.InputError, match="unknown format 'xml'"):
        write_run(run, tmp_path / "r.xml", format="xml")
    spaced = rankgate.Run.from_dict({"q 2": {"d": 1.0}})
    with pytest.raises(rankgate.InputError, match=r"r\.trec: query id 'q 2' holds whitespace.*write \.jsonl"):
        write_run(spaced, tmp_path / "r.trec")
    write_run(spaced, tmp_path / "r.jsonl")
    assert read_run(tmp_path / "r.jsonl").to_dict() == {"q 2": {"d": 1.0}}  # the other formats hold it
    assert not (tmp_path / "r.trec").exists()


def _parquet(run: rankgate.Run, folder: Path) -> Path:
    path = folder / "r.parquet"
    write_run(run, path)
    return path


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_frames_of_run_qrels_and_results(backend):
    run = rankgate.Run.from_dict(RUN)
    qrels = rankgate.Qrels.from_dict(QRELS)
    run_frame, qrels_frame = run.to_frame(backend), qrels.to_frame(backend)
    assert list(run_frame.columns) == ["query_id", "doc_id", "rank", "score"]
    assert list(qrels_frame.columns) == ["query_id", "doc_id", "grade"]
    assert rankgate.io.as_run(run_frame).to_dict() == run.to_dict()  # a frame reads back
    assert rankgate.io.as_qrels(qrels_frame).to_dict() == qrels.to_dict()
    res = rankgate.evaluate(qrels, run, ["P@2", "NumRelRet"])
    frame = res.to_frame(backend)
    assert list(frame.columns) == ["query_id", "P@2", "NumRelRet"]
    rows = frame.to_dicts() if backend == "polars" else frame.to_dict("records")
    assert rows == [{"query_id": q, **v} for q, v in res.per_query.items()]
    with pytest.raises(ValueError, match=r"The 'backend' parameter must be 'pandas' or 'polars'\. Got 'arrow'"):
        run.to_frame("arrow")
