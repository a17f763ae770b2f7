"""Static export of the report's charts (SVG or PNG), for PR comments and slides.

plotly's exporter, kaleido (>= 1.0), draws each figure in a headless Chrome or Chromium that
it finds on the machine (``$BROWSER_PATH`` first, then ``chromium``, ``google-chrome``... on
``PATH``). Nothing is fetched from the network: plotly.js is read from the installed plotly
package and MathJax (which kaleido would load from a CDN) is switched off, as the charts use
no LaTeX. One browser is started for all the charts of a report.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rankgate.errors import BackendError, ConfigError
from rankgate.extras import require
from rankgate.report.charts import Chart

FORMATS: tuple[str, ...] = ("svg", "png")
WIDTH = 960
PNG_SCALE = 2  # PNGs at twice the size, sharp on high-density screens
TIMEOUT_S = 60.0
_INSTALL_CHROME = (
    "install Chromium (Debian/Ubuntu: apt-get install chromium) or Chrome, set BROWSER_PATH to its executable, "
    "or run `plotly_get_chrome`"
)


def export_charts(
    charts: Sequence[Chart], out_dir: str | os.PathLike[str], *, fmt: str = "svg", width: int = WIDTH
) -> list[Path]:
    """Write each chart to ``out_dir/<chart id>.<fmt>`` (atomically); return the paths.

    Args:
        charts: the charts to draw.
        out_dir: folder to write into (created if needed).
        fmt: ``"svg"`` or ``"png"``.
        width: image width in CSS pixels; the height is each chart's own.

    Raises:
        ConfigError: an unknown format.
        BackendError: kaleido or a Chrome/Chromium is missing, or drawing failed.
    """
    from rankgate.io.source import atomic_writer

    if fmt not in FORMATS:
        raise ConfigError(f"The export format must be one of {', '.join(FORMATS)}. Got {fmt!r} instead.")
    if not charts:
        return []
    images = render_images([titled(c) for c in charts], fmt=fmt, width=width)
    folder = Path(out_dir)
    paths = []
    for chart, data in zip(charts, images, strict=True):
        path = folder / f"{chart.id}.{fmt}"
        with atomic_writer(path, "wb") as f:
            f.write(data)  # type: ignore[arg-type]  # atomic_writer yields a binary file in "wb" mode
        paths.append(path)
    return paths


def titled(chart: Chart) -> dict[str, Any]:
    """The chart's figure with its title drawn in (the page shows it above the figure instead)."""
    from rankgate.report.charts import esc

    layout = dict(chart.figure.get("layout") or {})
    margin = dict(layout.get("margin") or {})
    margin["t"] = max(int(margin.get("t") or 0), 50)
    height = int(layout.get("height") or 400) + max(0, 50 - int((layout.get("margin") or {}).get("t") or 0))
    layout.update(
        title={"text": esc(chart.title), "x": 0.01, "xanchor": "left", "font": {"size": 15}},
        margin=margin,
        height=height,
    )
    return {**chart.figure, "layout": layout}


def render_images(figures: Sequence[dict[str, Any]], *, fmt: str = "svg", width: int = WIDTH) -> list[bytes]:
    """Draw plotly figures with kaleido in one headless browser; return the image bytes."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    kaleido = _kaleido()
    plotlyjs = _plotlyjs_path()
    options = [
        {
            "format": fmt,
            "width": width,
            "height": int(fig.get("layout", {}).get("height") or 400),
            "scale": PNG_SCALE if fmt == "png" else 1,
        }
        for fig in figures
    ]

    async def draw() -> list[bytes]:
        async with kaleido.Kaleido(n=1, timeout=TIMEOUT_S, mathjax=False, plotlyjs=plotlyjs) as k:
            return [bytes(await k.calc_fig(fig, opts=opts)) for fig, opts in zip(figures, options, strict=True)]

    try:
        # asyncio.run in a worker thread: works whether or not the caller runs an event loop (Jupyter).
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, draw()).result()
    except BackendError:
        raise
    except Exception as e:  # kaleido and choreographer raise many types; all mean "could not draw"
        if type(e).__name__ in ("ChromeNotFoundError", "BrowserFailedError"):
            raise BackendError(f"no usable Chrome or Chromium for the static export ({e}); {_INSTALL_CHROME}") from None
        raise BackendError(f"the static export failed ({type(e).__name__}: {e})") from None


def _kaleido() -> Any:
    kaleido = require("kaleido", "report", purpose="the PNG/SVG export")
    from importlib.metadata import PackageNotFoundError, version

    try:
        major = int(version("kaleido").split(".")[0])
    except (PackageNotFoundError, ValueError):
        major = 1
    if major < 1 or not hasattr(kaleido, "Kaleido"):
        raise BackendError("the installed kaleido is too old for the export (0.x): pip install 'kaleido>=1.0'")
    return kaleido


def _plotlyjs_path() -> str:
    plotly = require("plotly", "report", purpose="the PNG/SVG export")
    path = Path(str(plotly.__file__)).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise BackendError(f"plotly.js is missing from the plotly package ({path}); reinstall plotly")
    return str(path)
