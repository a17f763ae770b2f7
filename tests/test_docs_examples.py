"""The docs as a new user meets them: every install line works from a clone, no dangling
references, and every shell example and Python snippet of README.md and docs/*.md runs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.docs_support import ROOT, doc_files


# -- installing: rankgate is not on the package index ---------------------------------------
def install_step() -> dict:
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    [step] = [s for s in action["runs"]["steps"] if s.get("name") == "Install rankgate"]
    return {"inputs": action["inputs"], **step}


def installed_by_action(tmp_path: Path, package: str, extras: str) -> list[str]:
    """The arguments the action's install step gives pip (a stub ``python`` records them)."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    stub = tmp_path / "bin" / "python"
    stub.parent.mkdir(exist_ok=True)
    stub.write_text(f'#!{bash}\nprintf "%s\\n" "$@" > "{tmp_path}/args"\n')
    stub.chmod(0o755)
    env = {
        "PATH": f"{stub.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PACKAGE": package,
        "EXTRAS": extras,
        "ACTION_PATH": "/home/runner/work/_actions/OWNER/rankgate/v0.1.0",
    }
    subprocess.run([bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", install_step()["run"]], env=env, check=True)
    return (tmp_path / "args").read_text().splitlines()


def test_action_installs_its_own_checkout_by_default(tmp_path: Path) -> None:
    step = install_step()
    assert step["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert step["inputs"]["package"]["default"] == "" and step["inputs"]["extras"]["default"] == "gate"
    action = "/home/runner/work/_actions/OWNER/rankgate/v0.1.0"
    assert installed_by_action(tmp_path, "", "gate")[-1] == f"{action}[gate]"
    assert installed_by_action(tmp_path, "", "postgres")[-1] == f"{action}[postgres]"
    git = "rankgate[gate] @ git+https://github.com/OWNER/rankgate@v0.1.0"
    assert installed_by_action(tmp_path, git, "gate")[-1] == git  # the input overrides, kept as one word


# `pip install ... rankgate[...]` without a path or a git URL: an install from the package index.
_INDEX_INSTALL = re.compile(r"pip install[^`\n]*?(?<![\w./-])['\"]?rankgate\[[^\]]*\](?![^`\n]*git\+)")


def test_no_doc_installs_rankgate_from_the_package_index() -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in doc_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _INDEX_INSTALL.search(line)
    ]
    assert offending == []
    assert _INDEX_INSTALL.search("pip install 'rankgate[gate]'")  # the pattern itself catches one
    assert not _INDEX_INSTALL.search('pip install ".[gate]"')


# -- the repository stands on its own --------------------------------------------------------
def test_license_file_matches_the_declared_license() -> None:
    assert re.search(r'^license = "MIT"$', (ROOT / "pyproject.toml").read_text(), re.M)
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Copyright (c) 2026 rankgate developers" in text


def test_docs_cite_no_file_outside_the_repository() -> None:
    outside = re.compile(r"DESIGN\.md|STYLE\.md|\.\./shared")
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in doc_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    ]
    assert cited == []
