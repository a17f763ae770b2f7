"""SQLite store under concurrent writers and crashes (real processes, real SIGKILL)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rankgate.store.base import open_store
from rankgate.store.provenance import Provenance

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"), pytest.mark.extra("gate")]

# Only a hang stops a test at this limit: every wait here is for an event (a file, a commit line, an
# exit), and a busy CI machine may take minutes where a quiet one takes seconds.
HANG_LIMIT_S = 600.0

# The child builds a deterministic result of N queries x 10 measures (seeded by its index),
# writes the READY file, waits for the GO file, then does its writes. MODE picks what it does
# inside each write transaction, before the commit: "slow" sleeps (so that writers overlap),
# "hang" writes the INSIDE file and sleeps until killed, "suicide" SIGKILLs itself; "report"
# prints a line after each commit (the parent kills it on a commit count, never on a clock).
CHILD = r"""
import os, signal, sys, time
from pathlib import Path
import numpy as np
from rankgate.evaluation.results import Results
from rankgate.measures.parse import parse_measure
from rankgate.store.provenance import Provenance
from rankgate.store.base import open_store

path, tag, adds, n, mode, go, inside, ready = sys.argv[1:9]
adds, n = int(adds), int(n)
names = ["P@1", "P@5", "P@10", "R@5", "R@10", "R@100", "nDCG@10", "RR@10", "AP", "nDCG@100"]

def result(seed):
    values = np.random.default_rng(seed).random((n, len(names)))
    return Results([parse_measure(m) for m in names], [f"q{i}" for i in range(n)], values,
                   {"evaluated": n, "missing_from_run": 0, "run_only": 0, "no_relevant": 0}, {"ties": "trec"})

def hook():
    if mode == "slow":
        time.sleep(0.02)
    elif mode == "hang":
        Path(inside).write_text("inside")
        time.sleep(60)
    elif mode == "suicide":
        Path(inside).write_text("inside")
        os.kill(os.getpid(), signal.SIGKILL)

Path(ready).write_text("ready")
while not os.path.exists(go):
    time.sleep(0.002)
store = open_store(path)
store._before_commit = hook
for i in range(adds):
    store.add(result(1000 * int(tag[-1]) + i), name=f"{tag}-{i}", provenance=Provenance(branch=tag))
    if mode == "report":
        print(f"committed {i}", flush=True)
store.close()
print("done")
"""

NAMES = 10


def expected_values(tag: str, i: int, n: int) -> np.ndarray:
    return np.random.default_rng(1000 * int(tag[-1]) + i).random((n, NAMES))


def child(tmp_path: Path, store: Path, tag: str, *, adds: int, n: int, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            CHILD,
            str(store),
            tag,
            str(adds),
            str(n),
            mode,
            str(tmp_path / "go"),
            str(tmp_path / f"inside-{tag}"),
            str(tmp_path / f"ready-{tag}"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = HANG_LIMIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"child exited early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not appear")
        time.sleep(0.01)


def wait_for_commits(proc: subprocess.Popen[str], count: int) -> None:
    """Block until a "report" child has printed ``count`` commits (it flushes after each)."""
    assert proc.stdout is not None
    for _ in range(count):
        if not proc.stdout.readline():
            proc.wait(timeout=HANG_LIMIT_S)
            raise AssertionError(f"child exited early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def test_two_processes_adding_at_once_both_land(tmp_path: Path) -> None:
    """Both writers start on a store that does not exist yet: creation races too."""
    path = tmp_path / "shared.db"
    procs = [child(tmp_path, path, tag, adds=6, n=2000, mode="slow") for tag in ("w1", "w2")]
    for tag, proc in zip(("w1", "w2"), procs, strict=True):  # both imported and waiting on the GO file
        wait_for(tmp_path / f"ready-{tag}", proc)
    (tmp_path / "go").write_text("go")
    for p in procs:
        out, err = p.communicate(timeout=HANG_LIMIT_S)
        assert p.returncode == 0, err
        assert out.strip() == "done"
    with open_store(path) as s:
        found = s.list(limit=None)
        assert len(found) == 12
        assert sorted(r.id for r in found) == list(range(1, 13))
        assert sorted(r.name for r in found) == sorted(f"{t}-{i}" for t in ("w1", "w2") for i in range(6))
        for r in found:
            tag, i = r.name.split("-")
            assert r.branch == tag
            assert r.to_results().values.tobytes() == expected_values(tag, int(i), 2000).tobytes()
        # Each writer's own adds keep their order.
        for tag in ("w1", "w2"):
            mine = sorted((r for r in found if r.branch == tag), key=lambda r: r.id)
            assert [r.name for r in mine] == [f"{tag}-{i}" for i in range(6)]
    assert integrity(path) == "ok"


def earlier_results(path: Path) -> dict[int, bytes]:
    """Three committed results, as the store holds them before the crash."""
    from tests.test_store import random_results

    kept = {}
    with open_store(path) as s:
        for seed in range(3):
            res = random_results(300, seed=seed)
            kept[s.add(res, name=f"before-{seed}", provenance=Provenance(branch="main"))] = res.values.tobytes()
        s.set_baseline(2)
    return kept


def assert_intact(path: Path, kept: dict[int, bytes]) -> None:
    assert integrity(path) == "ok"
    with open_store(path) as s:
        found = s.list(limit=None)
        assert sorted(r.id for r in found) == sorted(kept)
        for rid, values in kept.items():
            assert s.get(rid).to_results().values.tobytes() == values
        assert s.baseline().id == 2
        # The store takes writes again, and the next id follows the committed ones.
        assert s.add(s.get(1).to_results(), provenance=Provenance(branch="after")) == max(kept) + 1


def test_writer_killed_mid_transaction_loses_nothing_committed(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    kept = earlier_results(path)
    (tmp_path / "go").write_text("go")
    proc = child(tmp_path, path, "w1", adds=1, n=10_000, mode="hang")
    wait_for(tmp_path / "inside-w1", proc)
    # While the writer holds the write lock, readers still read (WAL).
    with open_store(path) as s:
        assert len(s.list()) == 3
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=HANG_LIMIT_S)
    assert proc.returncode == -signal.SIGKILL
    assert_intact(path, kept)


def test_writer_that_dies_inside_a_large_add_leaves_store_readable(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    kept = earlier_results(path)
    (tmp_path / "go").write_text("go")
    proc = child(tmp_path, path, "w2", adds=1, n=20_000, mode="suicide")
    proc.wait(timeout=HANG_LIMIT_S)
    assert proc.returncode == -signal.SIGKILL
    assert (tmp_path / "inside-w2").exists()  # it died inside the transaction, after the INSERT
    assert_intact(path, kept)


@pytest.mark.slow
def test_writer_killed_at_random_moments(tmp_path: Path) -> None:
    """Kill writers doing back-to-back large adds at arbitrary points; committed ones all survive."""
    path = tmp_path / "r.db"
    (tmp_path / "go").write_text("go")
    rng = np.random.default_rng(5)
    landed = 0
    for round_ in range(4):
        proc = child(tmp_path, path, f"w{round_ + 1}", adds=50, n=5000, mode="report")
        wait_for_commits(proc, int(rng.integers(1, 6)))  # a random commit count, however slow the machine
        # A random pause puts the kill anywhere in the next add; the test's claims hold wherever it lands.
        time.sleep(0.3 * float(rng.random()))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=HANG_LIMIT_S)
        assert integrity(path) == "ok"
        with open_store(path) as s:
            found = s.list(limit=None)
            for r in found:
                tag, i = r.name.split("-")
                assert r.to_results().values.tobytes() == expected_values(tag, int(i), 5000).tobytes()
            assert len(found) >= landed  # nothing committed earlier is lost
            landed = len(found)
    assert landed > 0


# Each child has its engine ready, spins on the GO file, then connects (the connect hook puts
# the fresh file in WAL mode) and writes. Without retrying the WAL switch, SQLite answers one
# of two converting connections "database is locked" at once, ignoring the busy timeout.
WAL_CHILD = r"""
import os, sys
from rankgate.store.connect import WRITE_OPTION, create_engine, parse_location

engine = create_engine(parse_location(sys.argv[1]))
open(sys.argv[3], "w").close()  # ready: imported, engine made
while not os.path.exists(sys.argv[2]):
    pass
with engine.connect() as conn:
    conn.execution_options(**{WRITE_OPTION: True})
    with conn.begin():
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        conn.exec_driver_sql("INSERT INTO t VALUES (1)")
print("done")
"""


def test_fresh_file_opened_by_many_processes_at_once(tmp_path: Path) -> None:
    for trial in range(8):
        path, go = tmp_path / f"fresh{trial}.db", tmp_path / f"go{trial}"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WAL_CHILD, str(path), str(go), str(tmp_path / f"ready{trial}-{k}")],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for k in range(4)
        ]
        for k, proc in enumerate(procs):  # every child imported and spinning
            wait_for(tmp_path / f"ready{trial}-{k}", proc)
        go.write_text("go")
        for p in procs:
            out, err = p.communicate(timeout=HANG_LIMIT_S)
            assert p.returncode == 0, err
            assert out.strip() == "done"
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 4
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
