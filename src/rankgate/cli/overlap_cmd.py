"""``rankgate overlap``: how much two runs agree, without judgments (overlap@k, Jaccard@k, RBO)."""

from __future__ import annotations

import click

from rankgate.cli.options import emit, format_option, output_file_option
from rankgate.errors import InputError


@click.command("overlap")
@click.argument("run_a", type=click.Path(dir_okay=False))
@click.argument("run_b", type=click.Path(dir_okay=False))
@click.option("-k", "--k", "ks", multiple=True, type=click.IntRange(min=1), help="Cutoff; repeat. Default: 10.")
@click.option(
    "--p",
    "p",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.9,
    show_default=True,
    help="RBO persistence: the weight of rank d is p^(d-1).",
)
@click.option(
    "--queries",
    type=click.Choice(["union", "intersection"]),
    default="union",
    show_default=True,
    help="union: a query only one run has scores 0; intersection: only queries in both.",
)
@click.option("--ties", type=click.Choice(["trec", "input"]), default="trec", show_default=True, help="Tie rule.")
@click.option("--worst", type=click.IntRange(min=0), default=10, show_default=True, help="Worst queries listed.")
@click.option(
    "--per-query", is_flag=True, help="List every query, not only the worst (text; json always has per_query)."
)
@format_option(["text", "json"], default="text")
@output_file_option
def overlap_command(
    run_a: str,
    run_b: str,
    ks: tuple[int, ...],
    p: float,
    queries: str,
    ties: str,
    worst: int,
    per_query: bool,
    fmt: str,
    output: str | None,
) -> None:
    """Agreement of RUN_B with RUN_A per query and on average: overlap@k, Jaccard@k, RBO@k.

    No qrels needed: a candidate index (ANN, quantised, a cheaper model) checked against a
    reference one. RBO is extrapolated rank-biased overlap (Webber et al. 2010).

    \b
    Examples:
      rankgate overlap exact.txt hnsw.txt -k 10 -k 100
      rankgate overlap bm25.txt dense.txt -k 10 --p 0.8 --format json
    """
    from rankgate.comparison.overlap import run_overlap
    from rankgate.io.hints import runs_only
    from rankgate.io.readers import read_run
    from rankgate.render.overlap import render

    try:
        a, b = read_run(run_a), read_run(run_b)
    except InputError as e:
        raise runs_only(e, "rankgate overlap") from None
    result = run_overlap(a, b, ks=ks or (10,), p=p, queries=queries, ties=ties)
    emit(render(result, fmt, worst=worst, per_query=per_query), output)
