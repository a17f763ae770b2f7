"""``rankgate report``: one self-contained HTML file from eval, compare, cutoffs, gate and bench JSON.

The page needs no network: plotly.js (from the installed plotly package) is embedded
gzip-compressed and base64-encoded and unpacked in the browser with
``DecompressionStream('gzip')``; each chart's figure is embedded as JSON in a
``<script type="application/json">`` element with ``<``, ``>`` and ``&`` escaped. Every
user-supplied string is escaped: by Jinja2's autoescape in the page, by `charts.esc` in
plotly's text. Sections without data are left out and listed under "Not shown".

>>> gate = {"verdict": "pass", "gates": [], "run": "new", "aggregate": {"P@10": 0.5}}
>>> data = collect(as_inputs([gate]))
>>> data.systems
{'new': {'P@10': 0.5}}
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rankgate.extras import require
from rankgate.render.numbers import p_text
from rankgate.report.charts import Chart
from rankgate.report.collect import ReportData, collect
from rankgate.report.inputs import as_inputs, load_inputs
from rankgate.report.sections import build_sections

__all__ = ["ReportData", "collect", "load_inputs", "render_report", "write_report"]

DEFAULT_TITLE = "rankgate report"


# -- rendering ------------------------------------------------------------------------------


def render_report(
    inputs: Sequence[Any],
    *,
    store: Any = None,
    targets: Any = None,
    title: str = DEFAULT_TITLE,
    branch: str | None = None,
    name: str | None = None,
    baseline_key: str = "default",
    history_limit: int | None = None,
    query_texts: Mapping[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, list[Chart]]:
    """The report's HTML and its charts (for `rankgate.report.export.export_charts`).

    Args:
        inputs: JSON objects or loaded inputs (see `write_report`).
        store: a results store URL/path or open store, for the history charts.
        targets: a targets YAML path, a mapping, a list of `Target`, or None for the defaults.
        title: the page title.
        branch: history of this branch only.
        name: history of this system name only.
        baseline_key: the stored baseline to mark in the history.
        history_limit: the newest N stored results (default 200).
        query_texts: ``{qid: text}`` shown beside query ids.
        progress: called with a short description before each step (for a progress display).
    """
    from rankgate._version import __version__

    step = progress or _quiet
    env, plotly_gz = _environment(), plotly_bundle()  # first: a missing extra is named before any work
    data = collect(as_inputs(inputs))
    step("reading the results store and building the charts" if store is not None else "building the charts")
    sections, charts, not_shown = build_sections(
        data,
        store=store,
        targets=targets,
        branch=branch,
        name=name,
        baseline_key=baseline_key,
        history_limit=history_limit,
        query_texts=dict(query_texts or {}),
    )
    step("rendering the page")
    page = env.get_template("report.html.j2").render(
        title=title,
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        sources=data.sources,
        sections=sections,
        figures={c.id: c.figure for c in charts},
        not_shown=not_shown,
        settings=data.settings,
        versions=data.versions,
        plotly_gz=plotly_gz,
    )
    return page, charts


def write_report(
    path: str | os.PathLike[str],
    inputs: Sequence[Any],
    *,
    store: Any = None,
    targets: Any = None,
    title: str = DEFAULT_TITLE,
    export_dir: str | os.PathLike[str] | None = None,
    export_format: str = "svg",
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> Path:
    """Write the HTML report to ``path`` (atomically) and, if asked, the charts as images.

    Args:
        path: the HTML file to write.
        inputs: parsed JSON objects of ``rankgate eval|compare|cutoffs|gate|bench|demo --format
            json`` (e.g. ``results.to_dict(per_query=True)``, ``gate_report.to_dict()``), or
            the output of `load_inputs`.
        store: a results store URL/path or open store, for the history charts.
        targets: a targets YAML path or mapping (see `rankgate.report.guidance`), or None.
        title: the page title.
        export_dir: also write each chart as ``<export_dir>/<chart id>.<export_format>``.
        export_format: ``"svg"`` or ``"png"``.
        progress: called with a short description before each step.
        **options: more options of `render_report` (branch, name, query_texts, ...).

    Returns:
        The path written.

    Raises:
        InputError: an input is malformed (naming the file and key), or ``path`` cannot be written.
        ConfigError: bad targets or export format.
        BackendError: the store cannot be read, or the export failed (the HTML is written first).
    """
    from rankgate.errors import BackendError
    from rankgate.io.source import atomic_writer
    from rankgate.report.export import FORMATS, export_charts

    if export_dir is not None and export_format not in FORMATS:
        from rankgate.errors import ConfigError

        raise ConfigError(
            f"The export format must be one of {', '.join(FORMATS)}. Got {export_format!r} instead.",
            key_path="export_format",
        )
    step = progress or _quiet
    page, charts = render_report(inputs, store=store, targets=targets, title=title, progress=step, **options)
    target = Path(path)
    step(f"writing {target}")
    with atomic_writer(target) as f:
        f.write(page)
    if export_dir is not None:
        step(f"exporting {len(charts)} charts as {export_format.upper()}")
        try:
            export_charts(charts, export_dir, fmt=export_format)
        except BackendError as e:
            raise BackendError(f"{e} (the HTML report was written to {target})") from None
    return target


def _quiet(_message: str) -> None:
    return None


def _environment() -> Any:
    return jinja_environment("rankgate.report", "report", "the HTML report")


def jinja_environment(package: str, extra: str, purpose: str) -> Any:
    """Jinja2 over ``package``'s templates with autoescape and the report's filters (numbers,
    intervals, JSON for script tags); the report and the dashboard share it."""
    jinja2 = require("jinja2", extra, purpose=purpose)
    Markup = require("markupsafe", extra, purpose=purpose).Markup  # comes with Jinja2
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = fmt_number
    env.filters["signed"] = lambda v, digits=4: "n/a" if v is None else f"{v:+.{digits}f}"
    env.filters["ci"] = fmt_ci
    env.filters["p"] = lambda v: "n/a" if v is None else p_text(v)  # "<0.0001", never "0.0000"
    env.filters["span"] = lambda ci, digits=3: fmt_ci(ci, digits, signed=False)
    env.filters["script_json"] = lambda obj: Markup(script_json(obj))
    return env


def fmt_number(value: Any, digits: int = 4) -> str:
    """``0.56734 -> '0.5673'``; None -> ``n/a``; integers as they are."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_ci(ci: Any, digits: int = 3, *, signed: bool = True) -> str:
    """``[-0.143, -0.031]`` (signed, for deltas) or ``[0.612, 0.700]``; empty when unknown."""
    if not ci or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return ""
    sign = "+" if signed else ""
    return f"[{ci[0]:{sign}.{digits}f}, {ci[1]:{sign}.{digits}f}]"


def script_json(obj: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``.

    >>> script_json({"q": "</script><b>&"})
    '{"q":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    for char, code in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, code)
    return text


@functools.lru_cache(maxsize=1)
def plotly_bundle() -> str:
    """plotly.js from the installed plotly package, gzip-compressed and base64-encoded."""
    import base64
    import gzip

    plotly_js = require("plotly.offline", "report", purpose="the HTML report").get_plotlyjs()
    return base64.b64encode(gzip.compress(plotly_js.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")
