"""Reading the code examples of README.md and docs/*.md, for the tests that run them."""

from __future__ import annotations

import re
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
