"""``rankgate index``: load a corpus into LanceDB, Chroma or Qdrant (local mode); print the retriever spec."""

from __future__ import annotations

from typing import Any

import click

from rankgate.cli.options import emit


@click.command("index")
@click.option(
    "--corpus",
    required=True,
    metavar="CORPUS",
    help="demo, a BEIR folder (its corpus.jsonl) or a corpus file (JSONL, JSON or TSV).",
)
@click.option(
    "--into",
    required=True,
    metavar="KIND:PATH[:NAME]",
    help="lancedb:PATH[:TABLE], chroma:PATH[:COLLECTION] or qdrant:PATH[:COLLECTION] (Qdrant local mode). "
    "NAME defaults to the corpus's name.",
)
@click.option("--model", metavar="MODEL", help="minilm (the bundled all-MiniLM-L6-v2) or a local model folder.")
@click.option("--device", default="cpu", show_default=True, help="Torch device of the model (cpu, cuda, mps).")
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True, help="Texts per batch.")
@click.option("--overwrite", is_flag=True, help="Replace the table or collection if it exists.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    help="Embedding cache folder (shared with bench).  [default: $RANKGATE_CACHE_DIR or ~/.cache/rankgate/embeddings]",
)
@click.option("--no-cache", is_flag=True, help="Encode everything, keep nothing.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the retriever spec to this file.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars and no summary on stderr.")
def index_command(**options: Any) -> None:
    """Encode a corpus as `bench` does and write it into an embedded vector database.

    Prints the retriever spec (YAML) that searches it: give it to `rankgate retrieve --retriever`
    or to `rankgate bench -r live:SPEC.yaml`, which shows it next to BM25 and exact search. The
    vectors go through bench's embedding cache, so benchmarking the same model afterwards does
    not encode the corpus again.

    \b
    Examples:
      rankgate index --corpus demo --into lancedb:./indexes/lance -o lance.yaml
      rankgate index --corpus data/scifact --into chroma:./indexes/chroma:scifact --model ./models/e5-small
      rankgate index --corpus data/scifact/corpus.jsonl --into qdrant:./indexes/qdrant --overwrite

    See docs/retrieve-databases.md.
    """
    from rankgate.bench.progress import Progress
    from rankgate.retrieve.indexing import index_corpus, spec_yaml

    cache = None
    if not options["no_cache"]:
        from rankgate.bench.embedcache import EmbeddingCache

        cache = EmbeddingCache(options["cache_dir"])
    result = index_corpus(
        options["corpus"],
        options["into"],
        model=options["model"],
        device=options["device"],
        batch_size=options["batch_size"],
        overwrite=options["overwrite"],
        cache=cache,
        progress=Progress.auto(quiet=options["quiet"]),
    )
    emit(spec_yaml(result.spec), options["output"])
    if not options["quiet"]:
        same = f"{result.distinct} distinct texts; " if result.distinct != result.documents else ""
        click.echo(
            f"indexed {result.documents} documents ({same}{result.dim} dimensions; {result.encoded} encoded, "
            f"{result.cached} from the cache) in {result.seconds:.1f} s",
            err=True,
        )
