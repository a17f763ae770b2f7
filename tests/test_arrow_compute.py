"""`rankgate.core.arrow_compute`: the same results as `pyarrow.compute`, without importing it on the
evaluation path."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as real
import pytest

from rankgate.core import arrow_compute as pc
from rankgate.core.native import library

rng = np.random.default_rng(7)


def _strings(n: int, space: int = 50, nulls: bool = False) -> pa.Array:
    values = [f"d{int(i)}" for i in rng.integers(0, space, n)]
    if nulls:
        values = [None if i % 7 == 3 else v for i, v in enumerate(values)]
    return pa.array(values, type=pa.string())


def _chunked(array: pa.Array) -> pa.ChunkedArray:
    cut = len(array) // 3
    return pa.chunked_array([array.slice(0, cut), array.slice(cut, 0), array.slice(cut)], type=array.type)


@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("chunked", [False, True])
def test_each_kernel_gives_pyarrow_computes_result(nulls, chunked):
    values = _strings(500, nulls=nulls)
    other = _strings(500, nulls=nulls)
    if chunked:
        values, other = _chunked(values), _chunked(other)
    rows = pa.array(rng.integers(0, 500, 300))
    value_set = _strings(20)
    mask = pa.array(rng.random(500) < 0.4)
    cases = [
        ("take", (values, rows), {}),
        ("take", (values, rows), {"boundscheck": False}),
        ("sort_indices", (values,), {}),
        ("equal", (values, other), {}),
        ("less", (values, other), {}),
        ("all", (pc.less(values, other),), {}),
        ("all", (pc.less(values, other),), {"skip_nulls": False}),
        ("dictionary_encode", (values,), {}),
        ("index_in", (values,), {"value_set": value_set}),
        ("extract_regex", (values,), {"pattern": "(?P<head>d)(?P<tail>1.*)"}),
        ("filter", (values, mask), {}),
        ("filter", (values, mask), {"null_selection_behavior": "emit_null"}),
    ]
    for name, args, kwargs in cases:
        assert getattr(pc, name)(*args, **kwargs).equals(getattr(real, name)(*args, **kwargs)), (name, kwargs)


def test_a_table_sorts_by_keys_alike():
    table = pa.table({"q": rng.integers(0, 5, 200), "s": rng.integers(0, 4, 200).astype(float)})
    keys = [("q", "ascending"), ("s", "descending")]
    assert pc.sort_indices(table, sort_keys=keys).equals(real.sort_indices(table, sort_keys=keys))


def test_cast_checks_unless_told_not_to():
    values = pa.array([1.5, 2.0, None])
    assert pc.cast(values, pa.string()).equals(real.cast(values, pa.string()))
    assert pc.cast(values, "int64", safe=False).equals(real.cast(values, "int64", safe=False))
    with pytest.raises(pa.ArrowInvalid):
        pc.cast(values, pa.int64())


def test_wrong_argument_count_and_other_names():
    with pytest.raises(TypeError, match="take takes 2"):
        pc.take(pa.array([1]))
    assert pc.utf8_upper is real.utf8_upper  # everything else: pyarrow.compute's own


@pytest.mark.skipif(library() is None, reason="the native scanner is not built")
def test_eval_of_trec_files_does_not_import_pyarrow_compute(tmp_path):
    """The import costs 45-50 ms of every `rankgate eval`; an Arrow method that computes
    (``.take``, ``.cast``, ``.filter``) on the evaluation path would bring it back."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(30) for d in range(0, 40, 3)))
    run.write_text(
        "".join(f"q{q} Q0 d{d} {r} {(d * 7) % 11} t\n" for q in range(1, 35) for r, d in enumerate(range(50), 1))
    )
    code = (
        "import sys\nfrom rankgate.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('pyarrow.compute' in sys.modules)"
    )
    argv = ["eval", str(qrels), str(run), "-m", "nDCG@10", "-m", "AP", "-m", "R@100", "-m", "RR@10", "--per-query"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for extra in ([], ["--format", "json"], ["--ties", "input"]):
        done = subprocess.run([sys.executable, "-c", code, *argv, *extra], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "False", extra
