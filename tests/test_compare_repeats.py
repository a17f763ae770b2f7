"""Systems measured more than once (issue 16 item 6): ``NAME=run1,run2`` or ``NAME=GLOB`` in
``compare`` and ``gate``; the per-query mean over repeats is what the paired test compares.

Hand-worked: 4 queries, one relevant doc each, P@1. The baseline finds q1, q2 (0.5). The
candidate's repeats: s1 finds q1, q2, q3 (0.75); s2 finds q1, q3 (0.5). Per-query means of
the candidate: q1 1, q2 0.5, q3 1, q4 0: mean 0.625, delta +0.125 over the baseline; repeat
means 0.75 and 0.5: SD 0.1768, range 0.25.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import rankgate
from rankgate.comparison.repeats import parse_system
from rankgate.errors import ConfigError, InputError
from tests.cli_support import invoke

QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(1, 5))


def _run(path: Path, found: set[int]) -> str:
    path.write_text("".join(f"q{i} Q0 {'d' if i in found else 'x'}{i} 1 1.0 s\n" for i in range(1, 5)))
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    return {
        "qrels": str(tmp_path / "qrels.txt"),
        "base": _run(tmp_path / "base.txt", {1, 2}),
        "s1": _run(tmp_path / "new_s1.txt", {1, 2, 3}),
        "s2": _run(tmp_path / "new_s2.txt", {1, 3}),
        "dir": str(tmp_path),
    }


def test_compare_uses_the_per_query_mean_over_repeats(capsys, files):
    code, out, err = invoke(capsys, "compare", files["qrels"], files["base"], f"new={files['s1']},{files['s2']}",
                            "-m", "P@1", "--format", "json")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    row = data["comparisons"][0]
    assert data["systems"] == ["base", "new"] and row["system"] == "new"
    assert row["mean"] == pytest.approx(0.625) and row["delta"] == pytest.approx(0.125)
    # the paired test is the one of the per-query means, computed independently
    from scipy.stats import ttest_rel

    assert row["p_value"] == pytest.approx(ttest_rel([1, 0.5, 1, 0], [1, 1, 0, 0]).pvalue)
    (rep,) = data["repeats"]
    assert rep["system"] == "new" and rep["n"] == 2 and rep["means"]["P@1"] == [0.75, 0.5]
    assert rep["sd"]["P@1"] == pytest.approx(float(np.std([0.75, 0.5], ddof=1))) and rep["range"]["P@1"] == 0.25
    assert any("mean over 2 repeats" in n for n in data["notes"])


def test_a_glob_gives_the_same_comparison(capsys, files):
    args = ["compare", files["qrels"], files["base"], "-m", "P@1", "--format", "json"]
    _, listed, _ = invoke(capsys, *args, f"new={files['s1']},{files['s2']}")
    code, globbed, _ = invoke(capsys, *args, f"new={files['dir']}/new_s*.txt")
    assert code == 0 and json.loads(globbed)["comparisons"] == json.loads(listed)["comparisons"]


def test_the_library_takes_a_list_as_repeats(files):
    comparison = rankgate.compare(files["qrels"], [files["base"], [files["s1"], files["s2"]]], ["P@1"],
                                  names=["base", "new"])  # fmt: skip
    assert comparison.row("new", "P@1")["delta"] == pytest.approx(0.125)
    assert comparison.repeats[0].means == {"P@1": [0.75, 0.5]}


def test_gate_takes_repeats(capsys, files, tmp_path):
    config = tmp_path / "gates.yaml"
    config.write_text("gates:\n  - {name: p, metric: P@1, min_improvement: 0.1}\n")
    code, out, err = invoke(capsys, "gate", "--qrels", files["qrels"], "--run", f"new={files['s1']},{files['s2']}",
                            "--baseline-run", files["base"], "--config", str(config), "--format", "json")  # fmt: skip
    data = json.loads(out)
    assert code == 0, err
    assert data["run"] == "new" and data["gates"][0]["value"] == pytest.approx(0.625)
    assert any("new: mean over 2 repeats" in n for n in data["notes"])


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("new=", None, None),  # no match for the regex: a path
        ("new=a.txt,,b.txt", ConfigError, "an empty run"),
        ("new=/no/such/dir/*.txt", InputError, "no file matches"),
        ("new=a.txt,a.txt", ConfigError, "lists a run twice"),
    ],
)
def test_bad_system_specs(text, error, message):
    if error is None:
        assert parse_system(text) == (None, [text])
        return
    with pytest.raises(error, match=message):
        parse_system(text)


def test_a_bad_glob_exits_2(capsys, files):
    code, _, err = invoke(capsys, "compare", files["qrels"], files["base"], "new=/no/such/*.txt", "-m", "P@1")
    assert code == 2 and "no file matches" in err and "Traceback" not in err
