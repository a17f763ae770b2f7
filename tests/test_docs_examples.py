"""The docs as a new user meets them: every install line works from a clone, no dangling
references, and every shell example and Python snippet of README.md and docs/*.md runs."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import invoke
from tests.docs_support import (
    ROOT,
    SHELL_LANGUAGES,
    Block,
    blocks,
    commands,
    doc_files,
    fill_review,
    write_example_files,
)


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


def test_readme_opening_commands_are_what_ci_runs_and_cpu_torch_is_explained() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    demo, tests = [b.text.strip() for b in SHELL_BLOCKS[:2]]
    assert demo == 'pip install torch==2.13.0 ".[demo]" && rankgate demo'
    assert (ROOT / ".ci" / "run").read_text().rstrip().splitlines()[-1] == tests
    # the pin gets the CPU build only where pip has a CPU wheel source: the index for elsewhere
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in " ".join(readme.split())


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


# -- every example of README.md and docs/*.md runs ------------------------------------------
# Commands that cannot run here (regex searched in the command -> why). Each must still match a
# command of the docs, so the list cannot go stale.
NOT_RUN: tuple[tuple[str, str], ...] = (
    (r"^pip install", "installs packages (network)"),
    (r"^python -m pytest -q$", "the whole test suite, which this test is part of"),
    (r"^ruff check", "lint and mypy: tests/test_lint.py runs them"),
    (r"^python bench/eval_speed\.py", "a speed benchmark of minutes against the peers extra"),
    (r"^python scripts/make_demo_data\.py", "rewrites the shipped demo data"),
    (r"data/scifact|data/msmarco", "needs a downloaded BEIR collection"),
    (r"^(vllm serve|ollama pull)", "starts or downloads an LLM"),
    (r"--base-url (\$BASE|https://api\.openai\.com)", "needs an LLM endpoint"),
    (r"golden/", "reads the golden set that `label synth` writes, which needs an LLM endpoint"),
    (r"^export OPENAI_API_KEY", "an API key"),
    (r"--post-comment", "posts to GitHub"),
    (r"postgresql://", "needs a PostgreSQL server"),
    (r"^ray start|--engine ray", "starts a Ray cluster (tests/test_*ray* run the engine)"),
    (r"\[--", "a synopsis, not a command"),
    (r"^rankgate bench demo$", "the same as README.md's `rankgate bench demo`, which runs"),
    (r"^rankgate bench demo -r bm25 -r dense -r hybrid", "a grid of a dozen configurations: minutes on 2 cores"),
    (r"^python - <<'EOF'", "a timing script (writes /tmp/bench-store.db); tests/test_store.py covers the store"),
    (r"^rankgate serve", "a web server that runs until stopped (tests/test_dashboard_browser.py runs it)"),
    (r"^python bench/dashboard_speed\.py", "builds a 0.5 GB store and times the dashboard: minutes"),
    (r"^RANKGATE_SCREENSHOTS=1 ", "the dashboard's browser tests, part of this suite"),
    (r"(?<![\w./-])ab/", "docs/retrieve.md's A/B walk-through needs its service; tests/test_ab_story.py runs it"),
)
# Commands whose outcome on the example files is a failing gate: exit 1 (regex -> code, why).
EXIT_CODES: tuple[tuple[str, int, str], ...] = (
    (r"rankgate gate .*--run \$R/runs/dense_v2\.txt", 1, "the demo's candidate regresses, as docs/report.md shows"),
    (
        r"rankgate gate --qrels gold\.txt",
        1,
        "the demo gates.yaml's floors (not labeling.md's gold gate) fail on weak labels",
    ),
)
# Python snippets that cannot run here (regex searched in the snippet -> why).
SNIPPETS_NOT_RUN = {r"post_or_update_comment\(": "posts to GitHub"}


def not_run_reason(command: str) -> str | None:
    return next((why for pattern, why in NOT_RUN if re.search(pattern, command)), None)


def expected_exit(command: str) -> int:
    return next((code for pattern, code, _ in EXIT_CODES if re.search(pattern, command)), 0)


# Blocks that take long (regex searched in the block): a benchmark encodes the corpus and probes
# latency, a report exports charts. Still run in CI.
SLOW = (r"rankgate bench demo|run_benchmark\(", r"export_format=|rankgate report ")
SHELL_BLOCKS = blocks(SHELL_LANGUAGES)
PYTHON_BLOCKS = blocks(("python",))


def marked(found: list[Block]) -> list:
    slow = [pytest.mark.slow]
    return [pytest.param(b, id=b.where, marks=slow if any(re.search(p, b.text) for p in SLOW) else []) for b in found]


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder with every file the examples name (shared: writing it runs rankgate a few times)."""
    folder = tmp_path_factory.mktemp("docs-examples")
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, folder)
        write_example_files(folder)
    return folder


@pytest.fixture
def workdir(examples: Path, tmp_path: Path) -> Path:
    """A copy of the example files for one block: blocks leave no trace for the others."""
    return Path(shutil.copytree(examples, tmp_path / "examples", symlinks=True))


def isolate(mp: pytest.MonkeyPatch, folder: Path) -> None:
    """Run in ``folder`` as a user on branch main would, outside CI and GitHub."""
    mp.chdir(folder)
    for name in [n for n in os.environ if n.startswith(("GITHUB_", "RANKGATE_", "CI"))]:
        mp.delenv(name)
    mp.setenv("RANKGATE_BRANCH", "main")
    mp.setenv("SHA", "0123456789abcdef0123456789abcdef01234567")


def needs_a_shell(command: str) -> bool:
    """Variables, redirections, pipes or several commands: run by bash, not in-process."""
    return bool(re.search(r"[$|;&<>]|^\w+=", command))


def shell_run(command: str, prelude: list[str], folder: Path) -> int:
    """``command`` run by bash in ``folder``, ``rankgate`` being this checkout's."""
    bin_dir = folder / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        # what pip's console script does: exit with main()'s return value
        script = f"#!{sys.executable}\nimport sys\nfrom rankgate.cli import main\nsys.exit(main())\n"
        (bin_dir / "rankgate").write_text(script)
        (bin_dir / "rankgate").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
    }
    script = "\n".join([*prelude, command])
    return subprocess.run(["bash", "-c", script], cwd=folder, env=env, capture_output=True, timeout=300).returncode


@pytest.mark.parametrize("block", marked(SHELL_BLOCKS))
def test_shell_example_runs(block: Block, workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    isolate(monkeypatch, workdir)
    prelude: list[str] = []  # the block's variables (R=..., BASE=...), set for the commands after them
    for command in commands(block):
        if re.fullmatch(r"\w+=\S+( \w+=\S+)*", command.text):
            prelude.append(command.text)
            continue
        if not_run_reason(command.text) is not None:
            continue
        if "label import review.csv" in command.text:
            fill_review(workdir)
        if needs_a_shell(command.text):
            code = shell_run(command.text, prelude, workdir)
            out = err = "(run by bash)"
        else:
            code, out, err = invoke(capsys, *shlex.split(command.text, comments=True)[1:])
        assert code == expected_exit(command.text), f"{command.where}: {command.text}\n{out[-2000:]}\n{err[-2000:]}"


@pytest.mark.parametrize("block", marked(PYTHON_BLOCKS))
def test_python_snippet_runs(block: Block, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if (why := next((why for p, why in SNIPPETS_NOT_RUN.items() if re.search(p, block.text)), None)) is not None:
        pytest.skip(why)
    isolate(monkeypatch, workdir)
    exec(compile(block.text, block.where, "exec"), {"__name__": "docs_example"})


def test_every_example_is_run_or_says_why() -> None:
    """The lists of examples that do not run name real ones, each with its reason."""
    everything = [c.text for b in SHELL_BLOCKS for c in commands(b)]
    assert [p for p, _ in NOT_RUN if not any(re.search(p, c) for c in everything)] == []
    assert [p for p, _, _ in EXIT_CODES if not any(re.search(p, c) for c in everything)] == []
    assert [p for p in SNIPPETS_NOT_RUN if not any(re.search(p, b.text) for b in PYTHON_BLOCKS)] == []
    assert [p for p in SLOW if not any(re.search(p, b.text) for b in SHELL_BLOCKS + PYTHON_BLOCKS)] == []


def test_readme_sample_output_is_what_its_command_prints(workdir: Path, monkeypatch, capsys) -> None:
    """The README's sample eval output: the first command above it, run on the demo files."""
    isolate(monkeypatch, workdir)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [eval_block] = [b for b in SHELL_BLOCKS if b.where.startswith("README.md") and "--per-query" in b.text]
    sample = re.search(r"```text\n(.*?)```", readme[readme.index(eval_block.text) :], re.S)
    assert sample is not None
    code, out, err = invoke(capsys, *shlex.split(commands(eval_block)[0].text)[1:])
    assert code == 0
    assert [line.rstrip() for line in (out + err).splitlines()] == sample.group(1).rstrip().splitlines()
