"""Measure families that other evaluators define and trec_eval does not (registered on import).

ranx's ``hits@k`` is a per-query count averaged over queries (`Hits`; trec_eval's num_rel_ret,
`NumRelRet`, sums it); ranx's ``dcg`` is unnormalised (`DCG`); ranx's ``f1`` and the general
F-measure (`F`); ranx's ``rbp.80``, which weighs each relevant document by its grade
(`WeightedRBP`; ranx 0.3.15 and later, the whole range rankgate's tests pin). Their kernels and
reference twins live in `rankgate.measures.peer_kernels`.

Other peers' conventions are parameters of trec_eval's families (`rankgate.measures.definitions`),
computed there too: scikit-learn's tie-averaged gains (``nDCG(ties=average)``), the AP@k
denominators of sentence-transformers and torchmetrics (``AP(denominator=...)``), torchmetrics'
``adaptive_k`` (``P(denominator=min_k_retrieved)@k``) and ``empty_target_action``
(``empty=zero|one|error``, `rankgate.measures.empty`), and ir_measures' Judged
(``Judged(negative=judged)@k``). docs/semantics.md ("Where peers differ") names the option that
reproduces each peer.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rankgate.measures.definitions import GAIN, MIN_GRADE, PERSISTENCE, TIES, kernel, reference
from rankgate.measures.registry import REL, Alias, LazyFunction, MeasureSpec, ParamAlias, ParamSpec, register

if TYPE_CHECKING:
    from rankgate.measures.kernels import Kernel
    from rankgate.measures.reference import Reference


def peer_kernel(name: str) -> Kernel:
    """The function ``name`` of `rankgate.measures.peer_kernels`, imported when first called."""
    return LazyFunction("rankgate.measures.peer_kernels", name)


def peer_reference(name: str) -> Reference:
    """The reference twin ``name`` of `rankgate.measures.peer_kernels`, imported when first called."""
    return LazyFunction("rankgate.measures.peer_kernels", name)


BETA = ParamSpec(
    "beta",
    float,
    1.0,
    "weight of recall against precision (1: the harmonic mean, F1)",
    check=lambda v: v > 0.0,
    requirement=" > 0",
)

register(
    MeasureSpec(
        name="DCG",
        summary="Discounted cumulative gain, not normalised (graded)",
        definition=(
            "DCG@k = sum over ranks i <= k of gain(g_i) / log2(i + 1), as in nDCG but not divided by the "
            "ideal's. Negative grades and grades below min_grade gain 0; ties=average as in nDCG"
        ),
        kernel=kernel("dcg"),
        reference=reference("dcg"),
        params=(GAIN, TIES, MIN_GRADE),
        bounds=(0.0, math.inf),
        aliases=(
            Alias("dcg", "ranx", ("dcg@10",)),
            Alias("dcg_burges", "ranx", ("dcg_burges@10",), fixed=(("gain", "exp"),)),
        ),
        param_aliases=(ParamAlias("dcg", "gain", (("log2", "linear"), ("exp-log2", "exp"))),),
        examples=("DCG@10", "DCG(gain=exp)@5", "DCG(ties=average)@10"),
    )
)
register(
    MeasureSpec(
        name="Hits",
        summary="Number of relevant docs in the top k, averaged over queries (ranx's hits)",
        definition=(
            "Hits@k = |{relevant docs in top k}| per query, and its mean over queries (NumRelRet is the "
            "same count summed, as trec_eval's num_rel_ret)"
        ),
        kernel=kernel("num_rel_ret"),
        reference=reference("num_rel_ret"),
        params=(REL,),
        bounds=(0.0, math.inf),
        aliases=(Alias("hits", "ranx", ("hits@10",)),),
        examples=("Hits@10", "Hits"),
    )
)
register(
    MeasureSpec(
        name="F",
        summary="F-measure of precision and recall at k (ranx's f1)",
        definition=(
            "F@k = (1 + beta^2) P R / (beta^2 P + R) with P = P@k (divides by k) and R = R@k; 0 when P = R = 0. "
            "Without @k, P is the set precision (relevant retrieved / retrieved), as trec_eval's set_F"
        ),
        kernel=peer_kernel("f_measure"),
        reference=peer_reference("f_measure_reference"),
        params=(BETA, REL),
        aliases=(Alias("f1", "ranx", ("f1@10",)), Alias("f_measure", "plain")),
        examples=("F@10", "F(beta=0.5)@20", "F"),
    )
)
register(
    MeasureSpec(
        name="WeightedRBP",
        summary="Rank-biased precision with each relevant doc weighted by its grade (ranx's rbp.80)",
        definition=(
            "WeightedRBP = (1 - p) * sum over ranks i (<= k with @k) of w(d_i) * p^(i-1), w(d) = d's grade when "
            "d is relevant (grade >= rel), else 0: ranx's rbp.NN (p = 0.NN), whose -lN suffix is rel "
            "(rbp.80-l2: grades below 2 weigh 0). Grades are not scaled, so a value can exceed 1; with grades "
            "0 and 1 only it is RBP"
        ),
        kernel=peer_kernel("weighted_rbp"),
        reference=peer_reference("weighted_rbp_reference"),
        params=(PERSISTENCE, REL),
        bounds=(0.0, math.inf),
        aliases=(Alias("rbp", "ranx", ("rbp.80",), dot_param="p", dot_only=True),),
        examples=("WeightedRBP", "WeightedRBP(p=0.95)", "WeightedRBP(rel=2)@10"),
    )
)
