"""The trec_eval binary as a test-only oracle, and the inputs both tools are run on.

The binary is found through ``RANKGATE_TREC_EVAL`` (its path) or a file ``/work/oracle/READY``
holding its path; trec_eval's own test folder through ``RANKGATE_TREC_EVAL_TESTS`` (or beside the oracle).
`cases` is shared by the oracle test and ``tests/make_trec_eval_cli_goldens.py``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.randomized import random_collection

READY = Path("/work/oracle/READY")
SEEDS = (1, 2, 3, 4)
# (case name, trec_eval options): ties, negative grades and missing queries come from the inputs
OPTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("summary", ()),
    ("q", ("-q",)),
    ("qc", ("-q", "-c")),
    ("qcl2", ("-q", "-c", "-l", "2")),
    ("qJ", ("-q", "-J")),
    ("qM5", ("-q", "-M", "5")),
    ("qcJM3", ("-q", "-c", "-J", "-M3")),
    ("n", ("-q", "-n", "-l2")),
)
# the measures rankgate computes today, as trec_eval requests (official and all_trec are tried too)
MEASURES = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank",
    "P", "recall.1,3,10", "ndcg_cut.3,10", "map_cut", "success", "ndcg",
)  # fmt: skip
NICKNAMES = ("official", "all_trec", "set")
# all_trec on every seed under these options; official and set on seed 1 with -q -c
ALL_TREC_OPTIONS = ("qc", "qcl2", "qJ", "qcJM3", "summary")
# trec_eval's parameter forms rankgate reads (utility's d term uses -N)
PARAM_FORMS = (
    "-q", "-N", "100", "-m", "utility.2,-1,0,1", "-m", "set_F.0.5", "-m", "rbp.p=0.8", "-m", "rbp_resid.p=0.5",
    "-m", "relstring.20", "-m", "ndcg_cut.10,20,23.4", "-m", "iprec_at_recall..10,.25",
    "-m", "Rprec_mult.5.0,0.2,0.35", "-m", "P.5,7,3", "-m", "unj.3,30", "-m", "success.2,5,20",
    "-m", "ndcg.1=3,2=9,4=4.5",
)  # fmt: skip

# more parameter forms: gain maps (G, ndcg_rel, Rndcg, rbp, ndcg; negative gains, ignored names),
# recall levels (11pt_avg, iprec_at_recall, Rprec_mult at values their names round), and the rest
MORE_PARAM_FORMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gains", (
        "-q", "-c", "-m", "G.1=3,2=9", "-m", "ndcg_rel.0=1,2=5", "-m", "Rndcg.1=2,2=2", "-m", "rbp.p=0.5,1=3",
        "-m", "rbp_resid.p=0.3,1=5,x=2", "-m", "ndcg.0=1,3=5,x=2",
    )),
    ("gains-neg", (
        "-q", "-J", "-m", "G.2=-3,x=4", "-m", "ndcg_rel.1=-2", "-m", "Rndcg.0=2,1=5", "-m", "rbp.0=-1,p=0.7",
    )),
    ("levels", (
        "-q", "-c", "-M3", "-N", "50", "-m", "11pt_avg.0,0.5,1", "-m", "iprec_at_recall.0.125,0.333,0.05",
        "-m", "Rprec_mult.0.125,3,0.5,1234567", "-m", "relstring.5.7", "-m", "set_F.0.25,9",
        "-m", "utility.1.5,-0.5,0.25,-1", "-m", "map.5",
    )),
    ("cuts", (
        "-q", "-l2", "-m", "relative_P.3,8", "-m", "map_cut.2,7", "-m", "success.3", "-m", "unj.1,4",
        "-m", "recall.2,6", "-m", "11pt_avg..1,.9", "-m", "rbp.2=0.5", "-m", "P.4", "-m", "P.9",
    )),
    ("all_trec-params", ("-q", "-c", "-m", "all_trec", "-m", "G.1=3", "-m", "rbp.p=0.6", "-m", "11pt_avg.0.5,0.5")),
    # dcg, ideal_dcg and ndcg share one parameter table in trec_eval: parameters for one of them
    # with another requested crash it (rankgate refuses that), so each is asked alone with gains
    ("dcg-gains", ("-q", "-c", "-J", "-m", "dcg.1=3,2=-9")),
    ("ideal_dcg-gains", ("-q", "-l2", "-m", "ideal_dcg.0=1,2=5")),
    ("ideal_dcg", ("-q", "-c", "-m", "ideal_dcg", "-m", "dcg", "-m", "ndcg")),
    ("meas_params", (  # trec_eval's own test/out.test.meas_params requests, on our inputs
        "-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
        "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
        "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20",
    )),
    ("edges", (
        "-q", "-c", "-m", "rbp.0=-2,1=-1,p=1", "-m", "rbp_resid.p=0", "-m", "G.0=1,1=", "-m", "Rndcg.0=3,1=3,2=3",
        "-m", "relstring.0", "-m", "utility.0,0,0,0", "-m", "set_F.0", "-m", "iprec_at_recall.0,1,0.1251,0.125",
        "-m", "Rprec_mult.0", "-m", "ndcg.=3,1=2",
    )),
)  # fmt: skip


def binary() -> str | None:
    """The trec_eval binary's path, or None."""
    given = os.environ.get("RANKGATE_TREC_EVAL")
    if not given and READY.is_file():
        given = READY.read_text().strip()
    return given if given and os.access(given, os.X_OK) else None


def trec_eval_test_folder() -> Path | None:
    """trec_eval's own test folder (``RANKGATE_TREC_EVAL_TESTS``, or the one beside a ready oracle)."""
    given = os.environ.get("RANKGATE_TREC_EVAL_TESTS")
    if not given and READY.is_file():
        given = str(READY.parent / "trec_eval_src" / "test")
    return Path(given) if given and Path(given).is_dir() else None


def write_inputs(folder: Path, seed: int) -> tuple[Path, Path]:
    """Random TREC files with ties, graded and negative grades and queries missing on either side."""
    qrels, run = random_collection(seed, n_queries=14, n_docs=40, max_depth=25)
    q, r = folder / f"qrels.{seed}", folder / f"run.{seed}"
    q.write_text("".join(f"{qid} 0 {d} {g}\n" for qid, docs in qrels.items() for d, g in docs.items()))
    lines = []
    for qid, docs in run.items():
        for rank, (d, s) in enumerate(docs.items(), start=1):
            lines.append(f"{qid} Q0 {d} {rank} {s!r} tag{seed}{' extra' if rank == 3 else ''}\n")
    r.write_text("".join(lines))
    return q, r


def cases() -> list[tuple[str, int, tuple[str, ...]]]:
    """(case id, seed, argument list before the two files)."""
    measure_args = tuple(a for m in MEASURES for a in ("-m", m))
    out = [(f"s{seed}-{name}", seed, (*opts, *measure_args)) for seed in SEEDS for name, opts in OPTIONS]
    by_name = dict(OPTIONS)
    out += [
        (f"s{seed}-all_trec-{o}", seed, (*by_name[o], "-m", "all_trec")) for seed in SEEDS for o in ALL_TREC_OPTIONS
    ]
    out += [(f"s1-{nick}", 1, ("-q", "-c", "-m", nick)) for nick in NICKNAMES if nick != "all_trec"]
    out += [(f"s{seed}-params", seed, PARAM_FORMS) for seed in SEEDS]
    out += [(f"s{seed}-{name}", seed, args) for seed in SEEDS for name, args in MORE_PARAM_FORMS]
    out += [(f"s{seed}-dcg", seed, ("-q", "-c", "-J", "-m", "dcg")) for seed in SEEDS]  # rankgate's DCG family
    return out


def run_binary(path: str, args: tuple[str, ...], qrels: Path, run: Path) -> tuple[int, bytes]:
    done = subprocess.run([path, *args, str(qrels), str(run)], capture_output=True, timeout=60, check=False)
    return done.returncode, done.stdout
