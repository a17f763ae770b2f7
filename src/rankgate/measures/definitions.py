"""The measure families rankgate computes, with their definitions (registered on import).

Each family is one entry: what it means, how it is computed (its kernel and its reference
twin) and how other tools spell it. Notation: ranks start at 1; ``rel(d)`` is true when d's
grade >= ``rel``; R is the number of relevant judged documents of the query; g(d) is d's
grade (0 when unjudged).

Adding a family: write its kernel in `rankgate.measures.kernels` and its reference twin in
`rankgate.measures.reference`, register one `MeasureSpec` here, add a few of its names to the
measures of ``tests/test_kernels_vs_reference.py``, and regenerate the reference page with
``rankgate measures --format docs > docs/measures.md``. The parser, the listing, the page and
the generic tests (aliases, round trip, kernel against reference) read it from the spec.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rankgate.measures.empty import EMPTY, EMPTY_TARGET_ACTION
from rankgate.measures.registry import (
    REL,
    TREC_EVAL_CUTOFFS,
    Alias,
    LazyFunction,
    MeasureSpec,
    ParamAlias,
    ParamSpec,
    register,
)

if TYPE_CHECKING:
    from rankgate.measures.kernels import Kernel
    from rankgate.measures.reference import Reference


def kernel(name: str) -> Kernel:
    """The function ``name`` of `rankgate.measures.kernels`, imported when first called."""
    return LazyFunction("rankgate.measures.kernels", name)


def reference(name: str) -> Reference:
    """The function ``name`` of `rankgate.measures.reference`, imported when first called."""
    return LazyFunction("rankgate.measures.reference", name)


def peer(name: str) -> LazyFunction:
    """The function ``name`` of `rankgate.measures.peer_kernels`: a plain kernel or twin that also reads
    the options of other evaluators (`EMPTY`; P's denominator; Judged's negative grades)."""
    return LazyFunction("rankgate.measures.peer_kernels", name)


GAIN = ParamSpec(
    "gain",
    str,
    "linear",
    "gain of a document with grade g: linear = g (trec_eval), exp = 2^g - 1 (Burges)",
    choices=("linear", "exp"),
)
PERSISTENCE = ParamSpec(
    "p",
    float,
    0.8,
    "persistence: probability that the user goes on to the next result",
    check=lambda v: 0.0 < v < 1.0,
    requirement=" in (0, 1)",
)
TIES = ParamSpec(
    "ties",
    str,
    "break",
    "documents with equal scores: break = in evaluation order (the settings' tie rule); average = each "
    "takes the mean gain of its tie group over the group's ranks (McSherry & Najork 2008, scikit-learn's "
    "ndcg_score)",
    choices=("break", "average"),
)
MIN_GRADE = ParamSpec(
    "min_grade",
    int,
    1,
    "grades below it gain nothing, in the run and in the ideal (ranx's -lN suffix: ndcg@5-l2)",
    check=lambda v: v >= 1,
    requirement=" >= 1",
)
AP_DENOMINATOR = ParamSpec(
    "denominator",
    str,
    "R",
    "what the sum of precisions is divided by: R = every relevant doc (trec_eval map_cut), min_k_R = "
    "min(k, R) (sentence-transformers), retrieved_relevant = the relevant docs in the top k (torchmetrics)",
    choices=("R", "min_k_R", "retrieved_relevant"),
)
P_DENOMINATOR = ParamSpec(
    "denominator",
    str,
    "k",
    "what P@k divides by: k (trec_eval, even when fewer docs were returned), min_k_retrieved = min(k, docs "
    "returned) (torchmetrics' adaptive_k=True)",
    choices=("k", "min_k_retrieved"),
)
ADAPTIVE_K = ParamAlias("adaptive_k", "denominator", ((True, "min_k_retrieved"), (False, "k")), source="torchmetrics")
JUDGED_NEGATIVE = ParamSpec(
    "negative",
    str,
    "unjudged",
    "docs with a negative grade: unjudged (trec_eval's pooled-but-unjudged -1 and -2), judged (ir_measures' "
    "judged provider: any doc in the qrels)",
    choices=("unjudged", "judged"),
)
MAX_GRADE = ParamSpec(
    "max_grade",
    int,
    0,
    "grade of a perfect document; 0 means the largest grade in the qrels",
    check=lambda v: v >= 0,
    requirement=" >= 0",
)

register(
    MeasureSpec(
        name="P",
        summary="Precision: fraction of the top k that is relevant",
        definition=(
            "P@k = |{relevant docs in top k}| / k (divides by k even when fewer docs were returned); "
            "denominator=min_k_retrieved divides by min(k, docs returned) (torchmetrics' adaptive_k; 0 when "
            "nothing was returned). empty=one scores 1 for a query with no relevant judgment"
        ),
        kernel=peer("precision"),
        reference=peer("precision_reference"),
        params=(REL, P_DENOMINATOR, EMPTY),
        cutoff="required",
        trec_eval="P_k",
        aliases=(
            Alias("P", "trec_eval", ("P_10", "P.10", "P.5,10", "P"), default_cutoffs=TREC_EVAL_CUTOFFS),
            Alias("precision", "ranx", ("precision@10",)),
        ),
        param_aliases=(ADAPTIVE_K, EMPTY_TARGET_ACTION),
        examples=("P@10", "P(rel=2)@5", "P(denominator=min_k_retrieved)@10", "P(empty=one)@10"),
    )
)
register(
    MeasureSpec(
        name="R",
        summary="Recall: fraction of the relevant docs found in the top k",
        definition="R@k = |{relevant docs in top k}| / R; 0 when R = 0. Without @k: over the whole ranking",
        kernel=peer("recall"),
        reference=peer("recall_reference"),
        params=(REL, EMPTY),
        trec_eval="recall_k",
        aliases=(
            Alias("recall", "trec_eval", ("recall_100", "recall.100", "recall"), default_cutoffs=TREC_EVAL_CUTOFFS),
            Alias("recall", "ranx", ("recall@100",)),
        ),
        param_aliases=(EMPTY_TARGET_ACTION,),
        examples=("R@100", "R@1000", "R(empty=one)@10"),
    )
)
register(
    MeasureSpec(
        name="nDCG",
        summary="Normalized discounted cumulative gain (graded)",
        definition=(
            "DCG@k = sum over ranks i <= k of gain(g_i) / log2(i + 1); nDCG@k = DCG@k / IDCG@k, where the "
            "ideal ranks every judged doc of the query by grade (truncated at k). Negative grades gain 0 "
            "(an ideal DCG of 0 makes a query with no relevant judgment, scored as 'empty' says). "
            "Ignores 'rel', like trec_eval; grades below min_grade gain 0. With ties=average each doc of a "
            "group of equal scores gains the group's mean gain at each rank the group spans"
        ),
        kernel=peer("ndcg"),
        reference=peer("ndcg_reference"),
        params=(GAIN, TIES, MIN_GRADE, EMPTY),
        trec_eval="ndcg_cut_k (linear gain); ndcg without @k",
        aliases=(
            Alias(
                "ndcg_cut", "trec_eval", ("ndcg_cut_10", "ndcg_cut.10", "ndcg_cut"), default_cutoffs=TREC_EVAL_CUTOFFS
            ),
            Alias("ndcg", "ranx", ("ndcg@10",)),
            Alias("ndcg_burges", "ranx", ("ndcg_burges@10",), fixed=(("gain", "exp"),)),
        ),
        param_aliases=(
            ParamAlias("dcg", "gain", (("log2", "linear"), ("exp-log2", "exp"))),  # ir_measures
            EMPTY_TARGET_ACTION,
        ),
        examples=("nDCG@10", "nDCG(gain=exp)@10", "nDCG", "nDCG(ties=average)@10", "nDCG(min_grade=2)@5"),
    )
)
register(
    MeasureSpec(
        name="RR",
        summary="Reciprocal rank of the first relevant doc",
        definition="RR@k = 1 / rank of the first relevant doc if it is in the top k, else 0. Averaged: MRR",
        kernel=peer("reciprocal_rank"),
        reference=peer("reciprocal_rank_reference"),
        params=(REL, EMPTY),
        trec_eval="recip_rank (no cutoff)",
        aliases=(
            Alias("recip_rank", "trec_eval", ("recip_rank",)),
            Alias("mrr", "ranx", ("mrr", "mrr@10")),
        ),
        param_aliases=(EMPTY_TARGET_ACTION,),
        examples=("RR@10", "RR"),
    )
)
register(
    MeasureSpec(
        name="AP",
        summary="Average precision",
        definition=(
            "AP@k = (sum over relevant docs at ranks i <= k of P@i) / R; 0 when R = 0. "
            "Divides by all relevant docs of the query (trec_eval map_cut); denominator=min_k_R divides by "
            "min(k, R), denominator=retrieved_relevant by the relevant docs in the top k. Averaged: MAP"
        ),
        kernel=peer("average_precision"),
        reference=peer("average_precision_reference"),
        params=(REL, AP_DENOMINATOR, EMPTY),
        trec_eval="map; map_cut_k",
        aliases=(
            Alias("map", "trec_eval", ("map",)),
            Alias("map_cut", "trec_eval", ("map_cut_100", "map_cut"), default_cutoffs=TREC_EVAL_CUTOFFS),
            Alias("map", "ranx", ("map@100",)),
        ),
        param_aliases=(EMPTY_TARGET_ACTION,),
        examples=("AP", "AP@100", "AP(denominator=min_k_R)@10"),
    )
)
register(
    MeasureSpec(
        name="Rprec",
        summary="Precision at rank R (R-precision)",
        definition="Rprec = |{relevant docs in top R}| / R; 0 when R = 0",
        kernel=peer("r_precision"),
        reference=peer("r_precision_reference"),
        params=(REL, EMPTY),
        cutoff="none",
        trec_eval="Rprec",
        aliases=(
            Alias("r-precision", "ranx", ("r-precision",)),
            Alias("rprec", "plain", ("rprec",)),
            Alias("r-prec", "plain"),
            Alias("r_prec", "plain"),
            Alias("r_precision", "plain"),
        ),
        param_aliases=(EMPTY_TARGET_ACTION,),
        examples=("Rprec",),
    )
)
register(
    MeasureSpec(
        name="Success",
        summary="1 if any relevant doc is in the top k, else 0 (hit rate)",
        definition="Success@k = 1 if |{relevant docs in top k}| > 0 else 0",
        kernel=peer("success"),
        reference=peer("success_reference"),
        params=(REL, EMPTY),
        cutoff="required",
        trec_eval="success_k",
        aliases=(
            Alias("success", "trec_eval", ("success_5", "success.5", "success"), default_cutoffs=(1, 5, 10)),
            Alias("hit_rate", "ranx", ("hit_rate@5",)),
            Alias("hit", "plain", ("hit@5",)),
            Alias("hitrate", "plain"),
        ),
        param_aliases=(EMPTY_TARGET_ACTION,),
        examples=("Success@5",),
    )
)
register(
    MeasureSpec(
        name="Judged",
        summary="Fraction of the returned top k that has a judgment",
        definition=(
            "Judged@k = |{docs in top k with a grade >= 0}| / min(k, docs returned); 0 when nothing was "
            "returned. Grades < 0 count as unjudged (trec_eval's pooled-but-unjudged convention); "
            "negative=judged counts every doc in the qrels, whatever its grade (ir_measures' Judged)"
        ),
        kernel=peer("judged"),
        reference=peer("judged_reference"),
        params=(JUDGED_NEGATIVE,),
        cutoff="required",
        aliases=(Alias("judged", "plain", ("judged@10",)),),
        examples=("Judged@10", "Judged(negative=judged)@10"),
    )
)
register(
    MeasureSpec(
        name="Bpref",
        summary="Binary preference: relevant docs ranked above judged non-relevant ones",
        definition=(
            "Bpref = (1/R) * sum over retrieved relevant docs r of "
            "(1 - min(n_r, R) / min(R, N)), n_r = judged non-relevant docs ranked above r, "
            "N = judged non-relevant docs of the query; unjudged and negative grades are ignored"
        ),
        kernel=kernel("bpref"),
        reference=reference("bpref"),
        params=(REL,),
        cutoff="none",
        trec_eval="bpref",
        aliases=(Alias("bpref", "trec_eval", ("bpref",)),),
        examples=("Bpref",),
    )
)
register(
    MeasureSpec(
        name="NumRel",
        summary="Number of relevant judged docs of the query (summed over queries)",
        definition="NumRel = R",
        kernel=kernel("num_rel"),
        reference=reference("num_rel"),
        params=(REL,),
        cutoff="none",
        bounds=(0.0, math.inf),
        aggregate="sum",
        trec_eval="num_rel",
        aliases=(Alias("num_rel", "trec_eval", ("num_rel",)),),
        examples=("NumRel",),
    )
)
register(
    MeasureSpec(
        name="NumRet",
        summary="Number of docs retrieved (summed over queries)",
        definition="NumRet = number of docs in the ranking (in the top k with @k)",
        kernel=kernel("num_ret"),
        reference=reference("num_ret"),
        bounds=(0.0, math.inf),
        aggregate="sum",
        trec_eval="num_ret",
        aliases=(Alias("num_ret", "trec_eval", ("num_ret",)),),
        examples=("NumRet", "NumRet@100"),
    )
)
register(
    MeasureSpec(
        name="NumRelRet",
        summary="Number of relevant docs retrieved (summed over queries)",
        definition="NumRelRet = number of relevant docs in the ranking (in the top k with @k)",
        kernel=kernel("num_rel_ret"),
        reference=reference("num_rel_ret"),
        params=(REL,),
        bounds=(0.0, math.inf),
        aggregate="sum",
        trec_eval="num_rel_ret",
        aliases=(Alias("num_rel_ret", "trec_eval", ("num_rel_ret",)),),  # ranx's hits is Hits (a mean)
        examples=("NumRelRet", "NumRelRet@10"),
    )
)
register(
    MeasureSpec(
        name="RBP",
        summary="Rank-biased precision (Moffat & Zobel 2008), binary relevance",
        definition=(
            "RBP = (1 - p) * sum over ranks i (<= k with @k) of [rel(d_i)] * p^(i-1). Not ranx's rbp.80, which "
            "weighs each relevant doc by its grade (WeightedRBP), nor trec_eval's rbp (GradedRBP): the word "
            "'rbp' alone is refused with both readings"
        ),
        kernel=kernel("rank_biased_precision"),
        reference=reference("rank_biased_precision"),
        params=(PERSISTENCE, REL),
        examples=("RBP", "RBP(p=0.95)", "RBP(p=0.5)@10"),
    )
)
register(
    MeasureSpec(
        name="ERR",
        summary="Expected reciprocal rank (Chapelle et al. 2009), graded",
        definition=(
            "ERR@k = sum over ranks i <= k of (1/i) * R_i * prod over j < i of (1 - R_j), "
            "R_i = (2^g_i - 1) / 2^gmax; gmax = max_grade, or the largest grade in the qrels when 0. "
            "Negative grades count as 0"
        ),
        kernel=kernel("expected_reciprocal_rank"),
        reference=reference("expected_reciprocal_rank"),
        params=(MAX_GRADE,),
        aliases=(Alias("err", "plain", ("err@10",)),),
        examples=("ERR@10", "ERR(max_grade=4)@20"),
    )
)

# The rest of trec_eval's all_trec set, and other evaluators' conventions (ranx, scikit-learn,
# torchmetrics), each in a module of its own.
from rankgate.measures import peer_conventions, trec_more  # noqa: E402,F401  (register on import)
