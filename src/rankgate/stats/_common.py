"""Shared helpers of `rankgate.stats`: input checks, seeded generators, block sizes.

Every public function checks its input here, once, and raises errors of one shape:
``The 'x' parameter of f must be ... Got ... instead.`` Bad data (arrays) raise
`InputError`; bad options (a confidence of 2, a negative resample count) raise
`ConfigError`. Both are `ValueError`.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, NoReturn, TypeAlias

import numpy as np
import numpy.typing as npt

from rankgate.errors import ConfigError, InputError

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
Seed: TypeAlias = int | np.random.SeedSequence | np.random.Generator | None

# Independent random streams, one per procedure, so that a bootstrap and a randomization
# test run with the same seed do not reuse the same random bits.
STREAM_BOOTSTRAP = 1
STREAM_RANDOMIZATION = 2
STREAM_TUKEY = 3

# Longest dot product handed to BLAS in one call: OpenBLAS splits longer ones over threads,
# which costs more than it saves for these sizes and stalls on a busy machine.
DOT_CHUNK = 8192

# Elements of the largest temporary matrix a resampling block may hold. The number of
# rows per block depends only on the number of queries (never on the measures, the
# machine or the memory available), so results depend only on the data and the seed.
BLOCK_ELEMENTS = 1 << 18

# Most multiply-adds one matrix product may hold: OpenBLAS runs gemm on one thread up to
# 65,536 x 4 of them (its SMP threshold), which is what `small_matmul` keeps to.
GEMM_ONE_THREAD = 1 << 18

# The one range of every resample count: bootstrap resamples, sign flips and Tukey shuffles,
# in the API (``n_resamples``, ``n_permutations``), on the command line (``--resamples``,
# ``--permutations``) and in the gate file (``n_resamples``); docs/statistics.md states it.
# Past the maximum, a p-value or an interval end changes by less than its rounding, and the
# work (and the bootstrap's matrix of resampled means) grows without bound: 10**12 would run
# for days or exhaust memory. Below about 1,000, interval ends and p-values are coarse.
MIN_RESAMPLES = 1
MAX_RESAMPLES = 10_000_000


def describe(value: Any) -> str:
    """Say what ``value`` is, for the "Got ... instead." part of an error message."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return repr(value.item())
        return f"an array of shape {value.shape}"
    if isinstance(value, (list, tuple)) and len(value) > 6:
        return f"a {type(value).__name__} of {len(value)} values"
    return repr(value)


def fail(name: str, func: str, must: str, got: Any, *, data: bool = True) -> NoReturn:
    """Raise the package's error for a bad parameter ``name`` of ``func``."""
    message = f"The '{name}' parameter of {func} must be {must}. Got {describe(got)} instead."
    if data:
        raise InputError(message)
    raise ConfigError(message)


def as_scores(x: Any, name: str, func: str, *, ndim: int, min_rows: int = 1) -> FloatArray:
    """Return ``x`` as a finite float64 array of ``ndim`` dimensions with ``min_rows`` rows or more."""
    what = "a 1-D array" if ndim == 1 else "a 2-D array (queries x measures)"
    rows = "value" if ndim == 1 else "row"
    if min_rows > 0:
        must = f"{what} of at least {min_rows} {rows}{'s' if min_rows != 1 else ''} of finite numbers"
    else:
        must = f"{what} of finite numbers"
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        fail(name, func, must, x)
    if arr.ndim != ndim or arr.shape[0] < min_rows:
        fail(name, func, must, arr if arr.ndim else x)
    if not np.isfinite(arr).all():
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise InputError(
            f"The '{name}' parameter of {func} must hold finite numbers only. "
            f"Got {bad} NaN or infinite value{'s' if bad != 1 else ''} instead."
        )
    return arr


def as_pair(a: Any, b: Any, func: str, *, min_rows: int) -> tuple[FloatArray, FloatArray]:
    """Check two paired 1-D score arrays of the same length; return them as float64."""
    a_arr = as_scores(a, "a", func, ndim=1, min_rows=min_rows)
    b_arr = as_scores(b, "b", func, ndim=1, min_rows=min_rows)
    if a_arr.shape != b_arr.shape:
        raise InputError(
            f"The 'b' parameter of {func} must have the same length as 'a' ({a_arr.shape[0]}, one "
            f"value per query, in the same query order). Got {b_arr.shape[0]} values instead."
        )
    return a_arr, b_arr


def check_int(value: Any, name: str, func: str, *, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an int >= ``minimum`` (and <= ``maximum`` when given; bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        fail(name, func, f"an int >= {minimum}", value, data=False)
    if maximum is not None and int(value) > maximum:
        fail(name, func, f"an int between {minimum} and {maximum:,}", value, data=False)
    return int(value)


def check_resamples(value: Any, func: str, name: str = "n_resamples") -> int:
    """Return the resample count ``value`` (parameter ``name`` of ``func``) as an int from
    `MIN_RESAMPLES` to `MAX_RESAMPLES`."""
    return check_int(value, name, func, minimum=MIN_RESAMPLES, maximum=MAX_RESAMPLES)


def check_fraction(value: Any, name: str, func: str) -> float:
    """Return ``value`` as a float strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 < float(value) < 1.0:
        fail(name, func, "a number strictly between 0 and 1", value, data=False)
    return float(value)


def check_real(value: Any, name: str, func: str, *, minimum: float | None = None) -> float:
    """Return ``value`` as a finite float (>= ``minimum`` when given)."""
    ok = not isinstance(value, bool) and isinstance(value, Real) and math.isfinite(float(value))
    if ok and minimum is not None:
        ok = float(value) >= minimum
    if not ok:
        must = "a finite number" if minimum is None else f"a finite number >= {minimum:g}"
        fail(name, func, must, value, data=False)
    return float(value)


def check_choice(value: Any, name: str, func: str, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        fail(name, func, "one of " + ", ".join(repr(c) for c in choices), value, data=False)
    return str(value)


def make_rng(seed: Seed, stream: int, func: str) -> np.random.Generator:
    """A generator for one procedure (``stream``) from ``seed``.

    An int or `SeedSequence` seed gives the same numbers on every run and platform (numpy's
    PCG64); each procedure gets its own stream of it. A `Generator` is used as it is (and
    advanced). ``None`` draws fresh entropy from the OS: results are then not reproducible.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(
            np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, stream), pool_size=seed.pool_size)
        )
    if seed is None or (isinstance(seed, Integral) and not isinstance(seed, bool) and seed >= 0):
        return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))
    fail("seed", func, "an int >= 0, a numpy SeedSequence or Generator, or None", seed, data=False)


def rows_per_block(n_cols: int, *, elements: int = BLOCK_ELEMENTS) -> int:
    """Rows of an ``n_cols``-wide temporary matrix that fit in ``elements`` (at least 1)."""
    return max(1, elements // max(1, n_cols))


def round_off(abs_sum: FloatArray | float, n_terms: int) -> FloatArray | float:
    """A bound on the rounding error of a float64 sum of ``n_terms`` terms of absolute sum ``abs_sum``.

    Resampled sums that equal the observed one in exact arithmetic (frequent with per-query
    scores on a lattice, such as P@10's multiples of 0.1) may differ from it by rounding;
    they are counted as ties, i.e. as at least as extreme.
    """
    return 8.0 * max(n_terms, 1) * np.finfo(np.float64).eps * abs_sum


def row_dot(rows: FloatArray, columns_t: FloatArray) -> FloatArray:
    """``rows @ columns_t.T`` for a short, wide ``rows`` block and a few columns, on one thread.

    Each output value is one BLAS dot product (``np.vecdot``) of at most `DOT_CHUNK` terms. A
    threaded matrix product of such thin matrices is no faster on an idle machine and several
    times slower on a busy one (its threads wait on each other at every block).

    Args:
        rows: ``(r, n)`` float64, C-contiguous.
        columns_t: ``(m, n)`` float64, C-contiguous (the columns, transposed).

    Returns:
        The ``(r, m)`` products.
    """
    n = rows.shape[1]
    out = np.zeros((rows.shape[0], columns_t.shape[0]), dtype=np.float64)
    for lo in range(0, n, DOT_CHUNK):
        hi = min(n, lo + DOT_CHUNK)
        out += _vecdot(rows[:, None, lo:hi], columns_t[None, :, lo:hi])
    return out


def small_matmul(rows: FloatArray, columns_t: FloatArray) -> FloatArray:
    """``rows @ columns_t.T`` in pieces of at most `GEMM_ONE_THREAD` multiply-adds each.

    Each piece is a BLAS matrix product small enough for OpenBLAS to keep on the calling
    thread (callers may already run on several threads; see `row_dot` for why threaded BLAS
    is avoided). The pieces split rows and columns, never the sum, so the values are those of
    one product.

    Args:
        rows: ``(r, n)`` float64.
        columns_t: ``(m, n)`` float64 (the columns, transposed).

    Returns:
        The ``(r, m)`` products.
    """
    r, n = rows.shape
    m = columns_t.shape[0]
    width = max(1, min(m, GEMM_ONE_THREAD // max(1, n)))
    height = max(1, GEMM_ONE_THREAD // max(1, n * width))
    out = np.empty((r, m), dtype=np.float64)
    for j in range(0, m, width):
        columns = columns_t[j : j + width].T
        for i in range(0, r, height):
            np.matmul(rows[i : i + height], columns, out=out[i : i + height, j : j + width])
    return out


def _vecdot(x: FloatArray, y: FloatArray) -> FloatArray:
    if hasattr(np, "vecdot"):  # numpy >= 2.0
        result: FloatArray = np.vecdot(x, y)
    else:  # pragma: no cover - numpy 1.x
        result = np.einsum("...i,...i->...", x, y)
    return result
