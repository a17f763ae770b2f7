"""Hardening of the results store, the statistics and the engines' options (issue 23 items 7, 10, 12).

Read-only commands open a store read-only: they never create rankgate's tables in another
program's SQLite file nor switch it to WAL, and they read a store in a folder they cannot write.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import invoke
from tests.test_cli import QRELS, RUN

ROOT = Path(__file__).resolve().parents[1]

# Every command that only reads a store: (argv before --store, needs the report extra).
READ_COMMANDS = [
    pytest.param(("store", "list"), id="store-list"),
    pytest.param(("store", "show", "1"), id="store-show"),
    pytest.param(("store", "show", "latest", "--per-query"), id="store-show-latest"),
    pytest.param(("store", "baseline", "show"), id="store-baseline-show"),
    pytest.param(("store", "baseline", "show", "--all"), id="store-baseline-show-all"),
    pytest.param(("report",), id="report", marks=pytest.mark.extra("report")),
]


def _argv(command: tuple[str, ...], store: Path, out: Path) -> list[str]:
    argv = [*command, "--store", str(store)]
    return [*argv, "-o", str(out)] if command[0] == "report" else argv


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` and the hash of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _journal_mode(path: Path) -> str:
    # Asking through a read-only connection changes nothing.
    with sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True) as conn:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


@pytest.fixture
def foreign_db(tmp_path: Path) -> Path:
    """Another program's SQLite file (rollback journal, one table of its own)."""
    folder = tmp_path / "app"
    folder.mkdir()
    path = folder / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO notes (text) VALUES ('keep me')")
    conn.commit()
    conn.close()
    return path


@pytest.mark.extra("gate")
@pytest.mark.parametrize("command", READ_COMMANDS)
def test_read_commands_refuse_a_foreign_sqlite_file_and_leave_it_unchanged(
    capsys, tmp_path: Path, foreign_db: Path, command: tuple[str, ...]
) -> None:
    before = _snapshot(foreign_db.parent)
    assert _journal_mode(foreign_db) == "delete"
    code, out, err = invoke(capsys, *_argv(command, foreign_db, tmp_path / "r.html"))
    assert code == 2, err
    assert f"{foreign_db}: holds no rankgate results store" in err
    assert "Traceback" not in err and out == ""
    assert len(err.strip().splitlines()) == 1
    assert _snapshot(foreign_db.parent) == before  # byte-identical, and no -wal, -shm or -journal beside it
    assert _journal_mode(foreign_db) == "delete"
    assert not (tmp_path / "r.html").exists()


@pytest.mark.extra("gate")
def test_an_empty_file_is_refused_and_stays_empty(capsys, tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    code, _, err = invoke(capsys, "store", "list", "--store", str(path))
    assert code == 2 and f"{path}: holds no rankgate results store" in err
    assert path.read_bytes() == b"" and sorted(os.listdir(tmp_path)) == ["empty.db"]


@pytest.mark.extra("gate")
def test_a_store_opened_read_only_refuses_writes(tmp_path: Path) -> None:
    import rankgate
    from rankgate.errors import BackendError
    from rankgate.store.base import open_store

    path = tmp_path / "results.db"
    results = rankgate.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["P@1"])
    with open_store(path) as store:
        rid = store.add(results, name="bm25")
    before = _snapshot(tmp_path)
    with open_store(path, read_only=True) as store:
        assert [r.id for r in store.list()] == [rid]
        with pytest.raises(BackendError, match="opened read-only: cannot add a result"):
            store.add(results, name="again")
        with pytest.raises(BackendError, match="opened read-only: cannot set the baseline"):
            store.set_baseline(rid)
    with open_store(path, read_only=True) as store:
        assert [r.id for r in store.list()] == [rid]
    assert _snapshot(tmp_path)["results.db"] == before["results.db"]


def _unprivileged() -> list[str]:
    """A prefix that runs a command without the right to ignore file permissions.

    As root, chmod alone is moot: drop the capabilities that bypass it (setpriv, util-linux).
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only folder cannot be made")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner,-linux_immutable"]


@pytest.mark.extra("gate")
@pytest.mark.parametrize("command", READ_COMMANDS)
def test_read_commands_read_a_store_in_a_read_only_folder(capsys, tmp_path: Path, command: tuple[str, ...]) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    store = folder / "results.db"
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "bm25.run").write_text(RUN)
    code, _, err = invoke(
        capsys, "store", "add", str(tmp_path / "qrels.txt"), str(tmp_path / "bm25.run"), "-m", "P@2,RR",
        "--store", str(store), "--set-baseline", "default",
    )  # fmt: skip
    assert code == 0, err
    before = _snapshot(folder)
    assert list(before) == ["results.db"]  # WAL files are gone once the writer closed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    folder.chmod(0o555)
    try:
        done = subprocess.run(
            [*_unprivileged(), sys.executable, "-m", "rankgate", *_argv(command, store, tmp_path / "r.html")],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
    finally:
        folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert _snapshot(folder) == before
    if command[0] == "report":
        assert (tmp_path / "r.html").stat().st_size > 0
    else:
        assert "bm25" in done.stdout or "default" in done.stdout


# -- item 7: resource bounds on options ---------------------------------------------------
HUGE = 10**12


@pytest.mark.parametrize(
    ("call", "func"),
    [
        pytest.param(lambda s: s.bootstrap_ci([0.1, 0.2, 0.4], n_resamples=HUGE), "bootstrap_ci", id="bootstrap_ci"),
        pytest.param(
            lambda s: s.bootstrap_ci_columns([[0.1], [0.3]], n_resamples=HUGE), "bootstrap_ci_columns", id="columns"
        ),
        pytest.param(lambda s: s.bootstrap_means([[0.1], [0.3]], n_resamples=HUGE), "bootstrap_means", id="means"),
        pytest.param(
            lambda s: s.randomization_test([0.1, 0.2], [0.3, 0.1], n_resamples=HUGE),
            "randomization_test",
            id="randomization",
        ),
        pytest.param(
            lambda s: s.randomized_tukey_hsd([[0.1, 0.2, 0.3], [0.3, 0.1, 0.2]], n_resamples=HUGE),
            "randomized_tukey_hsd",
            id="tukey",
        ),
        pytest.param(
            lambda s: s.paired_summary([[0.1], [0.2]], [[0.3], [0.1]], n_resamples=HUGE),
            "paired_summary",
            id="summary",
        ),
    ],
)
def test_huge_resample_counts_are_a_config_error_naming_the_limit(call, func) -> None:
    from rankgate import stats
    from rankgate.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        call(stats)
    assert str(caught.value) == (
        f"The 'n_resamples' parameter of {func} must be an int between 1 and 10,000,000. Got {HUGE} instead."
    )


def test_ci_with_huge_resamples_is_a_config_error() -> None:
    import rankgate
    from rankgate.errors import ConfigError

    results = rankgate.evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 1.0}}, ["P@1"])
    with pytest.raises(ConfigError, match="'n_resamples' parameter of bootstrap_ci_columns must be an int between"):
        results.with_confidence_intervals(n_resamples=HUGE)
    assert results.ci is None  # nothing half-set


def test_compare_with_huge_resamples_exits_2(capsys, tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "bm25.run").write_text(RUN)
    (tmp_path / "dense.run").write_text(RUN)
    code, out, err = invoke(
        capsys, "compare", str(tmp_path / "qrels.txt"), str(tmp_path / "bm25.run"), str(tmp_path / "dense.run"),
        "-m", "P@2", "--resamples", str(HUGE),
    )  # fmt: skip
    assert code == 2 and out == ""
    assert "10,000,000" in err or "10000000" in err  # the limit; tests/test_resample_limits.py checks the wording
    assert "Traceback" not in err


@pytest.fixture
def low_open_file_limit():
    """This process may open 256 files (restored afterwards)."""
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
    try:
        yield min(256, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize(
    ("partitions", "message"),
    [
        pytest.param(
            "10000000000",
            "The 'partitions' parameter must be at most 4096 (one file per partition). Got 10000000000 instead.",
            id="absurd",
        ),
        pytest.param(
            "1000",
            "The 'partitions' parameter must be at most 192: the out-of-core engine keeps one file open per "
            "partition while it splits the run, and this process may open 256 files (ulimit -n), 64 of them kept "
            "for the rest. Got 1000 instead; give fewer partitions or raise the limit (ulimit -n).",
            id="open-file-limit",
        ),
    ],
)
def test_partitions_beyond_the_limits_exit_2_before_writing(
    capsys, tmp_path: Path, low_open_file_limit: int, partitions: str, message: str, monkeypatch
) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "bm25.run").write_text(RUN)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    code, out, err = invoke(
        capsys, "eval", str(tmp_path / "qrels.txt"), str(tmp_path / "bm25.run"), "-m", "P@2", "--partitions", partitions
    )
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    assert list(scratch.iterdir()) == []


def test_the_automatic_partition_count_stays_within_the_open_file_limit(low_open_file_limit: int) -> None:
    from rankgate.evaluation.engines import open_file_allowance

    assert open_file_allowance() == low_open_file_limit - 64
