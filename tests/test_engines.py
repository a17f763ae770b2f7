"""Out-of-core and Ray evaluation give exactly the in-memory results (values, counts, warnings)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rankgate
from rankgate.cli import main
from rankgate.errors import ConfigError, InputError
from rankgate.evaluation.engines.outofcore import evaluate_out_of_core, parse_memory
from rankgate.io import blocks
from tests.cli_support import exit_code, invoke

from .randomized import random_collection

MEASURES = ["nDCG@10", "nDCG", "AP", "AP@5", "RR", "P@5", "R@20", "Rprec", "Bpref", "Judged@5", "ERR@10", "NumRelRet"]


def write_collection(tmp: Path, seed: int, *, shuffle: bool, n_queries: int = 40) -> tuple[Path, Path, list[str]]:
    qrels, run = random_collection(seed, n_queries=n_queries)
    run_lines = [f"{q} Q0 {d} 0 {s} t" for q, docs in run.items() for d, s in docs.items()]
    qrels_lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    if shuffle:  # rows of a query scattered over the file: partitions must gather them
        random.Random(seed).shuffle(run_lines)
        random.Random(seed + 1).shuffle(qrels_lines)
    qrels_path, run_path = tmp / "qrels.txt", tmp / "run.txt"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    run_path.write_text("\n".join(run_lines) + "\n")
    return qrels_path, run_path, run_lines


def assert_same(a: rankgate.Results, b: rankgate.Results) -> None:
    assert a.query_ids == b.query_ids
    assert a.names == b.names
    assert np.array_equal(a.values, b.values)  # bit for bit
    assert a.queries == b.queries
    assert a.warnings == b.warnings


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("partitions", [1, 3, 16])
def test_out_of_core_equals_in_memory(tmp_path, monkeypatch, seed, partitions):
    monkeypatch.setattr(blocks, "DEFAULT_BLOCK_BYTES", 256)  # many blocks, rows of a query in several
    qrels, run, _ = write_collection(tmp_path, seed, shuffle=seed % 2 == 0)
    whole = rankgate.evaluate(qrels, run, MEASURES)
    parted = evaluate_out_of_core(qrels, run, MEASURES, memory="1MB", partitions=partitions, workdir=tmp_path)
    assert_same(whole, parted)
    assert "out of core" in parted.settings["engine"]
    assert not list(tmp_path.glob("rankgate-ooc-*")), "partition files must be removed"


@pytest.mark.parametrize(
    "options",
    [{"queries": "intersection"}, {"empty": "skip"}, {"ties": "input"}, {"rel": 2}, {"judged_only": True}],
)
def test_out_of_core_keeps_every_semantic_option(tmp_path, monkeypatch, options):
    monkeypatch.setattr(blocks, "DEFAULT_BLOCK_BYTES", 300)
    qrels, run, _ = write_collection(tmp_path, 11, shuffle=False)
    whole = rankgate.evaluate(qrels, run, MEASURES, **options)
    assert_same(whole, evaluate_out_of_core(qrels, run, MEASURES, partitions=5, **options))


@pytest.mark.parametrize("policy", ["first", "max"])
def test_duplicates_across_blocks(tmp_path, monkeypatch, policy):
    monkeypatch.setattr(blocks, "DEFAULT_BLOCK_BYTES", 64)
    qrels, run, lines = write_collection(tmp_path, 3, shuffle=True)
    q, _, d, _, s, _ = lines[0].split()
    run.write_text("\n".join([*lines, f"{q} Q0 {d} 0 {float(s) + 100} t"]) + "\n")  # same pair, far below
    whole = rankgate.evaluate(qrels, run, MEASURES, duplicates=policy)
    assert_same(whole, evaluate_out_of_core(qrels, run, MEASURES, partitions=4, duplicates=policy))
    with pytest.raises(InputError) as exc:
        evaluate_out_of_core(qrels, run, MEASURES, partitions=4)
    assert f"run.txt:{len(lines) + 1}" in str(exc.value) and "run.txt:1)" in str(exc.value)


def test_compressed_and_parquet_inputs(tmp_path):
    qrels, run, lines = write_collection(tmp_path, 5, shuffle=True)
    whole = rankgate.evaluate(qrels, run, MEASURES)
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(run.read_bytes()))
    assert_same(whole, evaluate_out_of_core(qrels, gz, MEASURES, partitions=3))
    fields = [line.split() for line in lines]
    parquet = tmp_path / "run.parquet"
    pq.write_table(
        pa.table(
            {"qid": [f[0] for f in fields], "docid": [f[2] for f in fields], "score": [float(f[4]) for f in fields]}
        ),
        parquet,
        row_group_size=50,
    )
    assert_same(whole, evaluate_out_of_core(qrels, parquet, MEASURES, partitions=3))


def test_bad_line_deep_in_the_file_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(blocks, "DEFAULT_BLOCK_BYTES", 128)
    qrels, run, lines = write_collection(tmp_path, 2, shuffle=False)
    bad = len(lines) - 3
    lines[bad - 1] = "q1 Q0 dX 1 high t"
    run.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        evaluate_out_of_core(qrels, run, MEASURES, partitions=2)
    assert f"run.txt:{bad}" in str(exc.value) and "'high'" in str(exc.value)


def test_other_formats_are_refused(tmp_path):
    qrels, _, _ = write_collection(tmp_path, 1, shuffle=False)
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"q1": {"d1": 1.0}}))
    with pytest.raises(InputError, match="TREC text or Parquet"):
        evaluate_out_of_core(qrels, run, MEASURES, partitions=2)


@pytest.mark.parametrize(
    ("text", "value"), [("2GB", 2 << 30), ("512mb", 512 << 20), ("1.5G", 3 << 29), (4 << 20, 4 << 20)]
)
def test_parse_memory(text, value):
    assert parse_memory(text) == value


@pytest.mark.parametrize("text", ["lots", "12 parsecs", "100", "0.5MB"])
def test_parse_memory_rejects(text):
    with pytest.raises(ConfigError, match="memory"):
        parse_memory(text)


def test_cli_memory_and_partitions(tmp_path, capsys):
    qrels, run, _ = write_collection(tmp_path, 7, shuffle=True)
    outputs = []
    for extra in ([], ["--partitions", "4"], ["--memory", "1MB"]):
        try:
            main(["eval", str(qrels), str(run), "-m", "nDCG@10,AP", "--format", "json", *extra])
        except SystemExit as e:
            assert e.code == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0]["aggregate"] == outputs[1]["aggregate"] == outputs[2]["aggregate"]
    assert "engine" not in outputs[0]["settings"] and "out of core" in outputs[1]["settings"]["engine"]
    assert "out of core" not in outputs[2]["settings"].get("engine", "")  # small files fit in 1MB


# ---------------------------------------------------------------------------------------------
# Ray, on a local cluster started by the tests
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def write_shards(tmp: Path, lines: list[str], n: int, kind: str) -> Path:
    folder = tmp / "shards"
    folder.mkdir()
    for s in range(n):
        part = lines[s::n]
        if kind == "parquet":
            f = [line.split() for line in part]
            table = pa.table({"qid": [x[0] for x in f], "docid": [x[2] for x in f], "score": [float(x[4]) for x in f]})
            pq.write_table(table, folder / f"part-{s:02d}.parquet")
        else:
            (folder / f"part-{s:02d}.txt").write_text("\n".join(part) + "\n")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["parquet", "trec"])
def test_ray_equals_local(tmp_path, ray_cluster, kind):
    from rankgate.evaluation.engines.ray import evaluate_ray

    qrels, _, lines = write_collection(tmp_path, 9, shuffle=True, n_queries=60)
    folder = write_shards(tmp_path, lines, 3, kind)
    concatenated = tmp_path / "all.txt"
    concatenated.write_text("".join((folder / f"part-{s:02d}.txt").read_text() for s in range(3)) if kind == "trec"
                            else "\n".join(line for s in range(3) for line in lines[s::3]) + "\n")  # fmt: skip
    whole = rankgate.evaluate(qrels, concatenated, MEASURES)
    on_ray = evaluate_ray(qrels, folder, MEASURES, partitions=5)
    assert_same(whole, on_ray)
    assert on_ray.settings["engine"].startswith("ray: 3 shards")


@pytest.mark.slow
def test_ray_through_the_cli_and_errors(tmp_path, ray_cluster, capsys):
    qrels, run, lines = write_collection(tmp_path, 4, shuffle=True)
    folder = write_shards(tmp_path, lines, 2, "trec")
    code, stdout, _ = invoke(
        capsys, "eval", str(qrels), str(folder), "-m", "nDCG@10", "--engine", "ray", "--format", "json"
    )
    out = json.loads(stdout)
    assert code == 0
    assert out["aggregate"]["nDCG@10"] == rankgate.evaluate(qrels, run, "nDCG@10")["nDCG@10"]  # bit for bit
    broken = folder / "part-01.txt"
    text = broken.read_text().splitlines()
    text[4] = "q1 Q0 dX 1 high t"
    broken.write_text("\n".join(text) + "\n")
    with pytest.raises(SystemExit) as exc:
        main(["eval", str(qrels), str(folder), "-m", "nDCG@10", "--engine", "ray"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "part-01.txt:5" in err and "'high'" in err and "Traceback" not in err


def test_ray_bad_address_fails_before_joining(tmp_path, monkeypatch):
    """A cluster address nobody listens on stops at once (``ray.init`` would wait for minutes)."""
    ray = pytest.importorskip("ray")
    from rankgate.errors import BackendError
    from rankgate.evaluation.engines.ray import evaluate_ray

    def never(*args, **kwargs):
        raise AssertionError("ray.init was called")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", never)
    qrels, run, _ = write_collection(tmp_path, 2, shuffle=False)
    with pytest.raises(BackendError, match=r"cannot connect to the Ray cluster at 127\.0\.0\.1:1: .*ray start --head"):
        evaluate_ray(qrels, run, MEASURES, address="127.0.0.1:1")


# -- compare, gate and store on results evaluated elsewhere -------------------------------------
GATES = "gates:\n  - {name: ndcg, metric: nDCG@10, threshold: 0.1, regression_max: 0.02}\n"


def _cli_json(capsys, *args: str) -> tuple[int, dict]:
    code, out, _ = invoke(capsys, *args)
    return code, json.loads(out)


def _two_runs(tmp_path: Path) -> tuple[Path, Path, Path, list[str], list[str]]:
    """The qrels, two runs of the same queries, and their lines (for shards)."""
    qrels, base, base_lines = write_collection(tmp_path, 21, shuffle=True, n_queries=50)
    rng = random.Random(5)
    new_lines = [
        line.rsplit(" ", 2)[0] + f" {float(line.split()[4]) + rng.choice([-0.25, 0, 0.25])} t" for line in base_lines
    ]
    new = tmp_path / "new.txt"
    new.write_text("\n".join(new_lines) + "\n")
    return qrels, base, new, base_lines, new_lines


def _same_comparison(a: dict, b: dict) -> None:
    for key in ("comparisons", "means", "queries", "pairs"):
        assert a[key] == b[key], key


@pytest.mark.extra("gate")
def test_compare_gate_and_store_out_of_core_equal_in_memory(tmp_path, capsys):
    qrels, base, new, _, _ = _two_runs(tmp_path)
    args = ["compare", str(qrels), str(base), str(new), "-m", "nDCG@10,AP", "--format", "json", "--resamples", "500"]
    _, local = _cli_json(capsys, *args)
    code, parted = _cli_json(capsys, *args, "--partitions", "4")
    assert code == 0 and "out of core" in parted["settings"]["engine"]
    _same_comparison(local, parted)
    config = tmp_path / "gates.yaml"
    config.write_text(GATES)
    gate = ["gate", "--qrels", str(qrels), "--run", str(new), "--baseline-run", str(base), "--config", str(config)]
    code_local, local = _cli_json(capsys, *gate, "--format", "json")
    code_parted, parted = _cli_json(capsys, *gate, "--format", "json", "--partitions", "3")
    assert code_local == code_parted and "out of core" in parted["settings"]["engine"]
    assert local["gates"] == parted["gates"] and local["verdict"] == parted["verdict"]
    with pytest.raises(SystemExit) as e:
        main(["compare", str(qrels), str(base), str(tmp_path), "--ray-address", "auto"])
    assert e.value.code == 2 and "--ray-address needs --engine ray" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_gate_and_store_on_ray_shards_equal_local(tmp_path, ray_cluster, capsys):
    """Sharded runs evaluated on Ray feed compare, gate and the store exactly like local files."""
    qrels, base, new, base_lines, new_lines = _two_runs(tmp_path)
    shards = {}
    for name, lines in (("base", base_lines), ("new", new_lines)):
        (tmp_path / name).mkdir()
        shards[name] = write_shards(tmp_path / name, lines, 3, "parquet")
    measures = ["-m", "nDCG@10,AP,RR"]
    names = ["--name", "base", "--name", "new"]
    _, local = _cli_json(capsys, "compare", str(qrels), str(base), str(new), *measures, *names, "--format", "json")
    code, on_ray = _cli_json(
        capsys, "compare", str(qrels), str(shards["base"] / "*.parquet"), str(shards["new"] / "*.parquet"),
        *measures, "--format", "json", "--engine", "ray", *names,
    )  # fmt: skip
    assert code == 0
    _same_comparison(local, on_ray)
    config = tmp_path / "gates.yaml"
    config.write_text(GATES)
    gate = ["gate", "--qrels", str(qrels), "--config", str(config), "--format", "json", "--no-record"]
    _, local = _cli_json(capsys, *gate, "--run", str(new), "--baseline-run", str(base))
    _, on_ray = _cli_json(capsys, *gate, "--run", str(shards["new"]), "--baseline-run", str(shards["base"]),
                          "--engine", "ray")  # fmt: skip
    assert local["gates"] == on_ray["gates"] and on_ray["settings"]["engine"].startswith("ray")
    store = tmp_path / "results.db"
    assert exit_code("store", "add", str(qrels), str(shards["new"]), "-m", "nDCG@10", "--store", str(store),
                     "--engine", "ray", "--name", "new") in (0, None)  # fmt: skip
    capsys.readouterr()
    from rankgate.store.base import open_store

    with open_store(str(store)) as opened:
        stored = opened.resolve("latest").to_results()
    direct = rankgate.evaluate(qrels, new, ["nDCG@10"])
    assert stored.query_ids == direct.query_ids and np.array_equal(stored.values, direct.values)


# -- the qrels are read once per command, on every engine -------------------------------------
@pytest.fixture
def count_qrels_reads(monkeypatch):
    """Counts every read of a qrels file: whole (`read_qrels`) or streamed (`iter_blocks(..., "qrels")`)."""
    import rankgate.io as io
    from rankgate.io import coerce, readers

    reads: list[str] = []
    real_read, real_blocks = readers.read_qrels, blocks.iter_blocks

    def read_qrels(path, *args, **kwargs):
        reads.append(str(path))
        return real_read(path, *args, **kwargs)

    def iter_blocks(path, kind, *args, **kwargs):
        if kind == "qrels":
            reads.append(str(path))
        return real_blocks(path, kind, *args, **kwargs)

    for module in (io, readers, coerce):
        monkeypatch.setattr(module, "read_qrels", read_qrels)
    import rankgate.evaluation.engines.outofcore as outofcore
    import rankgate.evaluation.engines.ray as on_ray

    for module in (blocks, outofcore, on_ray):
        monkeypatch.setattr(module, "iter_blocks", iter_blocks)
    return reads


def _reads_per_verb(tmp_path: Path, capsys, reads: list[str], engine: list[str], base: str, new: str) -> dict:
    """How many times each verb read the qrels, with ``engine`` options."""
    qrels = str(tmp_path / "qrels.txt")
    config = tmp_path / "gates.yaml"
    config.write_text(GATES)
    verbs = {
        "compare": ["compare", qrels, base, new, "-m", "nDCG@10", "--resamples", "200", "--name", "a", "--name", "b"],
        "gate": ["gate", "--qrels", qrels, "--run", new, "--baseline-run", base, "--config", str(config)],
        "store add": ["store", "add", qrels, new, "-m", "nDCG@10", "--store", str(tmp_path / "r.db"), "--name", "n"],
    }
    counts = {}
    for verb, args in verbs.items():
        reads.clear()
        try:
            code = main([*args, *engine]) or 0
        except SystemExit as e:
            code = e.code
        capsys.readouterr()
        assert code in (0, 1), verb
        counts[verb] = len(reads)
    return counts


@pytest.mark.parametrize("engine", [[], ["--partitions", "3"], ["--memory", "1MB"]])
def test_compare_gate_and_store_read_the_qrels_once(tmp_path, capsys, count_qrels_reads, engine):
    _, base, new, _, _ = _two_runs(tmp_path)
    counts = _reads_per_verb(tmp_path, capsys, count_qrels_reads, engine, str(base), str(new))
    assert counts == {"compare": 1, "gate": 1, "store add": 1}


@pytest.mark.slow
def test_compare_gate_and_store_read_the_qrels_once_on_ray(tmp_path, ray_cluster, capsys, count_qrels_reads):
    _, _, _, base_lines, new_lines = _two_runs(tmp_path)
    shards = {}
    for name, lines in (("base", base_lines), ("new", new_lines)):
        (tmp_path / name).mkdir()
        shards[name] = str(write_shards(tmp_path / name, lines, 2, "trec"))
    counts = _reads_per_verb(tmp_path, capsys, count_qrels_reads, ["--engine", "ray"], shards["base"], shards["new"])
    assert counts == {"compare": 1, "gate": 1, "store add": 1}
