"""The ``python`` kind: a function, or a LangChain or LlamaIndex retriever, in the user's own code.

Keys (short form ``python:pkg.module:function`` sets ``target`` only):

- ``target`` (required): ``module:attribute``; the module is imported with the current folder
  (or ``path``) first on ``sys.path``;
- ``build``: when true, ``target`` is called once with ``options`` as keyword arguments, and what
  it returns is the retriever (a function or an object as below);
- ``options``: keyword arguments of ``build`` (they enter the identity, so the cache keys on them);
- ``id_key`` / ``score_key``: the metadata keys of a Document's or node's id and score;
- ``path``: a folder to import the module from; ``version``: any text, to tell the cache that the
  code behind ``target`` changed (the module's source file is digested too);
- ``timeout``: seconds one call may take (the call runs in a helper thread; a call past it is
  reported and left running, since Python cannot stop a thread).

What ``target`` is, recognised by shape (duck typing, nothing imported):

- an object with ``invoke(query)`` returning Documents (LangChain's retriever interface): the id
  is ``metadata[id_key]``, else ``Document.id``;
- an object with ``retrieve(query)`` returning nodes with scores (LlamaIndex's): the id is
  ``node.metadata[id_key]``, else ``node.node_id``; the score is ``NodeWithScore.score``;
- a function ``(query_text, k)`` or ``(query_id, query_text, k)`` returning hits as ``(doc_id,
  score)`` pairs, bare ids, mappings (``doc_id``/``id``/``_id`` and ``score``) or objects with
  such attributes (Documents and nodes too).

An exception the code raises fails that one query with its type, message and place; raise
`rankgate.retrieve.TransientFailure` (or a built-in ``ConnectionError``/``TimeoutError``) to have
the call retried.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import json
import numbers
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from rankgate.errors import RankgateError
from rankgate.io.yaml import brief, cut
from rankgate.retrieve.base import Hit, QueryFailed, TransientFailure
from rankgate.retrieve.spec import Keys, Where, call_within

KEYS = ("target", "build", "options", "id_key", "score_key", "path", "version", "timeout")
ID_FIELDS = ("doc_id", "id", "_id", "docid", "node_id")


class PythonRetriever:
    """A Python callable or retriever object (see the module docstring)."""

    kind = "python"
    keys = KEYS

    def __init__(
        self,
        target: Any,
        *,
        name: str,
        options: Mapping[str, Any] | None = None,
        id_key: str | None = None,
        score_key: str | None = None,
        version: str | None = None,
        source_digest: str | None = None,
        timeout: float | None = None,
        keys: Keys | None = None,
    ) -> None:
        self.name, self.options, self.timeout = name, dict(options or {}), timeout
        self.id_key, self.score_key, self.version = id_key, score_key, version
        self._digest = source_digest
        self._call = _caller(target, name, keys or Keys({}, Where(name), ()))

    @classmethod
    def from_config(cls, config: Mapping[str, Any], where: Where | str) -> PythonRetriever:
        """Import ``target`` (building it when ``build`` is true) and check the keys."""
        keys = Keys(config, where, KEYS)
        name = keys.text("target")
        build = keys.boolean("build", False)
        options = keys.mapping("options")
        if options and not build:
            raise keys.error("options", "options are the keyword arguments of build: set build: true")
        texts = {key: keys.text(key, None) for key in ("id_key", "score_key", "version")}
        target, digest = _import(name, keys.text("path", None), keys)
        if build:
            try:
                target = target(**options)
            except Exception as e:
                raise keys.error("target", f"building the retriever failed: {_describe(e)}") from None
        timeout = keys.number("timeout", None)
        return cls(target, name=name, options=options, source_digest=digest, timeout=timeout, keys=keys, **texts)

    def identity(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "target": self.name,
            "options": json.loads(json.dumps(self.options, sort_keys=True, default=repr)),
            "id_key": self.id_key,
            "score_key": self.score_key,
            "version": self.version,
            "source_sha256": self._digest,
        }

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        """Call the target once; its answer as hits (`QueryFailed` when it cannot be read)."""
        result = self._guarded(query_id, text, k)
        if result is None or isinstance(result, str | bytes | Mapping) or not isinstance(result, Iterable):
            raise QueryFailed(f"{self.name} returned {brief(result)}, not a list of hits")
        return [self._hit(item, rank) for rank, item in enumerate(result, 1)]

    def _guarded(self, query_id: str, text: str, k: int) -> Any:
        """The call, its exceptions turned into the two failure kinds (with a timeout when set)."""
        try:
            if self.timeout is None:
                return self._call(query_id, text, k)
            return call_within(self.timeout, lambda: self._call(query_id, text, k), self.name)
        except (TransientFailure, QueryFailed):
            raise
        except RankgateError:
            raise
        except (ConnectionError, TimeoutError) as e:
            raise TransientFailure(_describe(e)) from None
        except Exception as e:
            raise QueryFailed(_describe(e)) from None

    def _hit(self, item: Any, rank: int) -> Hit:
        doc, score = _read_item(item, self.id_key, self.score_key)
        if isinstance(doc, bool) or not isinstance(doc, str | int) or doc == "":
            hint = f" (id_key: {self.id_key})" if self.id_key else "; name the metadata key with id_key"
            raise QueryFailed(f"hit {rank} has no id{hint}: {brief(item)}")
        if score is not None and (isinstance(score, bool) or not isinstance(score, numbers.Real)):
            raise QueryFailed(f"hit {rank} has a score that is not a number: {brief(score)}")
        return Hit(str(doc), None if score is None else float(score))

    def close(self) -> None:
        """Nothing to release: the user's object stays theirs."""

    def __repr__(self) -> str:
        return f"PythonRetriever({self.name!r})"


def _caller(target: Any, name: str, keys: Keys) -> Callable[[str, str, int], Any]:
    """One way to call ``target`` with (query_id, text, k), whatever its shape."""
    if inspect.isclass(target):
        raise keys.error(
            "target",
            f"{name} is a class: set build: true to make an instance (options are its arguments)",
        )
    invoke = getattr(target, "invoke", None)
    if callable(invoke) and not inspect.isroutine(target):
        return lambda qid, text, k: invoke(text)
    retrieve = getattr(target, "retrieve", None)
    if callable(retrieve) and not inspect.isroutine(target):
        return lambda qid, text, k: retrieve(text)
    if not callable(target):
        raise keys.error(
            "target",
            f"{name} is a {type(target).__name__}: expected a function (query_text, k), "
            "or an object with invoke(query) (LangChain) or retrieve(query) (LlamaIndex)",
        )
    if _arity(target, keys) == 3:
        return lambda qid, text, k: target(qid, text, k)
    return lambda qid, text, k: target(text, k)


def _arity(function: Callable[..., Any], keys: Keys) -> int:
    """2 for ``(query_text, k)``, 3 for ``(query_id, query_text, k)``."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return 2
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if len(required) in (2, 3):
        return len(required)
    if len(positional) >= 3 and positional[0].name in ("query_id", "qid"):
        return 3
    if len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return 2
    names = ", ".join(p.name for p in parameters)
    raise keys.error(
        "target",
        f"the function takes ({names}); expected (query_text, k) or (query_id, query_text, k)",
    )


def _read_item(item: Any, id_key: str | None, score_key: str | None) -> tuple[Any, Any]:
    """(doc id, score or None) of one returned item, by its shape."""
    if isinstance(item, str | int) and not isinstance(item, bool):
        return item, None
    if isinstance(item, tuple | list):
        if len(item) == 2:
            return item[0], item[1]
        return None, None
    if isinstance(item, Mapping):
        return _from_fields(item, item, id_key, score_key)
    node = getattr(item, "node", None)
    if node is not None and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        doc, score = _from_fields(node, getattr(node, "metadata", None) or {}, id_key, score_key)
        return doc, score if score_key else getattr(item, "score", None)
    metadata = getattr(item, "metadata", None)
    return _from_fields(item, metadata if isinstance(metadata, Mapping) else {}, id_key, score_key)


def _from_fields(obj: Any, metadata: Mapping[str, Any], id_key: str | None, score_key: str | None) -> tuple[Any, Any]:
    """Id and score from metadata keys when named, else from the usual fields or attributes."""

    def field(name: str) -> Any:
        return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)

    if id_key is not None:
        doc = metadata.get(id_key)
    else:
        doc = next((v for v in (field(n) for n in ID_FIELDS) if v is not None), None)
    score = metadata.get(score_key) if score_key is not None else field("score")
    return doc, score


def _import(name: str, path: str | None, keys: Keys) -> tuple[Any, str | None]:
    """The object ``module:attribute`` names, and a digest of its module's source file."""
    module_name, sep, attribute = name.partition(":")
    if not sep or not module_name or not attribute:
        raise keys.error("target", f"expected module:function, got {brief(name)}")
    folder = os.path.abspath(path or os.getcwd())
    with _on_path(folder):
        try:
            module = importlib.import_module(module_name)
        except Exception as e:
            raise keys.error("target", f"cannot import {module_name}: {_describe(e)}") from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise keys.error("target", f"{module_name} has no attribute {attribute!r}")
        target = getattr(target, part)
    digest = None
    with contextlib.suppress(OSError, TypeError):
        source = inspect.getsourcefile(module)
        if source:
            with open(source, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
    return target, digest


@contextlib.contextmanager
def _on_path(folder: str) -> Iterator[None]:
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added:
            with contextlib.suppress(ValueError):
                sys.path.remove(folder)


def _describe(error: BaseException) -> str:
    """``Type: message (at file:line)``: where in the user's code an exception came from."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(error.__traceback__) if os.path.dirname(f.filename) != here]
    place = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {cut(str(error), 200)}{place}"
