"""p-values and counts as every text output writes them: a tiny p is "<0.0001", never "0.0000"."""

from __future__ import annotations

from pathlib import Path

from tests.cli_support import invoke


def _files(tmp: Path, n: int = 60) -> list[str]:
    """A baseline that ranks the relevant document last and a run that ranks it first: p far below 1e-4."""
    (tmp / "q.txt").write_text("".join(f"q{i} 0 rel{i} 1\n" for i in range(n)))
    for name, rel_rank in (("base", 10), ("new", 1)):
        lines = []
        for i in range(n):
            docs = [f"d{i}-{j}" for j in range(9)]
            docs.insert(rel_rank - 1 if i % 7 else 4, f"rel{i}")  # not all alike: the deltas vary
            lines += [f"q{i} Q0 {d} {r + 1} {10 - r} t\n" for r, d in enumerate(docs)]
        (tmp / f"{name}.txt").write_text("".join(lines))
    return [str(tmp / "q.txt"), str(tmp / "base.txt"), str(tmp / "new.txt")]


def test_a_tiny_p_reads_below_the_floor_in_text_and_markdown(capsys, tmp_path: Path) -> None:
    files = _files(tmp_path)
    for fmt in ("table", "markdown", "latex"):
        code, out, err = invoke(capsys, "compare", *files, "-m", "RR", "--resamples", "200", "--format", fmt,
                                "--randomization")  # fmt: skip
        assert code == 0, err
        floor = r"\textless{}0.0001" if fmt == "latex" else "<0.0001"
        assert floor in out and "0.0000" not in out, out
        assert "correction over 1 comparison;" in " ".join(out.split())


def test_the_json_keeps_the_number(capsys, tmp_path: Path) -> None:
    import json

    code, out, _ = invoke(capsys, "compare", *_files(tmp_path), "-m", "RR", "--resamples", "200", "--format", "json")
    assert code == 0
    (row,) = json.loads(out)["comparisons"]
    assert 0 < row["p_adjusted"] < 1e-4  # the exact value; only text rounds
