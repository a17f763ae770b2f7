"""Fuzz the gate config (issue 23, "must show"): random configs, and mutated YAML texts.

Whatever the input (bounded in size), reading the config

* ends in a `GateConfig` or a `ConfigError`, never another exception (a traceback, exit 1);
* ends quickly (aliases and nesting are bounded, so no input runs long);
* never accepts a config holding a non-finite or mistyped number where a number is due, and
  never yields a gate whose numbers are not finite floats (a gate that cannot fail).

A sample goes through the CLI: exit 2 with one line for a bad config, never 0 when a number
is non-finite or mistyped, and never a traceback.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankgate.data import demo_qrels_path, demo_run_path
from rankgate.errors import ConfigError
from rankgate.gate.config import GateConfig, load_config
from tests.cli_support import invoke

pytestmark = pytest.mark.extra("gate")

QRELS, DENSE = str(demo_qrels_path()), str(demo_run_path("dense"))
SECONDS = 10.0  # one config, however hostile, is read in milliseconds; this leaves room for a loaded machine

# Where numbers are due, and whether an integer (not 2.0, not true) is.
FLOAT, INT = "float", "int"
TOP_NUMBERS = {"seed": INT, "n_resamples": INT}
DEFAULT_NUMBERS = {"min_queries": INT, "confidence": FLOAT}
SETTING_NUMBERS = {"rel": INT}
GATE_NUMBERS = {"threshold": FLOAT, "regression_max": FLOAT, "min_queries": INT}

odd_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["nan", ".nan", "inf", "0.5", "no", "yes", "1e3", "", "mean", "fail", "warning", "٣"]),
    st.text(max_size=12),
)
odd_values = st.recursive(
    odd_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


NAMES = ["mrr", "retrieval_recall_at_5", "ndcg_at_10", "p_at_5"]
valid_gates = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(NAMES), "threshold": st.floats(0.0, 1.0)},
        optional={
            "regression_max": st.floats(0.0, 0.5),
            "min_queries": st.integers(1, 5),
            "severity": st.sampled_from(["error", "warning"]),
            "mode": st.sampled_from(["mean", "noninferiority"]),
            "on_no_queries": st.sampled_from(["fail", "warn", "pass"]),
        },
    ),
    min_size=1,
    max_size=3,
    unique_by=lambda g: g["name"],
)
valid_configs = st.fixed_dictionaries(
    {"gates": valid_gates},
    optional={
        "seed": st.integers(0, 1_000),
        "n_resamples": st.integers(100, 300),
        "defaults": st.fixed_dictionaries(
            {}, optional={"confidence": st.floats(0.6, 0.99), "min_queries": st.integers(1, 3)}
        ),
        "settings": st.fixed_dictionaries({}, optional={"rel": st.integers(1, 2), "judged_only": st.booleans()}),
    },
)
# Where a perturbation may land: (section, key); "gate" is one of the gates.
SPOTS = [("top", k) for k in TOP_NUMBERS] + [("top", "version"), ("top", "gates")]
SPOTS += [("defaults", k) for k in DEFAULT_NUMBERS] + [("defaults", "severity"), ("settings", "judged_only")]
SPOTS += [("settings", k) for k in SETTING_NUMBERS] + [("gate", k) for k in GATE_NUMBERS]
SPOTS += [("gate", k) for k in ("name", "metric", "mode", "severity", "on_no_queries", "tags", "treshold")]


@st.composite
def configs(draw: st.DrawFn) -> dict:
    """A valid config with up to three values replaced by odd ones (non-finite, mistyped, nested)."""
    config = draw(valid_configs)
    for _ in range(draw(st.integers(0, 3))):
        section, key = draw(st.sampled_from(SPOTS))
        value = draw(odd_values)
        if section == "top":
            config[key] = value
        elif section == "gate":
            gates = config["gates"]
            dicts = [g for g in gates if isinstance(g, dict)] if isinstance(gates, list) else []
            if dicts:  # an earlier perturbation may have replaced a gate by a non-mapping
                draw(st.sampled_from(dicts))[key] = value
        else:
            config.setdefault(section, {})[key] = value
    return config


def _bad_number(value: Any, kind: str) -> bool:
    """A value no gate should accept as a number of this kind (null is "not set", a default applies)."""
    if value is None:
        return False
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    if kind == INT:
        return not isinstance(value, int)
    return not math.isfinite(value)


def holds_a_bad_number(config: Any) -> bool:
    """Whether a number is due somewhere in ``config`` and the value there is not one."""
    if not isinstance(config, dict):
        return False
    sections: list[tuple[Any, dict[str, str]]] = [
        (config, TOP_NUMBERS),
        (config.get("defaults"), DEFAULT_NUMBERS),
        (config.get("settings"), SETTING_NUMBERS),
    ]
    gates = config.get("gates")
    sections += [(g, GATE_NUMBERS) for g in gates] if isinstance(gates, list) else []
    return any(
        isinstance(section, dict) and key in section and _bad_number(section[key], kind)
        for section, numbers in sections
        for key, kind in numbers.items()
    )


def assert_every_number_is_sound(cfg: GateConfig) -> None:
    """A loaded config holds only finite, typed numbers: no gate that cannot fail."""
    for gate in cfg.gates:
        for value in (gate.threshold, gate.regression_max):
            assert value is None or (type(value) is float and math.isfinite(value)), gate
        # every gate here is on a 0-1 measure: a floor outside it, or a limit of the whole range, is a slip
        assert gate.threshold is None or 0 <= gate.threshold <= 1, gate
        assert gate.regression_max is None or 0 <= gate.regression_max < 1, gate
        assert type(gate.min_queries) is int and gate.min_queries >= 1
        assert type(gate.confidence) is float and 0.5 < gate.confidence < 1
    assert type(cfg.seed) is int and type(cfg.n_resamples) is int and type(cfg.settings.rel) is int


def read(source: Any) -> GateConfig | None:
    """``load_config(source)``: the config, or None for a `ConfigError`; any other exception fails."""
    start = time.monotonic()
    try:
        return load_config(source)
    except ConfigError as e:
        assert len(str(e)) < 2_000, str(e)[:300]  # a message never echoes a huge value
        return None
    finally:
        assert time.monotonic() - start < SECONDS


def _dump(config: dict) -> str:
    import yaml

    return yaml.safe_dump(config, allow_unicode=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=configs(), as_text=st.booleans())
def test_random_configs_load_or_fail_cleanly(tmp_path, config, as_text):
    if as_text:
        path = tmp_path / "gates.yaml"
        path.write_text(_dump(config), encoding="utf-8")
        cfg = read(path)
    else:
        cfg = read(config)
    if holds_a_bad_number(config):
        assert cfg is None, f"accepted a non-finite or mistyped number: {config!r}"
    if cfg is not None:
        assert_every_number_is_sound(cfg)


BASES = [
    "gates:\n  - name: retrieval_recall_at_5\n    threshold: 0.85\n    regression_max: 0.03\n"
    "    severity: error\n  - name: retrieval_mrr\n    threshold: 0.62\n",
    "defaults: &d\n  severity: warning\n  min_queries: 2\nsettings:\n  rel: 1\n  judged_only: false\n"
    "seed: 3\nn_resamples: 200\ngates:\n  - name: ndcg_at_10\n    threshold: 0.5\n    tags: {topic: billing}\n",
]
SNIPPETS = [
    ".nan",
    ".inf",
    "-.inf",
    "'nan'",
    "no",
    "yes",
    "1e999",
    "0x1F",
    "&a ",
    "*a",
    "<<: *a\n",
    "&a [*a, *a]",
    "\n  - ",
    ": ",
    "{",
    "}",
    "[",
    "]",
    "'",
    '"',
    "\t",
    "\n",
    "? ",
    "---\n",
    "|\n",
    "!!binary ",
    "!!float ",
    "!!python/object/apply:os.system ['true']",
    "threshold: 0.1\n",
    "gates:\n",
    "9" * 40,
    "١٢",
]
mutations = st.lists(
    st.tuples(
        st.floats(0.0, 1.0),
        st.sampled_from(["insert", "replace", "delete"]),
        st.sampled_from(SNIPPETS) | st.text(max_size=4),
    ),
    min_size=1,
    max_size=6,
)


def mutate(text: str, edits: list[tuple[float, str, str]]) -> str:
    for where, op, snippet in edits:
        at = int(where * len(text))
        if op == "insert":
            text = text[:at] + snippet + text[at:]
        elif op == "replace":
            text = text[:at] + snippet + text[at + max(1, len(snippet)) :]
        else:
            text = text[:at] + text[at + max(1, len(snippet)) :]
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from(BASES), edits=mutations)
def test_mutated_yaml_loads_or_fails_cleanly(tmp_path, base, edits):
    path = tmp_path / "gates.yaml"
    path.write_text(mutate(base, edits), encoding="utf-8")
    cfg = read(path)
    if cfg is not None:
        assert_every_number_is_sound(cfg)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=configs())
def test_the_cli_never_passes_a_config_with_a_bad_number(tmp_path, capsys, config):
    path = tmp_path / "gates.yaml"
    path.write_text(_dump(config), encoding="utf-8")
    code, out, err = invoke(capsys, "gate", "--qrels", QRELS, "--run", DENSE, "--config", str(path))
    assert "Traceback" not in err and code in (0, 1, 2), err[-500:]
    if code == 2:
        assert err.startswith("rankgate: error: ") and err.count("\n") == 1 and out == ""
    if holds_a_bad_number(config):
        assert code == 2, f"{config!r} -> {code}: {out[:300]}"
