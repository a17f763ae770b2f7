"""Ray Data plumbing shared by encoding and search: a quiet console, and a worker's error back as itself."""

from __future__ import annotations

import logging
import re
from typing import Any

from rankgate.errors import BackendError, RankgateError


def quiet_ray_data(ray: Any) -> None:
    """Ray Data's progress bars and console logs off (rankgate reports failures itself; Ray Data's log
    file in the session folder stays); a worker's exception comes back as itself, not wrapped."""
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    for name in ("print_on_execution_start", "enable_auto_log_stats"):
        if hasattr(ctx, name):
            setattr(ctx, name, False)
    if hasattr(ctx, "raise_original_map_exception"):  # Ray >= 2.4x
        ctx.raise_original_map_exception = True
    for handler in logging.getLogger("ray.data").handlers:
        if type(handler).__name__ != "SessionFileHandler":
            handler.setLevel(logging.CRITICAL)


def iterate_batches(ds: Any) -> Any:
    """The dataset's output batches; a worker's failure becomes the `RankgateError` it raised, or a `BackendError`."""
    try:
        yield from ds.iter_batches(batch_size=None, batch_format="numpy")
    except Exception as e:
        cause = _root_cause(e)
        if isinstance(cause, RankgateError):
            if cause.args and isinstance(cause.args[0], str):  # Ray Data appends its retry advice
                cause.args = (cause.args[0].split("\nFailed to apply ")[0], *cause.args[1:])
            raise cause.with_traceback(None) from None
        raise BackendError(f"a Ray Data job failed: {_last_error_line(cause)}") from None


def _root_cause(error: BaseException) -> BaseException:
    """The worker's own error under Ray's wrappers: the first rankgate error in the chain, else the innermost."""
    seen: set[int] = set()
    current: BaseException | None = error
    last = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, RankgateError) and type(current).__module__ == RankgateError.__module__:
            return current
        last = current
        inner = getattr(current, "cause", None)  # RayTaskError keeps the original exception here
        current = inner if isinstance(inner, BaseException) else (current.__cause__ or current.__context__)
    return last


def _last_error_line(error: BaseException) -> str:
    """``Type: message`` of the innermost exception named in Ray's text (which carries the worker's traceback)."""
    lines = [line.strip() for line in str(error).splitlines()]
    raised = [line for line in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception)\b.*:", line)]
    return raised[0] if raised else f"{type(error).__name__}: {lines[0] if lines else ''}"
