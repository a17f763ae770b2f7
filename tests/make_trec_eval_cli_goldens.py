#!/usr/bin/env python3
"""Write tests/golden/trec_eval_cli/: the trec_eval binary's output on inputs this script makes.

Run with the binary's path in ``RANKGATE_TREC_EVAL`` (or ``/work/oracle/READY``):

    RANKGATE_TREC_EVAL=/path/to/trec_eval python tests/make_trec_eval_cli_goldens.py

Each case is ``CASE.args`` (the options, one per line), ``CASE.out`` (trec_eval's stdout) and
``CASE.rc``; the inputs are ``qrels.SEED`` and ``run.SEED``. `tests/test_trec_eval_cli_oracle.py`
checks ``rankgate trec_eval`` against them byte for byte, without the binary.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.trec_eval_oracle import SEEDS, binary, cases, run_binary, write_inputs

GOLDEN = Path(__file__).resolve().parent / "golden" / "trec_eval_cli"


def main() -> int:
    path = binary()
    if path is None:
        print("no trec_eval binary: set RANKGATE_TREC_EVAL", file=sys.stderr)
        return 2
    GOLDEN.mkdir(parents=True, exist_ok=True)
    inputs = {seed: write_inputs(GOLDEN, seed) for seed in SEEDS}
    for case, seed, args in cases():
        rc, out = run_binary(path, args, *inputs[seed])
        (GOLDEN / f"{case}.args").write_text("".join(f"{a}\n" for a in args))
        (GOLDEN / f"{case}.out").write_bytes(out)
        (GOLDEN / f"{case}.rc").write_text(f"{rc}\n")
    print(f"wrote {len(cases())} cases to {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
