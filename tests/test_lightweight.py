"""The core stays light: evaluating TREC files never imports pandas or polars (each costs
hundreds of milliseconds of start-up), and `import rankgate` imports nothing heavy."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()


def test_import_rankgate_is_lazy():
    out = run_python(
        "import sys, rankgate; print(sorted(m for m in ('numpy', 'pyarrow', 'pandas', 'polars') if m in sys.modules))"
    )
    assert out == "[]"


def test_evaluating_trec_files_imports_neither_pandas_nor_polars(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    (tmp_path / "r.txt").write_text("q1 Q0 b 1 2.0 s\nq1 Q0 a 2 2.0 s\nq2 Q0 c 1 1.0 s\nq2 Q0 c2 2 0.5 s\n")
    code = (
        "import sys, rankgate\n"
        f"res = rankgate.evaluate({str(tmp_path / 'q.txt')!r}, {str(tmp_path / 'r.txt')!r}, ['nDCG@10', 'AP', 'RR'])\n"
        "print(res['RR'], 'pandas' in sys.modules, 'polars' in sys.modules)"
    )
    assert run_python(code) == "0.75 False False"


def test_public_api_is_sorted_and_every_name_resolves():
    import rankgate

    assert list(rankgate.__all__) == sorted(rankgate.__all__)
    for name in rankgate.__all__:
        assert getattr(rankgate, name) is not None, name
    comparison = rankgate.compare(
        {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}},
        [
            {"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {"x": 1.0}},
            {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}},
        ],
        ["P@1"],
        names=["old", "new"],
        n_resamples=200,
    )
    assert isinstance(comparison, rankgate.Comparison)
    assert comparison.row("new", "P@1")["delta"] == pytest.approx(2 / 3, abs=1e-12)
