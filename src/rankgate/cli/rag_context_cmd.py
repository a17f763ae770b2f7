"""``rankgate rag context``: LLM-judged context recall and context precision of a run's top k."""

from __future__ import annotations

from typing import Any

import click

from rankgate.cli.llm_options import interrupt_message, llm_options, pop_llm_job
from rankgate.cli.options import emit, format_option, output_file_option, warn


@click.command("context", short_help="LLM-judged ContextRecall@k and ContextPrecision@k.")
@click.option("--run", "run_path", required=True, type=click.Path(dir_okay=False), help="Run of passages or chunks.")
@click.option("--corpus", required=True, type=click.Path(dir_okay=False), help="Passage texts: BEIR JSONL, JSON, TSV.")
@click.option("--queries", "queries_path", required=True, type=click.Path(dir_okay=False), help="Query texts.")
@click.option("--answers", "answers_path", required=True, type=click.Path(dir_okay=False), help="Answers JSONL.")
@click.option("-k", "--k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="Passages judged.")
@click.option("--ties", type=click.Choice(["trec", "input"]), default="trec", show_default=True, help="Tie rule.")
@click.option("--per-query", is_flag=True, help="Also print each query's values and counts.")
@llm_options
@format_option(["text", "json"], default="text")
@output_file_option
def context_command(**opts: Any) -> None:
    """ContextRecall@k (share of the reference answer's sentences the top k support) and ContextPrecision@k
    (rank-weighted share of the top k useful to arrive at the answer), judged by an LLM.

    The first answer string of each query is its reference answer. Verdicts are stored as they
    arrive (default RUN.context.sqlite): a rerun, or another run retrieving the same passages,
    pays nothing for them; Ctrl-C keeps them, and the same command resumes. An unreadable verdict
    is stored as failed: --retry-failed asks for it again. Exit 1 when a verdict is missing (cost
    cap, unreadable or no answer; the last line of stderr says what brings it in); a mean over no
    complete query is "-" (null in JSON).

    \b
    Examples:
      rankgate rag context --run run.txt --corpus chunks.jsonl --queries queries.jsonl --answers answers.jsonl \\
        -k 5 --base-url http://localhost:8000/v1 --model qwen2.5-7b-instruct
    """
    from rankgate.label.context import run_context
    from rankgate.render.answers import context_incomplete_text, render
    from rankgate.render.label import estimate_table
    from rankgate.render.terminal import to_text

    fmt, output, per_query = opts.pop("fmt"), opts.pop("output"), opts.pop("per_query")
    llm = pop_llm_job(opts)
    priced = bool(llm.price_in or llm.price_out)

    def show_estimate(estimate: Any) -> None:
        if fmt == "text" and estimate.requests:
            click.echo(to_text(estimate_table(estimate, priced=priced)), err=True, nl=False)

    with interrupt_message("verdicts"):
        report, warnings = run_context(
            opts["run_path"], opts["corpus"], opts["queries_path"], opts["answers_path"], llm, k=opts["k"],
            ties=opts["ties"], on_estimate=show_estimate,
        )  # fmt: skip
    warn(warnings)
    body = report.to_dict(per_query=per_query)
    if report.missing_passages:
        example = report.missing_passages[0]
        body["notes"] = [f"{len(report.missing_passages)} retrieved ids have no text in the corpus, e.g. {example!r}"]
    emit(render(body, fmt, title=f"context judged by {llm.model} (mean over complete queries)"), output)
    if not body["complete"] and not llm.dry_run:
        click.echo(context_incomplete_text(body), err=True)
        raise SystemExit(1)
