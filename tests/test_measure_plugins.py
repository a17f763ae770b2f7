"""Plugin measures: the registration call, a real ``rankgate.measures`` entry point, the check helper."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import rankgate
from rankgate.errors import MeasureError
from rankgate.measures import plugins, registry
from rankgate.measures.plugins import QueryArrays, check_measure, register_measure
from tests.cli_support import invoke


@pytest.fixture
def isolated_registry(monkeypatch):
    """The registry as built in, restored after the test: plugin measures never leak into other tests."""
    registry.all_specs(plugins=False)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_WORDS", dict(registry._WORDS))
    monkeypatch.setattr(plugins, "_loaded", False)


def mean_grade(q: QueryArrays, m) -> float:
    return float(np.maximum(q.grades, 0).sum() / m.cutoff)


def mean_grade_reference(ranking, judgments, m, max_grade) -> float:
    return sum(max(judgments.get(d, 0), 0) for d in ranking[: m.cutoff]) / m.cutoff


MEAN_GRADE = {
    "name": "MeanGrade",
    "summary": "mean grade of the top k",
    "definition": "MeanGrade@k = sum of max(g(d), 0) over the top k / k",
    "kernel": mean_grade,
    "reference": mean_grade_reference,
    "cutoff": "required",
    "bounds": (0.0, float("inf")),
}


def test_register_measure_and_check_it(isolated_registry):
    register_measure(**MEAN_GRADE)
    assert check_measure(["MeanGrade@1", "MeanGrade@5", "MeanGrade@30"], seeds=range(8)) > 500
    qrels = {"q1": {"d1": 2, "d2": 1, "d5": -1}}
    run = {"q1": {"d1": 0.9, "d3": 0.8, "d5": 0.75, "d2": 0.7}}
    assert rankgate.evaluate(qrels, run, "MeanGrade@5")["MeanGrade@5"] == pytest.approx(3 / 5)  # hand-worked


def test_check_measure_finds_a_wrong_kernel(isolated_registry):
    def off_by_one(q: QueryArrays, m) -> float:  # forgets the last document of the top k
        return float(np.maximum(q.grades[: m.cutoff - 1], 0).sum() / m.cutoff)

    register_measure(**{**MEAN_GRADE, "kernel": off_by_one})
    with pytest.raises(AssertionError, match=r"MeanGrade@3, seed \d+, query q\d+ \((dense|sparse) block\)"):
        check_measure("MeanGrade@3")


def test_kernel_sees_dense_rankings_from_sparse_blocks(isolated_registry):
    seen = []

    def spy(q: QueryArrays, m) -> float:
        seen.append((q.grades.tolist(), q.judged.tolist(), q.judgments.tolist(), q.max_grade))
        return 0.0

    register_measure(**{**MEAN_GRADE, "name": "Spy", "kernel": spy, "cutoff": "optional"})
    qrels = {"q1": {"a": 2, "c": -1, "z": 3}, "q2": {"x": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {}}
    rankgate.evaluate(qrels, run, ["Spy", "Spy@2"])
    assert ([2, 0, -1], [True, False, True], [3, 2, -1], 3) in seen  # unjudged "b" in the middle
    assert ([2, 0], [True, False], [3, 2, -1], 3) in seen  # cut to the top 2
    assert ([], [], [1], 3) in seen  # q2 retrieved nothing


def write_plugin(root: Path, module: str, body: str, value: str) -> None:
    (root / f"{module}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    info = root / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[rankgate.measures]\n{value}\n", encoding="utf-8")


PLUGIN = """
    import numpy as np
    from rankgate.measures.plugins import measure_spec

    def kernel(q, m):
        return float(np.maximum(q.grades, 0).sum() / m.cutoff)

    def reference(ranking, judgments, m, max_grade):
        return sum(max(judgments.get(d, 0), 0) for d in ranking[: m.cutoff]) / m.cutoff

    SPEC = measure_spec(
        name="MyMeasure", summary="mean grade of the top k", definition="sum of max(g, 0) over the top k / k",
        kernel=kernel, reference=reference, cutoff="required", bounds=(0.0, float("inf")),
    )
"""


def test_entry_point_plugin_end_to_end(isolated_registry, tmp_path, monkeypatch, capsys):
    module = f"rg_plugin_{tmp_path.name.replace('-', '_')}"
    write_plugin(tmp_path, module, PLUGIN, f"mymeasure = {module}:SPEC")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    (tmp_path / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d2 1\nq2 0 d4 1\n", encoding="utf-8")
    (tmp_path / "run.txt").write_text(
        "q1 Q0 d1 1 0.9 r\nq1 Q0 d3 2 0.8 r\nq1 Q0 d2 3 0.7 r\nq2 Q0 d9 1 1 r\n", encoding="utf-8"
    )

    rankgate.parse_measure("nDCG@10")
    assert plugins._loaded is False and module not in sys.modules  # built-in names never read the plugins
    code, out, err = invoke(capsys, "eval", "-m", "MyMeasure@5", "-m", "P@5", "--format", "json",
                            str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"))  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["aggregate"] == {"MyMeasure@5": pytest.approx((3 / 5 + 0) / 2), "P@5": pytest.approx(0.2)}
    code, out, err = invoke(capsys, "measures", "--format", "json")
    assert code == 0, err
    assert "MyMeasure" in out
    assert check_measure("MyMeasure@4", seeds=range(3)) > 0
    monkeypatch.delitem(sys.modules, module)


def test_broken_plugin_is_named_with_exit_2(isolated_registry, tmp_path, monkeypatch, capsys):
    module = f"rg_broken_{tmp_path.name.replace('-', '_')}"
    write_plugin(tmp_path, module, "raise ImportError('missing dependency torch')\n", f"broken = {module}:SPEC")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    with pytest.raises(MeasureError, match=rf"measure plugin 'broken' \({module}:SPEC from {module} 0.1\).*torch"):
        rankgate.parse_measure("NoSuchMeasure@3")
    monkeypatch.setattr(plugins, "_loaded", False)
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 1 r\n", encoding="utf-8")
    code, _, err = invoke(capsys, "eval", "-m", "NoSuchMeasure@3", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"))
    assert code == 2 and "broken" in err and "Traceback" not in err


def test_plugin_may_not_take_a_builtin_name(isolated_registry, tmp_path, monkeypatch):
    module = f"rg_clash_{tmp_path.name.replace('-', '_')}"
    body = PLUGIN.replace('name="MyMeasure"', 'name="Mine", aliases=(Alias("map", "plain"),)').replace(
        "from rankgate.measures.plugins import measure_spec",
        "from rankgate.measures.plugins import measure_spec\n    from rankgate.measures.registry import Alias",
    )
    write_plugin(tmp_path, module, body, f"mine = {module}:SPEC")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    with pytest.raises(MeasureError, match="alias 'map' of Mine already reads as AP"):
        rankgate.parse_measure("Mine@3")
    monkeypatch.delitem(sys.modules, module, raising=False)
