"""Thread counts of BLAS and torch in this process, so Ray workers compute with the driver's."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from rankgate.extras import available


def blas_threads() -> int:
    """Threads of numpy's BLAS in this process (threadpoolctl; else the usual variables, else the CPUs)."""
    if available("threadpoolctl"):
        from threadpoolctl import threadpool_info

        blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        numpys = [i for i in blas if "numpy" in str(i.get("filepath", ""))]  # not scipy's or torch's
        if numpys or blas:
            return max(int(i["num_threads"]) for i in (numpys or blas))
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def blas_limit(threads: int) -> contextlib.AbstractContextManager[Any]:
    """Run BLAS with ``threads`` threads inside the block (with threadpoolctl; Ray already sets
    OMP_NUM_THREADS to an actor's CPUs, the same number whenever the cluster has that many)."""
    if not available("threadpoolctl"):
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")


def torch_threads() -> int:
    """torch's intra-op threads in this process, when torch is loaded (a model runs on it); else 1."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else 1


@contextlib.contextmanager
def compute_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op threads (when torch is loaded) and BLAS's set to ``threads`` inside the block."""
    if threads is None:
        yield
        return
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(threads)
    try:
        with blas_limit(threads):
            yield
    finally:
        if torch is not None and before is not None:
            torch.set_num_threads(before)


ENCODE_THREADS_VARIABLE = "RANKGATE_ENCODE_THREADS"


def encode_threads(threads: int | None = None) -> int | None:
    """torch's intra-op threads for encoding: ``threads``, else ``$RANKGATE_ENCODE_THREADS``, else None (torch's own).

    Raises:
        ConfigError: the variable is not an int >= 1.
    """
    if threads is not None:
        return threads
    value = os.environ.get(ENCODE_THREADS_VARIABLE, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        from rankgate.errors import ConfigError

        raise ConfigError(f"must be an int >= 1. Got {value!r} instead.", key_path=ENCODE_THREADS_VARIABLE)
    return int(value)


@contextlib.contextmanager
def torch_threads_set(threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` inside the block (None, or torch not loaded: unchanged)."""
    torch = sys.modules.get("torch")
    if threads is None or torch is None or torch.get_num_threads() == threads:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
