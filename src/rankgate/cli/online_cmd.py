"""``rankgate online``: compare live systems from their logs (A/B arms, team-draft interleaving)."""

from __future__ import annotations

import click

from rankgate.cli.options import emit, format_option, output_file_option


@click.group("online")
def online_group() -> None:
    """Compare systems from production logs: two A/B arms, or one interleaving log.

    \b
    Examples:
      rankgate online ab arm_a.parquet arm_b.parquet --unit session
      rankgate online interleave interleaved.csv --per-query
    """


@online_group.command("ab")
@click.argument("log_a", type=click.Path(dir_okay=False))
@click.argument("log_b", type=click.Path(dir_okay=False))
@click.option(
    "--unit",
    type=click.Choice(["query", "session", "page"]),
    default="query",
    show_default=True,
    help="Average pages per query (paired over shared queries), per session or per page (independent arms).",
)
@click.option("-k", "--k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="Cutoff of clicks@k.")
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="Coverage of the confidence intervals.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@format_option(["table", "json"])
@output_file_option
def ab_command(
    log_a: str, log_b: str, unit: str, k: int, confidence: float, seed: int, fmt: str, output: str | None
) -> None:
    """B vs A from two impression logs: CTR, clicks@k, RR of the first click, abandonment, time to first click.

    A log has one row per result shown: query id, doc id, position (1 = top), clicked, and
    optionally session and timestamp (CSV/TSV, JSONL or Parquet).

    \b
    Examples:
      rankgate online ab arm_a.csv arm_b.csv -k 3 --format json
    """
    from rankgate.online.ab import ab_compare
    from rankgate.online.logs import read_click_log
    from rankgate.render.online import render_ab

    result = ab_compare(read_click_log(log_a), read_click_log(log_b), unit=unit, k=k, confidence=confidence, seed=seed)
    emit(render_ab(result.to_dict(), fmt), output)


@online_group.command("interleave")
@click.argument("log", type=click.Path(dir_okay=False))
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="Coverage of the preference's confidence interval.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--per-query", is_flag=True, help="Also print wins, ties and losses of each query.")
@format_option(["text", "json"], default="text")
@output_file_option
def interleave_command(log: str, confidence: float, seed: int, per_query: bool, fmt: str, output: str | None) -> None:
    """Score a team-draft interleaving log: wins/ties/losses, preference with a CI, sign test, pages needed.

    The log has one row per result shown: query id, doc id, position, clicked, team (A or B: the
    ranking that contributed the result), and a session (or page) id.

    \b
    Examples:
      rankgate online interleave interleaved.parquet --format json
    """
    from rankgate.online.interleave import analyze_interleaving
    from rankgate.online.logs import read_click_log
    from rankgate.render.online import render_interleaving

    result = analyze_interleaving(read_click_log(log, need_team=True), confidence=confidence, seed=seed)
    emit(render_interleaving(result.to_dict(per_query=per_query), fmt), output)
