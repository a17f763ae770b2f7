"""Resample counts have one range (rankgate.stats.MIN_RESAMPLES..MAX_RESAMPLES), used everywhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rankgate.errors import ConfigError
from tests.cli_support import invoke

ROOT = Path(__file__).resolve().parents[1]
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 0\nq3 0 d5 1\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d4 1 2.0 r\nq2 Q0 d3 2 1.0 r\nq3 Q0 d5 1 1.0 r\n"


def test_one_range_is_exported() -> None:
    from rankgate import stats
    from rankgate.stats import _common

    assert (stats.MIN_RESAMPLES, stats.MAX_RESAMPLES) == (1, 10_000_000)
    assert _common.MIN_RESAMPLES is stats.MIN_RESAMPLES and _common.MAX_RESAMPLES is stats.MAX_RESAMPLES


@pytest.mark.parametrize("bad", [0, 10_000_001])
def test_every_resampling_function_takes_the_same_range(bad: int) -> None:
    from rankgate import stats

    calls = {
        "bootstrap_ci": lambda n: stats.bootstrap_ci([0.1, 0.2, 0.4], n_resamples=n),
        "bootstrap_means": lambda n: stats.bootstrap_means([[0.1], [0.3]], n_resamples=n),
        "randomization_test": lambda n: stats.randomization_test([0.1, 0.2], [0.3, 0.1], n_resamples=n),
        "randomized_tukey_hsd": lambda n: stats.randomized_tukey_hsd([[0.1, 0.2], [0.3, 0.1]], n_resamples=n),
        "paired_summary": lambda n: stats.paired_summary([[0.1], [0.2]], [[0.3], [0.1]], n_resamples=n),
    }
    for func, call in calls.items():
        with pytest.raises(ConfigError) as caught:
            call(bad)
        # below the minimum check_int says ">= 1"; above the maximum it gives the range
        assert str(caught.value).startswith(f"The 'n_resamples' parameter of {func} must be an int "), func
        call(stats.MIN_RESAMPLES)  # the ends of the range are taken


def test_paired_summary_names_its_own_parameters() -> None:
    """Not the internal function it hands the count to (bootstrap_ci_columns, randomization_test_columns)."""
    from rankgate.stats import paired_summary

    with pytest.raises(ConfigError) as resamples:
        paired_summary([[0.1], [0.2]], [[0.3], [0.1]], n_resamples=20_000_000)
    assert str(resamples.value) == (
        "The 'n_resamples' parameter of paired_summary must be an int between 1 and 10,000,000. Got 20000000 instead."
    )
    with pytest.raises(ConfigError) as permutations:
        paired_summary([[0.1], [0.2]], [[0.3], [0.1]], randomization=True, n_permutations=20_000_000)
    assert "'n_permutations' parameter of paired_summary must be an int between 1 and 10,000,000" in str(
        permutations.value
    )


def test_statistics_doc_states_the_range() -> None:
    from rankgate.stats import MAX_RESAMPLES, MIN_RESAMPLES

    text = " ".join((ROOT / "docs" / "statistics.md").read_text().split())
    assert f"from **{MIN_RESAMPLES} to {MAX_RESAMPLES:,}**" in text
    assert "1,000,000" not in re.sub(r"\| 1,000,000 \|", "", text)  # no other limit (the table's row count aside)
    assert "bootstrap_ci_columns" not in text


# -- the command line and the gate file --------------------------------------------------------


@pytest.mark.parametrize("flag", ["--resamples", "--permutations"])
def test_compare_names_the_flag_of_a_count_out_of_range(capsys, tmp_path: Path, flag: str) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.txt").write_text(RUN)
    (tmp_path / "b.txt").write_text(RUN)
    args = ["compare", str(tmp_path / "qrels.txt"), str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-m", "P@1"]
    code, out, err = invoke(capsys, *args, "--randomization", flag, "20000000")
    assert code == 2 and out == ""
    assert f"'{flag}'" in err and "10000000" in err
    assert "bootstrap_ci_columns" not in err and "Traceback" not in err
    code, out, err = invoke(capsys, *args, "--randomization", flag, "1", "--format", "json")
    assert code == 0, err  # the minimum is the library's: 1


def test_gate_file_takes_the_same_range() -> None:
    from rankgate.gate.config import GateFile
    from rankgate.stats import MAX_RESAMPLES, MIN_RESAMPLES

    field = GateFile.model_fields["n_resamples"]
    bounds = {name: getattr(m, name) for m in field.metadata for name in ("ge", "le") if hasattr(m, name)}
    assert bounds == {"ge": MIN_RESAMPLES, "le": MAX_RESAMPLES}
