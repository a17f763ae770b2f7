"""The reader's shape-specific fast paths, each against the general path it replaces.

Tab-separated files parsed as they are (`trec._read_tabbed`) against the text normalized and
parsed in memory (`trec.parse`), and the tab shortcut in `normalize` against the regex; runs
whose queries come in another order than their ids' byte order (numeric, topics file), moved
block by block (`query_blocks`, `take_blocks`), against the full stable sort.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import rankgate.core.run as run_module
from rankgate.core.columns import take_array_blocks, take_blocks
from rankgate.core.run import Run, query_blocks
from rankgate.errors import InputError
from rankgate.io import trec
from rankgate.io.readers import read_run

_WS = re.compile(rb"[ \t\v\f]+")
_EDGE = re.compile(rb"(?m)^ | (?=\r?$)")


def _rows(parsed: trec.Parsed) -> list[tuple[str, str, float]]:
    t = parsed.table
    qids = t["qid"].cast(pa.string()).to_pylist()
    return list(zip(qids, t["docid"].to_pylist(), parsed.values.tolist(), strict=True))


def _outcome(read: Callable[[], trec.Parsed]) -> object:
    """The rows read, or the error's message (a refused file must be refused alike)."""
    try:
        return _rows(read())
    except InputError as e:
        return str(e)


TAB_RUN = b"q1\tQ0\td3\t1\t2.5\ttag\nq1\tQ0\td1\t2\t2.5\ttag\nq10\tQ0\td2\t1\t-1\tt\n"


@pytest.mark.parametrize(
    "text, tabbed",
    [
        (TAB_RUN, True),
        (TAB_RUN.replace(b"\n", b"\r\n"), True),
        (TAB_RUN + b"\n\n", True),  # blank lines are skipped either way
        (TAB_RUN.replace(b"\tQ0\td1", b"\t\td1"), False),  # an empty field: normalize merges the tabs
        (TAB_RUN.replace(b"\ttag\nq10", b"\ttag x\nq10"), False),  # a space in an unkept field
        (TAB_RUN.replace(b"\tQ0\td1", b"\tQ\v0\td1"), False),  # other whitespace inside a field
        (TAB_RUN.replace(b"\ttag\nq10", b"\ttag\textra\nq10"), False),  # a seventh field
        (b"#c\tx\n" + TAB_RUN, False),  # a comment line
    ],
)
def test_tab_separated_run_read_as_the_normalized_text(tmp_path, text: bytes, tabbed: bool) -> None:
    path = tmp_path / "run.tsv"
    path.write_bytes(text)
    fast = trec._read_tabbed(str(path), None, trec.RUN_LAYOUT)
    assert (fast is not None) == tabbed
    assert _outcome(lambda: trec.read(str(path), trec.RUN_LAYOUT, "f")) == _outcome(
        lambda: trec.parse(text, trec.RUN_LAYOUT, "f")
    )
    if fast is not None:
        assert fast.column_names == ["qid", "docid", "score"]


def test_tab_separated_qrels_read_as_the_normalized_text(tmp_path) -> None:
    text = b"q1\t0\td1\t2\nq1\t0\td2\t0\nq2\t0\td9\t1\n"
    path = tmp_path / "qrels.tsv"
    path.write_bytes(text)
    assert trec._read_tabbed(str(path), None, trec.QRELS_LAYOUT) is not None
    assert _rows(trec.read(str(path), trec.QRELS_LAYOUT, "q")) == [
        ("q1", "d1", 2.0),
        ("q1", "d2", 0.0),
        ("q2", "d9", 1.0),
    ]


@pytest.mark.parametrize("seed", range(40))
def test_tab_shortcut_in_normalize_equals_the_regex(seed: int) -> None:
    """Random mixes of tabs, spaces, \\v, CRs and edge separators: the same bytes as the regex alone."""
    rng = np.random.default_rng(seed)
    pieces = [b"a", b"bb", b"\t", b"\t", b"\t\t", b" ", b"\v", b"\n", b"\r\n", b"1.5"]
    data = b"".join(pieces[i] for i in rng.integers(0, len(pieces), size=40))
    got = trec.normalize(data, trec.QRELS_LAYOUT)
    assert got == _EDGE.sub(b"", _WS.sub(b" ", data)) or got == data.replace(b"\t", b" ") == _EDGE.sub(
        b"", _WS.sub(b" ", data)
    )


def test_tab_separated_file_gives_the_same_evaluation_as_spaces(tmp_path) -> None:
    spaced = tmp_path / "run.txt"
    tabbed = tmp_path / "tabbed.txt"  # not .tsv: that names a table with a header
    rng = np.random.default_rng(3)
    lines = [
        f"q{q} Q0 d{d} {r} {s} tag"
        for q in range(30)
        for r, (d, s) in enumerate(zip(rng.permutation(50)[:20], np.sort(rng.integers(0, 9, 20))[::-1], strict=True), 1)
    ]
    spaced.write_text("\n".join(lines) + "\n")
    tabbed.write_text("\n".join(x.replace(" ", "\t") for x in lines) + "\n")
    a, b = read_run(str(spaced)), read_run(str(tabbed))
    assert a.doc_ids.to_pylist() == b.doc_ids.to_pylist()
    assert np.array_equal(a.ranking_order(), b.ranking_order())


# -- queries out of byte order ------------------------------------------------------------------
def _sorted_by_sort(codes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    table = pa.table({"q": codes, "s": scores})
    return pc.sort_indices(table, sort_keys=[("q", "ascending"), ("s", "descending")]).to_numpy()


@pytest.mark.parametrize("seed", range(30))
def test_query_blocks_equal_the_stable_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_q = int(rng.integers(1, 12))
    sizes = rng.integers(1, 6, size=n_q)
    codes = np.repeat(rng.permutation(n_q), sizes).astype(np.int32)
    scores = np.concatenate([np.sort(rng.integers(0, 3, size=k))[::-1] for k in sizes]).astype(np.float64)
    found = query_blocks(codes)
    assert found is not None
    starts, lengths = found
    order = _sorted_by_sort(codes, scores)
    assert np.array_equal(np.concatenate([np.arange(s, s + k) for s, k in zip(starts, lengths, strict=True)]), order)
    names = [f"d{i}" for i in range(len(codes))]
    docs = pa.chunked_array([pa.array(names[j : j + 4]) for j in range(0, len(codes), 4)])  # blocks cross chunks
    assert take_blocks(docs, starts, lengths).to_pylist() == docs.take(pa.array(order)).to_pylist()
    assert np.array_equal(take_array_blocks(scores, starts, lengths), scores[order])


def test_query_in_two_places_is_not_a_block_permutation() -> None:
    assert query_blocks(np.array([1, 1, 0, 1], dtype=np.int32)) is None


@pytest.mark.parametrize("case", ["numeric", "topics", "split", "unsorted-within"])
def test_run_out_of_byte_order_equals_the_sorted_path(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    qids = {"numeric": ["2", "9", "10", "11", "100"], "topics": ["q3", "q1", "q2"]}.get(case, ["b", "a"])
    rows = [(q, f"d{j}", float(5 - j // 2)) for q in qids for j in range(4)]
    if case == "split":
        rows = rows[:2] + rows[4:] + rows[2:4]  # query "b" in two places
    if case == "unsorted-within":
        rows[0], rows[1] = rows[1], (rows[0][0], rows[0][1], 0.5)
    q, d, s = (list(x) for x in zip(*rows, strict=True))
    fast = Run(q, d, s)
    monkeypatch.setattr(run_module, "query_blocks", lambda codes: None)
    slow = Run(q, d, s)
    assert fast.doc_ids.to_pylist() == slow.doc_ids.to_pylist()
    assert np.array_equal(fast.scores, slow.scores) and np.array_equal(fast.offsets, slow.offsets)
    assert list(itertools.chain(fast.query_ids.to_pylist())) == sorted(set(qids), key=str.encode)
