"""Qrels and query-set fingerprints: independent of format and order, sensitive to content."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

import rankgate
from rankgate.core.qrels import Qrels
from rankgate.store.fingerprint import QRELS_DOMAIN, qrels_fingerprint, query_fingerprint

TRIPLES = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d10", 2), ("q2", "d4", 2), ("q10", "d1", -1), ("q2", "é", 1)]


def reference(triples: list[tuple[str, str, int]]) -> str:
    """Plain, obviously right version of the documented encoding."""
    digest = hashlib.sha256(QRELS_DOMAIN)
    for q, d, g in sorted(((q.encode(), d.encode(), g) for q, d, g in triples)):
        digest.update(b"%d:%s%d:%s%d\n" % (len(q), q, len(d), d, g))
    return digest.hexdigest()


def as_dict(triples: list[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for q, d, g in triples:
        out.setdefault(q, {})[d] = g
    return out


def test_matches_the_documented_encoding() -> None:
    fp = qrels_fingerprint(Qrels.from_dict(as_dict(TRIPLES)))
    assert fp == reference(TRIPLES)
    assert len(fp) == 64 and int(fp, 16) >= 0


def test_same_for_trec_json_tsv_and_shuffled(tmp_path: Path) -> None:
    shuffled = TRIPLES[:]
    random.Random(3).shuffle(shuffled)
    trec = tmp_path / "qrels.txt"
    trec.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in TRIPLES), encoding="utf-8")
    trec_shuffled = tmp_path / "shuffled.txt"
    trec_shuffled.write_text("".join(f"{q}\t0\t{d}\t{g}\n" for q, d, g in shuffled), encoding="utf-8")
    tsv = tmp_path / "qrels.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in shuffled), "utf-8")
    js = tmp_path / "qrels.json"
    js.write_text(json.dumps(as_dict(shuffled)), encoding="utf-8")
    prints = {
        name: qrels_fingerprint(rankgate.read_qrels(str(p)))
        for name, p in {"trec": trec, "shuffled": trec_shuffled, "tsv": tsv, "json": js}.items()
    }
    assert set(prints.values()) == {reference(TRIPLES)}, prints


@pytest.mark.parametrize(
    "change",
    [
        [("q1", "d1", 2)],  # a grade
        [("q1", "d1", 1), ("q1", "d3", 0)],  # one more judgment
        [("q1", "d1x", 1)],  # a doc id
    ],
)
def test_content_changes_change_it(change: list[tuple[str, str, int]]) -> None:
    base = qrels_fingerprint(Qrels.from_dict(as_dict(TRIPLES)))
    changed = as_dict(TRIPLES)
    del changed["q1"]["d1"]
    for q, d, g in change:
        changed.setdefault(q, {})[d] = g
    assert qrels_fingerprint(Qrels.from_dict(changed)) != base


def test_ids_cannot_run_into_each_other() -> None:
    # Without length prefixes "q1"+"0d1" and "q10"+"d1" would encode alike.
    a = qrels_fingerprint(Qrels.from_dict({"q1": {"0d1": 1}}))
    b = qrels_fingerprint(Qrels.from_dict({"q10": {"d1": 1}}))
    assert a != b


def test_large_qrels_agree_with_reference() -> None:
    rng = random.Random(7)
    triples = list({(f"q{rng.randint(0, 300)}", f"d{rng.randint(0, 10**6)}", rng.randint(0, 3)) for _ in range(50_000)})
    unique = list({(q, d): (q, d, g) for q, d, g in triples}.values())
    assert qrels_fingerprint(Qrels.from_dict(as_dict(unique))) == reference(unique)


def test_query_fingerprint_is_a_set_fingerprint() -> None:
    assert query_fingerprint(["q2", "q1"]) == query_fingerprint(("q1", "q2", "q2"))
    assert query_fingerprint(["q1"]) != query_fingerprint(["q1", "q2"])
    assert query_fingerprint(["q1", "0"]) != query_fingerprint(["q10"])
    assert query_fingerprint([]) == hashlib.sha256(b"rankgate-queries-v1\n").hexdigest()
