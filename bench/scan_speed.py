"""Nanoseconds per line of the native TREC scanner (``rg_scan``) alone, one thread, builds side by side.

Each shape's first ``--mb`` MB of run (or qrels) text is scanned in one call from memory, by each
library given, taking turns (ABBA), ``--repeat`` times; the fastest time of each is printed per
line, and the builds must read the same rows (values, doc ids, query codes). No
file reading, thread pool, copies or page faults: the C loop only, to compare two versions of
``core/_native.c`` (a whole `rankgate eval` is timed by eval_shapes_check.py):

    git show HEAD~1:src/rankgate/core/_native.c > /tmp/old.c
    cc -O2 -fPIC -shared -std=c99 -ffp-contract=off -o /tmp/old.so /tmp/old.c
    python bench/scan_speed.py /tmp/old.so src/rankgate/core/_native.so --shapes base,beir,beir:qrels

A shape name with ``:qrels`` scans that shape's qrels. The shapes are bench/shapes.py's, written
into ``--workdir`` when missing.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time

import numpy as np
from shapes import SHAPES, ensure_shape

from rankgate.core import native
from rankgate.io import native_scan


def load(path: str) -> tuple[ctypes.CDLL, np.ndarray | None]:
    """The library, and the doc-id hash array its ``rg_scan`` takes after the values (``None``:
    no such argument, from version 14). Builds before 13 hash every doc id into it; 13 is
    passed NULL, as rankgate passed it; from 14 the scanner does not hash."""
    lib = ctypes.CDLL(os.path.abspath(path))
    lib.rg_scan_version.restype = ctypes.c_int
    version = lib.rg_scan_version()
    argtypes = list(native.SIGNATURES["rg_scan"])  # as rankgate declares it
    if version < 14:
        argtypes.insert(5, ctypes.c_void_p)
    lib.rg_scan.restype = ctypes.c_int
    lib.rg_scan.argtypes = argtypes
    return lib, None if version >= 14 else np.empty(0 if version == 13 else 1, dtype=np.uint64)


def scan(lib: ctypes.CDLL, hashes: np.ndarray | None, slot: native_scan._Slot, data: np.ndarray, size: int) -> None:
    """One call of ``rg_scan`` over ``size`` bytes into ``slot``'s arrays."""
    rows = len(slot.values)
    if hashes is not None and 0 < len(hashes) < rows:
        hashes.resize(rows, refcheck=False)
    values = [slot.values.ctypes.data]
    if hashes is not None:  # a build before 14: its hash array, or NULL (13)
        values.append(hashes.ctypes.data if len(hashes) else None)
    addresses = [
        *values,
        *(a.ctypes.data for a in (slot.doc_offsets, slot.doc_bytes, slot.query_codes, slot.query_offsets)),
    ]
    kind = native_scan._KIND[slot.kind]
    status = lib.rg_scan(
        data.ctypes.data, size, kind, rows, *addresses, *(slot.query_bytes.ctypes.data, slot.counts.ctypes.data)
    )
    if status != 0:
        raise SystemExit(f"rg_scan stopped with status {status}")


def digest(slot: native_scan._Slot) -> bytes:
    """What the last scan into ``slot`` read: its rows' values, doc-id bytes and query codes."""
    import hashlib

    n, doc_bytes = int(slot.counts[0]), int(slot.counts[2])
    parts = (slot.values[:n], slot.doc_offsets[: n + 1], slot.doc_bytes[:doc_bytes], slot.query_codes[:n])
    return hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes() for p in parts)).digest()


def text_of(path: str, size: int) -> bytes:
    """The file's first ``size`` bytes (decompressed), cut after the last whole line."""
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read(size)
    return data[: data.rfind(b"\n") + 1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("libraries", nargs="+", help="built _native.so files to compare")
    ap.add_argument("--shapes", default="base,long-ids,full-precision,small-space,beir,beir:qrels,base:qrels")
    ap.add_argument("--workdir", default="/tmp/rankgate-bench")
    ap.add_argument("--lines", type=int, default=6_980_000, help="the shapes' size (as eval_speed.py --matrix)")
    ap.add_argument("--mb", type=int, default=32, help="MB of each file scanned")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    libs = [(path, *load(path)) for path in args.libraries]
    names = [os.path.join(os.path.basename(os.path.dirname(os.path.abspath(p))), os.path.basename(p)) for p, *_ in libs]
    print("| shape | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(libs))
    for name in args.shapes.split(","):
        shape, _, kind = name.partition(":")
        kind = kind or "run"
        if shape not in SHAPES:
            raise SystemExit(f"unknown shape {shape!r}: one of {', '.join(SHAPES)}")
        meta = ensure_shape(args.workdir, shape, args.lines)
        data = text_of(meta[kind], args.mb << 20)
        lines = data.count(b"\n")
        buffer = np.frombuffer(data + b"\0" * 64, dtype=np.uint8)  # room past the end, as the reader leaves
        slot = native_scan._Slot(kind, len(data) + 1)
        if lines == 0:
            raise SystemExit(f"{name}: no whole line in the first {args.mb} MB")
        best = [float("inf")] * len(libs)
        read: dict[int, bytes] = {}
        for round_ in range(args.repeat):
            turns = list(enumerate(libs))
            for i, (_, lib, hashes) in turns if round_ % 2 == 0 else turns[::-1]:  # ABBA: neither always first
                start = time.perf_counter()
                scan(lib, hashes, slot, buffer, len(data))
                best[i] = min(best[i], time.perf_counter() - start)
                read[i] = digest(slot)
        if len(set(read.values())) != 1:
            raise SystemExit(f"{name}: the builds read different rows")
        print(f"| {name} | " + " | ".join(f"{t / lines * 1e9:.1f} ns" for t in best) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
