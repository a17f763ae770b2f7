"""Running the slices of a large column pass on a few threads."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

_T = TypeVar("_T")
_R = TypeVar("_R")


def _workers() -> int:
    """``RANKGATE_THREADS`` if set (a whole number >= 1), else the CPUs that other processes leave
    free when rankgate starts, at least 1 and at most 4.

    A second thread pays only on a free core: beside a CPU hog on a 2-core machine, two threads
    made rankgate lose more than single-threaded pytrec_eval did (docs/performance.md, "busy").
    """
    wanted = os.environ.get("RANKGATE_THREADS", "").strip()
    if wanted.isdigit() and int(wanted) >= 1:
        return int(wanted)
    return max(1, min(4, (os.cpu_count() or 1) - _others_running()))


def _others_running(samples: int = 5) -> int:
    """Processes other than this one running or ready to run now (Linux: /proc/loadavg); 0 elsewhere.

    /proc/loadavg counts threads, this process's too (OpenBLAS's workers spin for a while after
    numpy starts them), so this process's running threads are taken off; and the least of a few
    readings 1 ms apart is kept, so a process only passing through is not taken for a CPU hog,
    which is there in every reading.
    """
    counts = []
    for i in range(samples):
        if i:
            time.sleep(0.001)
        try:
            with open("/proc/loadavg") as f:
                running = int(f.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return 0
        counts.append(running - _own_running())
    return max(0, min(counts))


def _own_running() -> int:
    """This process's threads that are running or ready to run (at least 1: the caller)."""
    own = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat") as f:
                own += f.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            continue
    return max(1, own)


WORKERS = _workers()
"""Threads for the per-slice work of the large column passes (numpy and Arrow release the GIL)
and for the parse of a TREC file (`rankgate.io.trec`); ``RANKGATE_THREADS=1`` makes both serial."""


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
