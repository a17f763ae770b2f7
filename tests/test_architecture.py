"""The layer map of docs/architecture.md, enforced: a package imports only from its own layer or below.

Every import counts, at module level or inside a function (a lazy import is still a dependency);
imports under ``if TYPE_CHECKING:`` do not (they exist for annotations only).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "rankgate"

# Low to high, as in docs/architecture.md. Names are the first component under `rankgate`
# ("<root>" is rankgate/__init__.py, the public facade).
LAYERS: list[tuple[str, ...]] = [
    ("errors", "_version", "extras", "cpus"),
    ("core",),
    ("io", "data"),
    ("measures",),
    ("stats",),
    ("evaluation",),
    ("comparison", "compat", "rag", "fusion"),
    ("store",),
    ("bench", "retrieve"),
    ("label", "online"),
    ("gate",),
    ("render",),
    ("report", "dashboard"),
    ("cli", "pytest_plugin", "__main__", "<root>"),
]
LEVEL = {name: i for i, names in enumerate(LAYERS) for name in names}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported rankgate module) for every runtime import in ``path``."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return _imports_in(path.read_text(encoding="utf-8"), package)


def _imports_in(source: str, package: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "rankgate")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] == "rankgate":
                if target == "rankgate":  # `from rankgate import x`: x may be a subpackage
                    found.extend((node.lineno, f"rankgate.{a.name}") for a in node.names)
                else:
                    found.append((node.lineno, target))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def test_every_package_has_a_layer() -> None:
    units = {_unit(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert units - set(LEVEL) == set(), "add the new package to LAYERS here and to docs/architecture.md"


def test_layers_import_downward_only() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit(_module_name(path))
        for line, target in _imports(path):
            other = _unit(target)
            if other in LEVEL and LEVEL[other] > LEVEL[unit]:
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {unit} imports {target}")
    assert upward == []


def test_layers_match_the_architecture_page() -> None:
    page = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    for names in LAYERS:
        for name in names:
            if name not in ("<root>", "__main__", "_version"):
                assert f"`{name}" in page, f"docs/architecture.md does not place {name!r}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from .run import Run\n", ["rankgate.core.run"]),
        ("from rankgate.core.run import Run\n", ["rankgate.core.run"]),
        ("def f():\n    from rankgate.io import read_run\n", ["rankgate.io"]),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rankgate.cli import main\n", []),
        ("import numpy\nfrom rankgate import evaluation\n", ["rankgate.evaluation"]),
    ],
)
def test_the_import_walker_sees_lazy_imports_and_skips_annotations(source: str, expected: list[str]) -> None:
    assert [target for _, target in _imports_in(source, "rankgate.core")] == expected
