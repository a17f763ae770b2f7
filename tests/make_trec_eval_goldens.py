"""Golden files: trec_eval's own output for the all_trec measures on inputs this script generates.

CI has no trec_eval binary, so ``tests/test_trec_eval_measures.py`` checks rankgate against these
files; when a binary is at hand (``RANKGATE_TREC_EVAL``, or the path in ``/work/oracle/READY``)
the same test also runs it live on fresh random inputs. Regenerate with

    python tests/make_trec_eval_goldens.py /path/to/trec_eval

which writes ``tests/golden/trec_eval/<case>/{qrels,run}.txt`` and one ``<variant>.txt`` per
option set (trec_eval's stdout, ``-q``). The functions here also read such an output back and
compute rankgate's values for the same options.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden" / "trec_eval"

# The all_trec measures rankgate added, by trec_eval's names (defaults), and a variant with parameters.
MEASURES = (
    "gm_map", "gm_bpref", "iprec_at_recall", "11pt_avg", "infAP", "Rprec_mult", "utility", "binG", "G",
    "ndcg_rel", "Rndcg", "relative_P", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "unj", "rbp_resid", "num_q",
)  # fmt: skip
PARAMETERS = (
    "iprec_at_recall.0.15,0.55", "Rprec_mult.0.3,1.5", "set_F.0.5", "relative_P.3,7", "unj.3,25",
    "utility.2,-1,-0.5,0.25",
)  # fmt: skip
VARIANTS: dict[str, tuple[str, ...]] = {
    "plain": (),
    "complete": ("-c",),
    "level2": ("-l", "2"),
    "judged": ("-J",),
    "max5": ("-M", "5"),
    "complete_level2_judged": ("-c", "-l", "2", "-J"),
}
PARAM_VARIANT = ("params", ("-N", "100"))  # not -c: see docs/semantics.md on utility
CASES = {"small": (11, 12), "ties": (23, 20), "wide": (37, 30)}  # name: (seed, queries)
TEXT_LINES = ("runid", "relstring")


def trec_eval_binary() -> str | None:
    """The trec_eval binary to run: RANKGATE_TREC_EVAL, or the path in /work/oracle/READY."""
    path = os.environ.get("RANKGATE_TREC_EVAL")
    ready = Path("/work/oracle/READY")
    if not path and ready.is_file():
        path = ready.read_text().strip()
    return path if path and os.access(path, os.X_OK) else None


def write_inputs(directory: Path, seed: int, n_queries: int) -> None:
    from tests.randomized import random_collection

    qrels, run = random_collection(seed, n_queries=n_queries)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "qrels.txt", "w") as f:
        for q in sorted(qrels):
            for d, g in sorted(qrels[q].items()):
                f.write(f"{q} 0 {d} {g}\n")
    with open(directory / "run.txt", "w") as f:
        for q in sorted(run):
            for i, (d, s) in enumerate(sorted(run[q].items()), start=1):
                f.write(f"{q} Q0 {d} {i} {s:g} run{seed}\n")


def trec_eval_args(options: Sequence[str], measures: Sequence[str]) -> list[str]:
    return ["-q", *options, *(a for m in measures for a in ("-m", m))]


def run_trec_eval(binary: str, directory: Path, options: Sequence[str], measures: Sequence[str]) -> str:
    args = [binary, *trec_eval_args(options, measures), str(directory / "qrels.txt"), str(directory / "run.txt")]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def read_output(text: str) -> dict[tuple[str, str], float]:
    """trec_eval's ``-q`` output as {(measure name, query id or 'all'): value}, text lines left out."""
    out: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        if name not in TEXT_LINES:
            out[(name, qid)] = float(value)
    return out


def read_inputs(directory: Path) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for line in (directory / "qrels.txt").read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    for line in (directory / "run.txt").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    return qrels, run


def _option(options: Sequence[str], flag: str, default: int) -> int:
    return int(options[options.index(flag) + 1]) if flag in options else default


def rankgate_output(qrels, run, options: Sequence[str], names: Sequence[str]) -> dict[tuple[str, str], float]:  # type: ignore[no-untyped-def]
    """rankgate's values for trec_eval's printed ``names`` under trec_eval's ``options``."""
    import rankgate
    from rankgate.measures.parse import read_name

    depth = _option(options, "-M", 0)
    if depth:  # trec_eval -M: each ranking cut to its top M docs in trec_eval's order
        order = lambda scores: sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)  # noqa: E731
        run = {q: dict(order(scores)[:depth]) for q, scores in run.items()}
    num_docs = _option(options, "-N", 0)
    wanted = {}
    for name in dict.fromkeys(names):
        (measure,) = read_name(name)
        wanted[name] = measure.with_defaults(num_docs=num_docs)
    res = rankgate.evaluate(
        qrels,
        run,
        list(dict.fromkeys(wanted.values())),
        queries="qrels" if "-c" in options else "intersection",
        rel=_option(options, "-l", 1),
        judged_only="-J" in options,
    )
    index = {m: j for j, m in enumerate(dict.fromkeys(wanted.values()))}
    out: dict[tuple[str, str], float] = {}
    for name, m in wanted.items():
        column = res.values[:, index[m]]
        out.update({(name, q): float(v) for q, v in zip(res.query_ids, column, strict=True)})
        out[(name, "all")] = res.aggregate[res.names[index[m]]]
    return out


def mismatches(expected: dict[tuple[str, str], float], got: dict[tuple[str, str], float]) -> list[str]:
    """Where rankgate differs from trec_eval's printed value (4 decimals) by more than rounding."""
    bad = [f"{k}: trec_eval {v}, rankgate {got.get(k)}" for k, v in expected.items() if k not in got]
    for key, value in expected.items():
        if key in got and abs(got[key] - value) > 5.1e-5 * max(1.0, abs(value)):
            bad.append(f"{key}: trec_eval {value}, rankgate {got[key]}")
    return bad


def variants() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each golden variant: (trec_eval options, -m names)."""
    out = {name: (options, MEASURES) for name, options in VARIANTS.items()}
    out[PARAM_VARIANT[0]] = (PARAM_VARIANT[1], PARAMETERS)
    return out


def main(binary: str) -> None:
    for case, (seed, n_queries) in CASES.items():
        directory = GOLDEN / case
        write_inputs(directory, seed, n_queries)
        for name, (options, measures) in variants().items():
            text = run_trec_eval(binary, directory, options, measures)
            (directory / f"{name}.txt").write_text(text)
            print(f"{directory / name}.txt: {len(text.splitlines())} lines")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    main(
        sys.argv[1]
        if len(sys.argv) > 1
        else (trec_eval_binary() or sys.exit("usage: make_trec_eval_goldens.py TREC_EVAL"))
    )
