"""trec_eval's output, byte for byte: ``name`` left-justified to 22, a tab, the query id, a tab, the value.

Values print as trec_eval's ``printf`` does: ``%6.4f`` for measures (NaN as ``  -nan``, glibc's
form of the negative NaN that C's 0.0 / 0.0 gives), ``%ld`` (the value cut toward zero) for
counts, the run's tag for ``runid``, ``relstring``'s quoted text as it is. The summary's
query id is ``all``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankgate.render.escape import trec_id

if TYPE_CHECKING:
    from rankgate.compat.trec_eval import TrecEvalReport

SUMMARY_ID = "all"


def trec_eval_text(report: TrecEvalReport) -> str:
    """The text ``trec_eval`` prints for ``report`` (per-query rows first, then the summary).

    >>> from rankgate.compat.trec_eval import TrecEvalReport
    >>> trec_eval_text(TrecEvalReport([], [("P_5", "q1", 0.4, False)], [("num_q", 1.0, True)]))
    'P_5                   \\tq1\\t0.4000\\nnum_q                 \\tall\\t1\\n'
    """
    lines = [f"{name:<22}\t{trec_id(qid)}\t{_value(v, integer)}\n" for name, qid, v, integer in report.per_query]
    lines += [f"{name:<22}\t{SUMMARY_ID}\t{_value(v, integer)}\n" for name, v, integer in report.summary]
    return "".join(lines)


def _value(value: float | str, integer: bool) -> str:
    if isinstance(value, str):
        return value
    if integer:
        return str(int(value)) if value == value else "0"
    if value != value:  # C's 0.0 / 0.0 is a negative NaN: printf's %6.4f prints "  -nan"
        return "  -nan"
    return f"{value:6.4f}"
