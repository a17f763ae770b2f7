"""trec_eval's NaN for an empty ranking: one rule for `rankgate trec_eval` and the pytrec_eval drop-in.

trec_eval's interpolated precision (``iprec_at_recall``, and ``11pt_avg``, their mean) starts from
the precision of the whole ranking, relevant retrieved / retrieved, before it looks at any
document. A ranking left empty (every document dropped by ``-J``, or a query of a pytrec_eval
run with no documents) makes that 0 / 0, NaN, and trec_eval keeps it at each recall level whose
document count, C's ``(long)(level * R + 0.9)``, is 0, the levels that need no relevant document;
the other levels stay 0. ``11pt_avg`` is then NaN when its lowest level is one of those.
pytrec_eval (trec_eval 9.0.8) and trec_eval 10 share this code. rankgate's own `IPrec` and
`IPrecAvg` (``rankgate eval``, the API) score such a query 0; only these two trec_eval faces
copy the NaN, both through `trec_eval_nan`.

>>> import numpy as np
>>> from rankgate.measures.registry import Measure
>>> trec_eval_nan(Measure.make("IPrec"), np.array([0.5, 0.0]), np.array([2.0, 0.0]), np.array([3.0, 3.0]))
array([0.5, nan])
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from rankgate.measures.registry import Measure
from rankgate.measures.trec_names import recall_levels

# the families whose trec_eval value can be NaN, and the counts that decide it (NumRet, NumRel)
NAN_FAMILIES = frozenset({"IPrec", "IPrecAvg"})
COUNTS = (Measure.make("NumRet"), Measure.make("NumRel"))


def needs_counts(measures: Iterable[Measure]) -> bool:
    """Whether any of ``measures`` needs `COUNTS` evaluated beside it for `trec_eval_nan`."""
    return any(m.name in NAN_FAMILIES for m in measures)


def nan_mask(measure: Measure, num_ret: npt.ArrayLike, num_rel: npt.ArrayLike) -> np.ndarray | None:
    """Where trec_eval's value of ``measure`` is NaN, per query; None for a family that is never NaN.

    Args:
        measure: the canonical measure (`IPrec`, `IPrecAvg`; any other gives None).
        num_ret: each query's retrieved count, after ``-J`` (`NumRet`).
        num_rel: each query's relevant count at the evaluation's ``rel`` (`NumRel`).
    """
    if measure.name == "IPrecAvg":  # NaN when its lowest level needs no relevant doc
        level = recall_levels(str(measure.get("levels")))[0]
    elif measure.name == "IPrec":
        level = float(measure.get("recall"))
    else:
        return None
    return np.asarray((np.asarray(num_ret) == 0) & ((level * np.asarray(num_rel) + 0.9).astype(np.int64) <= 0))


def trec_eval_nan(
    measure: Measure, values: npt.ArrayLike, num_ret: npt.ArrayLike, num_rel: npt.ArrayLike
) -> np.ndarray:
    """``values`` (one per query) with trec_eval's NaN where the ranking is empty (see the module)."""
    mask = nan_mask(measure, num_ret, num_rel)
    values = np.asarray(values, dtype=np.float64)
    return values if mask is None or not mask.any() else np.where(mask, np.nan, values)
