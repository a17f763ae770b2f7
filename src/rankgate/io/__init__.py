"""Readers and writers: runs and qrels (TREC, JSON, JSONL, CSV/TSV, Parquet, DataFrames), corpus and queries texts."""

from rankgate.io.coerce import as_qrels, as_run
from rankgate.io.readers import read_qrels, read_run
from rankgate.io.texts import read_corpus, read_queries
from rankgate.io.writers import write_qrels, write_run

__all__ = ["as_qrels", "as_run", "read_corpus", "read_qrels", "read_queries", "read_run", "write_qrels", "write_run"]
