"""The gate file's keys: key paths and messages for what pydantic refuses (the closest known key
for an unknown one), and command-line flags checked against the ``settings:`` the file fixes (a
flag may fill in a setting the file leaves unset, never change one it sets: the baseline and
the candidate must be evaluated alike)."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from rankgate.errors import ConfigError
from rankgate.evaluation.settings import Settings
from rankgate.io.yaml import brief, cut

if TYPE_CHECKING:
    from rankgate.gate.config import GateConfig

FILE_SETTINGS = ("chunk_map", "chunk_offsets")  # paths: the file's are relative to it, a flag's to the cwd


def closest_key(root: type[BaseModel], loc: tuple[Any, ...]) -> str | None:
    """The known key nearest to the unknown key at ``loc`` (pydantic's error location), or None.

    >>> from rankgate.gate.config import GateFile
    >>> closest_key(GateFile, ("gates", 0, "treshold")), closest_key(GateFile, ("gate",))
    ('threshold', 'gates')
    """
    model: Any = root
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return None
        model = next((a for a in (field.annotation, *typing.get_args(field.annotation)) if _is_model(a)), None)
    if not _is_model(model):
        return None
    close = difflib.get_close_matches(str(loc[-1]), list(model.model_fields), n=1, cutoff=0.6)
    return close[0] if close else None


def key_path(loc: tuple[Any, ...]) -> str:
    """``("gates", 1, "threshold")`` -> ``gates[1].threshold``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "list[str]"):  # pydantic names the union member it tried; not a key
            continue
        else:
            part = cut(str(part))  # a key can be 1,024 characters long: never echo it whole
            if not part.isprintable():  # a newline in a key must not break the one-line message
                part = repr(part)
            out += f".{part}" if out else part
    return out


def describe(error: Mapping[str, Any], root: type[BaseModel]) -> str:
    """One pydantic error (of the file modelled by ``root``) in the project's words.

    >>> too_short = {"type": "too_short", "loc": ("gates",), "msg": "List should have at least 1 item", "input": []}
    >>> describe(too_short, BaseModel)
    'the list is empty; give at least one gate, e.g. - {name: recall_at_5, threshold: 0.85}'
    """
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        close = closest_key(root, tuple(error.get("loc", ())))
        return f"unknown key; did you mean {close!r}?" if close else "unknown key (check its spelling)"
    if kind == "missing":
        return "required key is missing"
    if kind == "too_short" and tuple(error.get("loc", ())) == ("gates",):
        return "the list is empty; give at least one gate, e.g. - {name: recall_at_5, threshold: 0.85}"
    if kind in ("too_short", "string_too_short") and error.get("input") in ("", [], {}):
        return "must not be empty"
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    if "input" in error and kind not in ("model_type", "dict_type"):
        message += f" (got {brief(error['input'])})"
    return message


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def with_flags(cfg: GateConfig, given: dict[str, Any]) -> GateConfig:
    """``cfg`` with settings given on the command line; a flag that contradicts a value the file
    sets is a `ConfigError` naming ``settings.NAME`` and both values."""
    for name, value in given.items():
        if name not in cfg.settings_given:
            continue
        theirs = getattr(cfg.settings, name)
        same = Path(value).resolve() == Path(theirs).resolve() if name in FILE_SETTINGS else value == theirs
        if not same:
            flag = "--" + name.replace("_", "-")
            raise ConfigError(
                f"{flag} {brief(value)} contradicts the config's {brief(theirs)}: the config fixes its settings so "
                "the baseline and the candidate are evaluated alike; change the config or drop the flag",
                key_path=f"settings.{name}",
                source=cfg.source,
            )
    unset = {name: value for name, value in given.items() if name not in cfg.settings_given}
    return cfg.model_copy(update={"settings": Settings.of(cfg.settings, **unset)})
