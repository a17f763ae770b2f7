"""`fuse`: one run from several, by any of ranx's fusion methods and normalisations."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import column_to_numpy, take_rows
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.core.run_scan import tie_group_moves
from rankgate.errors import ConfigError, InputError
from rankgate.fusion.align import Aligned, align
from rankgate.fusion.methods import Context, Method, kernel, resolve
from rankgate.fusion.norms import NORM_ALIASES, NORMS, normalise


def resolve_norm(norm: str | None) -> str:
    key = "none" if norm is None else NORM_ALIASES.get(norm.lower(), norm.lower())
    if key not in NORMS:
        raise ConfigError(f"unknown normalisation {norm!r}; choose one of {', '.join(NORMS)}", key_path="norm")
    return key


def check_params(method: Method, params: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(params) - set(method.params)
    if unknown:
        allowed = ", ".join(method.params) or "none"
        raise ConfigError(
            f"{method.name} takes no parameter {sorted(unknown)[0]!r} (it takes: {allowed})", key_path="params"
        )
    merged = {**method.params, **params}
    missing = [k for k, v in merged.items() if v is None]
    if missing:
        raise ConfigError(
            f"{method.name} needs {missing[0]} (pass params={{{missing[0]!r}: ...}}, CLI "
            f"--params {missing[0]}=..., or optimise it)",
            key_path=f"params.{missing[0]}",
        )
    for key, value in merged.items():
        _check_param(method, key, value)
    return merged


# Each parameter's domain: outside it a method divides by zero, takes the log of a negative
# number or ranks by nonsense (RRF with k = -60 turns 1/(k + r) negative), so it is refused.
_DOMAINS: dict[str, tuple[str, Callable[[float], bool], bool]] = {
    "k": ("a number >= 0", lambda x: x >= 0, False),
    "gamma": ("a finite number", lambda x: True, False),
    "sigma": ("a number > 0", lambda x: x > 0, False),
    "phi": ("a number > 0 and <= 1", lambda x: 0 < x <= 1, False),
    "n_segments": ("a whole number >= 1", lambda x: x >= 1, True),
    "w": ("a whole number >= 0", lambda x: x >= 0, True),
}


def _check_param(method: Method, key: str, value: Any) -> None:
    if key not in _DOMAINS:
        return
    what, ok, whole = _DOMAINS[key]
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not math.isfinite(number) or not ok(number) or (whole and number != int(number)):
        raise ConfigError(f"{method.name}'s {key} must be {what}; got {value!r}", key_path=f"params.{key}")


def fuse(
    runs: Sequence[Run],
    *,
    method: str = "rrf",
    norm: str | None = "min-max",
    weights: Sequence[float] | None = None,
    params: Mapping[str, Any] | None = None,
    train_qrels: Qrels | None = None,
    train_runs: Sequence[Run] | None = None,
    trained: Sequence[Any] | None = None,
    name: str | None = None,
) -> Run:
    """Fuse ``runs`` into one run (see docs/fusion.md for every method).

    Args:
        runs: two or more runs; a query some runs lack is fused from the others.
        method: ``rrf``, ``sum``, ``mnz``, ``wsum``, ... (`rankgate.fusion.METHODS`; ranx's names).
        norm: score normalisation applied to each run first (ranx's default ``min-max``);
            methods that read ranks only ignore it.
        weights: one per run for the weighted methods (default: all 1).
        params: the method's parameters, e.g. ``{"k": 60}`` for RRF.
        train_qrels: judgments the trained methods learn from.
        train_runs: the runs they learn on, one per run (default: ``runs`` themselves).
        trained: the learnt tables instead of learning them (as `rankgate.fusion.train` returns).
        name: the fused run's name.

    Fused ties are ordered like any run's: document id descending (trec_eval's rule).

    >>> a = Run.from_dict({"q": {"d1": 3.0, "d2": 2.0}})
    >>> b = Run.from_dict({"q": {"d2": 9.0, "d3": 1.0}})
    >>> fuse([a, b], method="rrf").to_dict()["q"]["d2"] == 1 / 62 + 1 / 61
    True
    """
    spec = resolve(method)
    norm_key = resolve_norm(norm)
    if norm_key == "borda" and spec.uses != "scores":
        raise ConfigError(
            f"{spec.name} reads ranks; norm 'borda' is for score methods (use norm='none')", key_path="norm"
        )
    merged = check_params(spec, params or {})
    aligned = align(runs)
    w = [1.0] * len(runs) if weights is None else [float(x) for x in weights]
    if len(w) != len(runs):
        raise ConfigError(f"{len(w)} weights for {len(runs)} runs", key_path="weights")
    tables = list(trained) if trained is not None else learn(spec, merged, runs, train_qrels, train_runs)
    scored = normalised(aligned, spec, norm_key)
    scores = kernel(spec.name)(Context(aligned, scored, merged, w, tables))
    return to_run(aligned, scores, name=name or spec.name)


def normalised(aligned: Aligned, spec: Method, norm: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each run's (slots, normalised scores); empty for the methods that read ranks only."""
    return [normalise(m, norm, aligned) for m in aligned.members] if spec.uses != "ranks" else []


def learn(
    spec: Method, params: dict[str, Any], runs: Sequence[Run], qrels: Qrels | None, train_runs: Sequence[Run] | None
) -> list[Any]:
    if not spec.trained:
        return []
    if qrels is None:
        raise ConfigError(
            f"{spec.name} learns from judgments: pass train_qrels (CLI --train-qrels)", key_path="train_qrels"
        )
    from rankgate.fusion.train import train

    learn_on = list(train_runs) if train_runs is not None else list(runs)
    if len(learn_on) != len(runs):
        raise ConfigError(f"{len(learn_on)} training runs for {len(runs)} runs", key_path="train_runs")
    return train(spec.name, qrels, learn_on, params)


def to_run(aligned: Aligned, scores: np.ndarray, *, name: str) -> Run:
    """The fused slots as a `Run`, rows in evaluation order: score descending, ties by doc id descending.

    The rows are put in order on slot numbers and the doc ids copied once, in that order; the
    run is built by `Run.from_checked` (the slots are unique, non-empty ids of checked runs).
    """
    finite = np.isfinite(scores)
    if not finite.all():  # as `Run` would say
        row = int(np.flatnonzero(~finite)[0])
        raise InputError(
            f"<fused {name}> slot {row + 1}: score is not a finite number ({scores[row].item()!r}); "
            "NaN and infinite scores have no rank order"
        )
    table = pa.table({"q": aligned.slot_query, "s": scores})
    order = column_to_numpy(pc.sort_indices(table, sort_keys=[("q", "ascending"), ("s", "descending")]))
    query, score = aligned.slot_query[order], scores[order]
    # trec_eval's tie rule, as `Run` applies it (one implementation): the doc ids of tied rows only
    rows, within = tie_group_moves(query, score, lambda r: take_rows(aligned.doc_names, aligned.slot_doc[order[r]]))
    if len(rows):
        order[rows] = order[rows[within]]  # inside a tie group: the query and the score stay
    doc_rows = aligned.slot_doc[order]
    high = aligned.slot_hash_high[order] if aligned.slot_hash_high is not None else None
    return Run.from_checked(
        aligned.query_ids,
        query,
        take_rows(aligned.doc_names, doc_rows),
        score,
        doc_hash_high=high,
        name=name,
        source=f"<fused {name}>",
        ranked=True,
    )
