"""What Ctrl-C leaves of work stored as it arrives (`rankgate.errors.Interrupted`): one line for
every command that asks a service (retrieve's answers, label's judgments, rag's verdicts)."""

from __future__ import annotations

from rankgate.errors import Interrupted
from rankgate.render.escape import plain


def interrupted_text(stop: Interrupted) -> str:
    """How many of the results are saved, where, and how to go on.

    >>> print(interrupted_text(Interrupted(4, 42, "llm.sqlite", noun="judgments", in_flight=2)))
    ... # doctest: +NORMALIZE_WHITESPACE
    rankgate: interrupted; 4 of 42 judgments are saved in llm.sqlite: run the same command again to ask
    only for the other 38 (the 2 requests in flight were not stored and will be asked again)
    >>> print(interrupted_text(Interrupted(0, 63, None, noun="answers")))
    rankgate: interrupted; nothing was saved (no store to keep them; 0 of 63 answers)
    >>> stop = Interrupted(5, 5, "llm.sqlite", noun="judgments")
    >>> stop.noun = "verdicts"  # a caller names what was asked after the fact
    >>> print(stop)
    interrupted: 5 of 5 verdicts saved
    >>> print(interrupted_text(stop))  # doctest: +NORMALIZE_WHITESPACE
    rankgate: interrupted; 5 of 5 verdicts are saved in llm.sqlite: run the same command again to
    finish without asking again
    """
    if stop.store is None:
        return f"rankgate: interrupted; nothing was saved (no store to keep them; 0 of {stop.total:,} {stop.noun})"
    where = plain(stop.store)
    if stop.refresh:
        return (
            f"rankgate: interrupted; {stop.saved:,} {stop.noun} asked in this run are saved in {where}: "
            "run it again without --no-cache to keep them and ask only for the rest"
        )
    lost = ""
    if stop.in_flight:
        requests = (
            "the request in flight was" if stop.in_flight == 1 else f"the {stop.in_flight:,} requests in flight were"
        )
        lost = f" ({requests} not stored and will be asked again)"
    left = stop.total - stop.saved
    then = f"ask only for the other {left:,}" if left else "finish without asking again"
    return (
        f"rankgate: interrupted; {stop.saved:,} of {stop.total:,} {stop.noun} are saved in {where}: "
        f"run the same command again to {then}{lost}"
    )
