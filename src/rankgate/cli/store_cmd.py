"""``rankgate store``: add, list and show stored results; set and show the baseline."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from rankgate.cli.options import (
    Semantics,
    emit,
    engine_options,
    format_option,
    measure_option,
    parse_labels,
    semantics_options,
    split_measures,
    store_option,
    warn,
)

if TYPE_CHECKING:
    from rankgate.evaluation.engines import Engine
    from rankgate.store.base import StoredResult
    from rankgate.store.sql import SQLStore


DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10", "AP", "P@10")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def _open(store_url: str | None, *, create: bool = False, read_only: bool = False) -> SQLStore:
    from rankgate.store.base import open_store

    return open_store(store_url, create=create, read_only=read_only)


@click.group("store")
def store_group() -> None:
    """Add, list and show stored results; set the baseline.

    Every evaluation is kept with its time, git commit and branch, CI run, a fingerprint
    of the qrels and query set, its settings and its per-query values. The store is a
    SQLite file (default .rankgate/results.db, or $RANKGATE_STORE) or a PostgreSQL
    database (--store postgresql://user@host:5432/db).

    \b
    Examples:
      rankgate store add qrels.txt runs/dense.txt -m R@5,RR@10 --name dense
      rankgate store list --branch main
      rankgate store show latest:main --per-query
      rankgate store baseline set latest:main
      rankgate store baseline show --format json
    """


@store_group.command("add")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path())
@measure_option(DEFAULT_MEASURES)
@click.option("--name", help="Name of the system (default: the run's file stem).")
@click.option("--branch", help="Record this branch instead of the detected one (CI environment or git).")
@click.option("--commit", help="Record this commit instead of the detected one.")
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE", help="A free label to keep; repeatable.")
@click.option("--set-baseline", "baseline_key", metavar="KEY", help="Also make the new result the baseline for KEY.")
@store_option()
@engine_options
@semantics_options
def add_command(
    qrels: str,
    run: str,
    measures: tuple[str, ...],
    name: str | None,
    branch: str | None,
    commit: str | None,
    labels: tuple[str, ...],
    baseline_key: str | None,
    store_url: str | None,
    engine: Engine,
    semantics: Semantics,
) -> None:
    """Evaluate RUN against QRELS and record the result; prints its id.

    The commit, branch and CI run are read from the CI environment (GitHub Actions,
    GitLab CI, ...) or from git; --branch and --commit override them.

    \b
    Examples:
      rankgate store add qrels.txt runs/dense.txt -m R@5 -m RR@10
      rankgate store add qrels.txt bm25.trec -m nDCG@10 --name bm25 --branch main --label config=k1.2
      id=$(rankgate store add qrels.txt run.txt -m R@5 --store postgresql://ci@db:5432/rankgate)
      rankgate store add qrels.txt run.txt -m R@5 --set-baseline default
      rankgate store add qrels.txt 'shards/*.parquet' -m R@5 --engine ray --name dense
    """
    import dataclasses

    from rankgate.measures.parse import parse_measures
    from rankgate.store.provenance import detect

    extra = parse_labels(labels)
    session = semantics.session(qrels, parse_measures(split_measures(measures) or list(DEFAULT_MEASURES)), engine)
    results = session.evaluate(run, name=name, run_format=semantics.run_format)
    found = detect()
    provenance = dataclasses.replace(found, branch=branch or found.branch, commit=commit or found.commit)
    with _open(store_url, create=True) as store:
        rid = store.add(
            results, name=name, qrels=session.qrels, provenance=provenance, labels={"source": "cli", **extra}
        )
        if baseline_key is not None:
            store.set_baseline(rid, key=baseline_key)
        where = store.url
    click.echo(rid)
    summary = ", ".join(f"{k}={_number(v)}" for k, v in results.aggregate.items())
    note = f"; baseline for {baseline_key!r}" if baseline_key is not None else ""
    click.echo(
        f"stored result {rid} ({results.run_name if name is None else name}: {summary}) in {where}{note}", err=True
    )
    warn(results.warnings)


@store_group.command("list")
@click.option("--branch", help="Only results on this branch.")
@click.option("--name", help="Only results of this system name.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="At most this many.")
@store_option()
@format_option(["table", "json"])
def list_command(branch: str | None, name: str | None, limit: int, store_url: str | None, fmt: str) -> None:
    """List stored results, newest first.

    \b
    Examples:
      rankgate store list
      rankgate store list --branch main --limit 5
      rankgate store list --name dense --format json
    """
    with _open(store_url, read_only=True) as store:
        found = store.list(branch=branch, name=name, limit=limit)
        keys = _baseline_keys(store)
        where = store.url
    if fmt == "json":
        rows = [{**r.to_dict(), "baseline_for": keys.get(r.id, [])} for r in found]
        emit(json.dumps({"store": where, "results": rows}, indent=2), None)
        return
    if not found:
        click.echo(f"no stored results in {where}" + _filters(branch, name), err=True)
        return
    emit(_text(_list_table(found, keys)), None)


@store_group.command("show")
@click.argument("ref", metavar="ID|latest[:BRANCH]|baseline[:KEY]")
@click.option("--name", help="With latest: only results of this system name.")
@click.option("--per-query", is_flag=True, help="Also show the value of every query.")
@store_option()
@format_option(["table", "json"])
def show_command(ref: str, name: str | None, per_query: bool, store_url: str | None, fmt: str) -> None:
    """Show one stored result: provenance, settings and values.

    \b
    Examples:
      rankgate store show 17
      rankgate store show latest:main --per-query
      rankgate store show baseline --format json
    """
    with _open(store_url, read_only=True) as store:
        result = store.resolve(ref, name=name)
        _show(result, per_query=per_query, fmt=fmt, keys=_baseline_keys(store).get(result.id, []))


@store_group.group("baseline")
def baseline_group() -> None:
    """Set or show the baseline that gates compare with (one per key).

    \b
    Examples:
      rankgate store baseline set 17
      rankgate store baseline set latest:main --key nightly
      rankgate store baseline show --key nightly
    """


@baseline_group.command("set")
@click.argument("ref", metavar="ID|latest[:BRANCH]")
@click.option("--key", default="default", show_default=True, help="Which baseline (e.g. one per gate config).")
@click.option("--name", help="With latest: only results of this system name.")
@store_option()
def baseline_set_command(ref: str, key: str, name: str | None, store_url: str | None) -> None:
    """Make a stored result the baseline for KEY.

    \b
    Examples:
      rankgate store baseline set 17
      rankgate store baseline set latest:main
      rankgate store baseline set latest:main --name dense --key dense
    """
    with _open(store_url) as store:
        chosen = store.set_baseline(store.resolve(ref, name=name).id, key=key)
        where = store.url
    click.echo(f"baseline {key!r} is now result {chosen.id} ({chosen.name}, {_where(chosen)}) in {where}")


@baseline_group.command("show")
@click.option("--key", default="default", show_default=True, help="Which baseline.")
@click.option("--all", "show_all", is_flag=True, help="List every baseline key and its result id.")
@click.option("--per-query", is_flag=True, help="Also show the value of every query.")
@store_option()
@format_option(["table", "json"])
def baseline_show_command(key: str, show_all: bool, per_query: bool, store_url: str | None, fmt: str) -> None:
    """Show the baseline for KEY (or every key with --all).

    \b
    Examples:
      rankgate store baseline show
      rankgate store baseline show --key nightly --format json
      rankgate store baseline show --all
    """
    with _open(store_url, read_only=True) as store:
        if show_all:
            keys = store.baselines()
            if fmt == "json":
                emit(json.dumps({"store": store.url, "baselines": keys}, indent=2), None)
            elif not keys:
                click.echo(f"no baseline set in {store.url}", err=True)
            else:
                emit("\n".join(f"{k}\t{v}" for k, v in keys.items()), None)
            return
        result = store.resolve(f"baseline:{key}")
        _show(result, per_query=per_query, fmt=fmt, keys=_baseline_keys(store).get(result.id, []))


# -- rendering ---------------------------------------------------------------------------
def _show(result: StoredResult, *, per_query: bool, fmt: str, keys: list[str]) -> None:
    if fmt == "json":
        emit(json.dumps({**result.to_dict(per_query=per_query), "baseline_for": keys}, indent=2), None)
        return
    from rankgate.render.eval import table

    fields = [
        ("result", str(result.id)),
        ("created", result.created_at.strftime(TIME_FORMAT) + " UTC"),
        ("name", result.name),
        ("branch", result.branch or "-"),
        ("commit", result.commit or "-"),
        ("CI run", result.ci_url or "-"),
        ("qrels fingerprint", result.qrels_fingerprint or "-"),
        ("query fingerprint", result.query_fingerprint),
        ("baseline for", ", ".join(keys) or "-"),
        ("warnings", str(len(result.warnings)) + (" (see --format json)" if result.warnings else "")),
        ("labels", ", ".join(f"{k}={v}" for k, v in result.labels.items()) or "-"),
        ("settings", ", ".join(f"{k}={v}" for k, v in result.settings.items() if k != "aggregate")),
    ]
    width = max(len(k) for k, _ in fields)
    head = "\n".join(f"{k.ljust(width)}  {v}" for k, v in fields)
    emit(head + "\n\n" + _text(table(result.to_results(), per_query=per_query)), None)


def _list_table(found: list[StoredResult], keys: dict[int, list[str]]) -> Any:
    from rich.table import Table

    t = Table()
    for column in ("id", "created (UTC)", "name", "branch", "commit", "queries", "values", "baseline"):
        t.add_column(column, justify="right" if column in ("id", "queries") else "left")
    for r in found:
        values = ", ".join(f"{k} {_number(v)}" for k, v in r.aggregate.items())
        t.add_row(
            str(r.id),
            r.created_at.strftime("%Y-%m-%d %H:%M"),
            r.name,
            r.branch or "-",
            (r.commit or "-")[:8],
            str(r.n_queries),
            values,
            ", ".join(keys.get(r.id, [])),
        )
    return t


def _text(renderable: Any) -> str:
    from rankgate.render.terminal import to_text

    return to_text(renderable)


def _where(result: StoredResult) -> str:
    bits = [b for b in (result.branch, (result.commit or "")[:8]) if b]
    bits.append(result.created_at.strftime("%Y-%m-%d %H:%M UTC"))
    return ", ".join(bits)


def _number(value: float | None) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.0f}" if float(value).is_integer() and abs(value) > 1 else f"{value:.4f}"


def _baseline_keys(store: SQLStore) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for key, rid in store.baselines().items():
        out.setdefault(rid, []).append(key)
    return out


def _filters(branch: str | None, name: str | None) -> str:
    bits = [f"branch {branch!r}" if branch else "", f"name {name!r}" if name else ""]
    shown = " and ".join(b for b in bits if b)
    return f" with {shown}" if shown else ""
