"""The rest of trec_eval 10's ``all_trec`` set, as rankgate families (registered on import).

Each family follows trec_eval's definition, parameters and defaults (the tests compare them with
trec_eval's own output, see ``tests/test_trec_eval_measures.py``). Words: *non-pool* docs are
retrieved docs the qrels do not list; *unjudged* docs are listed with a negative grade; R is the
number of judged docs with grade >= ``rel``; a query's retrieved count is its ranking's length.

trec_eval names with number parameters (``iprec_at_recall_0.10``, ``Rprec_mult.0.2,1.0``,
``set_F.0.5``, ``utility.1,-1,0,0``) are read through `rankgate.measures.trec_names`, which
also names trec_eval's output lines that are not numbers (``runid``, ``relstring``).
"""

from __future__ import annotations

import math

from rankgate.measures import definitions  # noqa: F401  (the base families register first)
from rankgate.measures.registry import REL, TREC_EVAL_CUTOFFS, Alias, LazyFunction, MeasureSpec, ParamSpec, register
from rankgate.measures.trec_names import UNJ_CUTOFFS, valid_levels


def _kernel(module: str, name: str) -> LazyFunction:
    return LazyFunction(f"rankgate.measures.{module}", name)


def _twin(name: str) -> LazyFunction:
    return LazyFunction("rankgate.measures.trec_reference", name)


def _number(name: str, default: float, doc: str, low: float, high: float = math.inf) -> ParamSpec:
    low_text = "" if math.isinf(low) else f" >= {low:g}"
    high_text = "" if math.isinf(high) else f" and <= {high:g}"
    return ParamSpec(name, float, default, doc, check=lambda v: low <= v <= high, requirement=low_text + high_text)


def _spec(name: str, kernel: tuple[str, str], twin: str, **fields: object) -> MeasureSpec:
    fields.setdefault("cutoff", "none")
    return register(
        MeasureSpec(
            name=name,
            kernel=_kernel(*kernel),
            reference=_twin(twin) if "." not in twin else LazyFunction(*twin.rsplit(".", 1)),
            **fields,  # type: ignore[arg-type]
        )
    )


TK, GK = "trec_kernels", "trec_gain_kernels"
# trec_eval's per-grade gains (G.1=3,2=9 is G(g1=3.0,g2=9.0)); a grade above 9 gains its own value
GAINS = tuple(_number(f"g{level}", float(level), f"gain of grade {level}", -math.inf) for level in range(10))

_spec(
    "GMAP", ("kernels", "average_precision"), "rankgate.measures.reference.average_precision",
    summary="Geometric mean average precision: AP per query, geometric mean over queries",
    definition=(
        "Per query: AP (as AP). Over queries: exp(mean of ln(max(AP, 0.00001))); a query missing "
        "from the run scores 0, so it counts as 0.00001"
    ),
    params=(REL,), aggregate="gmean", trec_eval="gm_map (summary only)",
    aliases=(Alias("gm_map", "trec_eval", ("gm_map",)),), examples=("GMAP",),
)  # fmt: skip
_spec(
    "GMBpref", ("kernels", "bpref"), "rankgate.measures.reference.bpref",
    summary="Geometric mean of Bpref over queries",
    definition="Per query: Bpref. Over queries: exp(mean of ln(max(Bpref, 0.00001)))",
    params=(REL,), aggregate="gmean", trec_eval="gm_bpref (summary only)",
    aliases=(Alias("gm_bpref", "trec_eval", ("gm_bpref",)),), examples=("GMBpref",),
)  # fmt: skip
_spec(
    "IPrec", (TK, "iprec_at_recall"), "iprec_at_recall",
    summary="Interpolated precision at a recall level",
    definition=(
        "n = floor(recall * R + 0.9) (trec_eval 10.0); 0 when n > relevant docs retrieved. Else the highest "
        "precision at the rank of any relevant doc from the n-th (the first when n = 0) down"
    ),
    params=(_number("recall", 0.0, "recall level", 0.0, 1.0), REL),
    trec_eval="iprec_at_recall_x (bare: at 0, 0.1, ..., 1)",
    aliases=(Alias("iprec_at_recall", "trec_eval", ("iprec_at_recall_0.10", "iprec_at_recall")),),
    examples=("IPrec(recall=0.1)", "IPrec"), at_param="recall",  # ir_measures: IPrec@0.5 is IPrec(recall=0.5)
)  # fmt: skip
_spec(
    "IPrecAvg", (TK, "iprec_average"), "iprec_average",
    summary="11-point interpolated average precision (or at other recall levels)",
    definition=(
        "Mean of IPrec at the recall levels: 0, 0.1, ..., 1 by default, else those of 'levels' "
        "(ascending numbers from 0 to 1, comma-separated, written as in levels='0.25,0.5')"
    ),
    params=(
        ParamSpec("levels", str, "", "recall levels, ascending ('' = 0, 0.1, ..., 1)", check=valid_levels,
                  requirement="ascending numbers from 0 to 1 written as Python prints them, e.g. '0.25,0.5'"),
        REL,
    ),
    trec_eval="11pt_avg (11pt_avg.x,y,...)",
    aliases=(Alias("11pt_avg", "trec_eval", ("11pt_avg",)),), examples=("IPrecAvg", "IPrecAvg(levels='0.25,0.5')"),
)  # fmt: skip
_spec(
    "InfAP", (TK, "inferred_ap"), "inferred_ap",
    summary="Inferred AP (Yilmaz & Aslam 2006) for a judged sample of the pool",
    definition=(
        "(1/R) * sum over relevant docs at 0-based rank j of: 1 when j = 0, else 1/(j+1) + (j/(j+1)) * "
        "((r + n + u)/j) * ((r + e)/(r + n + 2e)), where r, n, u count the relevant, judged non-relevant "
        "and unjudged (negative grade) docs above it and e = 0.00001; non-pool docs above count through j"
    ),
    params=(REL,), trec_eval="infAP",
    aliases=(Alias("infAP", "trec_eval", ("infAP",)),), examples=("InfAP",),
)  # fmt: skip
_spec(
    "RprecMult", (TK, "r_precision_mult"), "r_precision_mult",
    summary="Precision at rank mult * R",
    definition="k = floor(mult * R + 0.9); |{relevant docs in top k}| / k; 0 when k = 0",
    params=(_number("mult", 1.0, "multiple of R", 0.0), REL),
    trec_eval="Rprec_mult_x (bare: at 0.2, 0.4, ..., 2)",
    aliases=(Alias("Rprec_mult", "trec_eval", ("Rprec_mult_0.20", "Rprec_mult")),),
    examples=("RprecMult(mult=0.2)", "RprecMult"),
)  # fmt: skip
_spec(
    "Utility", (TK, "utility"), "utility",
    summary="Set utility: weighted counts of the contingency table",
    definition=(
        "a * relret + b * (ret - relret) + c * (R - relret) + d * (num_docs + relret - ret - R), "
        "ret = docs retrieved, relret = relevant docs retrieved (a query missing from the run has ret = 0)"
    ),
    params=(
        _number("a", 1.0, "worth of a relevant retrieved doc", -math.inf),
        _number("b", -1.0, "worth of a non-relevant retrieved doc", -math.inf),
        _number("c", 0.0, "worth of a relevant doc not retrieved", -math.inf),
        _number("d", 0.0, "worth of a non-relevant doc not retrieved", -math.inf),
        ParamSpec("num_docs", int, 0, "docs in the collection (trec_eval -N)", check=lambda v: v >= 0,
                  requirement=" >= 0"),
        REL,
    ),
    bounds=(-math.inf, math.inf), trec_eval="utility (utility.a,b,c,d)",
    aliases=(Alias("utility", "trec_eval", ("utility",)),), examples=("Utility", "Utility(a=3.0,b=-2.0)"),
)  # fmt: skip
_spec(
    "BinG", (TK, "binary_g"), "binary_g",
    summary="Binary G: relevant docs discounted by the non-relevant docs above them",
    definition="(1/R) * sum over retrieved relevant docs of 1 / log2(2 + docs above it that are not relevant)",
    params=(REL,), trec_eval="binG",
    aliases=(Alias("binG", "trec_eval", ("binG",)),), examples=("BinG",),
)  # fmt: skip
_spec(
    "G", (GK, "normalized_gain"), "normalized_gain",
    summary="trec_eval's normalized gain G (graded)",
    definition=(
        "Gain = g<grade> (g0..g9, default the grade; 0 when unjudged or negative). Sum over retrieved docs "
        "at 0-based rank i of gain / log2(2 + C_i - S_i), S_i = gain of ranks <= i, C_i = sum over ranks "
        "t <= i of max(1, t-th ideal gain), the ideal gains being the query's positive gains, highest first; "
        "divided by the sum of the ideal gains. Ignores 'rel'"
    ),
    params=GAINS, bounds=(-math.inf, math.inf), trec_eval="G (G.level=gain,...)",
    aliases=(Alias("G", "trec_eval", ("G",)),), examples=("G", "G(g1=3.0,g2=9.0)"),
)  # fmt: skip
_spec(
    "nDCGRel", (GK, "ndcg_rel"), "ndcg_rel",
    summary="nDCG averaged over the ranks of the docs with positive gain",
    definition=(
        "Mean over the n docs with positive gain of nDCG at its rank when retrieved (ideal DCG capped at n "
        "docs), else of the nDCG of the whole ranking; 0 when n = 0. Gain = g<grade> (g0..g9, default "
        "the grade). Ignores 'rel'"
    ),
    params=GAINS, bounds=(-math.inf, math.inf), trec_eval="ndcg_rel (ndcg_rel.level=gain,...)",
    aliases=(Alias("ndcg_rel", "trec_eval", ("ndcg_rel",)),), examples=("nDCGRel", "nDCGRel(g1=3.0,g2=9.0)"),
)  # fmt: skip
_spec(
    "RnDCG", (GK, "r_ndcg"), "r_ndcg",
    summary="nDCG averaged over the ranks where the ideal gain changes",
    definition=(
        "Mean of nDCG@t over each t where the ideal gain changes (t > 0) or drops to 0, plus the whole "
        "ranking's nDCG when at least 2 more docs were retrieved than have positive gain (trec_eval's "
        "rule); 0 when R = 0. Gain = g<grade> (g0..g9, default the grade)"
    ),
    params=(REL, *GAINS), bounds=(-math.inf, math.inf), trec_eval="Rndcg (Rndcg.level=gain,...)",
    aliases=(Alias("Rndcg", "trec_eval", ("Rndcg",)),), examples=("RnDCG", "RnDCG(g1=3.0,g2=9.0)"),
)  # fmt: skip
_spec(
    "RelP", (TK, "relative_precision"), "relative_precision",
    summary="Relative precision: precision at k over the best possible",
    definition="RelP@k = |{relevant docs in top k}| / min(k, R); 0 when R = 0",
    params=(REL,), cutoff="required", trec_eval="relative_P_k",
    aliases=(Alias("relative_P", "trec_eval", ("relative_P_5", "relative_P"), default_cutoffs=TREC_EVAL_CUTOFFS),),
    examples=("RelP@10",),
)  # fmt: skip
_spec(
    "SetP", (TK, "set_precision"), "set_precision",
    summary="Precision of the whole ranking as a set",
    definition="relret / ret; 0 when nothing was retrieved",
    params=(REL,), trec_eval="set_P",
    aliases=(Alias("set_P", "trec_eval", ("set_P",)),), examples=("SetP",),
)  # fmt: skip
_spec(
    "SetRelP", (TK, "set_relative_precision"), "set_relative_precision",
    summary="Relative precision of the whole ranking as a set",
    definition="relret / min(ret, R); 0 when ret or R is 0",
    params=(REL,), trec_eval="set_relative_P",
    aliases=(Alias("set_relative_P", "trec_eval", ("set_relative_P",)),), examples=("SetRelP",),
)  # fmt: skip
_spec(
    "SetR", (TK, "set_recall"), "set_recall",
    summary="Recall of the whole ranking as a set",
    definition="relret / R; 0 when R = 0",
    params=(REL,), trec_eval="set_recall",
    aliases=(Alias("set_recall", "trec_eval", ("set_recall",)),), examples=("SetR",),
)  # fmt: skip
_spec(
    "SetAP", (TK, "set_average_precision"), "set_average_precision",
    summary="Unranked average precision: set precision times set recall",
    definition="(relret / ret) * (relret / R); 0 when ret or R is 0",
    params=(REL,), trec_eval="set_map",
    aliases=(Alias("set_map", "trec_eval", ("set_map",)),), examples=("SetAP",),
)  # fmt: skip
_spec(
    "SetF", (TK, "set_f"), "set_f",
    summary="Set F measure: weighted harmonic mean of set precision and recall",
    definition="(beta + 1) * P * R' / (beta * P + R'), P = relret / ret, R' = relret / R; 0 when relret = 0",
    params=(_number("beta", 1.0, "relative weight of recall (trec_eval's x, not squared)", 0.0), REL),
    trec_eval="set_F (set_F.beta)",
    aliases=(Alias("set_F", "trec_eval", ("set_F",)),), examples=("SetF", "SetF(beta=0.5)"),
)  # fmt: skip
_spec(
    "NumNonrelJudgedRet", (TK, "num_nonrel_judged_ret"), "num_nonrel_judged_ret",
    summary="Number of judged non-relevant docs retrieved (summed over queries)",
    definition="Retrieved docs with 0 <= grade < rel (in the top k with @k)",
    params=(REL,), cutoff="optional", bounds=(0.0, math.inf), aggregate="sum", trec_eval="num_nonrel_judged_ret",
    aliases=(Alias("num_nonrel_judged_ret", "trec_eval", ("num_nonrel_judged_ret",)),),
    examples=("NumNonrelJudgedRet",),
)  # fmt: skip
_spec(
    "Unjudged", (TK, "unjudged"), "unjudged",
    summary="Fraction of the top k that is not judged (trec_eval unj)",
    definition=(
        "|{non-pool or negative-grade docs in top k}| / k; divides by k even when fewer docs were "
        "retrieved (the missing ranks count as judged)"
    ),
    cutoff="required", higher_is_better=False, trec_eval="unj_k",
    aliases=(Alias("unj", "trec_eval", ("unj_10", "unj"), default_cutoffs=UNJ_CUTOFFS),),
    examples=("Unjudged@10",),
)  # fmt: skip
_PERSISTENCE = _number("p", 0.9, "persistence: the chance of reading on (trec_eval's default 0.9)", 0.0, 1.0)
_spec(
    "RBPResid", (TK, "rbp_residual"), "rbp_residual",
    summary="Rank-biased precision residual: RBP weight left to unjudged docs",
    definition=(
        "p^ret + (1 - p) * sum over non-pool or negative-grade docs at 0-based rank i of p^i; "
        "0 when every retrieved doc is judged (trec_eval's rule)"
    ),
    params=(_PERSISTENCE,), higher_is_better=False, trec_eval="rbp_resid (rbp_resid.p=x)",
    aliases=(Alias("rbp_resid", "trec_eval", ("rbp_resid",)),), examples=("RBPResid", "RBPResid(p=0.8)"),
)  # fmt: skip
_spec(
    "GradedRBP", (GK, "graded_rbp"), "graded_rbp",
    summary="trec_eval's rbp: rank-biased precision of graded gains scaled to [0, 1]",
    definition=(
        "(1 - p) * sum over retrieved docs at 0-based rank i of p^i * gain; gain = g<grade> (g0..g9, default "
        "the grade; 0 when unjudged or negative), rescaled to (gain - lo) / (hi - lo) when lo < 0 or hi > 1, "
        "lo and hi being the least and greatest of 0, the gains of grades 0 to the query's highest judged "
        "grade and every gain g<k> set to a value other than k. Ignores 'rel'. Not ranx's rbp.80 (WeightedRBP: "
        "grades unscaled, p = 0.8) nor binary RBP; the word 'rbp' alone is refused with this and RBP's readings"
    ),
    params=(_PERSISTENCE, *GAINS),
    trec_eval="rbp (rbp.p=x,level=gain,...; see docs/semantics.md)",
    examples=("GradedRBP", "GradedRBP(p=0.8)", "GradedRBP(g1=3.0,p=0.5)"),
)  # fmt: skip
_spec(
    "NumQ", (TK, "num_q"), "num_q",
    summary="Number of queries evaluated (summed over queries)",
    definition="1 per evaluated query",
    bounds=(0.0, math.inf), aggregate="sum", trec_eval="num_q",
    aliases=(Alias("num_q", "trec_eval", ("num_q",)),), examples=("NumQ",),
)  # fmt: skip
_spec(
    "GainNDCG", (GK, "gain_ndcg"), "gain_ndcg",
    summary="nDCG with a gain for each grade (trec_eval's ndcg.level=gain,...)",
    definition=(
        "DCG = sum over retrieved docs at 0-based rank i of gain / log2(i + 2), gain = g<grade> for grades "
        "0..9, the grade itself above 9, 0 when unjudged or negative; divided by the DCG of the query's "
        "judged docs of positive gain, highest gain first; 0 when that is 0. With the default gains it is nDCG"
    ),
    params=GAINS,
    bounds=(-math.inf, math.inf), trec_eval="ndcg.level=gain,... (ndcg.1=3,2=9)",
    examples=("GainNDCG(g1=3.0,g2=9.0)",),
)  # fmt: skip
_spec(
    "GainDCG", (GK, "gain_dcg"), "gain_dcg",
    summary="DCG with a gain for each grade (trec_eval's dcg.level=gain,...)",
    definition=(
        "Sum over retrieved docs at 0-based rank i of gain / log2(i + 2), gain = g<grade> (g0..g9, default "
        "the grade; a grade above 9 gains itself; 0 when unjudged or negative). With the default gains it is DCG"
    ),
    params=GAINS, bounds=(-math.inf, math.inf), trec_eval="dcg.level=gain,... (bare dcg is DCG)",
    examples=("GainDCG(g1=3.0,g2=9.0)",),
)  # fmt: skip
_spec(
    "IdealDCG", (GK, "ideal_dcg"), "ideal_dcg",
    summary="DCG of the ideal ranking (trec_eval's ideal_dcg)",
    definition=(
        "DCG of the query's judged docs of positive gain, highest gain first (gain = g<grade>, g0..g9, "
        "default the grade); the denominator of GainNDCG"
    ),
    params=GAINS, bounds=(0.0, math.inf), trec_eval="ideal_dcg (ideal_dcg.level=gain,...)",
    aliases=(Alias("ideal_dcg", "trec_eval", ("ideal_dcg",)),), examples=("IdealDCG", "IdealDCG(g1=3.0,g2=9.0)"),
)  # fmt: skip
