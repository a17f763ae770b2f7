"""rankgate's optional compiled kernels (``_native.c``), loaded with ctypes when they were built.

The library is plain C with no Python API: ctypes releases the GIL while a kernel runs, so
slices of a column are worked on several threads. It is built when rankgate is installed and
a C compiler is there (hatch_build.py). Without it, or with ``RANKGATE_NATIVE=0``, every caller
takes its numpy/Arrow path: the same numbers, slower. Callers: the TREC scanner
(`rankgate.io.native_scan`) and the judged-row join (`rankgate.evaluation.join`).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any

VERSION = 3  # rg_scan_version() of the C source this package calls
LIBRARY = Path(__file__).with_name("_native.so")

_lib: Any = None
_P = ctypes.c_void_p
_I64 = ctypes.c_int64
# Each kernel's argument types; a library without one of them is taken as not built.
SIGNATURES: dict[str, list[Any]] = {
    # rg_scan(text, size, kind, max_rows, then eight output arrays)
    "rg_scan": [_P, _I64, ctypes.c_int, _I64, *[_P] * 8],
}


def library() -> Any:
    """The loaded kernels, or None (not built, built from another version, or ``RANKGATE_NATIVE=0``)."""
    global _lib
    if _lib is None:
        _lib = False
        if os.environ.get("RANKGATE_NATIVE", "1") != "0" and LIBRARY.exists():
            try:
                lib = ctypes.CDLL(str(LIBRARY))
                if lib.rg_scan_version() == VERSION:
                    for name, argtypes in SIGNATURES.items():
                        function = getattr(lib, name)
                        function.restype = ctypes.c_int
                        function.argtypes = argtypes
                    _lib = lib
            except (OSError, AttributeError):
                _lib = False
    return _lib or None
