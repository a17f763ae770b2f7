"""The evaluation wing: settings, the evaluation driver, results and groups, and the engines.

A run and its qrels (`rankgate.core`) are joined on (query, doc), ranked, cut into numeric
blocks and scored by the measures' kernels (`rankgate.measures`); the outcome is `Results`.
`engines` holds where the work runs (in memory, out of core, on Ray), all with equal results.
"""
