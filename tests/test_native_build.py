"""hatch_build.py: the optional native TREC scanner is compiled into the wheel, in place for an
editable install, and left out with a warning (the build still succeeding) without a working C
compiler, on Windows, or with RANKGATE_NO_NATIVE=1."""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from rankgate.core import native

pytest.importorskip("hatchling", reason="hatchling is not installed (pip install -e '.[test]')")

ROOT = Path(__file__).resolve().parents[1]
STALE = b"stale library from an earlier editable build"
# rg_madd(1 + 2^-27, 1 - 2^-27, -1): the product 1 - 2^-54 rounds to 1.0 first, so exact IEEE
# arithmetic gives 0.0; a fused multiply-add (one rounding) would give -2^-54.
STUB_C = """\
int rg_scan_version(void) { return 1; }
double rg_madd(double a, double b, double c) { return a * b + c; }
"""


def _load_hook_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = _load_hook_module()


@pytest.fixture
def stub(tmp_path: Path) -> Path:
    path = tmp_path / "stub.c"
    path.write_text(STUB_C, encoding="utf-8")
    return path


@pytest.fixture
def compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """The platform's own compiler (no CC from the caller's environment); skip without one."""
    monkeypatch.delenv("CC", raising=False)
    if shutil.which(hook.compiler_command()[0]) is None:
        pytest.skip("no C compiler on this machine")


def _version(library: Path) -> int:
    loaded = ctypes.CDLL(str(library))
    loaded.rg_scan_version.restype = ctypes.c_int
    return int(loaded.rg_scan_version())


@pytest.mark.usefixtures("compiler")
def test_compiled_stub_loads_with_ctypes_and_keeps_ieee_rounding(stub: Path, tmp_path: Path):
    target = tmp_path / "_native.so"
    assert hook.compile_library(stub, target) is None
    assert _version(target) == 1
    madd = ctypes.CDLL(str(target)).rg_madd
    madd.restype = ctypes.c_double
    madd.argtypes = [ctypes.c_double] * 3
    assert madd(1 + 2**-27, 1 - 2**-27, -1.0) == 0.0


@pytest.mark.parametrize(
    ("cc", "expected"),
    [("false", "exited with status 1"), ("/nonexistent/cc", "no C compiler found ('/nonexistent/cc'")],
)
def test_a_failing_or_missing_compiler_is_reported_not_raised(
    cc: str, expected: str, stub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("CC", cc)
    error = hook.compile_library(stub, tmp_path / "_native.so")
    assert isinstance(error, str) and expected in error and "\n" not in error
    assert not (tmp_path / "_native.so").exists()


def test_a_missing_source_is_reported(tmp_path: Path):
    assert hook.compile_library(tmp_path / "absent.c", tmp_path / "x.so") == f"no C source at {tmp_path / 'absent.c'}"


@pytest.mark.usefixtures("compiler")
def test_a_compile_error_names_the_compilers_error_line(tmp_path: Path):
    broken = tmp_path / "broken.c"
    broken.write_text("int rg_scan_version(void) { return 1 }\n", encoding="utf-8")
    error = hook.compile_library(broken, tmp_path / "x.so")
    assert error is not None and "exited with status" in error and "error" in error.split(": ", 1)[1].lower()


@pytest.mark.usefixtures("compiler")
def test_build_in_place_replaces_the_old_library_and_leaves_no_temporary_file(stub: Path, tmp_path: Path):
    target = tmp_path / "_native.so"
    target.write_bytes(STALE)
    assert hook.build_in_place(stub, target) is None
    assert _version(target) == 1
    assert target.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_native.so", "stub.c"]


def test_a_failed_in_place_build_leaves_the_old_file_and_no_temporary_file(
    stub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("CC", "false")
    target = tmp_path / "_native.so"
    target.write_bytes(STALE)
    assert hook.build_in_place(stub, target) is not None
    assert target.read_bytes() == STALE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_native.so", "stub.c"]


@pytest.mark.parametrize(
    ("value", "platform", "skipped"),
    [
        (None, "linux", False),
        ("0", "linux", False),
        ("1", "linux", True),
        (None, "darwin", False),
        (None, "win32", True),
    ],
)
def test_skip_reason(value: str | None, platform: str, skipped: bool, monkeypatch: pytest.MonkeyPatch):
    if value is None:
        monkeypatch.delenv("RANKGATE_NO_NATIVE", raising=False)
    else:
        monkeypatch.setenv("RANKGATE_NO_NATIVE", value)
    monkeypatch.setattr(sys, "platform", platform)
    assert (hook.skip_reason() is not None) is skipped


def test_platform_tag_drops_the_python_abi():
    assert hook.platform_tag("cp311-cp311-linux_x86_64") == "py3-none-linux_x86_64"
    assert hook.platform_tag("cp312-cp312-macosx_11_0_arm64") == "py3-none-macosx_11_0_arm64"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project (no .git, no .gitignore) holding a stale in-place library."""
    copy = tmp_path / "project"
    for name in ("pyproject.toml", "hatch_build.py", "README.md", "LICENSE"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    (copy / hook.IN_PLACE).write_bytes(STALE)
    return copy


def _build(project: Path, version: str, out: Path, **options: bool) -> list[str]:
    from hatchling.builders.wheel import WheelBuilder

    return list(WheelBuilder(str(project)).build(directory=str(out), versions=[version], **options))


def _scanner_entries(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return [name for name in archive.namelist() if name.endswith("_native.so")]


def test_without_a_compiler_the_wheel_is_pure_and_holds_no_library(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("CC", "false")
    [wheel] = _build(project, "standard", tmp_path / "dist")
    assert wheel.endswith("-py3-none-any.whl")
    assert _scanner_entries(Path(wheel)) == []
    warnings = [line for line in capsys.readouterr().err.splitlines() if "native kernels" in line]
    assert len(warnings) == 1 and hook.FALLBACK in warnings[0]


@pytest.mark.usefixtures("compiler")
def test_an_editable_build_writes_the_library_in_place(project: Path, tmp_path: Path):
    _build(project, "editable", tmp_path / "dist", hooks_only=True)
    assert _version(project / hook.IN_PLACE) == native.VERSION  # the project's own scanner


def test_an_editable_build_without_a_compiler_removes_a_stale_library(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("RANKGATE_NO_NATIVE", "1")
    _build(project, "editable", tmp_path / "dist", hooks_only=True)
    assert not (project / hook.IN_PLACE).exists()


@pytest.mark.slow
@pytest.mark.usefixtures("compiler")
def test_pip_wheel_is_platform_tagged_and_holds_one_fresh_library(project: Path, tmp_path: Path):
    out = tmp_path / "wheels"
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(project)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = out.glob("rankgate-*.whl")
    assert "-py3-none-" in wheel.name and not wheel.name.endswith("-any.whl")
    assert _scanner_entries(wheel) == [hook.IN_WHEEL]
    with zipfile.ZipFile(wheel) as archive:
        library = Path(archive.extract(hook.IN_WHEEL, tmp_path / "unpacked"))
        [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/WHEEL")]
        assert "Root-Is-Purelib: false" in archive.read(metadata).decode()
    assert library.read_bytes() != STALE
    assert hasattr(ctypes.CDLL(str(library)), "rg_scan_version")


def test_a_missing_folder_is_reported_not_raised(stub: Path, tmp_path: Path):
    assert hook.build_in_place(stub, tmp_path / "absent" / "_native.so").startswith("cannot write beside ")
