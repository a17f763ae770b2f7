"""``rankgate trec_eval``: trec_eval's command line and output, over rankgate's evaluation."""

from __future__ import annotations

from typing import Any

import click

# the trec_eval release whose output `rankgate trec_eval` reproduces (docs/semantics.md)
TREC_EVAL_VERSION = "10.0-rc2"

# trec_eval's options rankgate does not honour: what each does there; a value that changes nothing
# (trec_eval's default) is accepted, as trec_eval accepts it
_REFUSED = {
    "R": ("rel_info format", "reads qrels files only", "qrels"),
    "T": ("results format", "reads TREC run files only", "trec_results"),
    "D": ("debug level", "prints no debug output", "0"),
    "Z": ("z-score file", "prints raw values, not z-scores", None),
    "o": ("old output format, obsolete in trec_eval", "prints trec_eval 10's format", None),
}


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """trec_eval's ``-v``: its version on stderr, exit 0 (with rankgate's, which this is)."""
    if not value or ctx.resilient_parsing:
        return
    from rankgate import __version__

    click.echo(f"trec_eval version {TREC_EVAL_VERSION} (rankgate {__version__}'s trec_eval)", err=True)
    ctx.exit(0)


def _refuse(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """trec_eval's -R, -T, -D, -Z and -o: refused in one line (exit 2) unless the value changes nothing."""
    from rankgate.errors import RankgateError

    if value is None or value is False or ctx.resilient_parsing:
        return
    flag = next(o for o in param.opts if len(o) == 2)[1:]  # -R of -R/--Rel_info_format
    what, instead, default = _REFUSED[flag]
    if default is not None and value == default:
        return
    shown = "" if value is True else f" {value}"
    raise RankgateError(f"rankgate trec_eval does not read trec_eval's -{flag}{shown} ({what}): it {instead}.")


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
@click.option(
    "-v",
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the trec_eval version reproduced (on stderr, as trec_eval) and exit.",
)
@click.option("-R", "--Rel_info_format", "rel_info_format", hidden=True, expose_value=False, callback=_refuse)
@click.option("-T", "--Results_format", "results_format", hidden=True, expose_value=False, callback=_refuse)
@click.option("-D", "--Debug_level", "debug_level", hidden=True, expose_value=False, callback=_refuse)
@click.option("-Z", "--Zscore", "zscore", hidden=True, expose_value=False, callback=_refuse)
@click.option(
    "-o", "--Output_old_results_format", "old_format", is_flag=True, hidden=True, expose_value=False, callback=_refuse
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
    remain are listed in docs/semantics.md ("rankgate trec_eval"); trec_eval's -R, -T, -D, -Z
    and -o are refused unless given their default (-R qrels, -T trec_results, -D 0).

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
