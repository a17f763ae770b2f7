"""Progress bars on stderr (encoding, indexing, asking live retrievers); silent off a terminal or when quiet."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

Advance = Callable[[int], None]
Tick = Callable[[bool], None]


class Progress:
    """Draws one rich progress bar per long step, on stderr, when enabled.

    Args:
        enabled: draw bars (``Progress.auto`` enables them only on a terminal).

    >>> with Progress(enabled=False).task("encoding", total=3) as advance:
    ...     advance(3)
    """

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled

    @classmethod
    def auto(cls, *, quiet: bool = False) -> Progress:
        """Bars on when stderr is a terminal and ``quiet`` is False."""
        return cls(enabled=not quiet and sys.stderr.isatty())

    @contextlib.contextmanager
    def task(self, description: str, total: int | None) -> Iterator[Advance]:
        """A bar for ``total`` units of work; yields ``advance(n)``."""
        if not self.enabled:
            yield lambda n: None
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        bar = RichProgress(
            TextColumn("{task.description}", markup=False),  # descriptions name files: brackets stay
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        with bar:
            task_id = bar.add_task(description, total=total)
            yield lambda n: bar.advance(task_id, n)

    @contextlib.contextmanager
    def counted(self, description: str, total: int) -> Iterator[Tick]:
        """A bar for ``total`` requests that also shows requests per second and errors; yields ``tick(failed)``.

        >>> with Progress(enabled=False).counted("asking", total=2) as tick:
        ...     tick(False); tick(True)
        """
        if not self.enabled or not total:
            yield lambda failed: None
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        bar = RichProgress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[errors]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        started, counts = time.perf_counter(), [0, 0]
        with bar:
            task_id = bar.add_task(description, total=total, rate="", errors="0 errors")

            def tick(failed: bool) -> None:
                counts[0] += 1
                counts[1] += failed
                rate = counts[0] / max(time.perf_counter() - started, 1e-9)
                bar.update(task_id, advance=1, rate=f"{rate:,.1f} q/s", errors=f"{counts[1]:,} errors")

            yield tick


SILENT = Progress(enabled=False)
