"""``rankgate eval``: evaluate one run against relevance judgments."""

from __future__ import annotations

import click

from rankgate.cli.options import Semantics, emit, output_options, semantics_options, split_measures, warn

DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10", "AP", "P@10")


@click.command("eval")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path())
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="MEASURE",
    help="Measure to compute; repeat or separate with commas. Default: " + ", ".join(DEFAULT_MEASURES) + ".",
)
@click.option("--per-query", is_flag=True, help="Also report the value of every query.")
@click.option("--name", help="Name of the run in the output (default: the file stem).")
@click.option(
    "--ci", "with_ci", is_flag=True, help="Add a 95% bootstrap confidence interval (over queries) to each mean."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap resamples (with --ci).")
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where to evaluate: this process, or a Ray cluster (RUN may then be a folder or glob of shards).",
)
@click.option("--ray-address", metavar="ADDR", help="Ray cluster to use (default: running cluster or a local one).")
@click.option(
    "--memory",
    metavar="SIZE",
    help="Memory budget such as 4GB: larger TREC or Parquet inputs are evaluated out of core, in query partitions.",
)
@click.option(
    "--partitions", type=click.IntRange(min=1), help="Query partitions (out of core or Ray); forces out of core."
)
@semantics_options
@output_options
def eval_command(
    qrels: str,
    run: str,
    measures: tuple[str, ...],
    per_query: bool,
    name: str | None,
    with_ci: bool,
    seed: int,
    engine: str,
    ray_address: str | None,
    memory: str | None,
    partitions: int | None,
    semantics: Semantics,
    fmt: str,
    output: str | None,
) -> None:
    """Evaluate RUN against QRELS with trec_eval's semantics.

    QRELS and RUN may be TREC text, JSON, JSONL, CSV/TSV (e.g. BEIR qrels) or Parquet,
    compressed or not. Measure names are canonical (nDCG@10, R@100, P(rel=2)@5) or
    aliases from trec_eval (ndcg_cut.10), ranx (mrr@10) and plain words (recall@10).

    \b
    Examples:
      rankgate eval qrels.txt run.txt -m nDCG@10 -m R@100 -m RR@10
      rankgate eval qrels.tsv run.trec.gz -m ndcg_cut.10,recall.100 --format json
      rankgate eval qrels.txt run.txt -m AP --per-query --format trec
      rankgate eval qrels.txt run.txt -m P@10 --rel 2 --queries intersection
      rankgate eval qrels.txt run.txt -m nDCG@10 --ci
      rankgate eval qrels.txt huge-run.txt.gz -m nDCG@10 --memory 4GB
      rankgate eval qrels.txt 'shards/*.parquet' -m nDCG@10 --engine ray --ray-address auto
    """
    from rankgate.measures.evaluate import evaluate
    from rankgate.measures.parse import parse_measures
    from rankgate.report.eval_output import render

    wanted = parse_measures(split_measures(measures) or list(DEFAULT_MEASURES))
    if engine == "ray":
        from rankgate.engine.ray_engine import evaluate_ray

        results = evaluate_ray(
            qrels,
            run,
            wanted,
            address=ray_address,
            partitions=partitions,
            name=name,
            qrels_format=semantics.qrels_format,
            run_format=semantics.run_format,
            **semantics.evaluate_options(),
        )
    elif partitions is not None or (memory is not None and not _fits(qrels, run, memory)):
        from rankgate.engine.outofcore import evaluate_out_of_core

        results = evaluate_out_of_core(
            qrels,
            run,
            wanted,
            memory=memory or "2GB",
            partitions=partitions,
            name=name,
            qrels_format=semantics.qrels_format,
            run_format=semantics.run_format,
            **semantics.evaluate_options(),
        )
    else:
        results = evaluate(
            semantics.read_qrels(qrels), semantics.read_run(run, name), wanted, **semantics.evaluate_options()
        )
    if with_ci:
        results.with_confidence_intervals(seed=seed)
    emit(render(results, fmt, per_query=per_query), output)
    warn(results.warnings)


def _fits(qrels: str, run: str, memory: str) -> bool:
    from rankgate.engine.outofcore import fits_in_memory, parse_memory

    return fits_in_memory(qrels, run, parse_memory(memory))
