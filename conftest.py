"""Optional extras in the test suite: what needs a missing extra is skipped, with the reason.

With only the core install (or any subset of extras), ``pytest`` passes and skips; nothing fails
to collect:

- a test (or a whole module, through ``pytestmark``) marked ``@pytest.mark.extra("gate", ...)``
  is skipped unless every named extra is installed (`rankgate.extras.installed`);
- a test module whose top-level imports need a missing extra (a package of the extra, a
  rankgate module that imports one, or a test module that does) is skipped as a whole;
- the doctests of a module under ``src/rankgate`` that cannot be imported for want of an extra
  are left out of collection, and the terminal summary names them; `DOCTEST_EXTRAS` names the
  modules whose doctests need an extra to run.

This file sits at the root so that its hooks also see ``src/rankgate`` (the doctests).
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import pytest

from rankgate import extras
from tests.extras_support import skip_reason

ROOT = Path(__file__).resolve().parent
SRC = ROOT / "src"
# Packages only the test extra brings (the reference implementations, the browser driver).
TEST_ONLY = ("sklearn", "pytrec_eval", "ir_measures", "selenium", "hypothesis")
# Modules whose doctests import fine but run an extra's code.
DOCTEST_EXTRAS: dict[str, tuple[str, ...]] = {"rankgate.bench": ("bench",), "rankgate.store.base": ("gate",)}
_LEFT_OUT: dict[str, list[str]] = {}  # extra -> modules whose doctests were left out


try:  # no time limit per example: a test that fails when the machine is busy proves nothing
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("rankgate", deadline=None)
    _hypothesis_settings.load_profile("rankgate")
except ImportError:  # the core install: hypothesis's tests are skipped
    pass


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SRC in item.path.parents and (needed := DOCTEST_EXTRAS.get(_module_name(item.path))):
            item.add_marker(pytest.mark.extra(*needed))


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("extra"):
        for extra in mark.args:
            if not extras.installed(extra):
                pytest.skip(skip_reason(extra))


def _missing_extra(error: ImportError) -> str | None:
    """The extra that brings the module ``error`` could not import, when that extra is missing."""
    if isinstance(error, extras.MissingExtraError):
        return error.extra
    return _extra_of((error.name or "").split(".")[0])


def _extra_of(package: str) -> str | None:
    """The first missing extra (in `rankgate.extras.EXTRA_MODULES` order) that brings ``package``."""
    bringing = (extra for extra, modules in extras.EXTRA_MODULES.items() if package in modules)
    return next((extra for extra in bringing if not extras.installed(extra)), None)


@functools.cache
def _extra_for_import(name: str) -> str | None:
    """The missing extra that ``import name`` at a test module's top level would fail for, if any."""
    top = name.split(".")[0]
    if top == "rankgate":
        try:
            importlib.import_module(name)
        except ImportError as e:
            return _missing_extra(e)
        return None
    if top == "tests":
        path = ROOT.joinpath(*name.split(".")).with_suffix(".py")
        return _extra_for_module(path) if path.is_file() else None
    if extras.available(top):
        return None
    return "test" if top in TEST_ONLY else _extra_of(top)


@functools.cache
def _extra_for_module(path: Path) -> str | None:
    """The missing extra that importing the test module ``path`` fails for (its top-level imports)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]  # submodules too
        else:
            continue
        for name in names:
            extra = _extra_for_import(name)
            if extra is not None:
                return extra
    return None


class _NeedsExtra(pytest.File):
    """A test module that cannot be imported without an extra: collected as one skip."""

    reason = ""

    def collect(self) -> list[pytest.Item]:
        pytest.skip(self.reason)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if ROOT / "tests" not in module_path.parents:
        return None
    extra = _extra_for_module(module_path)
    if extra is None:
        return None
    skipped = _NeedsExtra.from_parent(parent, path=module_path)
    skipped.reason = f"{module_path.relative_to(ROOT)} {skip_reason(extra)}"
    return skipped


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> list[pytest.Collector]:
    """Keep only the skip of a module that needs a missing extra (--doctest-modules would import it too)."""
    collected: list[pytest.Collector] = yield
    skipped = [c for c in collected if isinstance(c, _NeedsExtra)]
    return skipped or collected


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave out the doctests of a rankgate module that needs a missing extra at import time."""
    if collection_path.suffix != ".py" or collection_path.name == "__main__.py" or SRC not in collection_path.parents:
        return None  # pytest collects no doctests from __main__.py; importing it would run the CLI
    module = _module_name(collection_path)
    try:
        importlib.import_module(module)
    except ImportError as e:
        extra = _missing_extra(e)
        if extra is None:
            return None  # a real error: the doctest collection reports it
        _LEFT_OUT.setdefault(extra, []).append(module)
        return True
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for extra, modules in sorted(_LEFT_OUT.items()):
        terminalreporter.write_line(f"doctests left out ({skip_reason(extra)}): {', '.join(sorted(modules))}")
