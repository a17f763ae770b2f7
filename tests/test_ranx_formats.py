"""ranx's own files: its LZ4 format is read by content (or refused with the format named), its
JSON, TREC and Parquet files read as they are; each evaluates as the same run written as TREC."""

from __future__ import annotations

import sys

import pytest

import rankgate
from rankgate.errors import InputError

RUN = {"q1": {"d1": 3.0, "d2": 2.5, "d3": 1.0}, "q2": {"d2": 0.5, "d9": 0.25}}
QRELS = {"q1": {"d1": 1, "d3": 2}, "q2": {"d9": 1}}
MEASURES = ["nDCG@10", "AP", "P@2"]


@pytest.fixture(scope="module")
def ranx():
    return pytest.importorskip("ranx")


@pytest.mark.extra("ranx")
@pytest.mark.parametrize("kind", ["lz4", "json", "trec", "parquet"])
def test_every_ranx_file_kind_reads_back(tmp_path, ranx, kind):
    ext = {"lz4": "lz4", "json": "json", "trec": "trec", "parquet": "parq"}[kind]
    run_path, qrels_path = tmp_path / f"bm25.{ext}", tmp_path / f"qrels.{ext}"
    ranx.Run(RUN, name="bm25").save(str(run_path), kind=kind)
    if kind == "lz4":  # ranx's Qrels.save has no lz4 kind; ranx's own writer makes the same layout
        from ranx.io import save_lz4

        save_lz4(QRELS, str(qrels_path))
    else:
        ranx.Qrels(QRELS).save(str(qrels_path), kind=kind)
    run = rankgate.read_run(run_path)
    assert run.to_dict() == RUN and run.name == "bm25"
    got = rankgate.evaluate(rankgate.read_qrels(qrels_path), run, MEASURES).aggregate
    assert got == rankgate.evaluate(QRELS, RUN, MEASURES).aggregate


@pytest.mark.extra("ranx")
def test_lz4_run_on_the_command_line(tmp_path, ranx, capsys):
    from tests.cli_support import invoke

    ranx.Run(RUN).save(str(tmp_path / "run.lz4"), kind="lz4")
    ranx.Qrels(QRELS).save(str(tmp_path / "qrels.trec"), kind="trec")
    code, out, err = invoke(capsys, "eval", str(tmp_path / "qrels.trec"), str(tmp_path / "run.lz4"), "-m", "P@2")
    assert code == 0, err
    assert "0.5" in out


def test_lz4_without_the_extra_names_the_format(tmp_path, monkeypatch):
    lz4_frame = pytest.importorskip("lz4.frame")
    path = tmp_path / "run.lz4"
    path.write_bytes(lz4_frame.compress(lz4_frame.compress(b"\xa0")))  # ranx's layout, any content
    monkeypatch.setitem(sys.modules, "cbor2", None)  # as if not installed: importing it raises ImportError
    with pytest.raises(InputError, match=r"ranx's LZ4 run format.*rankgate\[ranx\].*save\('run.trec'\)") as e:
        rankgate.read_run(path)
    assert "UTF-8" not in str(e.value) and str(path) in str(e.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (lambda f: f.compress(b"q1 Q0 d1 1 1.0 x\n"), "not ranx's.*lz4 -d"),
        (lambda f: f.compress(f.compress(b"\xff\xff")), "no readable CBOR"),
        (lambda f: f.compress(f.compress(b"\x83\x01\x02\x03")), r"does not hold a run"),  # CBOR [1, 2, 3]
        (lambda f: b"\x04\x22\x4d\x18garbage", "cannot decompress LZ4"),
    ],
)
def test_bad_lz4_files_are_input_errors(tmp_path, content, message):
    lz4_frame = pytest.importorskip("lz4.frame")
    pytest.importorskip("cbor2")
    path = tmp_path / "run.lz4"
    path.write_bytes(content(lz4_frame))
    with pytest.raises(InputError, match=message):
        rankgate.read_run(path)
