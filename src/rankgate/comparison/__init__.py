"""Comparing systems evaluated on the same queries: `Comparison` over `Results`.

The statistics themselves (paired tests, intervals, corrections) are `rankgate.stats`, which
works on arrays; this package lines the systems' per-query values up and applies them.
"""
