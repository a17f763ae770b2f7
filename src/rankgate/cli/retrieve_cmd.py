"""``rankgate retrieve``: ask a live retriever (HTTP API, Python, vector database) and write a run."""

from __future__ import annotations

import sys
from typing import Any

import click


@click.command("retrieve")
@click.option("--queries", "queries_path", required=True, help="Queries: BEIR queries.jsonl, JSON, TSV, or 'demo'.")
@click.option("--retriever", "spec", required=True, help="SPEC: a YAML file with a 'kind', or python:module:function.")
@click.option("-k", "k", type=click.IntRange(min=1), default=100, show_default=True, help="Hits per query.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The run file to write (TREC).")
@click.option("--jsonl", type=click.Path(dir_okay=False), help="Also write one line per query: hits, latency, error.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True, help="Requests in flight.")
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), help="At most this many requests per second.")
@click.option(
    "--retries", type=click.IntRange(min=0), default=3, show_default=True, help="Retries after 429/5xx/timeouts."
)
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds per request (replaces the SPEC's)."
)
@click.option(
    "--cache", "cache_path", type=click.Path(dir_okay=False), help="Answer cache (default: OUTPUT.cache.sqlite)."
)
@click.option("--no-cache", is_flag=True, help="Ask every query again (new answers replace the cached ones).")
@click.option("--allow-failures", is_flag=True, help="Write the run from the answered queries; exit 0.")
@click.option(
    "--scores",
    type=click.Choice(["given", "ranks"]),
    default="given",
    show_default=True,
    help="ranks: scores from ranks for every query, so trec_eval keeps the returned order even where scores tie.",
)
@click.option("--tag", help="The run tag (default: the output file's stem).")
@click.option("--summary", "summary_path", type=click.Path(dir_okay=False), help="Write the JSON summary here too.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def retrieve_command(**opts: Any) -> None:
    """Ask a retriever for the top K hits of every query and write a TREC run.

    Answers are cached as they arrive (SQLite beside the run), so an interrupted run resumes
    asking only for the rest. Latency per query (p50/p95/p99; a failed query at the time it took)
    and queries per second are in the summary (--format json, --summary). Exit code 1 when any
    query failed (the run is not written unless --allow-failures), 2 for a bad SPEC or input,
    130 on Ctrl-C. Kinds and keys: docs/retrieve.md.

    \b
    Examples:
      rankgate retrieve --queries queries.jsonl --retriever search.yaml -k 100 -o new.txt
      rankgate retrieve --queries demo --retriever python:my_search:search -k 10 -o run.txt --format json
      rankgate retrieve --queries queries.tsv --retriever api.yaml -o run.txt --concurrency 16 --rate 50 \\
        --jsonl run.jsonl --summary latency.json
    """
    from rankgate.bench.progress import Progress
    from rankgate.cli.options import emit, warn
    from rankgate.render.retrieve import failure_lines, summary_json, summary_text
    from rankgate.retrieve.cache import default_cache_path
    from rankgate.retrieve.progress import LogProgress
    from rankgate.retrieve.runner import retrieve
    from rankgate.retrieve.spec import open_retriever

    queries = _queries(opts["queries_path"])
    retriever = open_retriever(opts["spec"], timeout=opts["timeout"])
    try:
        report = retrieve(
            queries,
            retriever,
            k=opts["k"],
            output=opts["output"],
            jsonl=opts["jsonl"],
            concurrency=opts["concurrency"],
            rate=opts["rate"],
            retries=opts["retries"],
            scores=opts["scores"],
            cache=opts["cache_path"] or default_cache_path(opts["output"]),
            refresh=opts["no_cache"],
            allow_failures=opts["allow_failures"],
            tag=opts["tag"],
            progress=Progress.auto() if sys.stderr.isatty() else LogProgress(lambda line: click.echo(line, err=True)),
        )
    finally:
        retriever.close()
    summary = report.to_dict()
    if opts["summary_path"]:
        emit(summary_json(summary), opts["summary_path"])
    emit(summary_json(summary) if opts["fmt"] == "json" else summary_text(summary), None)
    warn(summary["warnings"])
    if report.failures:
        kept = [p for p in (opts["summary_path"], opts["jsonl"]) if p]
        if opts["fmt"] == "json":
            kept.append("the JSON on stdout")
        for line in failure_lines(summary, kept=kept):
            click.echo(line, err=True)
        written = "the run was written without them" if report.written else "the run was not written"
        again = "run again to ask only for them" + ("" if opts["allow_failures"] else ", or pass --allow-failures")
        failed = "query failed" if len(report.failures) == 1 else "queries failed"
        click.echo(
            f"rankgate: {len(report.failures):,} of {len(report.answers):,} {failed}; {written} ({again})",
            err=True,
        )
        if not opts["allow_failures"]:
            sys.exit(1)


def _queries(path: str) -> dict[str, str]:
    from rankgate.errors import InputError
    from rankgate.io.texts import read_queries

    if path == "demo":
        from rankgate.data import demo_dir

        path = str(demo_dir() / "queries.jsonl")
    queries = read_queries(path)
    if not queries:
        raise InputError("no queries in the file", source=path)
    return queries
