"""``rankgate compare``: paired statistics of several runs against a baseline."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from rankgate.cli.options import (
    Semantics,
    emit,
    engine_options,
    format_option,
    measure_option,
    output_file_option,
    semantics_options,
    split_measures,
    warn,
)
from rankgate.stats import MAX_RESAMPLES, MIN_RESAMPLES

if TYPE_CHECKING:
    from rankgate.evaluation.engines import Engine

DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10")


@click.command("compare")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@measure_option(
    DEFAULT_MEASURES,
    help="Measure to compare; repeat or separate with commas. Default: " + ", ".join(DEFAULT_MEASURES) + ".",
)
@click.option("--baseline", help="Name of the baseline system (default: the first run).")
@click.option("--name", "names", multiple=True, help="Name of each run, in order (default: file stems).")
@click.option(
    "--test",
    type=click.Choice(["t", "randomization"]),
    default="t",
    show_default=True,
    help="Test whose p-value is reported: paired t-test or paired randomization test.",
)
@click.option("--randomization", is_flag=True, help="Also report the randomization test's p-value.")
@click.option("--all-pairs", is_flag=True, help="Also test every pair of systems (randomized Tukey HSD).")
@click.option(
    "--correction",
    type=click.Choice(["holm", "bonferroni", "bh", "none"]),
    default="holm",
    show_default=True,
    help="Multiple-comparison correction over all candidates x measures.",
)
@click.option(
    "--resamples",
    type=click.IntRange(MIN_RESAMPLES, MAX_RESAMPLES),
    default=10_000,
    show_default=True,
    help="Bootstrap resamples for confidence intervals.",
)
@click.option(
    "--permutations",
    type=click.IntRange(MIN_RESAMPLES, MAX_RESAMPLES),
    default=10_000,
    show_default=True,
    help="Permutations of the randomization test.",
)
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--detect", type=float, help="A delta to detect: report how many queries that needs.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random draw.")
@click.option(
    "--tags",
    "tags_path",
    type=click.Path(dir_okay=False),
    help="Query metadata (JSONL/CSV/TSV: query id + tags such as topic, tier): adds a per-tag breakdown.",
)
@format_option(["table", "json", "markdown", "latex"])
@output_file_option
@engine_options
@semantics_options
def compare_command(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    baseline: str | None,
    names: tuple[str, ...],
    test: str,
    randomization: bool,
    all_pairs: bool,
    correction: str,
    resamples: int,
    permutations: int,
    alpha: float,
    detect: float | None,
    seed: int,
    tags_path: str | None,
    fmt: str,
    output: str | None,
    engine: Engine,
    semantics: Semantics,
) -> None:
    """Compare RUNS on QRELS: deltas, confidence intervals, paired tests, corrections.

    The first run is the baseline unless --baseline names another. Every candidate is
    compared with it on every measure, on the queries they share.

    \b
    Examples:
      rankgate compare qrels.txt bm25.txt dense.txt -m nDCG@10 -m R@100
      rankgate compare qrels.txt a.txt b.txt c.txt --baseline a --randomization --format json
      rankgate compare qrels.txt a.txt b.txt c.txt --all-pairs
      rankgate compare qrels.txt base.txt new.txt -m RR@10 --detect 0.02
      rankgate compare qrels.txt base.txt new.txt --tags queries.jsonl
      rankgate compare qrels.txt 'base/*.parquet' 'new/*.parquet' --engine ray --name base --name new
      rankgate compare qrels.txt base=b1.txt,b2.txt,b3.txt 'new=new_seed*.txt'

    A system written NAME=run1,run2,... or NAME=GLOB is measured more than once (seeds,
    folds, repeated runs): the paired tests use each query's mean over its repeats, and the
    output reports the spread between the repeats (docs/statistics.md says what that assumes).

    With --engine ray (or --memory), each run (a file, a folder or a glob of shards) is
    evaluated there first; the statistics are the same as for runs read in memory.
    """
    from rankgate.comparison.compare import Statistics, compare
    from rankgate.io.tags import read_query_tags
    from rankgate.render.compare import render

    tags = read_query_tags(tags_path) if tags_path else None
    stats = Statistics(test, randomization, correction, resamples, permutations, alpha=alpha, detect=detect,
                       seed=seed, all_pairs=all_pairs)  # fmt: skip
    wanted = split_measures(measures) or list(DEFAULT_MEASURES)
    runs_, names_ = _systems(runs, names)
    result = compare(qrels, runs_, wanted, names=names_, baseline=baseline, tags=tags, stats=stats, engine=engine,
                     **semantics.evaluate_options())  # fmt: skip
    emit(render(result, fmt), output)
    for name, res in result.results.items():
        warn([f"{name}: {w}" for w in res.warnings])


def _systems(runs: tuple[str, ...], names: tuple[str, ...]) -> tuple[list[object], list[str] | tuple[str, ...]]:
    """The runs (a list for a system with repeats) and their names (``--name`` wins over ``NAME=``)."""
    from pathlib import Path

    from rankgate.comparison.repeats import parse_system

    parsed = [parse_system(r) for r in runs]
    if not any(name for name, _ in parsed):
        return list(runs), names
    systems: list[object] = [paths if name else paths[0] for name, paths in parsed]
    return systems, names or [name or Path(paths[0]).name.split(".")[0] for name, paths in parsed]
