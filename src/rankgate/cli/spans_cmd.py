"""``rankgate spans``: character-level span recall and precision of a run of chunks."""

from __future__ import annotations

import click

from rankgate.cli.options import emit, format_option, output_file_option, policy_options, warn
from rankgate.errors import ConfigError


@click.command("spans")
@click.argument("spans", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option(
    "--chunk-offsets",
    required=True,
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Where each retrieved chunk sits: CSV or JSONL of chunk_id, doc_id, start, end.",
)
@click.option("--k", "ks", default="5,10", show_default=True, help="Cutoffs, separated by commas.")
@click.option("--per-query", is_flag=True, help="Also report the value of every query.")
@click.option("--name", help="Name of the run in the output (default: the file stem).")
@click.option("--run-format", type=click.Choice(["trec", "json", "jsonl", "csv", "tsv", "parquet"]))
@policy_options(only=("queries", "ties", "rel", "duplicates"))
@format_option(["table", "json"])
@output_file_option
def spans_command(
    spans: str,
    run: str,
    chunk_offsets: str,
    ks: str,
    per_query: bool,
    name: str | None,
    run_format: str | None,
    fmt: str,
    output: str | None,
    **policies: object,
) -> None:
    """SpanRecall@k and SpanPrecision@k of RUN (chunk ids) against gold character SPANS.

    SPANS holds (query, doc_id, start, end, grade) rows, CSV or JSONL; offsets are characters,
    end exclusive. SpanRecall@k is the share of gold characters the top k chunks cover,
    SpanPrecision@k the share of the characters they cover that are gold (docs/rag.md). Every
    other measure on the chunk judgments the spans imply: rankgate eval SPANS RUN --chunk-offsets FILE.

    \b
    Examples:
      rankgate spans gold_spans.jsonl run.trec --chunk-offsets chunks.jsonl --k 1,5,10
      rankgate spans gold_spans.csv run.trec --chunk-offsets chunks.csv --format json --per-query
    """
    from rankgate.rag.spans import evaluate_spans
    from rankgate.render.spans import render_spans

    try:
        cutoffs = sorted({int(k) for k in ks.split(",") if k.strip()})
    except ValueError:
        raise ConfigError(f"--k takes whole numbers separated by commas. Got {ks!r} instead.", key_path="k") from None
    if not cutoffs or cutoffs[0] < 1:
        raise ConfigError(f"--k needs cutoffs >= 1. Got {ks!r} instead.", key_path="k")
    results = evaluate_spans(
        spans, run, cutoffs, chunk_offsets=chunk_offsets, settings=dict(policies), run_format=run_format, name=name
    )
    emit(render_spans(results, fmt, per_query=per_query), output)
    warn(results.warnings)
