"""Reading the code examples of README.md and docs/*.md, for the tests that run them."""

from __future__ import annotations

import csv
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = ("bash", "console", "sh")
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def doc_files() -> list[Path]:
    """README.md and every docs/*.md, in a fixed order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it starts (``docs/x.md:12``), its language and its text."""

    where: str
    language: str
    text: str


@dataclass(frozen=True)
class Command:
    """One shell command of a block (continuation lines joined), named ``file:line``."""

    where: str
    text: str


def blocks(languages: tuple[str, ...]) -> list[Block]:
    """Every fenced block in one of ``languages`` in README.md and docs/*.md."""
    found = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            if match.group(1) in languages:
                line = text.count("\n", 0, match.start()) + 2  # the block's first line of code
                found.append(Block(f"{path.relative_to(ROOT)}:{line}", match.group(1), match.group(2)))
    return found


def commands(block: Block) -> list[Command]:
    """The commands of a shell block: one per line, ``\\`` continuations joined, comment lines and
    a console prompt (``$ ``) dropped; a heredoc (``<<'EOF'``) stays one command with its body."""
    file, first = block.where.rsplit(":", 1)
    found: list[Command] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        start, text = i, lines[i].removeprefix("$ ")
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1] + " " + lines[i].strip()
        if (heredoc := re.search(r"<<'?(\w+)'?", text)) is not None:
            end = lines.index(heredoc.group(1), i + 1)
            text = "\n".join([text, *lines[i + 1 : end + 1]])
            i = end
        i += 1
        if text.strip() and not text.lstrip().startswith("#"):
            found.append(Command(f"{file}:{int(first) + start}", text))
    return found


# What the examples call their files, as copies of the demo collection (rankgate.data).
_RUN_FILES = {
    "run.txt": "bm25",
    "bm25.txt": "bm25",
    "base.txt": "bm25",
    "dense.txt": "dense",
    "new.txt": "dense",
    "main.txt": "dense",
    "pr.txt": "dense",
    "candidate.txt": "dense",
    "hybrid.txt": "keyword_first",
}


def write_example_files(folder: Path) -> None:
    """The files the examples of README.md and docs/*.md name, from the demo collection.

    Files that rankgate itself makes in the docs' stories (the LLM's labels, the gold set, the
    JSON inputs of ``report``, main's stored result) are made by running rankgate on the demo
    data, with the BM25 weak judge standing in for the LLM.
    """
    import gzip

    from rankgate.data import demo_dir, demo_run_path
    from rankgate.io import read_qrels, read_run, write_qrels, write_run
    from tests.cli_support import exit_code

    demo = demo_dir()
    for name in ("qrels.txt", "qrels.tsv", "queries.jsonl", "corpus.jsonl", "gates.yaml", "bench.yaml"):
        shutil.copy(demo / name, folder / name)
    shutil.copytree(demo / "runs", folder / "runs")
    for name, run in _RUN_FILES.items():
        shutil.copy(demo_run_path(run), folder / name)
    for name in ("run.trec.gz", "huge-run.txt.gz"):
        (folder / name).write_bytes(gzip.compress(demo_run_path("bm25").read_bytes()))
    write_qrels(read_qrels(demo / "qrels.txt"), folder / "qrels.parquet")
    write_run(read_run(demo_run_path("bm25")), folder / "run.parquet")
    (folder / "src" / "rankgate" / "data").mkdir(parents=True)
    (folder / "src" / "rankgate" / "data" / "demo").symlink_to(demo, target_is_directory=True)
    (folder / "tests" / "data").mkdir(parents=True)
    for name in ("qrels.txt", "run.txt"):
        shutil.copy(folder / name, folder / "tests" / "data" / name)
    write_human_judgments(folder / "human.txt")
    made = [  # each a shell line, split like a shell would
        # main's CI recorded a result on main: the stored baseline of docs/gate.md
        "gate --qrels qrels.txt --run main.txt --config gates.yaml --store results.db",
        "eval qrels.txt dense.txt -m R@5,R@10,nDCG@10 --per-query --format json -o eval.json",
        "compare qrels.txt bm25.txt dense.txt -m nDCG@10 --format json -o compare.json",
        "gate --qrels qrels.txt --run candidate.txt --config gates.yaml --baseline-run main.txt --no-record"
        " --format json -o gate.json",
        "label --run bm25.txt --run dense.txt --corpus corpus.jsonl --queries queries.jsonl --depth 10 --judge bm25"
        " --out llm.txt --jsonl llm.jsonl",
        "label --run bm25.txt --corpus corpus.jsonl --queries queries.jsonl --judge bm25 --out weak.txt",
        "label merge human.txt:A llm.jsonl weak.txt:C --out gold.txt --jsonl gold.jsonl --tags-out tiers.jsonl",
    ]
    for line in made:
        code = exit_code(*line.split())
        assert code in (0, 1), f"rankgate {line}: exit {code}"  # 1: the candidate's gate fails
    tiers = [json.loads(line) for line in (folder / "tiers.jsonl").read_text().splitlines()]
    rows = [f"{row['_id']},{row['tier']},demo" for row in tiers]
    (folder / "queries.csv").write_text("query_id,tier,topic\n" + "\n".join(rows) + "\n")


def write_human_judgments(path: Path, queries: int = 12) -> None:
    """Reviewers' judgments of the first ``queries`` demo queries: every pair the BM25 and dense
    runs put in their top 10 (unjudged ones as 0), so that merging them with the weak labels
    leaves those queries in tier A alone."""
    from rankgate.data import demo_qrels_path, demo_run_path

    keep = {f"q{i:02d}" for i in range(1, queries + 1)}
    judged = {(q, d): g for q, _, d, g in (line.split() for line in demo_qrels_path().read_text().splitlines())}
    for run in ("bm25", "dense"):
        for q, _, d, rank, *_ in (line.split() for line in demo_run_path(run).read_text().splitlines()):
            if int(rank) <= 10:
                judged.setdefault((q, d), "0")
    lines = [f"{q} 0 {d} {g}" for (q, d), g in sorted(judged.items()) if q in keep]
    path.write_text("\n".join(lines) + "\n")


def fill_review(folder: Path) -> None:
    """Step 2 of docs/labeling.md's review loop: the reviewers fill the sample's `label` column."""
    with (folder / "review.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows):
        row["label"] = str(i % 4)
    with (folder / "review.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
