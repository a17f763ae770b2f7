"""``rankgate label leakage``: evaluation queries and answers found (nearly) verbatim in the corpus."""

from __future__ import annotations

import json

import click

from rankgate.cli.options import emit, format_option, output_file_option, warn
from rankgate.label.leakage import DEFAULT_MIN_WORDS, DEFAULT_N, DEFAULT_THRESHOLD


@click.command("leakage", short_help="Find queries and answers copied into the corpus.")
@click.option("--queries", "queries_path", required=True, type=click.Path(dir_okay=False), help="Queries file.")
@click.option("--answers", "answers_path", type=click.Path(dir_okay=False), help="Reference answers JSONL.")
@click.option("--corpus", required=True, type=click.Path(dir_okay=False), help="The corpus the retriever indexes.")
@click.option(
    "-n",
    "--ngram",
    "n",
    type=click.IntRange(min=1),
    default=DEFAULT_N,
    show_default=True,
    help="Words per shingle (candidate search).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1, min_open=True),
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="Copy score (1 - word edits / words) at which an item is flagged.",
)
@click.option(
    "--min-words",
    type=click.IntRange(min=1),
    default=DEFAULT_MIN_WORDS,
    show_default=True,
    help="Shorter items are not checked.",
)
@click.option("--drop-out", type=click.Path(dir_okay=False), help="Write the queries without the leaked ones here.")
@click.option("--check", is_flag=True, help="Exit 1 when anything leaked (for CI).")
@format_option(["text", "json"], default="text")
@output_file_option
def leakage_command(
    queries_path: str,
    answers_path: str | None,
    corpus: str,
    n: int,
    threshold: float,
    min_words: int,
    drop_out: str | None,
    check: bool,
    fmt: str,
    output: str | None,
) -> None:
    """List queries and reference answers whose word n-grams a corpus passage holds (copies, near copies).

    \b
    Examples:
      rankgate label leakage --queries queries.jsonl --answers answers.jsonl --corpus corpus.jsonl
      rankgate label leakage --queries queries.jsonl --corpus corpus.jsonl --drop-out clean.jsonl --check
    """
    from rankgate.io.texts import iter_texts, read_queries
    from rankgate.label.leakage import find_leakage, write_queries_without
    from rankgate.rag.answers import read_answers
    from rankgate.render.leakage import text

    queries = read_queries(queries_path)
    answers = read_answers(answers_path) if answers_path else None
    report = find_leakage(
        iter_texts(corpus, what="document"), queries, answers, n=n, threshold=threshold, min_words=min_words
    )
    warn(report.warnings)
    body = report.to_dict()
    if drop_out:
        body["drop_out"] = {"path": drop_out, "kept": write_queries_without(queries, report.leaked_queries, drop_out)}
    emit(json.dumps(body, indent=2) if fmt == "json" else text(body), output)
    if check and report.leaks:
        raise SystemExit(1)
