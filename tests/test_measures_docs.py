"""docs/measures.md is generated from the registry and must not go stale."""

from __future__ import annotations

from pathlib import Path

from rankgate.measures.docs import COMMAND, markdown
from rankgate.measures.registry import all_specs
from tests.cli_support import invoke

PAGE = Path(__file__).resolve().parents[1] / "docs" / "measures.md"


def test_the_committed_page_is_up_to_date():
    assert PAGE.read_text(encoding="utf-8") == markdown(), f"docs/measures.md is stale: run `{COMMAND}`"


def test_the_cli_prints_the_page(capsys):
    code, out, err = invoke(capsys, "measures", "--format", "docs")
    assert code == 0, err
    assert out == markdown()


def test_the_page_covers_every_family_and_alias():
    page = markdown()
    for spec in all_specs():
        assert f"\n### {spec.name}\n" in page, spec.name
        assert spec.definition in page, spec.name
        for alias in spec.aliases:
            for name in alias.listed or (alias.word,):
                assert f"| `{name}` |" in page, name


def test_the_page_stands_on_its_own():
    page = markdown()
    for private in ("DESIGN.md", "STYLE.md", "../shared"):
        assert private not in page
