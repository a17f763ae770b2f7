"""The shape of the code: small modules, short functions, or a reason written down.

A function over `MAX_FUNCTION_LINES` lines of code (non-blank, non-comment lines after its
docstring) must say why in its docstring, on a line starting with `LONG_MARKER`; a module over
`MAX_MODULE_LINES` lines fails. The allow-lists name what is being split right now: they are
meant to be empty.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "rankgate"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 450
LONG_MARKER = "Long because"

# (module path under rankgate/, qualified name): functions being split in parallel work.
ALLOWED_LONG_FUNCTIONS: frozenset[tuple[str, str]] = frozenset()
# Module paths under rankgate/ allowed over MAX_MODULE_LINES.
ALLOWED_LONG_MODULES: frozenset[str] = frozenset()

Function = ast.FunctionDef | ast.AsyncFunctionDef


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def functions(tree: ast.Module) -> Iterator[tuple[str, Function]]:
    """Every function and method of ``tree`` (nested ones too), with its qualified name."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, Function]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def code_lines(function: Function, source_lines: list[str]) -> int:
    """Non-blank, non-comment lines of ``function``'s body after its docstring."""
    body = function.body
    if ast.get_docstring(function, clean=False) is not None and len(body) > 1:
        body = body[1:]
    elif ast.get_docstring(function, clean=False) is not None:
        return 0
    first, last = body[0].lineno, function.end_lineno or body[-1].lineno
    lines = (source_lines[i - 1].strip() for i in range(first, last + 1))
    return sum(1 for line in lines if line and not line.startswith("#"))


def says_why(function: Function) -> bool:
    docstring = ast.get_docstring(function) or ""
    return any(line.strip().startswith(LONG_MARKER) for line in docstring.splitlines())


def long_functions() -> list[str]:
    found = []
    for path in modules():
        relative = path.relative_to(PACKAGE).as_posix()
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for name, function in functions(ast.parse(source)):
            n = code_lines(function, lines)
            if n > MAX_FUNCTION_LINES and not says_why(function) and (relative, name) not in ALLOWED_LONG_FUNCTIONS:
                found.append(f"{relative}:{function.lineno} {name}: {n} lines of code")
    return found


def test_functions_are_short_or_say_why() -> None:
    found = long_functions()
    assert not found, (
        f"functions over {MAX_FUNCTION_LINES} lines of code: split them into named steps, or give the reason "
        f"in the docstring on a line starting {LONG_MARKER!r}:\n" + "\n".join(found)
    )


def test_modules_are_small() -> None:
    found = []
    for path in modules():
        relative = path.relative_to(PACKAGE).as_posix()
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES and relative not in ALLOWED_LONG_MODULES:
            found.append(f"{relative}: {n} lines")
    assert not found, f"modules over {MAX_MODULE_LINES} lines: split them along their jobs:\n" + "\n".join(found)


def test_the_allow_lists_name_what_exists() -> None:
    """An allowed function or module that is gone (split, renamed) must leave the list too."""
    present = set()
    for path in modules():
        relative = path.relative_to(PACKAGE).as_posix()
        present.add(relative)
        present.update((relative, name) for name, _ in functions(ast.parse(path.read_text(encoding="utf-8"))))
    stale = sorted(str(entry) for entry in (*ALLOWED_LONG_FUNCTIONS, *ALLOWED_LONG_MODULES) if entry not in present)
    assert not stale, "allow-list entries that name nothing: remove them:\n" + "\n".join(stale)


def test_code_lines_skip_the_docstring_blanks_and_comments() -> None:
    source = 'def f():\n    """Doc.\n\n    More."""\n    # a comment\n\n    x = 1\n    return x\n'
    (_, function), *_ = functions(ast.parse(source))
    assert code_lines(function, source.splitlines()) == 2
