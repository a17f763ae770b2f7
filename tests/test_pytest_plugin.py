"""The pytest plugin: a project's tests asserting retrieval quality, run with pytester."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

# Imported here so that pytester's in-process runs find numpy & co. already loaded (they
# restore sys.modules afterwards, and numpy cannot be loaded twice in one process).
import rankgate.evaluation.evaluate  # noqa: F401
from rankgate.errors import ConfigError, InputError, MeasureError
from rankgate.pytest_plugin import QualityFailure, assert_quality, check_quality

pytest_plugins = ["pytester"]

# q1: the relevant doc first; q2: second; q3: nothing relevant retrieved; q4: relevant at rank 6.
QRELS = """\
q1 0 a 1
q2 0 b 1
q3 0 c 1
q4 0 d 2
"""
RUN = """\
q1 Q0 a 1 9.0 sys
q1 Q0 x 2 8.0 sys
q2 Q0 y 1 9.0 sys
q2 Q0 b 2 8.0 sys
q3 Q0 z 1 9.0 sys
q4 Q0 p1 1 9.0 sys
q4 Q0 p2 2 8.0 sys
q4 Q0 p3 3 7.0 sys
q4 Q0 p4 4 6.0 sys
q4 Q0 p5 5 5.0 sys
q4 Q0 d 6 4.0 sys
"""
# R@5 = (1 + 1 + 0 + 0) / 4 = 0.5;  RR@10 = (1 + 1/2 + 0 + 1/6) / 4 = 0.41667;  P@1 = 0.25


def plugin_args() -> list[str]:
    """``-p rankgate.pytest_plugin`` unless the installed package already registers it."""
    installed = any(ep.value == "rankgate.pytest_plugin" for ep in entry_points(group="pytest11"))
    # This test process imported the plugin already, so the inner run cannot rewrite its asserts.
    quiet = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    return quiet if installed else [*quiet, "-p", "rankgate.pytest_plugin"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".txt", qrels=QRELS, run=RUN)
    return pytester


def test_passing_project_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_quality="""
        def test_recall(rankgate_check):
            results = rankgate_check("qrels.txt", "run.txt", {"R@5": 0.5, "mrr@10": 0.4})
            assert results.aggregate == {"R@5": 0.5, "RR@10": (1 + 1 / 2 + 1 / 6) / 4}
        """
    )
    result = project.runpytest(*plugin_args(), "--junitxml=report.xml")
    result.assert_outcomes(passed=1)
    report = (project.path / "report.xml").read_text()
    assert '<property name="rankgate:R@5" value="0.5" />' in report
    assert '<property name="rankgate:RR@10" value="0.4166666666666667" />' in report


def test_failing_project_test_says_what_and_where(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_quality="""
        def test_recall(rankgate_check):
            rankgate_check("qrels.txt", "run.txt", {"R@5": 0.85, "RR@10": 0.6, "P@1": 0.25})
        """
    )
    result = project.runpytest(*plugin_args())
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E  *rankgate.pytest_plugin.QualityFailure: retrieval quality below the floor: 2 of 3 measures "
            "(run 'run', 4 queries evaluated)",
            "E  *R@5 = 0.5000, floor 0.8500, short by 0.3500; 2 of 4 queries score 0",
            "E  *worst queries: q3 = 0, q4 = 0, q1 = 1, q2 = 1",
            "E  *RR@10 = 0.4167, floor 0.6000, short by 0.1833; 1 of 4 queries score 0",
            "E  *worst queries: q3 = 0, q4 = 0.1667, q2 = 0.5, q1 = 1",
            "E  *met: P@1 = 0.2500 >= 0.2500",
        ]
    )
    # The plugin's own frames are hidden: the failure points at the project's test line.
    assert "def check(" not in result.stdout.str()
    assert "test_quality.py:2: QualityFailure" in result.stdout.str()


def test_assert_quality_without_the_fixture(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_direct="""
        from rankgate.pytest_plugin import assert_quality

        QRELS = {"q1": {"a": 1}, "q2": {"b": 1}}

        def test_ok():
            assert_quality(QRELS, {"q1": {"a": 1.0}, "q2": {"b": 1.0}}, {"hit_rate@1": 1.0})

        def test_bad():
            assert_quality(QRELS, {"q1": {"a": 1.0}, "q2": {"x": 1.0}}, {"ndcg_cut.10": 0.9}, worst=1)
        """
    )
    result = project.runpytest(*plugin_args())
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E  *ndcg_cut.10 (nDCG@10) = 0.5000, floor 0.9000, short by 0.4000; 1 of 2 queries score 0",
            "E  *worst queries: q2 = 0",
        ]
    )


def test_accepts_objects_and_dicts(tmp_path: Path) -> None:
    import rankgate

    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    qrels = rankgate.read_qrels(tmp_path / "qrels.txt")
    run = rankgate.read_run(tmp_path / "run.txt")
    from_objects = assert_quality(qrels, run, {"recall@5": 0.5})
    as_dict = {"q1": {"a": 9.0, "x": 8.0}, "q2": {"y": 9.0, "b": 8.0}, "q3": {"z": 9.0}}
    from_dicts = assert_quality({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}, as_dict, {"R@5": 0.66})
    assert from_objects["R@5"] == 0.5
    assert from_dicts["R@5"] == pytest.approx(2 / 3)


def test_options_reach_the_evaluation() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    with pytest.raises(QualityFailure) as info:
        assert_quality(qrels, run, {"R@1": 0.9})
    assert info.value.shortfalls[0].value == 0.5
    assert [s.measure for s in info.value.shortfalls] == ["R@1"]
    assert assert_quality(qrels, run, {"R@1": 0.9}, queries="intersection")["R@1"] == 1.0


def test_float_noise_meets_the_floor() -> None:
    # 0.85 cannot be reached exactly by a mean over 20 queries of 0/1 values in float: 17/20.
    qrels = {f"q{i:02d}": {"a": 1} for i in range(20)}
    run = {f"q{i:02d}": {"a" if i < 17 else "x": 1.0} for i in range(20)}
    results, shortfalls = check_quality(qrels, run, {"R@1": 0.85})
    assert results["R@1"] == pytest.approx(0.85) and shortfalls == []
    _, shortfalls = check_quality(qrels, run, {"R@1": 0.8500001})
    assert [s.measure for s in shortfalls] == ["R@1"]


@pytest.mark.parametrize(
    ("floors", "error", "message"),
    [
        ({}, ConfigError, "floors must be a non-empty mapping"),
        ({"R@5": "high"}, ConfigError, "floors['R@5']: The floor must be a finite number. Got 'high' instead."),
        ({"R@5": float("nan")}, ConfigError, "floors['R@5']: The floor must be a finite number. Got nan"),
        ({"R@5": True}, ConfigError, "Got True instead"),
        ({"R@5": 0.5, "recall@5": 0.6}, ConfigError, "'recall@5' and 'R@5' are the same measure (R@5)"),
        ({"recal@5": 0.5}, MeasureError, "recal"),
    ],
)
def test_bad_floors(floors: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        check_quality({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, floors)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.txt: file not found"):
        assert_quality(tmp_path / "nope.txt", {"q1": {"a": 1.0}}, {"R@5": 0.5})


def test_no_evaluated_query_fails() -> None:
    with pytest.raises(QualityFailure, match=r"R@5: no query was evaluated, floor 0\.5000"):
        assert_quality({"q1": {"a": 1}}, {"q9": {"a": 1.0}}, {"R@5": 0.5}, queries="intersection")


def test_plugin_imports_nothing_heavy() -> None:
    code = textwrap.dedent(
        """
        import sys
        import rankgate.pytest_plugin
        heavy = {"numpy", "pyarrow", "httpx", "yaml", "sqlalchemy", "torch", "scipy", "pandas", "polars"}
        print(sorted(heavy & set(sys.modules)))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_loaded_through_the_pytest11_entry_point(tmp_path: Path) -> None:
    """The way users get it: pytest finds ``rankgate = rankgate.pytest_plugin`` under ``pytest11``."""
    site = tmp_path / "site"
    dist = site / "rankgate_entry_point_probe-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rankgate-entry-point-probe\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[pytest11]\nrankgate = rankgate.pytest_plugin\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "qrels.txt").write_text(QRELS)
    (project / "run.txt").write_text(RUN)
    (project / "test_it.py").write_text(
        'def test_floor(rankgate_check):\n    rankgate_check("qrels.txt", "run.txt", {"R@5": 0.9})\n'
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", "test_it.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "R@5 = 0.5000, floor 0.9000, short by 0.4000; 2 of 4 queries score 0" in done.stdout
    assert "1 failed" in done.stdout and "warning" not in done.stdout
