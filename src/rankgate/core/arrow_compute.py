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
except ImportError:  # a pyarrow whose layout differs: the public module has every name used here
    import pyarrow.compute as _compute


def _kernel(name: str) -> Callable[..., Any]:
    """Arrow's compute function ``name``, called as `pyarrow.compute`'s wrapper calls it: its
    arrays first, then its options' arguments (or ``options=``, an options object or a dict);
    an Expression argument builds an expression there."""
    function = _compute.get_function(name)
    arity = function.arity
    options_name = function._doc.options_class
    options_class: Any = getattr(_compute, options_name) if options_name else None

    def call(*args: Any, options: Any = None, memory_pool: Any = None, **kwargs: Any) -> Any:
        if len(args) < arity or (options_class is None and (len(args) > arity or kwargs or options is not None)):
            raise TypeError(f"{name} takes {arity} array argument(s) and no other arguments here")
        if any(isinstance(a, _compute.Expression) for a in args):
            import pyarrow.compute

            given = {k: v for k, v in (("options", options), ("memory_pool", memory_pool)) if v is not None}
            return getattr(pyarrow.compute, name)(*args, **given, **kwargs)
        arrays, option_args = args[:arity], args[arity:]
        if option_args or kwargs:
            if options is not None:
                raise TypeError(f"{name} called with both options and the options' arguments")
            options = options_class(*option_args, **kwargs)
        elif isinstance(options, dict):
            options = options_class(**options)
        return function.call(list(arrays), options, memory_pool)

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


def cast(
    values: Any, target_type: Any = None, safe: bool | None = None, options: Any = None, memory_pool: Any = None
) -> Any:
    """Arrow's ``cast`` (`pyarrow.compute.cast`, ``Array.cast``): checked unless ``safe`` is False."""
    if options is None:
        import pyarrow as pa

        target = pa.types.lib.ensure_type(target_type)
        options = _compute.CastOptions.unsafe(target) if safe is False else _compute.CastOptions.safe(target)
    elif safe is not None or target_type is not None:
        raise ValueError("Must either pass values for 'target_type' and 'safe' or pass a value for 'options'")
    return _compute.call_function("cast", [values], options, memory_pool)


def __getattr__(name: str) -> Any:
    import pyarrow.compute

    return getattr(pyarrow.compute, name)
