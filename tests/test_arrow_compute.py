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
    rows = pa.array(rng.integers(0, 500, 300))
    mask = pa.array([None if i % 5 == 0 else bool(b) for i, b in enumerate(rng.random(500) < 0.4)])
    if chunked:
        values, other, rows, mask = _chunked(values), _chunked(other), _chunked(rows), _chunked(mask)
    value_set = _strings(20)
    true_or_null = pa.array([True, None, True])
    cases = [
        ("take", (values, rows), {}),
        ("sort_indices", (values,), {}),
        ("equal", (values, other), {}),
        ("less", (values, other), {}),
        ("all", (true_or_null,), {}),
        ("all", (true_or_null,), {"skip_nulls": False}),
        ("all", (true_or_null,), {"options": {"skip_nulls": False}}),
        ("extract_regex", (values, "(?P<head>d)(?P<tail>.*)"), {}),  # an option given by position: the pattern
        ("dictionary_encode", (values,), {}),
        ("index_in", (values,), {"value_set": value_set}),
        ("index_in", (values,), {"options": real.SetLookupOptions(value_set, skip_nulls=True)}),
        ("extract_regex", (values,), {"pattern": "(?P<head>d)(?P<tail>1.*)"}),
        ("filter", (values, mask), {}),
        ("filter", (values, mask), {"null_selection_behavior": "emit_null"}),
        ("filter", (values, mask), {"memory_pool": pa.default_memory_pool()}),
    ]
    for name, args, kwargs in cases:
        assert getattr(pc, name)(*args, **kwargs).equals(getattr(real, name)(*args, **kwargs)), (name, kwargs)


def test_options_change_the_result_as_in_pyarrow_compute():
    """The cases above whose options matter, so that a kernel dropping them fails."""
    true_or_null = pa.array([True, None, True])
    assert pc.all(true_or_null).as_py() is True and pc.all(true_or_null, skip_nulls=False).as_py() is None
    mask = pa.array([True, None])
    assert pc.filter(pa.array(["a", "b"]), mask, null_selection_behavior="emit_null").to_pylist() == ["a", None]
    with pytest.raises(IndexError):
        pc.take(pa.array(["a"]), pa.array([3]))  # bounds checked unless told not to


def test_a_table_sorts_by_keys_alike():
    table = pa.table({"q": rng.integers(0, 5, 200), "s": rng.integers(0, 4, 200).astype(float)})
    keys = [("q", "ascending"), ("s", "descending")]
    assert pc.sort_indices(table, sort_keys=keys).equals(real.sort_indices(table, sort_keys=keys))


def test_cast_checks_unless_told_not_to():
    values = pa.array([1.5, 2.0, None])
    assert pc.cast(values, pa.string()).equals(real.cast(values, pa.string()))
    assert pc.cast(values, "int64", safe=False).equals(real.cast(values, "int64", safe=False))
    options = real.CastOptions.unsafe(pa.int32())
    assert pc.cast(values, options=options).equals(real.cast(values, options=options))
    with pytest.raises(pa.ArrowInvalid):
        pc.cast(values, pa.int64())
    with pytest.raises(ValueError):
        pc.cast(values, pa.int64(), options=options)


def test_wrong_arguments_are_refused_as_pyarrow_compute_refuses_them():
    with pytest.raises(TypeError):
        pc.take(pa.array([1]))
    with pytest.raises(TypeError):
        pc.equal(pa.array([1]), pa.array([1]), pa.array([1]))
    with pytest.raises(TypeError):
        pc.all(pa.array([True]), skip_nulls=True, options={"skip_nulls": False})


def test_expressions_and_other_names_are_pyarrow_computes():
    expression = pc.equal(real.field("x"), 1)
    assert isinstance(expression, real.Expression)
    assert expression.equals(real.equal(real.field("x"), 1))
    assert pc.utf8_upper is real.utf8_upper


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
