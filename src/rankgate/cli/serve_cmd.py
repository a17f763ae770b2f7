"""``rankgate serve``: the web dashboard over a results store."""

from __future__ import annotations

import click

from rankgate.cli.options import store_option


def _runs(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, path = pair.partition("=")
        if not sep or not key.strip() or not path.strip():
            raise click.BadParameter(f"expected NAME=PATH or ID=PATH, got {pair!r}", param_hint="'--run'")
        out[key.strip()] = path.strip()
    return out


@click.command("serve")
@store_option()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; beyond localhost needs --token.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free one).")
@click.option("--token", envvar="RANKGATE_TOKEN", help="Required on every request [env: RANKGATE_TOKEN].")
@click.option("--queries", type=click.Path(dir_okay=False), help="Queries file: query text beside ids.")
@click.option("--corpus", type=click.Path(dir_okay=False), help="Corpus file: document text in rankings.")
@click.option("--qrels", type=click.Path(dir_okay=False), help="Judgments: grades in rankings.")
@click.option("--tags", type=click.Path(dir_okay=False), help="Query tags: per-tag tables.")
@click.option("--run", "runs", multiple=True, metavar="NAME=PATH", help="A run file for a system name or result id.")
def serve_command(
    store_url: str | None,
    host: str,
    port: int,
    token: str | None,
    queries: str | None,
    corpus: str | None,
    qrels: str | None,
    tags: str | None,
    runs: tuple[str, ...],
) -> None:
    """Browse the results store in a web browser: history, evaluations, comparisons.

    Reads the store read-only. Binds to 127.0.0.1; binding beyond localhost needs --token
    (or RANKGATE_TOKEN), and every request must then carry it (?token=... once, then a cookie).
    With --run NAME=PATH (and --qrels, --corpus), the compare page shows the two rankings of a
    query side by side.

    \b
    Examples:
      rankgate serve --store results.db
      rankgate serve --store postgresql://ci@db:5432/rankgate --host 0.0.0.0 --token "$TOKEN"
      rankgate serve --store results.db --queries queries.jsonl --corpus corpus.jsonl \\
          --qrels qrels.txt --tags tags.jsonl --run dense=runs/dense.txt --run bm25=runs/bm25.txt
    """
    from rankgate.dashboard.server import check_binding, serve
    from rankgate.dashboard.sources import Sources

    token = check_binding(host, token)
    sources = Sources.load(queries=queries, corpus=corpus, tags=tags, qrels=qrels, runs=_runs(runs))
    serve(
        store_url,
        host=host,
        port=port,
        token=token,
        sources=sources,
        ready=lambda url: click.echo(f"rankgate dashboard on {url} (Ctrl+C stops it)", err=True),
    )
