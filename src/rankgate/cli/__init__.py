"""The `rankgate` command: one small module per verb, loaded only when that verb runs.

Every verb calls one library function; this layer maps `RankgateError` to a message on
stderr and exit code 2 (1 is kept for "a gate or check failed").
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any, NoReturn

import click

from rankgate._version import __version__

_COMMANDS = {
    "eval": ("rankgate.cli.eval_cmd", "eval_command", "Evaluate a run against relevance judgments."),
    "compare": ("rankgate.cli.compare_cmd", "compare_command", "Compare runs: paired tests, confidence intervals."),
    "cutoffs": ("rankgate.cli.cutoffs_cmd", "cutoffs_command", "Tabulate measures at several cutoffs k."),
    "fuse": ("rankgate.cli.fuse_cmd", "fuse_command", "Fuse several runs into one (RRF, CombSUM, ...)."),
    "overlap": ("rankgate.cli.overlap_cmd", "overlap_command", "Agreement of two runs without qrels: overlap@k, RBO."),
    "rag": ("rankgate.cli.rag_cmd", "rag_group", "Answer-aware measures: reference answers in the top k."),
    "diversity": (
        "rankgate.cli.diversity_cmd",
        "diversity_command",
        "Diversity over subtopic judgments: alpha-nDCG, ERR-IA.",
    ),
    "spans": ("rankgate.cli.spans_cmd", "spans_command", "Span recall and precision of a run of chunks (characters)."),
    "measures": ("rankgate.cli.measures_cmd", "measures_command", "List the measures, their definitions and aliases."),
    "bench": ("rankgate.cli.bench_cmd", "bench_command", "Benchmark retrievers and vector indexes on a labeled set."),
    "index": ("rankgate.cli.index_cmd", "index_command", "Load a corpus into LanceDB, Chroma or Qdrant."),
    "retrieve": ("rankgate.cli.retrieve_cmd", "retrieve_command", "Ask a live retriever (HTTP, Python, DB) for a run."),
    "label": ("rankgate.cli.label_cmd", "label_command", "Build relevance judgments by pooling and judging."),
    "online": ("rankgate.cli.online_cmd", "online_group", "Compare live systems from logs: A/B arms, interleaving."),
    "gate": ("rankgate.cli.gate_cmd", "gate_command", "Gate a run in CI against thresholds and a stored baseline."),
    "store": ("rankgate.cli.store_cmd", "store_group", "Add, list and show stored results; set the baseline."),
    "report": ("rankgate.cli.report_cmd", "report_command", "Write an HTML report with plots and history."),
    "serve": ("rankgate.cli.serve_cmd", "serve_command", "Browse the results store in a web dashboard."),
    "demo": ("rankgate.cli.demo_cmd", "demo_command", "Evaluate the built-in demo runs and print a table."),
    "trec_eval": ("rankgate.cli.trec_eval_cmd", "trec_eval_command", "trec_eval's command line and output."),
}


# Verbs whose numpy matrix products (exact vector search, encoders' pre- and post-processing) use
# BLAS threads. Every other verb runs without them: OpenBLAS starts a thread per core when numpy is
# imported, and its threads spin for a while on cores that rankgate's own workers need (on 2 cores,
# 0.15 to 0.25 s of CPU in a 7M-line `eval`; docs/performance.md).
_BLAS_VERBS = frozenset({"bench", "demo", "index", "retrieve", "label"})


def _without_blas_threads(verb: str) -> None:
    """One OpenBLAS thread for ``verb`` unless it needs more or the user chose (before numpy loads)."""
    if verb not in _BLAS_VERBS and "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


class LazyGroup(click.Group):
    """Imports a verb's module only when it is invoked, so `rankgate --help` stays fast."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in _COMMANDS:
            return None
        module, attr, _ = _COMMANDS[name]
        _without_blas_threads(name)
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


class _PipeSafeStdout(io.FileIO):
    """File descriptor 1 that, once its reader is gone, sends the rest of the output to /dev/null.

    A closed pipe (``rankgate gate ... | head -1``) must not change what the command does or its
    exit code: the verdict, the store record and the PR comment still happen. Python's own advice
    for ``BrokenPipeError`` is to point the descriptor at devnull, so no later flush (ours or the
    interpreter's at exit) fails again.
    """

    def write(self, data: Any) -> int:
        try:
            return super().write(data) or 0
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.fileno())
            os.close(devnull)
            return len(data)


@contextlib.contextmanager
def _pipe_safe_stdout() -> Iterator[None]:
    """Guard the process's real stdout for one command (a test's captured stdout is left as it is)."""
    real = sys.__stdout__
    if real is None or sys.stdout is not real:
        yield
        return
    try:
        fd = real.fileno()
    except (OSError, ValueError):  # not a file descriptor: nothing to guard
        yield
        return
    real.flush()
    raw = _PipeSafeStdout(fd, "w", closefd=False)
    guarded = io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=real.encoding,
        errors=real.errors,
        line_buffering=getattr(real, "line_buffering", False),
    )
    sys.stdout = guarded
    try:
        yield
    finally:
        guarded.flush()
        sys.stdout = real


# Verbs that run only rankgate's own code, which closes what it opens: they may skip the
# interpreter's teardown. The others run a user's code too (a Python retriever, an encoder, a
# judge, a server), which may rely on it (a buffered file flushed by its ``__del__``).
_FAST_EXIT_VERBS = frozenset(
    {"eval", "compare", "cutoffs", "fuse", "overlap", "diversity", "spans", "measures", "gate", "store", "trec_eval"}
)


def run() -> NoReturn:
    """The console script and ``python -m rankgate``: `main` on the command line's arguments, then
    the exit `sys.exit` would make; for the verbs that allow it, without the interpreter's teardown
    (see `exit_now`)."""
    try:
        code = main()
    except SystemExit as e:
        code = e.code
    if _verb(sys.argv[1:]) in _FAST_EXIT_VERBS:
        exit_now(code)
    sys.exit(code)


def exit_now(code: Any) -> NoReturn:
    """End the process with ``code`` as `sys.exit` would, skipping the interpreter's teardown of
    every module and object once the command is done: after an `eval` that teardown (numpy's,
    pyarrow's) took 0.1 s of a 0.8 s command, for nothing. What the teardown is there for still
    happens: atexit handlers run (temporary files, Ray, coverage) and the output is flushed.
    The interpreter's own exit is taken instead while another thread still works (it waits for
    it), under a profiler, tracer or debugger (``python -m cProfile -m rankgate ...`` writes its
    report after the program returns), for a code other than None or 0-255 (it prints a message
    or maps the number its own way) and when the output cannot be flushed (it reports that, and
    exits 120).
    """
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if any(t.is_alive() for t in others):
        sys.exit(code)
    if sys.gettrace() is not None or sys.getprofile() is not None:
        sys.exit(code)  # a profiler, tracer or debugger runs us: it writes its report after we return
    status = 0 if code is None else code
    if not isinstance(status, int) or not 0 <= status <= 255:
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(status)


def main(argv: list[str] | None = None) -> Any:
    """The command line on ``argv`` (default: the process's); never shows a traceback for bad input.
    Errors end in `SystemExit`; on success, the command's return value."""
    with _pipe_safe_stdout():
        return _main(argv)


def _verb(argv: list[str]) -> str | None:
    """The command's verb: its first argument that is not an option (the group takes none with a value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def _in_cli_words(error: Any, argv: list[str]) -> Any:
    """``error`` (a `DuplicateError`) with the library's remedy worded for the verb that ran: its
    ``--duplicates`` option, or none (a command's own remedy, as trec_eval's, stays)."""
    if error.remedy != error.LIBRARY_REMEDY:
        return error
    verb = _verb(argv)
    command = cli.get_command(click.Context(cli), verb) if verb else None
    if command is not None and any(p.name == "duplicates" for p in command.params):
        return error.with_remedy("pass --duplicates first or max to keep one copy")
    return error.with_remedy(
        f"{f'rankgate {verb}' if verb else 'this command'} reads each (query, doc) pair once: remove the repeated lines"
    )


def _main(argv: list[str] | None) -> Any:
    from rankgate.errors import DuplicateError, Interrupted, RankgateError

    try:
        return cli.main(args=argv, prog_name="rankgate", standalone_mode=False)
    except click.exceptions.Abort as e:
        stopped = e.__cause__  # click turns Ctrl-C into Abort; work stored as it came says what is kept
        if isinstance(stopped, Interrupted):
            from rankgate.render.interrupted import interrupted_text

            click.echo(interrupted_text(stopped), err=True)
        else:
            click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except DuplicateError as e:
        click.echo(f"rankgate: error: {_in_cli_words(e, sys.argv[1:] if argv is None else argv)}", err=True)
        sys.exit(e.exit_code)
    except RankgateError as e:
        click.echo(f"rankgate: error: {e}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
