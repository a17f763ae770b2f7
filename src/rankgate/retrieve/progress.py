"""Progress of `rankgate retrieve` in a log: plain lines on stderr when it is not a terminal (CI).

On a terminal the runner draws a bar (`rankgate.bench.progress.Progress`); a CI log shows no bar,
so a long run would print nothing until its end and a hung job would look like a slow one.
`LogProgress` prints one line each time another tenth of the queries is done, and one every
``every_s`` seconds (30 by default) whatever happens, so a log shows that the job is alive and
whether the counts still move:

    asking http: 32 of 63 queries done (51%), 2 failed; 12.3 q/s, 2.6 s
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

Tick = Callable[[bool], None]
Wait = Callable[[threading.Event, float], bool]


class Counted(Protocol):
    """What the runner needs of a progress display: ``counted(description, total)`` yielding ``tick(failed)``."""

    def counted(self, description: str, total: int) -> contextlib.AbstractContextManager[Tick]: ...


def _wait(stop: threading.Event, seconds: float) -> bool:
    return stop.wait(seconds)


class LogProgress:
    """Progress lines for a log (see the module docstring).

    Args:
        write: prints one line (to stderr).
        every_s: seconds between the lines that say the run is still going.
        wait: ``wait(stop, seconds)``, True once ``stop`` is set; tests replace it to drive the
            heartbeat by events instead of by time.

    >>> lines = []
    >>> with LogProgress(lines.append).counted("asking http", total=4) as tick:
    ...     tick(False); tick(True); tick(False); tick(False)
    >>> [line.split(";")[0] for line in lines]  # doctest: +NORMALIZE_WHITESPACE
    ['asking http: 1 of 4 queries done (25%), 0 failed', 'asking http: 2 of 4 queries done (50%), 1 failed',
     'asking http: 3 of 4 queries done (75%), 1 failed', 'asking http: 4 of 4 queries done (100%), 1 failed']
    """

    def __init__(self, write: Callable[[str], None], *, every_s: float = 30.0, wait: Wait = _wait) -> None:
        self.write = write
        self.every_s = every_s
        self.wait = wait

    @contextlib.contextmanager
    def counted(self, description: str, total: int) -> Iterator[Tick]:
        """Lines for ``total`` requests; yields ``tick(failed)``, called once per query done."""
        if not total:
            yield lambda failed: None
            return
        lock = threading.Lock()
        started = time.perf_counter()
        counts = {"done": 0, "failed": 0, "tenth": 0}

        def line() -> None:  # called with the lock held
            done, failed = counts["done"], counts["failed"]
            elapsed = time.perf_counter() - started
            rate = f"{done / elapsed:,.1f} q/s, " if done and elapsed > 0 else ""
            self.write(
                f"{description}: {done:,} of {total:,} queries done ({done / total:.0%}), {failed:,} failed; "
                f"{rate}{elapsed:,.1f} s"
            )

        def tick(failed: bool) -> None:
            with lock:
                counts["done"] += 1
                counts["failed"] += failed
                tenth = counts["done"] * 10 // total
                if tenth > counts["tenth"]:
                    counts["tenth"] = tenth
                    line()

        stop = threading.Event()

        def heartbeat() -> None:
            while not self.wait(stop, self.every_s):
                with lock:
                    line()

        beats = threading.Thread(target=heartbeat, name="rankgate-retrieve-progress", daemon=True)
        beats.start()
        try:
            yield tick
        finally:
            stop.set()
            beats.join()
