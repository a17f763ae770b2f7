"""How many threads rankgate's own parallel work uses: one rule for every package.

The TREC scanner, the large column passes (`rankgate.core.parallel`) and the bootstrap's query
blocks (`rankgate.stats.bootstrap`) all take `worker_threads()`. It lives at the bottom layer,
beside `errors`, so that `rankgate.stats` can use it without importing `rankgate.core` (and
pyarrow with it). It imports nothing but `os`.
"""

from __future__ import annotations

import os

THREADS_VARIABLE = "RANKGATE_THREADS"
MAX_THREADS = 4


def worker_threads() -> int:
    """``RANKGATE_THREADS`` if set (a whole number >= 1), else the CPUs this process may use (its
    CPU affinity, and a container's CPU quota), at least 1 and at most `MAX_THREADS`.

    Other processes' load is not counted: on a 2-core machine two threads were 18-31% quicker than
    one when quiet, and within 15% of one beside a CPU hog, either way depending on the hog
    (docs/performance.md, "Seventh round" and "Eighth round"). A quota below the visible CPUs is
    honoured, because threads past it are throttled, not run.
    """
    wanted = os.environ.get(THREADS_VARIABLE, "").strip()
    if wanted.isdigit() and int(wanted) >= 1:
        return int(wanted)
    return max(1, min(MAX_THREADS, usable_cpus()))


def usable_cpus() -> int:
    """The CPUs this process may run on (affinity), capped by a cgroup CPU quota where one is set."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return min(cpus, quota) if quota is not None else cpus


def cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> int | None:
    """Whole CPUs (rounded up) of the smallest CPU quota on this process's cgroup or an ancestor:
    cgroup v2 ``cpu.max``, else v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``; None where
    none is set or none can be read."""
    found = [_quota(f"{root}{path}/cpu.max") for path in _ancestors(_own_cgroup("0"))]
    if not any(found):
        v1 = _own_cgroup("cpu")
        for mount in (f"{root}/cpu", f"{root}/cpu,cpuacct"):
            found += [
                _quota(f"{mount}{path}/cpu.cfs_quota_us", f"{mount}{path}/cpu.cfs_period_us") for path in _ancestors(v1)
            ]
    quotas = [q for q in found if q is not None]
    return min(quotas) if quotas else None


def _quota(quota_file: str, period_file: str | None = None) -> int | None:
    """A cgroup's CPU quota in whole CPUs, rounded up: v2 ``cpu.max`` ("quota period", "max period")
    or v1's two files ("-1": none); None where there is none or the files cannot be read."""
    try:
        with open(quota_file) as f:
            fields = f.read().split()
        if period_file is not None:
            with open(period_file) as f:
                fields.append(f.read().strip())
        quota, period = int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):  # no such file, "max", garbage
        return None
    return max(1, -(-quota // period)) if quota > 0 and period > 0 else None


def _own_cgroup(controller: str) -> str:
    """This process's cgroup path for ``controller`` ("0": cgroup v2's single hierarchy; else a v1
    controller such as "cpu"), from /proc/self/cgroup; "" for the root or when it is not known."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                number, controllers, path = line.rstrip("\n").split(":", 2)
                if (controller == "0" and number == "0") or controller in controllers.split(","):
                    return "" if path == "/" else path
    except (OSError, ValueError):
        pass
    return ""


def _ancestors(path: str) -> list[str]:
    """``path`` and each cgroup above it, the root ("") last: "/a/b" gives "/a/b", "/a", ""."""
    parts = [p for p in path.split("/") if p]
    return ["/" + "/".join(parts[:i]) if i else "" for i in range(len(parts), -1, -1)]
