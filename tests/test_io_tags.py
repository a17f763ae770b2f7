"""`rankgate.io.tags` on the shared row reader: JSON shapes, compressed input, and rows the header does not cover."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from rankgate.errors import InputError
from rankgate.io.tags import read_query_tags


def test_tags_in_each_form(tmp_path: Path) -> None:
    expected = {"q1": {"tier": "A"}, "q2": {"tier": "B"}}
    forms = {
        "a.jsonl": '{"_id": "q1", "tier": "A"}\n{"qid": "q2", "tags": {"tier": "B"}}\n',
        "b.json": '{"q1": {"tier": "A"}, "q2": {"tier": "B"}}',
        "c.json": '[\n  {"_id": "q1", "tier": "A"},\n  {"_id": "q2", "tier": "B"}\n]\n',
        "d.tsv": "qid\ttier\nq1\tA\nq2\tB\n",
        "e.csv": "\ufeffquery_id,tier,text\nq1,A,some words\nq2,B,\n",
    }
    for name, text in forms.items():
        (tmp_path / name).write_text(text)
        assert read_query_tags(tmp_path / name) == expected, name
    packed = tmp_path / "f.csv.gz"
    packed.write_bytes(gzip.compress(forms["d.tsv"].encode()))
    assert read_query_tags(packed) == expected
    single = tmp_path / "g.jsonl"
    single.write_text('{"_id": "q1", "tier": "A"}')
    assert read_query_tags(single) == {"q1": {"tier": "A"}}


def test_a_row_longer_than_the_header_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "tags.csv"
    path.write_text("qid,tier\nq1,A\nq2,B,extra\n")
    with pytest.raises(InputError, match=r"tags\.csv:3: more fields than the header's 2"):
        read_query_tags(path)
