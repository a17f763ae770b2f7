"""Data shipped with rankgate: the synthetic demo collection (see data/demo/README.md)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DEMO_RUNS = ("dense", "bm25", "keyword_first")
DEMO_CANDIDATE = "dense_v2"  # the "new model" the demo gate catches regressing (on one topic)


def demo_dir() -> Path:
    """Folder of the demo collection (corpus, queries, qrels, runs)."""
    return Path(str(files("rankgate") / "data" / "demo"))


def demo_qrels_path() -> Path:
    return demo_dir() / "qrels.txt"


def demo_run_path(name: str) -> Path:
    if name not in (*DEMO_RUNS, DEMO_CANDIDATE):
        raise KeyError(f"no demo run {name!r} (have: {', '.join((*DEMO_RUNS, DEMO_CANDIDATE))})")
    return demo_dir() / "runs" / f"{name}.txt"


def demo_gates_path() -> Path:
    """The demo gate config (applied to dense_v2 against dense)."""
    return demo_dir() / "gates.yaml"


def demo_query_tags() -> dict[str, dict[str, str]]:
    """``{qid: {"topic": ..., "difficulty": ...}}`` of the demo queries (their ``tags`` objects)."""
    from rankgate.io.tags import read_query_tags

    return read_query_tags(demo_dir() / "queries.jsonl")
