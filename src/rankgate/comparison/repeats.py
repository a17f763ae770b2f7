"""Systems measured more than once (seeds, folds, repeated runs of a non-deterministic retriever).

A system given as ``NAME=run1,run2,...`` or ``NAME=GLOB`` is its runs' repeats. Each repeat is
evaluated alike; the system's per-query value is the mean over its repeats, on the queries
every repeat was evaluated on, and the paired tests compare those means query by query.
`Repeats` keeps the spread between the repeats (each repeat's mean, their SD and range), so a
report can say whether a delta is larger than the run-to-run noise.

>>> parse_system("dense=a.txt,b.txt")
('dense', ['a.txt', 'b.txt'])
>>> parse_system("plain.txt")
(None, ['plain.txt'])
"""

from __future__ import annotations

import glob
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rankgate.errors import ConfigError, InputError
from rankgate.evaluation.results import Results

_NAME = re.compile(r"^([A-Za-z0-9_.:+-]{1,255})=(.+)$", re.DOTALL)
MAX_REPEATS = 1000


def parse_system(text: str) -> tuple[str | None, list[str]]:
    """``NAME=run1,run2`` or ``NAME=GLOB`` -> the name and the run paths; a plain path -> ``(None, [path])``.

    A path that exists as written is a path even when it holds ``=``. A glob is expanded in
    sorted order and must match at least one file.
    """
    if os.path.exists(text):
        return None, [text]
    found = _NAME.match(text)
    if found is None:
        return None, [text]
    name, rest = found.group(1), found.group(2)
    paths: list[str] = []
    for part in (p.strip() for p in rest.split(",")):
        if not part:
            raise ConfigError(f"an empty run in {text!r}: write NAME=run1,run2", key_path="runs")
        if glob.has_magic(part) and not os.path.exists(part):
            matched = sorted(glob.glob(part))
            if not matched:
                raise InputError(f"no file matches {part!r} (the repeats of {name!r})")
            paths.extend(matched)
        else:
            paths.append(part)
    if len(paths) > MAX_REPEATS:
        raise ConfigError(f"{name!r} has {len(paths)} repeats; at most {MAX_REPEATS}", key_path="runs")
    if len(set(paths)) != len(paths):
        raise ConfigError(f"{name!r} lists a run twice ({text!r})", key_path="runs")
    return name, paths


@dataclass(frozen=True)
class Repeats:
    """The spread between one system's repeats."""

    system: str
    runs: list[str]  # the repeats' names
    means: dict[str, list[float]]  # measure -> each repeat's mean over the shared queries
    n_queries: int  # queries every repeat was evaluated on
    dropped: int  # queries some repeat lacked (left out of the mean)

    @property
    def sd(self) -> dict[str, float | None]:
        """SD (ddof=1) of the repeats' means, per measure; None with one repeat."""
        return {m: float(np.std(v, ddof=1)) if len(v) > 1 else None for m, v in self.means.items()}

    @property
    def spread(self) -> dict[str, float]:
        """Largest minus smallest repeat mean, per measure."""
        return {m: float(max(v) - min(v)) for m, v in self.means.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "runs": list(self.runs),
            "n": len(self.runs),
            "means": {m: [_finite(x) for x in v] for m, v in self.means.items()},
            "sd": {m: _finite(v) for m, v in self.sd.items()},
            "range": {m: _finite(v) for m, v in self.spread.items()},
            "n_queries": self.n_queries,
            "dropped_queries": self.dropped,
        }

    def note(self) -> str:
        """One line for the text output: ``dense: 3 repeats; nDCG@10 means 0.512-0.527 (SD 0.0075)``."""
        parts = []
        for m, values in self.means.items():
            sd = self.sd[m]
            parts.append(f"{m} {min(values):.4g} to {max(values):.4g}" + (f" (SD {sd:.2g})" if sd is not None else ""))
        text = f"{self.system}: mean over {len(self.runs)} repeats per query; repeat means " + "; ".join(parts)
        if self.dropped:
            text += f"; {self.dropped} queries not in every repeat left out"
        return text


def mean_over_repeats(repeats: Sequence[Results], name: str) -> tuple[Results, Repeats]:
    """One `Results` whose per-query values are the mean over ``repeats``, and their spread.

    Every repeat must hold the same measures. The mean is taken on the queries every repeat
    was evaluated on (in byte order); count measures (summed, like NumRet) are averaged too.
    """
    if not repeats:
        raise ConfigError(f"{name!r} has no runs", key_path="runs")
    names = repeats[0].names
    for r in repeats[1:]:
        if r.names != names:
            raise InputError(f"the repeats of {name!r} hold different measures ({r.names} vs {names})")
    shared = set(repeats[0].query_ids).intersection(*(r.query_ids for r in repeats[1:]))
    queries = sorted(shared, key=lambda q: q.encode())
    if not queries:
        raise InputError(f"the repeats of {name!r} share no evaluated query")
    stacked = np.stack([_rows(r, queries) for r in repeats])
    values = stacked.mean(axis=0)
    labels = [r.run_name or f"{name}#{i + 1}" for i, r in enumerate(repeats)]
    means = {m: [float(stacked[i, :, j].mean()) for i in range(len(repeats))] for j, m in enumerate(names)}
    union = set().union(*(r.query_ids for r in repeats))
    warnings = list(
        dict.fromkeys(f"{label}: {w}" for label, r in zip(labels, repeats, strict=True) for w in r.warnings)
    )
    merged = replace(
        repeats[0],
        query_ids=queries,
        values=values,
        run_name=name,
        warnings=warnings,
        ci=None,
        facts=None,
        groups=None,
        queries={**repeats[0].queries, "evaluated": len(queries)},
        settings={**repeats[0].settings, "repeats": len(repeats)},
    )
    return merged, Repeats(name, labels, means, len(queries), len(union) - len(queries))


def _rows(results: Results, queries: list[str]) -> np.ndarray:
    position = {q: i for i, q in enumerate(results.query_ids)}
    return results.values[[position[q] for q in queries], :]


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value
