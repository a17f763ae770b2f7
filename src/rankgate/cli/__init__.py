"""The `rankgate` command: one small module per verb, loaded only when that verb runs.

Every verb calls one library function; this layer maps `RankgateError` to a message on
stderr and exit code 2 (1 is kept for "a gate or check failed").
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from rankgate._version import __version__

_COMMANDS = {
    "eval": ("rankgate.cli.eval_cmd", "eval_command", "Evaluate a run against relevance judgments."),
    "compare": ("rankgate.cli.compare_cmd", "compare_command", "Compare runs: paired tests, confidence intervals."),
    "cutoffs": ("rankgate.cli.cutoffs_cmd", "cutoffs_command", "Tabulate measures at several cutoffs k."),
    "measures": ("rankgate.cli.measures_cmd", "measures_command", "List the measures, their definitions and aliases."),
    "bench": ("rankgate.cli.bench_cmd", "bench_command", "Benchmark retrievers and vector indexes on a labeled set."),
    "label": ("rankgate.cli.label_cmd", "label_command", "Build relevance judgments by pooling and judging."),
    "gate": ("rankgate.cli.gate_cmd", "gate_command", "Gate a run in CI against thresholds and a stored baseline."),
    "store": ("rankgate.cli.store_cmd", "store_group", "Add, list and show stored results; set the baseline."),
    "report": ("rankgate.cli.report_cmd", "report_command", "Write an HTML report with plots and history."),
    "demo": ("rankgate.cli.demo_cmd", "demo_command", "Evaluate the built-in demo runs and print a table."),
}


class LazyGroup(click.Group):
    """Imports a verb's module only when it is invoked, so `rankgate --help` stays fast."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in _COMMANDS:
            return None
        module, attr, _ = _COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_) for name, (_, _, help_) in _COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="rankgate")
def cli() -> None:
    """Measure, compare and gate the quality of search and RAG retrievers.

    \b
    Examples:
      rankgate demo
      rankgate eval qrels.txt run.txt -m nDCG@10 -m R@100 -m RR@10
      rankgate eval qrels.tsv run.trec.gz -m ndcg_cut.10 --format json --per-query
      rankgate compare qrels.txt bm25.txt dense.txt -m nDCG@10 -m R@100
      rankgate measures
    """


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the console script; never shows a traceback for bad input."""
    from rankgate.errors import RankgateError

    try:
        return cli.main(args=argv, prog_name="rankgate", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except RankgateError as e:
        click.echo(f"rankgate: error: {e}", err=True)
        sys.exit(e.exit_code)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
