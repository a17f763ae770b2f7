"""Turn whatever the caller passed (object, path, dict, DataFrame) into `Qrels` / `Run`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import InputError
from rankgate.io.readers import qrels_from_table, read_qrels, read_run, run_from_table
from rankgate.io.tables import frame_to_table


def as_qrels(obj: Any, *, duplicates: str = "error", format: str | None = None) -> Qrels:
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, str | os.PathLike):
        return read_qrels(obj, format=format, duplicates=duplicates)
    if isinstance(obj, Mapping):
        return Qrels.from_dict(obj, duplicates=duplicates)
    table = frame_to_table(obj)
    if table is not None:
        return qrels_from_table(table, source="<DataFrame>", duplicates=duplicates)
    raise InputError(f"cannot read qrels from a {type(obj).__name__}: pass a Qrels, a path, a dict or a DataFrame")


def as_run(obj: Any, *, duplicates: str = "error", format: str | None = None, name: str | None = None) -> Run:
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, str | os.PathLike):
        return read_run(obj, format=format, duplicates=duplicates, name=name)
    if isinstance(obj, Mapping):
        return Run.from_dict(obj, duplicates=duplicates, name=name)
    table = frame_to_table(obj)
    if table is not None:
        return run_from_table(table, source="<DataFrame>", name=name, duplicates=duplicates)
    raise InputError(f"cannot read a run from a {type(obj).__name__}: pass a Run, a path, a dict or a DataFrame")
