"""A rich progress bar on stderr while a pool is judged, or nothing."""

from __future__ import annotations

from typing import Any


class LabelProgress:
    """A rich progress bar on stderr, or nothing."""

    def __init__(self, enabled: bool, description: str, total: int, show_cost: bool = False) -> None:
        self._bar: Any = None
        self._task: Any = None
        if enabled and total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            columns: list[Any] = [
                TextColumn("{task.description}", markup=False),  # descriptions name files: brackets stay
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
            ]
            if show_cost:
                columns.append(TextColumn("{task.fields[cost]}"))
            self._bar = Progress(*columns, console=Console(stderr=True), transient=True)
            self._task = self._bar.add_task(description, total=total, cost="")

    def __enter__(self) -> LabelProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, n: int, cost: float | None = None) -> None:
        if self._bar is not None:
            extra = {"cost": f"cost {cost:.4f}"} if cost is not None else {}
            self._bar.update(self._task, advance=n, **extra)
