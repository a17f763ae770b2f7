"""Options shared by several verbs, defined once."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from rankgate.evaluation.engines import ENGINES
from rankgate.evaluation.settings import CHOICES, Settings
from rankgate.evaluation.settings import DEFAULTS as DEFAULT_SETTINGS
from rankgate.evaluation.settings import HELP as POLICY_HELP
from rankgate.evaluation.settings import NAMES as POLICY_NAMES

F = TypeVar("F", bound=Callable[..., Any])

OUTPUT_FORMATS = ("table", "json", "jsonl", "csv", "trec")


_LIST_NUMBER = re.compile(r"^(?:[-+]?[0-9]+=|p=)?[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")  # trec_eval lists: P.5,10;
# utility.1,-1,0,0; gain maps G.1=3,2=9 and rbp_resid.p=0.5,...


def split_measures(values: tuple[str, ...]) -> list[str]:
    """Split ``-m`` values on commas outside parentheses: ``P@5,nDCG(gain=exp)@10``; ``P.5,10`` stays one."""
    out: list[str] = []
    for value in values:
        depth, start = 0, 0
        for i, ch in enumerate(value):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "," and depth == 0 and not _LIST_NUMBER.match(value[i + 1 :].split(",")[0].strip()):
                out.append(value[start:i].strip())  # a number after a comma continues trec_eval's P.5,10
                start = i + 1
        out.append(value[start:].strip())
    return [m for m in out if m]


@dataclass(frozen=True)
class Semantics:
    """The semantic options of a verb, gathered into one value (passed as ``semantics``):
    the evaluation `Settings` and the input formats."""

    settings: Settings
    qrels_format: str | None
    run_format: str | None
    disjoint: str = "error"  # the command line refuses a run that shares no query with the qrels

    def evaluate_options(self) -> dict[str, Any]:
        """Keyword arguments of `rankgate.evaluate` and `rankgate.compare`: settings, formats, ``disjoint``."""
        return {
            "settings": self.settings,
            "qrels_format": self.qrels_format,
            "run_format": self.run_format,
            "disjoint": self.disjoint,
        }

    def session(self, qrels: str, measures: Any, engine: Any = "local") -> Any:
        """The evaluation `Session` of ``qrels`` (read once) with these settings."""
        from rankgate.evaluation.session import Session

        return Session.open(
            qrels,
            measures,
            settings=self.settings,
            engine=engine,
            qrels_format=self.qrels_format,
            disjoint=self.disjoint,
        )


def policy_options(*, dests: dict[str, str] | None = None, only: Sequence[str] | None = None) -> Callable[[F], F]:
    """Click options for the evaluation policies, derived from `Settings` (choices, defaults, help).

    ``dests`` renames a parameter (``{"queries": "query_set"}``); ``only`` keeps some policies.
    """

    def decorate(func: F) -> F:
        for option in reversed(_policy_options(dests or {}, only or POLICY_NAMES)):
            func = option(func)
        return func

    return decorate


def _policy_options(dests: dict[str, str], only: Sequence[str]) -> list[Any]:
    out = []
    for name in only:
        flag = "--" + name.replace("_", "-")
        dest = dests.get(name, name)
        default = getattr(DEFAULT_SETTINGS, name)
        if name in CHOICES:
            kind: Any = click.Choice(list(CHOICES[name]))
        elif name == "rel":
            kind = click.IntRange(min=1)
        elif name in _VALUE_OPTIONS:
            kind, metavar = _VALUE_OPTIONS[name]
            out.append(click.option(flag, dest, type=kind, metavar=metavar, default=default, help=POLICY_HELP[name]))
            continue
        else:
            out.append(click.option(flag, dest, is_flag=True, help=POLICY_HELP[name]))
            continue
        out.append(click.option(flag, dest, type=kind, default=default, show_default=True, help=POLICY_HELP[name]))
    return out


# Policies that take a value of their own (not a choice): click type and metavar.
_VALUE_OPTIONS: dict[str, tuple[Any, str]] = {
    "chunk_sep": (str, "SEP"),
    "chunk_map": (click.Path(dir_okay=False), "FILE"),
    "chunk_offsets": (click.Path(dir_okay=False), "FILE"),
    "span_overlap": (click.FloatRange(0.0, 1.0), "SHARE"),
}


def chunk_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The chunk and span policies as options of a verb whose settings come from a gate file
    (``gate``): a given option fills in a setting the file leaves unset and must agree with one
    it sets (else a `ConfigError`, exit 2); the command's ``config`` becomes the loaded
    `GateConfig`. Verbs with `semantics_options` have these options already."""
    names = ("chunk_sep", "chunk_map", "chunk_agg", "chunk_offsets", "span_overlap")

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        given = {n: v for n in names if (v := kwargs.pop(n)) is not None}
        if given:
            from rankgate.gate.config import GateConfig, load_config
            from rankgate.gate.config_keys import with_flags

            config = kwargs["config"]
            kwargs["config"] = with_flags(config if isinstance(config, GateConfig) else load_config(config), given)
        return func(*args, **kwargs)

    for name in reversed(names):
        flag = "--" + name.replace("_", "-")
        kind, metavar = _VALUE_OPTIONS.get(name, (click.Choice(list(CHOICES.get(name, ()))), None))
        help_text = POLICY_HELP[name] + " For a setting the gate file leaves unset; one it sets must match."
        command = click.option(flag, name, type=kind, metavar=metavar, default=None, help=help_text)(command)
    return command


allow_disjoint_option = click.option(
    "--allow-disjoint",
    is_flag=True,
    help="Evaluate a run that shares no query with the qrels (by default that is an error: a wrong file "
    "would score 0 everywhere).",
)


def semantics_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the evaluation policies and the input formats as options; the command gets one ``semantics``."""

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        settings = Settings(**{n: kwargs.pop(n) for n in POLICY_NAMES})
        formats = {n: kwargs.pop(n) for n in ("qrels_format", "run_format")}
        disjoint = "allow" if kwargs.pop("allow_disjoint") else "error"
        return func(*args, semantics=Semantics(settings, **formats, disjoint=disjoint), **kwargs)

    options = [
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
    for option in reversed([*options, allow_disjoint_option]):
        command = option(command)
    return policy_options()(command)


@contextlib.contextmanager
def as_usage_error() -> Iterator[None]:
    """A `ConfigError` about how options combine (``--ray-address needs --engine ray``), shown as
    click's usage error (with the usage line, exit code 2)."""
    from rankgate.errors import ConfigError

    try:
        yield
    except ConfigError as e:
        raise click.UsageError(str(e)) from None


def engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --engine, --ray-address, --memory and --partitions; the command gets one ``engine``
    (a `rankgate.evaluation.engines.Engine`, from `make_engine`)."""

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        from rankgate.evaluation.engines import check_ray_address, make_engine

        names = ("engine", "ray_address", "memory", "partitions")
        kind, address, memory, partitions = (kwargs.pop(n) for n in names)
        with as_usage_error():
            check_ray_address(kind, address)
        engine = make_engine(kind, memory=memory, partitions=partitions, ray_address=address)
        return func(*args, engine=engine, **kwargs)

    options = [
        click.option(
            "--engine",
            type=click.Choice(list(ENGINES)),
            default="local",
            show_default=True,
            help="Where to evaluate: this process, or a Ray cluster (a run may then be a folder or glob of shards).",
        ),
        click.option(
            "--ray-address", metavar="ADDR", help="Ray cluster to use (default: the running cluster or a local one)."
        ),
        click.option(
            "--memory",
            metavar="SIZE",
            help="Memory budget such as 4GB: larger TREC or Parquet inputs are evaluated out of core, in query "
            "partitions.",
        ),
        click.option(
            "--partitions",
            type=click.IntRange(min=1),
            help="Query partitions (out of core or Ray); forces out of core.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _file_layout(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """With ``--output FILE``, text is laid out for a file, not stdout's terminal, until the
    command ends (`rankgate.render.terminal.layout`): no width imposed, no sentence wrapped."""
    if value:
        from rankgate.render.terminal import layout

        ctx.with_resource(layout(None))
    return value


output_file_option = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    callback=_file_layout,
    help="Write the output to this file (atomically) instead of stdout.",
)


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
        output_file_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


def measure_option(default: Sequence[str], *, dest: str = "measures", help: str | None = None) -> Callable[[F], F]:
    """``-m/--measure``, repeatable and comma-separated (split with `split_measures`)."""
    return click.option(
        "-m",
        "--measure",
        dest,
        multiple=True,
        metavar="MEASURE",
        help=help or "Measure to compute; repeat or separate with commas. Default: " + ", ".join(default) + ".",
    )


def format_option(choices: Sequence[str], default: str = "table") -> Callable[[F], F]:
    """``--format`` (parameter ``fmt``) among ``choices``."""
    return click.option(
        "--format", "fmt", type=click.Choice(list(choices)), default=default, show_default=True, help="Output format."
    )


def store_option(help: str | None = None, *, dest: str = "store_url") -> Callable[[F], F]:
    """``--store URL`` of the results store, ``$RANKGATE_STORE`` by default."""
    return click.option(
        "--store",
        dest,
        envvar="RANKGATE_STORE",
        metavar="URL",
        help=help
        or "Results store: a SQLite path, sqlite:///path or postgresql://user@host:5432/db [env: RANKGATE_STORE].",
    )


def parse_labels(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--label KEY=VALUE`` options as a dict."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="'--label'")
        out[key.strip()] = value
    return out


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
