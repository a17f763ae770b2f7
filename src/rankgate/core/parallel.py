"""Running the slices of a large column pass on a few threads."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TypeVar

_T = TypeVar("_T")
_R = TypeVar("_R")


def _workers() -> int:
    """``RANKGATE_THREADS`` if set (a whole number >= 1), else the CPUs this process may use (its
    CPU affinity, and a container's CPU quota), at least 1 and at most 4.

    Other processes' load is not counted: beside a CPU hog on a 2-core machine two threads were
    quicker than one on every shape measured, as the scheduler shares the cores by thread
    (docs/performance.md, "Seventh round"). A quota below the visible CPUs is honoured, because
    threads past it are throttled, not run.
    """
    wanted = os.environ.get("RANKGATE_THREADS", "").strip()
    if wanted.isdigit() and int(wanted) >= 1:
        return int(wanted)
    return max(1, min(4, _usable_cpus()))


def _usable_cpus() -> int:
    """The CPUs this process may run on (affinity), capped by a cgroup CPU quota where one is set."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpu_quota()
    return min(cpus, quota) if quota is not None else cpus


def _cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> int | None:
    """Whole CPUs of this process's cgroup quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``), rounded
    up; None where there is no quota or it cannot be read."""
    own = _cgroup_v2_path()
    candidates: list[tuple[str, str | None]] = [(f"{root}{own}/cpu.max", None)] if own else []
    candidates += [(f"{root}/cpu.max", None), (f"{root}/cpu/cpu.cfs_quota_us", f"{root}/cpu/cpu.cfs_period_us")]
    for quota_file, period_file in candidates:
        try:
            with open(quota_file) as f:
                fields = f.read().split()
            if period_file is not None:
                with open(period_file) as f:
                    fields.append(f.read().strip())
            quota, period = fields[0], int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
        if quota in ("max", "-1") or period <= 0:
            return None
        try:
            return max(1, -(-int(quota) // period))
        except ValueError:
            return None
    return None


def _cgroup_v2_path() -> str:
    """This process's cgroup v2 path ("0::/path" in /proc/self/cgroup), or "" where there is none."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    path = line[3:].strip()
                    return "" if path == "/" else path
    except OSError:
        pass
    return ""


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
