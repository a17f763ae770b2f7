"""The measure registry as data: every listed alias reads as its own family, and every family is complete."""

from __future__ import annotations

import json

import pytest

import rankgate
from rankgate.measures.registry import all_specs
from tests.cli_support import invoke

LISTED = [(spec.name, alias) for spec in all_specs() for alias in spec.aliases]


@pytest.mark.parametrize(("family", "alias"), LISTED, ids=[alias for _, alias in LISTED])
def test_every_listed_alias_parses_to_its_family(family, alias):
    assert rankgate.parse_measure(alias).name == family


def test_the_cli_lists_the_registry_aliases(capsys):
    code, out, err = invoke(capsys, "measures", "--format", "json")
    assert code == 0, err
    listed = [(row["name"], alias) for row in json.loads(out) for alias in row["aliases"]]
    assert listed == LISTED
