"""The ``empty`` parameter: what a measure scores for a query with no relevant judgment.

torchmetrics' retrieval metrics take ``empty_target_action``: ``neg`` scores such a query 0
(rankgate's default, as trec_eval), ``pos`` scores it 1, ``error`` refuses it and ``skip``
leaves it out. rankgate spells the first three ``empty=zero|one|error`` on the measure
(``P(empty=one)@10``; torchmetrics' own words are read too) and ``skip`` as the evaluation's
policy ``empty="skip"`` (``--empty skip``): whether a query has a relevant judgment depends on
the qrels alone, so leaving it out of one measure is leaving it out of the evaluation, and
every measure, every paired comparison and every gate then sees the same queries.

A query has no relevant judgment when no judged doc has a grade >= the measure's ``rel``
(``min_grade`` for nDCG, whose ideal DCG is then 0). The families that take it compute with
`rankgate.measures.peer_kernels`, whose kernels (and reference twins) apply it to the plain ones.
"""

from __future__ import annotations

from rankgate.measures.registry import ParamAlias, ParamSpec

SKIP_HINT = (
    "'skip', torchmetrics' empty_target_action='skip', is the evaluation's policy --empty skip "
    "(empty='skip'): it leaves such queries out of every measure"
)
EMPTY = ParamSpec(
    "empty",
    str,
    "zero",
    "score of a query with no relevant judgment: zero (trec_eval), one, or error (refuse it); torchmetrics' "
    "empty_target_action neg, pos, error. Its skip is the evaluation's --empty skip",
    choices=("zero", "one", "error"),
    hint=SKIP_HINT,
)
EMPTY_TARGET_ACTION = ParamAlias(
    "empty_target_action", "empty", (("neg", "zero"), ("pos", "one"), ("error", "error")), SKIP_HINT, "torchmetrics"
)
