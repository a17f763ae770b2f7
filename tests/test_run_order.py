"""The TREC reader puts a run in `Run`'s order before building it (rankgate.io.run_order): same Run,
same errors, whatever the order of the file's lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rankgate.io.run_order as run_order
from rankgate.core.columns import take_rows
from rankgate.errors import DuplicateError
from rankgate.io.readers import read_run

LINES = [
    ("q10", "d3", 0.5),
    ("q10", "d1", 0.5),
    ("q10", "d9", 0.25),
    ("q2", "d1", 2.0),
    ("q2", "d4", 1.0),
    ("q1", "d7", 3.0),
    ("q1", "d2", 3.0),
    ("q1", "d5", -1.0),
]


def _write(path: Path, rows: list[tuple[str, str, float]]) -> str:
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for i, (q, d, s) in enumerate(rows)))
    return str(path)


def _state(run: object) -> tuple:
    r = run  # a Run
    order = r.ranking_order("trec")  # type: ignore[attr-defined]
    return (
        r.query_ids.to_pylist(),  # type: ignore[attr-defined]
        r.offsets.tolist(),  # type: ignore[attr-defined]
        r.doc_ids.to_pylist(),  # type: ignore[attr-defined]
        r.scores.tolist(),  # type: ignore[attr-defined]
        take_rows(r.doc_ids, order).to_pylist(),  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize("shuffle", [False, True])
def test_a_run_in_numeric_or_shuffled_order_reads_as_without_the_reader_sorting(
    tmp_path: Path, monkeypatch, shuffle: bool
) -> None:
    rows = list(LINES)
    if shuffle:
        rows = [rows[i] for i in np.random.default_rng(3).permutation(len(rows))]
    path = _write(tmp_path / "run.txt", rows)
    calls: list[bool] = []
    real = run_order.reorder

    def spy(parsed, duplicates):  # type: ignore[no-untyped-def]
        calls.append(real(parsed, duplicates))
        return calls[-1]

    monkeypatch.setattr(run_order, "reorder", spy)
    got = read_run(path)
    assert calls == [True]  # the reader did the sorting (whole queries moved, or every row)
    monkeypatch.setattr(run_order, "reorder", lambda parsed, duplicates: False)
    assert _state(got) == _state(read_run(path))  # what Run makes of the file's order itself
    byte_ordered = read_run(_write(tmp_path / "sorted.txt", sorted(LINES, key=lambda r: (r[0], -r[2]))))
    assert _state(got)[:2] + _state(got)[3:] == _state(byte_ordered)[:2] + _state(byte_ordered)[3:]
    assert got.query_ids.to_pylist() == ["q1", "q10", "q2"]


def test_a_duplicate_in_a_shuffled_file_names_its_lines_in_file_order(tmp_path: Path, monkeypatch) -> None:
    rows = [("q2", "d1", 1.0), ("q1", "d5", 0.5), ("q2", "d4", 3.0), ("q1", "d2", 0.9), ("q2", "d1", 2.0)]
    path = _write(tmp_path / "run.txt", rows)
    with pytest.raises(DuplicateError) as sorted_first:
        read_run(path)
    monkeypatch.setattr(run_order, "reorder", lambda parsed, duplicates: False)
    with pytest.raises(DuplicateError) as file_order:
        read_run(path)
    assert str(sorted_first.value) == str(file_order.value)
    assert "run.txt:5" in str(sorted_first.value) and "first at" in str(sorted_first.value)
    assert "run.txt:1" in str(sorted_first.value)


@pytest.mark.parametrize(("policy", "kept"), [("first", 1.0), ("max", 2.0)])
def test_duplicates_first_and_max_keep_the_copy_the_file_order_says(tmp_path: Path, policy: str, kept: float) -> None:
    """A full sort would put the higher-scored copy first; "first" must still keep the earlier line."""
    rows = [("q2", "d1", 1.0), ("q1", "d5", 0.5), ("q2", "d4", 3.0), ("q1", "d2", 0.9), ("q2", "d1", 2.0)]
    run = read_run(_write(tmp_path / "run.txt", rows), duplicates=policy)
    assert run.to_dict()["q2"] == {"d4": 3.0, "d1": kept}
