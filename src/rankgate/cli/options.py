"""Options shared by several verbs, defined once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

OUTPUT_FORMATS = ("table", "json", "jsonl", "csv", "trec")


def split_measures(values: tuple[str, ...]) -> list[str]:
    """Split ``-m`` values on commas outside parentheses: ``P@5,nDCG(gain=exp)@10``."""
    out: list[str] = []
    for value in values:
        depth, start = 0, 0
        for i, ch in enumerate(value):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "," and depth == 0:
                out.append(value[start:i].strip())
                start = i + 1
        out.append(value[start:].strip())
    return [m for m in out if m]


def semantics_options(func: F) -> F:
    """The semantic choices of DESIGN.md, as options of every verb that evaluates."""
    options = [
        click.option(
            "--queries",
            type=click.Choice(["qrels", "intersection"]),
            default="qrels",
            show_default=True,
            help="Average over every qrels query (absent from the run: 0, trec_eval -c) or only queries in both.",
        ),
        click.option(
            "--ties",
            type=click.Choice(["trec", "input"]),
            default="trec",
            show_default=True,
            help="Break score ties by doc id descending (trec_eval) or keep input order.",
        ),
        click.option(
            "--rel",
            type=click.IntRange(min=1),
            default=1,
            show_default=True,
            help="Minimum grade counted as relevant (binary measures; nDCG uses grades).",
        ),
        click.option(
            "--empty",
            type=click.Choice(["zero", "skip"]),
            default="zero",
            show_default=True,
            help="Queries without a relevant judgment: keep them (score 0) or leave them out.",
        ),
        click.option(
            "--duplicates",
            type=click.Choice(["error", "first", "max"]),
            default="error",
            show_default=True,
            help="Repeated (query, doc) pairs: stop with an error, keep the first, or keep the max.",
        ),
        click.option(
            "--judged-only", is_flag=True, help="Drop unjudged docs from each ranking first (condensed lists)."
        ),
        click.option(
            "--qrels-format",
            type=click.Choice(["trec", "json", "jsonl", "csv", "tsv", "parquet"]),
            help="Format of QRELS (default: from the extension and content).",
        ),
        click.option(
            "--run-format",
            type=click.Choice(["trec", "json", "jsonl", "csv", "tsv", "parquet"]),
            help="Format of the run (default: from the extension and content).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def output_options(func: F) -> F:
    options = [
        click.option(
            "--format",
            "fmt",
            type=click.Choice(OUTPUT_FORMATS),
            default="table",
            show_default=True,
            help="Output format.",
        ),
        click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False, writable=True),
            help="Write the output to this file (atomically) instead of stdout.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def emit(text: str, output: str | None) -> None:
    """Print ``text`` to stdout, or write it atomically to ``output``."""
    if output:
        from rankgate.io.source import atomic_writer

        with atomic_writer(output) as f:
            f.write(text if text.endswith("\n") else text + "\n")
    else:
        click.echo(text, nl=not text.endswith("\n"))


def warn(messages: list[str]) -> None:
    for m in messages:
        click.secho(f"warning: {m}", err=True, fg="yellow")
