"""Where an evaluation runs: in memory (the default), out of core, or on a Ray cluster.

* in memory: `rankgate.evaluation.evaluate.evaluate` holds both inputs in memory.
* `outofcore.evaluate_out_of_core` streams TREC or Parquet files into query partitions on
  disk and evaluates them one group at a time within a memory budget.
* `ray.evaluate_ray` spreads query partitions of a sharded run over a Ray cluster.

All three give the same `Results`: query partitions are independent and merge exactly.
"""
