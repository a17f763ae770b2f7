"""The measure registry as data: every listed alias reads as its own family, and every family is complete."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from dataclasses import replace

import pytest

import rankgate
from rankgate.measures import kernels, parse_measures, reference
from rankgate.measures.registry import Alias, LazyFunction, Measure, all_specs, get_spec, reading, register
from tests.cli_support import invoke

LISTED = [(spec.name, alias) for spec in all_specs() for alias in spec.listed_aliases]


@pytest.mark.parametrize(("family", "alias"), LISTED, ids=[alias for _, alias in LISTED])
def test_every_listed_alias_parses_to_its_family(family, alias):
    assert {m.name for m in parse_measures([alias])} == {family}  # trec_eval's "P" is several P@k


def test_the_cli_lists_the_registry_aliases(capsys):
    code, out, err = invoke(capsys, "measures", "--format", "json")
    assert code == 0, err
    listed = [(row["name"], alias) for row in json.loads(out) for alias in row["aliases"]]
    assert listed == LISTED


def test_every_family_carries_its_kernel_and_its_reference():
    for spec in all_specs():
        for function, module in ((spec.kernel, kernels), (spec.reference, reference)):
            assert isinstance(function, LazyFunction), spec.name
            home = module if function.module == module.__name__ else importlib.import_module(function.module)
            assert function.module.startswith("rankgate.measures."), spec.name  # trec_more's live beside them
            assert getattr(home, function.name) is function.function, spec.name


def test_reading_the_registry_imports_no_numpy():
    code = "import sys, rankgate; rankgate.parse_measure('ndcg_cut.10'); print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_word_reads_as_one_family_only():
    taken = replace(get_spec("P"), name="P2", aliases=(Alias("map", "plain"),))
    with pytest.raises(ValueError, match="'map' of P2 already reads as AP"):
        register(taken)
    assert "P2" not in {s.name for s in all_specs()}
    assert rankgate.parse_measure("map").name == "AP"


def test_every_word_of_a_family_reads_as_that_family():
    for spec in all_specs():
        for word in spec.words:
            found = reading(word)
            assert found is not None and found.family == spec.name, word


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.name)
def test_every_family_round_trips_with_parameters_and_cutoff(spec):
    """Each family, each parameter off its default, with a cutoff where one is allowed."""
    params = {p.name: _other_value(p) for p in spec.params}
    cutoffs = {"none": [None], "required": [7], "optional": [None, 7]}[spec.cutoff]
    for cutoff in cutoffs:
        for given in ({}, params):
            m = Measure.make(spec.name, cutoff, **given)
            assert rankgate.parse_measure(str(m)) == m
            assert dict(m.params) == given


def _other_value(p):
    """A valid value of parameter ``p`` other than its default."""
    candidates = p.choices or {int: (3, 2), str: ("0.25,0.5",)}.get(p.kind, (0.25, 0.5, 3.0))
    return next(v for v in candidates if v != p.default and (p.check is None or p.check(v)))
