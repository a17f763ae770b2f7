"""Static export of the report's charts (SVG and PNG through kaleido and headless Chromium)."""

from __future__ import annotations

import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rankgate.errors import BackendError, ConfigError
from rankgate.report.charts import curve_chart, delta_chart
from rankgate.report.export import export_charts
from tests.cli_support import invoke
from tests.report_support import XSS, chrome_paths, write_collection

SVG = "{http://www.w3.org/2000/svg}"


def _charts():
    curve = curve_chart("R", {XSS: [(1, 0.2), (5, 0.5), (10, 0.7)], "dense": [(1, 0.3), (5, 0.6), (10, 0.8)]}, {})
    delta = delta_chart("base", "cand", "RR", [("q1", -0.5), ("q2", 0.5), ("q3", -1.0)])
    return [curve, delta]


@pytest.fixture
def kaleido():
    module = pytest.importorskip("kaleido", reason="the export needs kaleido>=1.0 (the report extra)")
    if chrome_paths() is None:
        pytest.skip("the export needs Chromium (Debian: apt-get install chromium)")
    return module


@pytest.mark.slow
def test_svg_and_png_export(kaleido, tmp_path: Path):
    charts = _charts()
    paths = export_charts(charts, tmp_path / "svg", fmt="svg")
    assert [p.name for p in paths] == ["curve-r.svg", "delta-cand-vs-base-rr.svg"]
    root = ET.parse(paths[0]).getroot()
    assert root.tag == f"{SVG}svg" and root.get("width") == "960" and root.get("height") == "400"
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert XSS in texts and "dense" in texts  # legend entries, drawn as text
    assert "R against the cutoff k" in texts  # the title is drawn in (the page shows it above the chart)
    bars = ET.parse(paths[1]).getroot().findall(f".//{SVG}g[@class='point']")
    assert len(bars) == 3

    (png,) = export_charts(charts[1:], tmp_path / "png", fmt="png")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (960 * 2, 400 * 2)  # drawn at twice the size (380 + 20 for the title)
    assert oct(png.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


@pytest.mark.slow
def test_cli_export(kaleido, tmp_path: Path, capsys):
    paths = write_collection(tmp_path)
    ev = tmp_path / "base.json"
    code, _, err = invoke(
        capsys, "eval", paths["qrels"], paths["base"], "-m", "P@1,P@2,RR", "--format", "json", "-o", str(ev)
    )
    assert code == 0, err
    code, out, err = invoke(capsys, "report", str(ev), "-o", str(tmp_path / "r.html"),
                            "--export", str(tmp_path / "img"), "--export-format", "png")  # fmt: skip
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == ["curve-p.png"]
    assert "charts as PNG in" in out


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.extra("report")
def test_unknown_format_and_no_charts(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"must be one of svg, png\. Got 'jpg' instead"):
        export_charts(_charts(), tmp_path, fmt="jpg")
    assert export_charts([], tmp_path, fmt="svg") == []


def test_missing_kaleido_names_the_extra(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "kaleido", None)  # import kaleido raises ImportError
    with pytest.raises(BackendError, match=r"pip install 'rankgate\[report\]'"):
        export_charts(_charts(), tmp_path, fmt="svg")


@pytest.mark.extra("report")
def test_cli_export_failure_still_writes_the_html(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "kaleido", None)
    paths = write_collection(tmp_path)
    ev = tmp_path / "base.json"
    assert (
        invoke(capsys, "eval", paths["qrels"], paths["base"], "-m", "P@1,P@2", "--format", "json", "-o", str(ev))[0]
        == 0
    )
    code, _, err = invoke(capsys, "report", str(ev), "-o", str(tmp_path / "r.html"), "--export", str(tmp_path / "img"))
    assert code == 2
    assert "needs kaleido" in err and "the HTML report was written to" in err
    assert (tmp_path / "r.html").stat().st_size > 0
