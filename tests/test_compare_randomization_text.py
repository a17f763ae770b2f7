"""`compare --randomization`: the table, Markdown and LaTeX show the randomization p beside the t-test's.

Before, the footer said "t test + randomization test" while every column showed the t-test's
p-value; only JSON carried the randomization test's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import invoke

N = 30


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(N)))
    paths = []
    for name, hit_every in (("base", 2), ("cand", 3)):
        run = tmp_path / f"{name}.txt"
        lines = []
        for i in range(N):
            first = f"d{i}" if i % hit_every else "x"
            lines += [f"q{i} Q0 {first} 1 2.0 {name}\n", f"q{i} Q0 y{i} 2 1.0 {name}\n"]
        run.write_text("".join(lines))
        paths.append(str(run))
    return [str(qrels), *paths]


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_every_format_shows_the_randomization_p(capsys: pytest.CaptureFixture[str], files: list[str], fmt: str) -> None:
    args = ("compare", *files, "-m", "RR", "--randomization", "--permutations", "2000")
    code, out, err = invoke(capsys, *args, "--format", "json")
    assert code == 0, err
    row = json.loads(out)["comparisons"][0]
    code, text, err = invoke(capsys, *args, "--format", fmt)
    assert code == 0, err
    assert "p rand." in text
    assert f"{row['randomization_p_value']:.4f}" in text and f"{row['p_adjusted']:.4f}" in text
    assert "p (adj.): paired t-test" in text and "p rand.: paired randomization test" in text


def test_without_the_flag_there_is_no_randomization_column(
    capsys: pytest.CaptureFixture[str], files: list[str]
) -> None:
    code, text, err = invoke(capsys, "compare", *files, "-m", "RR")
    assert code == 0, err
    assert "p rand." not in text and "p (adj.): paired t-test" in text
