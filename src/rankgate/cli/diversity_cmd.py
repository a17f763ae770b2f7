"""``rankgate diversity``: alpha-nDCG, ERR-IA, NRBP, P-IA and subtopic recall over subtopic judgments."""

from __future__ import annotations

import click

from rankgate.cli.options import emit, format_option, output_file_option


@click.command("diversity")
@click.argument("subtopic_qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option(
    "-m", "--measure", "measures", multiple=True, required=True, help="A diversity measure; repeat (see below)."
)
@click.option("--ties", type=click.Choice(["trec", "input"]), default="trec", show_default=True, help="Tie rule.")
@click.option("--per-query", is_flag=True, help="One row per query as well as the means.")
@format_option(["table", "json"], default="table")
@output_file_option
def diversity_command(
    subtopic_qrels: str, run: str, measures: tuple[str, ...], ties: str, per_query: bool, fmt: str, output: str | None
) -> None:
    """Diversity of RUN against SUBTOPIC_QRELS (lines `qid subtopic docid grade`), as ndeval defines it.

    Measures: alpha-nDCG@k (alpha=0.5; `alpha-nDCG(alpha=0.3)@10`), ERR-IA@k, NRBP, P-IA@k,
    S-recall@k. Every query of the subtopic judgments is averaged; a query missing from the
    run scores 0. See docs/semantics.md.

    \b
    Examples:
      rankgate diversity subtopics.txt run.txt -m alpha-nDCG@20 -m ERR-IA@20 -m S-recall@20
      rankgate diversity subtopics.txt run.txt -m "alpha-nDCG(alpha=0.3)@10" --per-query --format json
    """
    from rankgate.evaluation.diversity import evaluate_diversity
    from rankgate.render.diversity import render_diversity

    results = evaluate_diversity(subtopic_qrels, run, list(measures), ties=ties)
    emit(render_diversity(results, fmt, per_query=per_query), output)
