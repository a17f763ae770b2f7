"""``rankgate fuse``: several runs fused into one (ranx's methods), optionally with optimised weights."""

from __future__ import annotations

import json

import click

from rankgate.errors import ConfigError, InputError


def _params(values: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in values:
        key, sep, raw = item.partition("=")
        try:
            out[key.strip()] = float(raw)
        except ValueError:
            sep = ""
        if not sep:
            raise ConfigError(f"--params wants NAME=NUMBER, got {item!r}", key_path="params")
    return out


@click.command("fuse")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False), help="Fused run to write.")
@click.option("--method", default="rrf", show_default=True, help="Fusion method (ranx's names; see docs/fusion.md).")
@click.option("--norm", default="min-max", show_default=True, help="min-max, max, sum, z-score, rank, borda, none.")
@click.option("--weights", help="Comma-separated, one per run (weighted methods).")
@click.option("--params", "params", multiple=True, help="Method parameter NAME=VALUE, e.g. k=60; repeat.")
@click.option("--train-qrels", type=click.Path(dir_okay=False), help="Judgments to learn from / optimise on.")
@click.option(
    "--train-run",
    "train_runs",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Training run, one per RUN in order (default: the RUNs themselves); repeat.",
)
@click.option("--optimize", is_flag=True, help="Grid-search the weights or parameter on --train-qrels.")
@click.option("--metric", default="nDCG@10", show_default=True, help="Measure --optimize maximises.")
@click.option("--folds", type=click.IntRange(min=1), default=1, show_default=True, help="k-fold cross-validation.")
def fuse_command(
    runs: tuple[str, ...],
    out: str,
    method: str,
    norm: str,
    weights: str | None,
    params: tuple[str, ...],
    train_qrels: str | None,
    train_runs: tuple[str, ...],
    optimize: bool,
    metric: str,
    folds: int,
) -> None:
    """Fuse RUNs into one run written to OUT (any run format, by extension).

    \b
    Examples:
      rankgate fuse bm25.trec dense.trec -o hybrid.trec --method rrf --params k=60
      rankgate fuse bm25.trec dense.trec -o hybrid.trec --method wsum --weights 0.3,0.7
      rankgate fuse a.trec b.trec -o f.trec --method wsum --optimize --train-qrels q.txt --folds 5
    """
    from rankgate.fusion import fuse
    from rankgate.fusion import optimize as optimise
    from rankgate.io.hints import runs_only
    from rankgate.io.readers import read_qrels, read_run
    from rankgate.io.writers import write_run

    try:
        loaded = [read_run(p) for p in runs]
        learn_on = [read_run(p) for p in train_runs] or None
    except InputError as e:
        raise runs_only(e, "rankgate fuse", "--train-qrels") from None
    qrels = read_qrels(train_qrels) if train_qrels else None
    w = [float(x) for x in weights.split(",")] if weights else None
    given = _params(params)
    if optimize:
        if qrels is None:
            raise ConfigError("--optimize needs --train-qrels", key_path="train_qrels")
        chosen = optimise(loaded, qrels, method=method, norm=norm, metric=metric, folds=folds, train_runs=learn_on)
        w, given = chosen.weights or w, {**given, **chosen.params}
        click.echo(json.dumps(chosen.to_dict(), indent=2))
    fused = fuse(loaded, method=method, norm=norm, weights=w, params=given, train_qrels=qrels, train_runs=learn_on)
    write_run(fused, out)
