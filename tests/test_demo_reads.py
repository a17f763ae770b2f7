"""`rankgate demo` reads the demo qrels once (evaluation, gate and report share them)."""

from __future__ import annotations

import json

import pytest

from rankgate.cli import main


def test_demo_reads_the_qrels_once(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import rankgate.io as io
    from rankgate.io import coerce, readers

    reads: list[str] = []
    real = readers.read_qrels

    def read_qrels(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        reads.append(str(path))
        return real(path, *args, **kwargs)

    for module in (io, readers, coerce):
        monkeypatch.setattr(module, "read_qrels", read_qrels)
    try:
        code = main(["demo", "--no-bench", "--no-report", "--format", "json"]) or 0
    except SystemExit as e:
        code = e.code
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and set(out["nDCG@10_by_difficulty"]["dense"]) == {"easy", "medium", "hard"}
    assert len(reads) == 1
