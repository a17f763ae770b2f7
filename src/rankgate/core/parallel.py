"""Running the slices of a large column pass on a few threads."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from rankgate.cpus import worker_threads

_T = TypeVar("_T")
_R = TypeVar("_R")


WORKERS = worker_threads()
"""Threads for the per-slice work of the large column passes (numpy and Arrow release the GIL)
and for the parse of a TREC file (`rankgate.io.trec`), by the rule of `rankgate.cpus.worker_threads`;
``RANKGATE_THREADS=1`` makes both serial."""


def parallel_map(fn: Callable[[_T], _R], items: Iterable[_T]) -> list[_R]:
    """``[fn(x) for x in items]``, on up to `WORKERS` threads; results in order.

    For the slices of the large passes (hashing, duplicate sorts, table lookups): numpy and
    Arrow release the GIL in their loops, so the slices run side by side. The results do not
    depend on the threads: each slice writes only its own output.
    """
    work = list(items)
    workers = min(len(work), WORKERS)
    if workers < 2:
        return [fn(x) for x in work]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, work))
