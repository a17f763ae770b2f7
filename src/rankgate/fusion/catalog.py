"""Every fusion method with its one-line definition and reference (read by the docs and the CLI).

Notation: ``s_i(d)`` is run i's (normalised) score of document d, ``r_i(d)`` its 1-based rank,
``n(d)`` how many runs retrieved d, ``w_i`` run i's weight, ``c`` the query's candidates (the
documents any run retrieved), ``|R_i|`` how many documents run i retrieved for the query.
"""

from __future__ import annotations

from rankgate.fusion.methods import Method

_FOX = "Fox & Shaw, Combination of Multiple Searches, TREC-2 1993"
_MOURAO = "Mourão et al., Multimodal medical information retrieval with unsupervised rank fusion, CMIG 2015"
_WEIGHTS = "Wu & Crestani, Data fusion with estimated weights, CIKM 2002"

_METHODS = [
    Method("rrf", "Reciprocal Rank Fusion", "sum_i 1 / (k + r_i(d))", "Cormack et al., SIGIR 2009", "ranks", {"k": 60}),
    Method("sum", "CombSUM", "sum_i s_i(d) (a run that missed d adds 0)", _FOX, "scores", aliases=("combsum",)),
    Method("mnz", "CombMNZ", "n(d) * sum_i s_i(d)", _FOX, "scores", aliases=("combmnz",)),
    Method("max", "CombMAX", "max_i s_i(d) (a run that missed d says -1e9)", _FOX, "scores", aliases=("combmax",)),
    Method("min", "CombMIN", "min_i s_i(d) (a run that missed d says 1e9)", _FOX, "scores", aliases=("combmin",)),
    Method("med", "CombMED", "median of s_i(d) over the runs that retrieved d", _FOX, "scores", aliases=("combmed",)),
    Method("anz", "CombANZ", "sum_i s_i(d) / n(d)", _FOX, "scores", aliases=("combanz",)),
    Method(
        "gmnz",
        "CombGMNZ",
        "n(d)^gamma * sum_i s_i(d)",
        "Lee, Analyses of Multiple Evidence Combination, SIGIR 1997",
        "scores",
        {"gamma": None},
        aliases=("combgmnz",),
    ),
    Method(
        "wsum",
        "Weighted sum (W-CombSUM)",
        "sum_i w_i s_i(d)",
        _WEIGHTS,
        "scores",
        weighted=True,
        aliases=("w-combsum", "weighted-sum", "weighted"),
    ),
    Method(
        "wmnz",
        "W-CombMNZ",
        "(sum of w_i over the runs that retrieved d) * sum_i s_i(d)",
        _WEIGHTS,
        "scores",
        weighted=True,
        aliases=("w-combmnz",),
    ),
    Method(
        "mixed",
        "Mixed",
        "sqrt(n(d)) * sum_i w_i s_i(d)",
        "Wu, Applying statistical principles to data fusion in information retrieval, ESWA 2009",
        "scores",
        weighted=True,
    ),
    Method(
        "bordafuse",
        "BordaFuse",
        "sum_i (c - r_i(d) + 1), a missed d gets (c - |R_i| + 1) / 2",
        "Aslam & Montague, Models for Metasearch, SIGIR 2001",
        "ranks",
        aliases=("borda",),
    ),
    Method(
        "w_bordafuse",
        "Weighted BordaFuse (W-BordaFuse)",
        "sum_i w_i * BordaFuse points_i(d)",
        "Aslam & Montague, Models for Metasearch, SIGIR 2001",
        "ranks",
        weighted=True,
        aliases=("w-bordafuse", "weighted-bordafuse"),
    ),
    Method(
        "condorcet",
        "Condorcet",
        "sort by pairwise majority: d above e when more runs rank d above e",
        "Montague & Aslam, Condorcet Fusion for Improved Retrieval, CIKM 2002",
        "ranks",
    ),
    Method("isr", "ISR", "n(d) * sum_i 1 / r_i(d)^2", _MOURAO, "ranks"),
    Method("log_isr", "log-ISR", "log(n(d)) * sum_i 1 / r_i(d)^2", _MOURAO, "ranks", aliases=("log-isr",)),
    Method(
        "logn_isr",
        "logN-ISR",
        "log(n(d) + sigma) * sum_i 1 / r_i(d)^2",
        _MOURAO,
        "ranks",
        {"sigma": 0.01},
        aliases=("logn-isr",),
    ),
    Method(
        "rbc",
        "Rank-Biased Centroids",
        "sum_i (1 - phi) phi^(r_i(d) - 1)",
        "Bailey et al., Retrieval Consistency in the Presence of Query Variations, SIGIR 2017",
        "ranks",
        {"phi": None},
        aliases=("rank-biased-centroids",),
    ),
    Method(
        "bayesfuse",
        "BayesFuse",
        "sum_i log-odds of relevance at r_i(d), learnt per rank band; a missed d adds log(0.001/0.999)",
        "Aslam & Montague, Models for Metasearch, SIGIR 2001",
        "ranks",
        trained=True,
    ),
    Method(
        "posfuse",
        "PosFuse",
        "sum_i P(relevant | rank r_i(d)), learnt per rank",
        "Lillis et al., Estimating probabilities for effective data fusion, SIGIR 2010",
        "ranks",
        trained=True,
    ),
    Method(
        "probfuse",
        "ProbFuse",
        "sum_i P(relevant | segment x of run i) / x, runs cut in n_segments",
        "Lillis et al., ProbFuse, SIGIR 2006",
        "ranks",
        {"n_segments": None},
        trained=True,
    ),
    Method(
        "segfuse",
        "SegFuse",
        "sum_i P(relevant | segment of r_i(d)) * (s_i(d) + 1), segments growing 10*2^(k-1) - 5",
        "Shokouhi, Segmentation of Search Engine Results for Effective Data-Fusion, ECIR 2007",
        "both",
        trained=True,
    ),
    Method(
        "slidefuse",
        "SlideFuse",
        "sum_i mean of P(relevant | rank) over ranks r_i(d) - w .. r_i(d) + w",
        "Lillis et al., Extending Probabilistic Data Fusion Using Sliding Windows, ECIR 2008",
        "ranks",
        {"w": None},
        trained=True,
    ),
    Method(
        "mapfuse",
        "MAPFuse",
        "sum_i MAP_i / r_i(d), MAP_i of run i on training queries",
        "Lillis et al., Estimating probabilities for effective data fusion, SIGIR 2010",
        "ranks",
        trained=True,
    ),
]

CATALOG: dict[str, Method] = {m.name: m for m in _METHODS}
