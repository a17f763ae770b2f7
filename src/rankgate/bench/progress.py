"""Progress bars on stderr for encoding and indexing; silent when not a terminal or asked quiet."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

Advance = Callable[[int], None]


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


SILENT = Progress(enabled=False)
