"""``rankgate trec_eval``: trec_eval's command line and output, over rankgate's evaluation."""

from __future__ import annotations

import click


@click.command(
    "trec_eval",
    context_settings={"help_option_names": ["-h", "--help"], "allow_interspersed_args": True},
)
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("-q", "--query_eval_wanted", "per_query", is_flag=True, help="Also print each query's values.")
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME[.PARAMS]",
    help="A trec_eval measure (P.5,10; ndcg_cut) or nickname (official, all_trec, set); repeat. Default: official.",
)
@click.option(
    "-c",
    "--complete_rel_info_wanted",
    "complete",
    is_flag=True,
    help="Average over every qrels query (a query missing from the run scores as in trec_eval).",
)
@click.option("-n", "--nosummary", "no_summary", is_flag=True, help="Leave out the summary rows.")
@click.option("-l", "--level_for_rel", "rel", type=int, default=1, metavar="N", help="Least relevant grade.")
@click.option("-J", "--Judged_docs_only", "judged_only", is_flag=True, help="Drop unjudged documents first.")
@click.option(
    "-M", "--Max_retrieved_per_topic", "max_per_topic", type=int, metavar="N", help="Keep each query's top N."
)
@click.option(
    "-N",
    "--Number_docs_in_coll",
    "docs_in_collection",
    type=int,
    metavar="N",
    help="Documents in the collection (utility's d term).",
)
def trec_eval_command(
    qrels: str,
    run: str,
    per_query: bool,
    measures: tuple[str, ...],
    complete: bool,
    no_summary: bool,
    rel: int,
    judged_only: bool,
    max_per_topic: int | None,
    docs_in_collection: int | None,
) -> None:
    """Evaluate RUN against QRELS and print what trec_eval 10 prints, byte for byte.

    A script that runs trec_eval switches by changing the program name. The differences that
    remain are listed in docs/semantics.md ("rankgate trec_eval").

    \b
    Examples:
      rankgate trec_eval qrels.txt run.txt
      rankgate trec_eval -q -c -m ndcg_cut.10 -m P.5,10 -m map qrels.txt run.txt
      rankgate trec_eval -m all_trec -l2 qrels.txt run.txt
    """
    from rankgate.compat.trec_eval import trec_eval
    from rankgate.render.trec_eval import trec_eval_text

    report = trec_eval(
        qrels,
        run,
        measures or ("official",),
        per_query=per_query,
        complete=complete,
        summary=not no_summary,
        rel=rel,
        judged_only=judged_only,
        max_per_topic=max_per_topic,
        docs_in_collection=docs_in_collection,
    )
    for note in report.notes:
        click.echo(f"rankgate: {note}", err=True)
    click.echo(trec_eval_text(report), nl=False)
