"""One safe YAML reader for every configuration file (gate configs, report targets).

PyYAML's ``safe_load`` never runs code, but it still accepts three things a config must not:

* duplicate keys, of which it silently keeps the last (a second ``gates:`` block drops every gate
  above it): refused here, naming the key and its line;
* aliases that expand without bound (``&a [*a, *a, ...]`` nested ten deep is a few hundred bytes
  and billions of values once walked): the expanded size of the document is counted on the node
  graph before anything is built, and a document past `MAX_NODES` is refused;
* inputs that break the parser itself (nesting deep enough to exhaust the stack, integers too
  long to convert): reported as a `ConfigError`, never a traceback.

`brief` shortens any value echoed in a message, so that no message repeats a huge input.
"""

from __future__ import annotations

import reprlib
from typing import Any

from rankgate.errors import ConfigError
from rankgate.extras import require

# A config of a few hundred gates is a few thousand nodes; this leaves room and refuses bombs.
MAX_NODES = 100_000
# Longest value echoed in an error message.
ECHO_CHARS = 80

_REPR = reprlib.Repr()
_REPR.maxstring = ECHO_CHARS
_REPR.maxother = ECHO_CHARS
_REPR.maxlevel = 3


def brief(value: Any, limit: int = ECHO_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters (containers and strings are cut while walking).

    >>> brief("x" * 500)[:6], len(brief("x" * 500)) <= 80
    ("'xxxxx", True)
    >>> brief([[1, 2]] * 1000)
    '[[1, 2], [1, 2], [1, 2], [1, 2], [1, 2], [1, 2], ...]'
    """
    return cut(_REPR.repr(value), limit)


def cut(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters, ending in ``...`` when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_yaml(text: str, source: str | None) -> Any:
    """Parse one YAML document safely (see the module docstring).

    Args:
        text: the document.
        source: the file name, for messages (``gates.yaml:3``).

    Raises:
        ConfigError: invalid YAML, a duplicate key, an alias bomb or a document that breaks the parser.

    >>> load_yaml("a: 1\\nb: [x, y]", "f.yaml")
    {'a': 1, 'b': ['x', 'y']}
    >>> load_yaml("a: 1\\na: 2", "f.yaml")
    Traceback (most recent call last):
    ...
    rankgate.errors.ConfigError: f.yaml:2: duplicate key 'a' (first at line 1); a later value would silently replace it
    """
    yaml = require("yaml", "gate", purpose="reading YAML configs")
    loader = None
    try:
        loader = _loader_class(yaml)(text)  # reads the stream: a control character is refused here
        loader.rankgate_source = source
        node = loader.get_single_node()
        if node is None:
            return None
        _check_size(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = cut(str(getattr(e, "problem", None) or e), 200)
        raise YAMLSyntaxError(problem, line=mark.line + 1 if mark is not None else None, source=source) from None
    except ConfigError:
        raise
    except RecursionError:
        raise ConfigError("not valid YAML: nested too deeply", source=source) from None
    except ValueError as e:  # e.g. an integer with more digits than Python converts
        raise ConfigError(f"not valid YAML: {cut(str(e), 200)}", source=source) from None
    except (IndexError, TypeError, AttributeError) as e:  # PyYAML's constructors on odd tags: `!!float ''`
        raise ConfigError(f"not valid YAML: a value its tag cannot build ({type(e).__name__})", source=source) from None
    finally:
        if loader is not None:
            loader.dispose()


class YAMLSyntaxError(ConfigError):
    """The text is not valid YAML; ``line`` (1-based, when known) and ``problem`` let a caller word it."""

    def __init__(self, problem: str, *, line: int | None, source: str | None) -> None:
        self.problem, self.line = problem, line
        where = f"{source}:{line}" if source and line is not None else source
        super().__init__(f"not valid YAML: {problem}", source=where)


def _check_size(root: Any, source: str | None) -> None:
    """Refuse a document whose aliases expand past `MAX_NODES` nodes (or refer to themselves)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise ConfigError("an alias refers to a value that contains it", source=_at(source, node))
        open_nodes.add(key)
        total = 1
        if isinstance(node.value, list):
            for child in node.value:
                for part in child if isinstance(child, tuple) else (child,):
                    total += size(part)
                    if total > MAX_NODES:
                        raise ConfigError(
                            f"the document expands to more than {MAX_NODES:,} values (YAML aliases); "
                            "write the values out or use fewer aliases",
                            source=_at(source, node),
                        )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    size(root)


def _at(source: str | None, node: Any) -> str | None:
    mark = getattr(node, "start_mark", None)
    return f"{source}:{mark.line + 1}" if source and mark is not None else source


_LOADERS: dict[int, type] = {}


def _loader_class(yaml: Any) -> type:
    """A `yaml.SafeLoader` that refuses duplicate keys (built once per PyYAML module)."""
    if id(yaml) in _LOADERS:
        return _LOADERS[id(yaml)]

    class _StrictLoader(yaml.SafeLoader):
        rankgate_source: str | None = None

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                first: dict[Any, int] = {}
                for key_node, _ in node.value:  # the keys as written: a key may override one merged in (<<: *a)
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=True)
                    try:
                        seen = first.get(key)
                    except TypeError:  # an unhashable key: the base class reports it
                        continue
                    line = key_node.start_mark.line + 1
                    if seen is not None:
                        raise ConfigError(
                            f"duplicate key {brief(key)} (first at line {seen}); "
                            "a later value would silently replace it",
                            source=f"{self.rankgate_source}:{line}" if self.rankgate_source else None,
                        )
                    first[key] = line
            return super().construct_mapping(node, deep=deep)

    _LOADERS[id(yaml)] = _StrictLoader
    return _StrictLoader
