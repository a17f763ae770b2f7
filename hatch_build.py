"""Hatchling build hook: compiles rankgate's optional native kernels (the TREC scanner, the join).

`src/rankgate/core/_native.c` is plain C (no Python C-API); rankgate loads the built library
with ctypes by path (`rankgate.core.native`), as `rankgate/core/_native.so` on Linux and macOS alike.

- wheel: the library is compiled in a temporary folder and added to the wheel, which is then
  tagged for this platform (``py3-none-<platform>``: the library does not depend on Python's ABI);
- editable install: the library is written in place, atomically, to `src/rankgate/core/_native.so`
  (the editable wheel puts `src/` on sys.path, so a file inside that wheel would not be found);
- no compiler, a failed compile, Windows, or ``RANKGATE_NO_NATIVE=1`` at build time: one warning
  line, and the build succeeds as a pure-Python wheel; rankgate then reads TREC files and
  joins with its numpy/Arrow code (the same numbers, slower).

`compile_library` is a plain function, so tests can call it without a build.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "src/rankgate/core/_native.c"
IN_PLACE = "src/rankgate/core/_native.so"
IN_WHEEL = "rankgate/core/_native.so"
# Portable and exact IEEE arithmetic: no -march=native, no -ffast-math, and no fused multiply-add
# (clang, and GCC in its GNU modes, fuse a*b+c on arm64 by default: one rounding instead of two).
CFLAGS = ("-O2", "-fPIC", "-shared", "-std=c99", "-ffp-contract=off")
LIBS = ("-lm",)
FALLBACK = "rankgate will read TREC files and join with its numpy/Arrow code (same numbers, slower)"
COMPILE_TIMEOUT_S = 600


def compiler_command() -> list[str]:
    """The C compiler: ``$CC``, else the one Python was built with when it is on PATH, else ``cc``."""
    from_env = os.environ.get("CC", "").strip()
    if from_env:
        return shlex.split(from_env)
    configured = shlex.split(sysconfig.get_config_var("CC") or "")
    if configured and shutil.which(configured[0]):
        return configured
    return ["cc"]


def compile_library(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> str | None:
    """Compile the C file ``source`` into the shared library ``target``.

    Returns None on success, else one line saying what went wrong; never raises for a missing or
    failing compiler.
    """
    if not Path(source).is_file():
        return f"no C source at {source}"
    command = [*compiler_command(), *CFLAGS, "-o", os.fspath(target), os.fspath(source), *LIBS]
    shown = shlex.join(command)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False)
    except FileNotFoundError:
        return f"no C compiler found ({command[0]!r}; set CC to use another)"
    except (OSError, subprocess.SubprocessError) as error:
        return f"{shown} failed: {error}"
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        first_error = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")
        return f"{shown} exited with status {done.returncode}" + (f": {first_error}" if first_error else "")
    if not Path(target).is_file():
        return f"{shown} wrote no {target}"
    return None


def build_in_place(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> str | None:
    """Compile ``source`` to a temporary name beside ``target``, then move it over ``target``.

    A process that has the old library loaded keeps its copy; a failed build leaves ``target``
    as it was. Returns `compile_library`'s error text, or None.
    """
    final = Path(target)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    except OSError as error:
        return f"cannot write beside {final}: {error}"
    os.close(handle)
    try:
        failure = compile_library(source, temporary)
        if failure is None:
            os.chmod(temporary, 0o755)  # mkstemp made it private; others may load it too
            os.replace(temporary, final)
        return failure
    except OSError as error:
        return f"cannot replace {final}: {error}"
    finally:
        Path(temporary).unlink(missing_ok=True)


def skip_reason() -> str | None:
    """Why the native scanner is not to be built at all here, or None."""
    if os.environ.get("RANKGATE_NO_NATIVE", "").strip() not in ("", "0"):
        return "RANKGATE_NO_NATIVE is set"
    if sys.platform == "win32":
        return "it is not built on Windows"
    return None


def platform_tag(best_matching_tag: str) -> str:
    """``py3-none-<platform>`` from hatchling's best tag (``cp311-cp311-linux_x86_64``)."""
    return "py3-none-" + best_matching_tag.split("-", 2)[2]


class NativeScannerHook(BuildHookInterface):  # type: ignore[type-arg]  # generic in recent hatchling only
    """Builds `_native.so` into the wheel, or in place for an editable install."""

    PLUGIN_NAME = "custom"
    _workdir: tempfile.TemporaryDirectory[str] | None = None  # the wheel's library, until the wheel is written

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        error = skip_reason()
        if version == "editable":
            error = error or build_in_place(root / SOURCE, root / IN_PLACE)
            if error is not None:  # no stale library from an earlier build may outlive this one
                with contextlib.suppress(OSError):
                    (root / IN_PLACE).unlink(missing_ok=True)
        else:
            self._workdir = tempfile.TemporaryDirectory(prefix="rankgate-native-")
            built = Path(self._workdir.name) / Path(IN_WHEEL).name
            error = error or compile_library(root / SOURCE, built)
            if error is None:
                build_data["force_include"][os.fspath(built)] = IN_WHEEL
                build_data["pure_python"] = False
                build_data["infer_tag"] = True
                best = getattr(self.build_config.builder, "get_best_matching_tag", None)
                if best is not None:
                    build_data["tag"] = platform_tag(best())
        if error is not None:
            self.app.display_warning(f"warning: rankgate's native kernels were not built: {error}; {FALLBACK}")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None
