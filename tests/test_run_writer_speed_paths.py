"""The vectorised TREC run writer writes the very bytes of the line-by-line one (`trec.write_run_lines`)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from rankgate.core.run import Run
from rankgate.io import trec
from rankgate.io.writers import float_reprs, trec_run_blocks, write_run

ODD_IDS = ["d", "D-1", "é", "日本語", "a/b:c", "x" * 70, "0", "00", "-1", "1e5", "NaN", "q\u00a0x", "\U0001f600", "d.1"]


def _scores(rng: np.random.Generator, n: int) -> np.ndarray:
    kinds = [
        rng.random(n),
        np.round(rng.random(n) * 10, 1),  # ties and integers
        rng.integers(-5, 5, n).astype(np.float64),
        rng.normal(size=n) * 10.0 ** rng.integers(-12, 20, n),  # far exponents: repr's notation
        rng.choice([0.0, -0.0, 1e-4, 9.999e-5, 1e16, 9999999999999998.0, 5e-324, 1.7976931348623157e308], n),
    ]
    return np.choose(rng.integers(0, len(kinds), n), kinds)


def _random_run(seed: int) -> Run:
    rng = np.random.default_rng(seed)
    n_q = int(rng.integers(1, 12))
    queries, docs = [], []
    for q in range(n_q):
        qid = str(rng.choice(ODD_IDS)) + f"_{q}"
        k = int(rng.integers(1, 40))
        queries += [qid] * k
        docs += [f"{rng.choice(ODD_IDS)}#{j}" for j in rng.permutation(k)]
    return Run(queries, docs, _scores(rng, len(docs)), name="tag-ü")


def _old_bytes(run: Run, tag: str, ties: str = "trec") -> bytes:
    return trec.write_run_lines(list(run.iter_rows(ties)), tag).encode()


@pytest.mark.parametrize("seed", range(25))
def test_fast_writer_bytes_equal_the_line_by_line_writer(tmp_path, seed):
    run = _random_run(seed)
    path = tmp_path / "r.trec"
    write_run(run, path)
    assert path.read_bytes() == _old_bytes(run, "tag-ü")
    write_run(run, tmp_path / "r.trec.gz", tag="T")
    assert gzip.decompress((tmp_path / "r.trec.gz").read_bytes()) == _old_bytes(run, "T")


def test_blocks_split_anywhere_and_input_ties():
    run = _random_run(99)
    for rows in (1, 3, 7, 1 << 20):
        assert b"".join(trec_run_blocks(run, "t", "input", block_rows=rows)) == _old_bytes(run, "t", "input")


def test_float_reprs_equal_repr_on_random_bit_patterns():
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**64, size=200_000, dtype=np.uint64).view(np.float64)
    values = np.concatenate([values[np.isfinite(values)], _scores(rng, 100_000), 10.0 ** np.arange(-30, 30)])
    assert float_reprs(values).to_pylist() == [repr(v) for v in values.tolist()]


def test_empty_run_writes_an_empty_file(tmp_path):
    run = Run([], [], [])
    write_run(run, tmp_path / "e.trec")
    assert (tmp_path / "e.trec").read_bytes() == b""
