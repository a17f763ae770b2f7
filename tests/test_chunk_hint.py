"""A run of chunk ids evaluated without --chunk-sep: the warnings name the separator to pass."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import rankgate
from rankgate.evaluation.chunk_hint import chunk_matches
from tests.cli_support import invoke

QRELS = "q1 0 d001 1\nq1 0 d002 2\nq2 0 d003 1\n"
CHUNKS = "q1 Q0 d002#0 1 3 t\nq1 Q0 d002#1 2 2 t\nq1 Q0 d009#0 3 1 t\nq2 Q0 d003#4 1 1 t\n"
HINT = "3 of 4 sampled run ids cut at their last '#' are judged document ids"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "chunks.trec").write_text(CHUNKS)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "chunks.trec")


def test_eval_suggests_chunk_sep(capsys: pytest.CaptureFixture[str], files: tuple[str, str]) -> None:
    code, out, err = invoke(capsys, "eval", *files, "-m", "nDCG@10")
    assert code == 0 and f"{HINT}: if the run holds chunk ids, pass --chunk-sep '#'" in out + err
    code, out, err = invoke(capsys, "eval", *files, "-m", "nDCG@10", "--chunk-sep", "#")
    assert code == 0 and "sampled run ids" not in out + err


def test_the_hint_is_an_evaluation_warning(files: tuple[str, str]) -> None:
    """In the library's warnings, so eval, compare and gate all show it; a run of unrelated ids gets none."""
    results = rankgate.evaluate(files[0], files[1], ["nDCG@10"])
    assert any(w.startswith(HINT) for w in results.warnings)
    other = rankgate.evaluate(files[0], {"q1": {"x#1": 1.0, "y::2": 0.5}, "q2": {"d003#": 1.0}}, ["nDCG@10"])
    assert not any("sampled run ids" in w for w in other.warnings)


def test_chunk_matches_counts_ids_that_hold_the_separator() -> None:
    """An id without the separator is not counted, even when it is itself judged; '::' is cut at the last one."""
    run = pa.array(["a", "a#0", "b::c::1", "b::c", "z#1"])
    assert chunk_matches(run, pa.array(["a", "b::c", "b"])) == {"#": 1, "::": 2, "sampled": 5}
