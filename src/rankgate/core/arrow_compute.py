"""`pyarrow.compute` as rankgate uses it, without importing it for the kernels every evaluation calls.

Importing `pyarrow.compute` builds a Python wrapper, with its docstring, for each of Arrow's ~300
compute functions: 45-50 ms, the largest import of a `rankgate eval` and a tenth of a small
file's whole run. The functions themselves live in `pyarrow._compute`, which loads in under 10 ms.
The kernels below call them the way `pyarrow.compute`'s wrappers do (the same function, the same
options, so the same results); any other name is looked up in `pyarrow.compute`, imported on first
use. Modules use it as ``from rankgate.core import arrow_compute as pc``.

An Arrow method that computes (``ChunkedArray.take``, ``.filter``, ``.unique``...) imports
`pyarrow.compute` itself: the evaluation path calls the kernel here instead
(``tests/test_arrow_compute.py`` checks that a plain `rankgate eval` never imports it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    from pyarrow import _compute
except ImportError:  # a pyarrow whose layout differs: the public module has the same two names
    import pyarrow.compute as _compute


def _kernel(name: str) -> Callable[..., Any]:
    """Arrow's compute function ``name``: its arrays first, then its options' arguments, as
    `pyarrow.compute`'s wrapper takes them."""
    function = _compute.get_function(name)
    arity = function.arity
    options_name = function._doc.options_class
    options_class = getattr(_compute, options_name) if options_name else None

    def call(*args: Any, **kwargs: Any) -> Any:
        arrays, option_args = args[:arity], args[arity:]
        if len(arrays) != arity:
            raise TypeError(f"{name} takes {arity} array argument(s), {len(arrays)} given")
        options = options_class(*option_args, **kwargs) if options_class and (option_args or kwargs) else None
        return function.call(list(arrays), options)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Arrow's ``{name}`` (`pyarrow.compute.{name}`)."
    return call


take = _kernel("take")
sort_indices = _kernel("sort_indices")
equal = _kernel("equal")
less = _kernel("less")
all = _kernel("all")
dictionary_encode = _kernel("dictionary_encode")
index_in = _kernel("index_in")
extract_regex = _kernel("extract_regex")
filter = _kernel("filter")


def cast(values: Any, target_type: Any, safe: bool | None = None) -> Any:
    """Arrow's ``cast`` (`pyarrow.compute.cast`, ``Array.cast``): checked unless ``safe`` is False."""
    import pyarrow as pa

    target = pa.types.lib.ensure_type(target_type)
    options = _compute.CastOptions.unsafe(target) if safe is False else _compute.CastOptions.safe(target)
    return _compute.call_function("cast", [values], options)


def __getattr__(name: str) -> Any:
    import pyarrow.compute

    return getattr(pyarrow.compute, name)
