"""Inputs of the HTML report: read JSON files, say what each is, check the fields it uses.

Each input becomes ``{"kind": KIND, "source": NAME, "data": OBJECT}``, where KIND is one of

* ``eval``: ``rankgate eval --format json`` (``measures``, ``aggregate``, maybe ``per_query``);
  also ``rankgate store show --format json``, which has the same fields;
* ``compare``: ``rankgate compare --format json`` (``systems``, ``comparisons``, ``by_tag``);
* ``cutoffs``: ``rankgate cutoffs --format json`` (``cutoffs``, ``runs``);
* ``gate``: ``rankgate gate --format json`` (``verdict``, ``gates``, per-query values);
* ``bench``: ``rankgate bench --format json`` (``results``);

and ``rankgate demo --format json`` (``runs`` of eval objects and a ``gate``) is split into
its eval and gate parts. A malformed field is an `InputError` naming the file and the key path.

>>> classify({"verdict": "pass", "gates": []}, "g.json")
'gate'
>>> [i["kind"] for i in as_inputs([{"measures": ["P@5"], "aggregate": {"P@5": 0.5}}])]
['eval']
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

from rankgate.errors import InputError

KINDS: tuple[str, ...] = ("eval", "compare", "cutoffs", "gate", "bench")
VERDICTS = ("pass", "warn", "fail")
Input = dict[str, Any]


def load_inputs(paths: Iterable[str | os.PathLike[str]]) -> list[Input]:
    """Read JSON files (plain or compressed) and classify each.

    Args:
        paths: files written by ``rankgate eval|compare|cutoffs|gate|bench|demo --format json``.

    Returns:
        ``[{"kind", "source", "data"}]`` in the order given (a demo file gives several).

    Raises:
        InputError: a file is missing, not JSON, or not one of the known objects.
    """
    out: list[Input] = []
    for path in paths:
        out.extend(as_inputs([read_json(path)], sources=[str(path)]))
    return out


def read_json(path: str | os.PathLike[str]) -> Any:
    """Parse one JSON file; a syntax error names the file, line and column."""
    from rankgate.io.source import read_bytes

    source = str(path)
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", source=source) from None
    if not text.strip():
        raise InputError("file is empty: expected a JSON object written by rankgate", source=source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg} (column {e.colno})", source=source, line=e.lineno) from None


def as_inputs(items: Iterable[Any], *, sources: Iterable[str] | None = None) -> list[Input]:
    """Classify and check parsed objects; loaded inputs (``{"kind", "source", "data"}``) pass through.

    Args:
        items: JSON objects (``results.to_dict(per_query=True)``, ``report.to_dict()``, ...) or
            inputs from `load_inputs`.
        sources: a name per item for messages and the report (default ``<input N>``).
    """
    names = list(sources) if sources is not None else []
    out: list[Input] = []
    for i, item in enumerate(items):
        source = names[i] if i < len(names) else f"<input {i + 1}>"
        if isinstance(item, Mapping) and set(item) == {"kind", "source", "data"} and item["kind"] in KINDS:
            source, kind, data = str(item["source"]), str(item["kind"]), item["data"]
            check(kind, data, source)
            out.append({"kind": kind, "source": source, "data": data})
            continue
        kind = classify(item, source)
        if kind == "demo":
            out.extend(_split_demo(item, source))
            continue
        check(kind, item, source)
        out.append({"kind": kind, "source": source, "data": item})
    return out


def classify(obj: Any, source: str) -> str:
    """The kind of a rankgate JSON object (``eval``, ``compare``, ``cutoffs``, ``gate``, ``bench``, ``demo``)."""
    if not isinstance(obj, Mapping):
        raise InputError(
            f"expected a JSON object written by rankgate (eval, compare, cutoffs, gate or bench --format json), "
            f"got a JSON {type(obj).__name__}",
            source=source,
        )
    if "verdict" in obj and "gates" in obj:
        return "gate"
    if "comparisons" in obj and "systems" in obj:
        return "compare"
    if "cutoffs" in obj and "runs" in obj:
        return "cutoffs"
    if isinstance(obj.get("results"), list):
        return "bench"
    if isinstance(obj.get("runs"), Mapping) and "gate" in obj:
        return "demo"
    if "aggregate" in obj and "measures" in obj:
        return "eval"
    keys = ", ".join(sorted(map(str, obj))[:8]) or "none"
    raise InputError(
        "not a rankgate eval, compare, cutoffs, gate or bench JSON object "
        f"(top-level keys: {keys}); write one with e.g. `rankgate eval QRELS RUN --format json --per-query`",
        source=source,
    )


def _split_demo(obj: Mapping[str, Any], source: str) -> list[Input]:
    runs = obj["runs"]
    out: list[Input] = []
    for name, data in runs.items():
        where = f"{source}#runs.{name}"
        if not isinstance(data, Mapping):
            raise InputError(f"runs.{name}: expected an object", source=source)
        data = {**data, "run": data.get("run", name)}
        check("eval", data, where)
        out.append({"kind": "eval", "source": where, "data": data})
    if obj.get("gate") is not None:
        check("gate", obj["gate"], f"{source}#gate")
        out.append({"kind": "gate", "source": f"{source}#gate", "data": obj["gate"]})
    return out


# -- checks ---------------------------------------------------------------------------------


def check(kind: str, data: Any, source: str) -> None:
    """Check the fields the report reads; raise `InputError` naming the key path of a bad one."""
    if not isinstance(data, Mapping):
        raise InputError(f"expected a JSON object for a {kind} input", source=source)
    {"eval": _check_eval, "compare": _check_compare, "cutoffs": _check_cutoffs, "gate": _check_gate}.get(
        kind, _check_bench
    )(data, source)


def _fail(source: str, path: str, expected: str, value: Any) -> InputError:
    shown = json.dumps(value)[:80] if _is_json(value) else repr(value)[:80]
    return InputError(f"{path}: expected {expected}", source=source, text=shown)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def number(value: Any, source: str, path: str) -> float | None:
    """A finite float, or None for null/NaN; anything else is an `InputError` at ``path``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(source, path, "a number or null", value)
    return None if not math.isfinite(value) else float(value)


def _mapping(data: Mapping[str, Any], key: str, source: str, *, required: bool = True, prefix: str = "") -> Any:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, Mapping):
        raise _fail(source, prefix + key, "an object", value)
    return value


def _list(data: Mapping[str, Any], key: str, source: str, *, required: bool = True, prefix: str = "") -> Any:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, list):
        raise _fail(source, prefix + key, "a list", value)
    return value


def _values(obj: Mapping[str, Any], source: str, path: str) -> None:
    """``{measure: number|null}``."""
    for name, value in obj.items():
        number(value, source, f"{path}.{name}")


def _per_query(obj: Any, source: str, path: str) -> None:
    if obj is None:
        return
    if not isinstance(obj, Mapping):
        raise _fail(source, path, "an object {query id: {measure: value}}", obj)
    for qid, values in obj.items():
        if not isinstance(values, Mapping):
            raise _fail(source, f"{path}.{qid}", "an object {measure: value}", values)
        _values(values, source, f"{path}.{qid}")


def _strings(data: Mapping[str, Any], key: str, source: str) -> None:
    items = _list(data, key, source, required=False)
    for i, item in enumerate(items or []):
        if not isinstance(item, str):
            raise _fail(source, f"{key}[{i}]", "a string", item)


def _check_eval(data: Mapping[str, Any], source: str) -> None:
    measures = _list(data, "measures", source)
    for i, m in enumerate(measures):
        if not isinstance(m, str):
            raise _fail(source, f"measures[{i}]", "a measure name", m)
    _values(_mapping(data, "aggregate", source), source, "aggregate")
    _per_query(data.get("per_query"), source, "per_query")
    _strings(data, "warnings", source)
    ci = _mapping(data, "ci", source, required=False)
    for name, pair in (ci or {}).items():
        _interval(pair, source, f"ci.{name}")
    _groups(data.get("groups"), source)


def _groups(groups: Any, source: str) -> None:
    """``{tag: {value: {"n", "small", "aggregates", "ci"?}}}`` of ``eval --tags``."""
    if groups is None:
        return
    if not isinstance(groups, Mapping):
        raise _fail(source, "groups", "an object {tag: {value: group}}", groups)
    for tag, values in groups.items():
        if not isinstance(values, Mapping):
            raise _fail(source, f"groups.{tag}", "an object {value: group}", values)
        for value, group in values.items():
            path = f"groups.{tag}.{value}"
            if not isinstance(group, Mapping):
                raise _fail(source, path, 'an object {"n", "small", "aggregates"}', group)
            number(group.get("n"), source, f"{path}.n")
            _values(_mapping(group, "aggregates", source, prefix=f"{path}."), source, f"{path}.aggregates")
            for name, pair in (_mapping(group, "ci", source, required=False, prefix=f"{path}.") or {}).items():
                _interval(pair, source, f"{path}.ci.{name}")


def _interval(pair: Any, source: str, path: str) -> None:
    if pair is None:
        return
    if not isinstance(pair, list) or len(pair) != 2:
        raise _fail(source, path, "[low, high] or null", pair)
    number(pair[0], source, f"{path}[0]")
    number(pair[1], source, f"{path}[1]")


def _rows(data: Mapping[str, Any], key: str, source: str, fields: dict[str, str]) -> None:
    """A list of objects whose ``fields`` are strings ("str") or numbers ("num")."""
    for i, row in enumerate(_list(data, key, source, required=False) or []):
        if not isinstance(row, Mapping):
            raise _fail(source, f"{key}[{i}]", "an object", row)
        for name, kind in fields.items():
            value = row.get(name)
            if kind == "str" and not isinstance(value, str):
                raise _fail(source, f"{key}[{i}].{name}", "a string", value)
            if kind == "num":
                number(value, source, f"{key}[{i}].{name}")
        if "ci" in row:
            _interval(row["ci"], source, f"{key}[{i}].ci")


def _check_compare(data: Mapping[str, Any], source: str) -> None:
    _strings(data, "systems", source)
    _strings(data, "warnings", source)
    _rows(data, "comparisons", source, {"system": "str", "measure": "str", "delta": "num", "mean": "num"})
    _rows(data, "by_tag", source, {"tag": "str", "value": "str", "measure": "str", "delta": "num"})
    for system, means in (_mapping(data, "means", source, required=False) or {}).items():
        if not isinstance(means, Mapping):
            raise _fail(source, f"means.{system}", "an object {measure: value}", means)
        _values(means, source, f"means.{system}")


def _check_cutoffs(data: Mapping[str, Any], source: str) -> None:
    for i, k in enumerate(_list(data, "cutoffs", source)):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise _fail(source, f"cutoffs[{i}]", "an int >= 1", k)
    for run, values in _mapping(data, "runs", source).items():
        if not isinstance(values, Mapping):
            raise _fail(source, f"runs.{run}", "an object {measure: value}", values)
        _values(values, source, f"runs.{run}")


def _check_gate(data: Mapping[str, Any], source: str) -> None:
    if data.get("verdict") not in VERDICTS:
        raise _fail(source, "verdict", "one of pass, warn, fail", data.get("verdict"))
    _rows(
        data,
        "gates",
        source,
        {"name": "str", "metric": "str", "status": "str", "value": "num", "baseline": "num", "delta": "num"},
    )
    _values(_mapping(data, "aggregate", source, required=False) or {}, source, "aggregate")
    _values(_mapping(data, "baseline_aggregate", source, required=False) or {}, source, "baseline_aggregate")
    _per_query(data.get("per_query"), source, "per_query")
    _per_query(data.get("baseline_per_query"), source, "baseline_per_query")
    _rows(data, "by_tag", source, {"tag": "str", "value": "str", "measure": "str", "delta": "num", "mean": "num"})
    _strings(data, "warnings", source)
    _strings(data, "notes", source)


def _check_bench(data: Mapping[str, Any], source: str) -> None:
    for i, row in enumerate(_list(data, "results", source)):
        if not isinstance(row, Mapping):
            raise _fail(source, f"results[{i}]", "an object", row)
        metrics = _mapping(row, "metrics", source, required=False, prefix=f"results[{i}].")
        _values(metrics or {}, source, f"results[{i}].metrics")
        latency = _mapping(row, "latency_ms", source, required=False, prefix=f"results[{i}].")
        _values(latency or {}, source, f"results[{i}].latency_ms")
        for key in ("throughput_qps", "build_s", "memory_bytes"):
            number(row.get(key), source, f"results[{i}].{key}")
        recall = row.get("neighbor_recall")
        if isinstance(recall, Mapping):
            _values(recall, source, f"results[{i}].neighbor_recall")
        else:
            number(recall, source, f"results[{i}].neighbor_recall")


def read_query_texts(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{qid: text}`` from a queries JSONL file (BEIR: ``_id`` and ``text``), for hover text and tables."""
    from rankgate.io.tags import ID_KEYS

    source = str(path)
    from rankgate.io.source import read_bytes

    text = read_bytes(path).decode("utf-8-sig", errors="replace")
    out: dict[str, str] = {}
    for number_, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON: {e.msg}", source=source, line=number_, text=line) from None
        if not isinstance(row, Mapping):
            raise InputError("expected a JSON object with a query id and text", source=source, line=number_)
        qid = next((row[k] for k in ID_KEYS if row.get(k) is not None), None)
        if qid is None:
            raise InputError(f"no query id (expected one of {', '.join(ID_KEYS)})", source=source, line=number_)
        words = row.get("text", row.get("query", row.get("title")))
        if words is not None:
            out[str(qid)] = str(words)
    return out
