"""The one thread-count rule (`rankgate.cpus`): affinity, a cgroup CPU quota, RANKGATE_THREADS."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

import rankgate.cpus as cpus


def test_threads_use_the_cpus_this_process_may_run_on(monkeypatch):
    monkeypatch.delenv("RANKGATE_THREADS", raising=False)
    monkeypatch.setattr(cpus, "usable_cpus", lambda: 2)
    assert cpus.worker_threads() == 2  # a 2-core machine: both, whatever else runs beside
    monkeypatch.setattr(cpus, "usable_cpus", lambda: 1)
    assert cpus.worker_threads() == 1
    monkeypatch.setattr(cpus, "usable_cpus", lambda: 16)
    assert cpus.worker_threads() == 4  # at most 4
    monkeypatch.setenv("RANKGATE_THREADS", "3")
    assert cpus.worker_threads() == 3
    monkeypatch.setenv("RANKGATE_THREADS", "zero")
    assert cpus.worker_threads() == 4
    monkeypatch.undo()
    assert 1 <= cpus.usable_cpus() <= (cpus.os.cpu_count() or 1)


def test_usable_cpus_follow_affinity_and_a_cgroup_quota(monkeypatch):
    monkeypatch.setattr(cpus.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5}, raising=False)
    monkeypatch.setattr(cpus, "cgroup_cpu_quota", lambda: None)
    assert cpus.usable_cpus() == 6
    monkeypatch.setattr(cpus, "cgroup_cpu_quota", lambda: 2)  # docker --cpus 1.5: rounded up
    assert cpus.usable_cpus() == 2


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu.max": "150000 100000\n"}, 2),
        ({"cpu.max": "50000 100000\n"}, 1),
        ({"cpu.max": "400000 100000\n"}, 4),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),  # cgroup v1
        ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),
        ({"cpu,cpuacct/cpu.cfs_quota_us": "100000\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 1),
        ({"cpu.max": "garbage\n"}, None),
        ({"cpu.max": "100000 0\n"}, None),
        ({}, None),
    ],
)
def test_cgroup_cpu_quota_is_read_from_v2_or_v1_files(tmp_path, monkeypatch, files, expected):
    monkeypatch.setattr(cpus, "_own_cgroup", lambda controller: "")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cpus.cgroup_cpu_quota(str(tmp_path)) == expected


@pytest.mark.parametrize(
    ("own", "files", "expected"),
    [
        ("/job", {"job/cpu.max": "100000 100000\n", "cpu.max": "max 100000\n"}, 1),  # its own
        ("/job/step", {"job/step/cpu.max": "max 100000\n", "job/cpu.max": "200000 100000\n"}, 2),  # a parent's
        ("/a/b", {"a/b/cpu.max": "300000 100000\n", "a/cpu.max": "100000 100000\n"}, 1),  # the smallest
        ("/sub", {"sub/cpu.max": "max 100000\n", "cpu.max": "100000 100000\n"}, 1),  # the root's
    ],
)
def test_cgroup_quota_is_the_smallest_on_the_way_to_the_root(tmp_path, monkeypatch, own, files, expected):
    monkeypatch.setattr(cpus, "_own_cgroup", lambda controller: own if controller == "0" else "")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cpus.cgroup_cpu_quota(str(tmp_path)) == expected


def test_own_cgroup_paths_and_their_ancestors(monkeypatch):
    text = "12:cpu,cpuacct:/docker/abc\n4:memory:/m\n0::/user.slice/job\n"
    monkeypatch.setattr(cpus, "open", lambda *a, **k: io.StringIO(text), raising=False)
    assert cpus._own_cgroup("0") == "/user.slice/job"
    assert cpus._own_cgroup("cpu") == "/docker/abc"
    assert cpus._own_cgroup("blkio") == ""
    assert cpus._ancestors("/a/b") == ["/a/b", "/a", ""]
    assert cpus._ancestors("") == [""]


def test_every_parallel_part_takes_the_one_rule():
    """The scanner and column passes and the bootstrap's blocks use `worker_threads`, also under
    ``RANKGATE_THREADS`` (read at import, so in a fresh interpreter), and `rankgate.stats` gets it
    without importing `rankgate.core` (and pyarrow)."""
    code = (
        "import sys; import rankgate.stats.bootstrap as b; "
        "assert 'rankgate.core' not in sys.modules and 'pyarrow' not in sys.modules, 'stats imported core'; "
        "import rankgate.core.parallel as p; print(b.THREADS, p.WORKERS)"
    )
    env = {"RANKGATE_THREADS": "3", "PATH": ""}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["3", "3"]
