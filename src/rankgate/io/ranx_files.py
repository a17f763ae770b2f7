"""ranx's own LZ4 files (``Run.save(path, kind="lz4")``, ``Qrels.save(...)``), read by content.

ranx writes ``{qid: {docid: value}}`` as CBOR, LZ4-compressed twice (an LZ4 frame inside an
LZ4 frame). Reading one needs the ``ranx`` extra (``lz4`` and ``cbor2``); without it the
error names the format and says how to convert the file with ranx itself. An LZ4 file that
is not ranx's (a compressed TREC file, say) is refused with how to decompress it. ranx's JSON,
TREC and Parquet files are read as any other (Parquet's ``q_id``/``doc_id`` columns included).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rankgate.errors import InputError
from rankgate.extras import require
from rankgate.io.source import local_path

LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
PURPOSE = "Reading ranx's LZ4 files (Run.save(path, kind='lz4'))"
CONVERT = "or convert it with ranx: ranx.Run.from_file(PATH, kind='lz4').save('run.trec')"


def is_lz4(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts with an LZ4 frame (ranx's ``kind='lz4'`` files do)."""
    try:
        with Path(local_path(path)).open("rb") as f:
            return f.read(4) == LZ4_FRAME_MAGIC
    except OSError:
        return False  # the reader that follows names the problem


def read_lz4_mapping(path: str | os.PathLike[str], what: str) -> dict[str, Any]:
    """The ``{qid: {docid: value}}`` mapping of ranx's LZ4 file ``path`` (``what``: "run" or "qrels")."""
    source = str(path)
    try:
        frame = require("lz4.frame", "ranx", purpose=PURPOSE)
        cbor2 = require("cbor2", "ranx", purpose=PURPOSE)
    except ImportError as e:
        raise InputError(f"this is ranx's LZ4 {what} format. {e}; {CONVERT}", source=source) from None
    try:
        inner = frame.decompress(Path(local_path(path)).read_bytes())
    except RuntimeError as e:
        raise InputError(f"cannot decompress LZ4 file ({e})", source=source) from None
    if not inner.startswith(LZ4_FRAME_MAGIC):
        raise InputError(
            "an LZ4-compressed file that is not ranx's (an LZ4 frame of CBOR): decompress it first "
            "(lz4 -d FILE), or recompress it with gzip, bz2, xz or zstd, which rankgate reads as they are",
            source=source,
        )
    try:
        content = cbor2.loads(frame.decompress(inner))
    except (RuntimeError, ValueError, cbor2.CBORError) as e:
        raise InputError(f"ranx LZ4 file holds no readable CBOR ({e})", source=source) from None
    if not isinstance(content, dict) or not all(isinstance(v, dict) for v in content.values()):
        raise InputError(f"ranx LZ4 file does not hold a {what} {{query_id: {{doc_id: value}}}}", source=source)
    return content
