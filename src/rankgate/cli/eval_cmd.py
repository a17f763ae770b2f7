"""``rankgate eval``: evaluate one run against relevance judgments."""

from __future__ import annotations

import click

from rankgate.cli.options import Semantics, emit, output_options, semantics_options, split_measures, warn

DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10", "AP", "P@10")


@click.command("eval")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
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
    """
    from rankgate.measures.evaluate import evaluate
    from rankgate.measures.parse import parse_measures
    from rankgate.report.eval_output import render

    wanted = parse_measures(split_measures(measures) or list(DEFAULT_MEASURES))
    results = evaluate(
        semantics.read_qrels(qrels), semantics.read_run(run, name), wanted, **semantics.evaluate_options()
    )
    if with_ci:
        results.with_confidence_intervals(seed=seed)
    emit(render(results, fmt, per_query=per_query), output)
    warn(results.warnings)
