"""The one reader of corpus and queries files (`rankgate.io.texts`) and the rows under it (`rankgate.io.rows`).

Every file here is written by hand, a few lines long, so each expected value can be read off it.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path

import pytest

from rankgate.errors import InputError
from rankgate.io import rows
from rankgate.io.rows import JsonWording, json_shape, numbered_lines, table_rows
from rankgate.io.texts import iter_texts, read_corpus, read_queries, read_texts

BEIR_QUERIES = '{"_id": "q1", "text": "brew green tea"}\n{"_id": "q2", "text": "steep time", "metadata": {}}\n'


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


# -- queries: the two forms `rankgate retrieve` reads -----------------------------------------------
def test_beir_queries_jsonl(tmp_path: Path) -> None:
    path = write(tmp_path, "queries.jsonl", BEIR_QUERIES)
    assert read_queries(path) == {"q1": "brew green tea", "q2": "steep time"}


def test_tsv_queries_with_and_without_a_header(tmp_path: Path) -> None:
    plain = write(tmp_path, "queries.tsv", "q1\tbrew green tea\n\n2\t steep time \n")
    assert read_queries(plain) == {"q1": "brew green tea", "2": "steep time"}
    headed = write(tmp_path, "headed.tsv", "query_id\ttext\nq1\tbrew\n")
    assert read_queries(headed) == {"q1": "brew"}
    # A tab inside the text stays in it (only the first tab ends the id).
    tabs = write(tmp_path, "tabs.tsv", "d1\tTitle\tbody\n")
    assert read_corpus(tabs) == {"d1": "Title\tbody"}


@pytest.mark.parametrize(
    ("suffix", "compress"),
    [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress), ("", gzip.compress)],
)
def test_compressed_files_are_read_by_content(tmp_path: Path, suffix: str, compress) -> None:
    jsonl = write(tmp_path, f"queries.jsonl{suffix}", compress(BEIR_QUERIES.encode()))
    tsv = write(tmp_path, f"queries.tsv{suffix}", compress(b"q1\tbrew green tea\n"))
    assert read_queries(jsonl) == {"q1": "brew green tea", "q2": "steep time"}
    assert read_queries(tsv) == {"q1": "brew green tea"}


def test_a_byte_order_mark_and_crlf_line_ends_are_dropped(tmp_path: Path) -> None:
    jsonl = write(tmp_path, "queries.jsonl", b"\xef\xbb\xbf" + BEIR_QUERIES.replace("\n", "\r\n").encode())
    tsv = write(tmp_path, "queries.tsv", b"\xef\xbb\xbfq1\tbrew\r\nq2\tsteep\r\n")
    assert read_queries(jsonl) == {"q1": "brew green tea", "q2": "steep time"}
    assert read_queries(tsv) == {"q1": "brew", "q2": "steep"}


def test_an_empty_text_is_kept(tmp_path: Path) -> None:
    jsonl = write(tmp_path, "queries.jsonl", '{"_id": "q1", "text": ""}\n{"_id": "q2", "text": "  "}\n')
    tsv = write(tmp_path, "queries.tsv", "q1\t\nq2\tx\n")
    assert read_queries(jsonl) == {"q1": "", "q2": ""}
    assert read_queries(tsv) == {"q1": "", "q2": "x"}


# -- errors name file:line and what is wrong ---------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "q.jsonl",
            '{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": }\n',
            "q.jsonl:2: invalid JSON: Expecting value",
        ),
        ("q.jsonl", '{"_id": "q1", "text": "a"}\n\n{"text": "b"}\n', "q.jsonl:3: query has no '_id' (or 'id') field"),
        ("q.jsonl", '{"_id": "q1", "text": "a"}\n{"_id": " ", "text": "b"}\n', "q.jsonl:2: query id is empty"),
        ("q.jsonl", '{"_id": "q1", "text": 7}\n', "q.jsonl:1: query 'q1': 'text' must be a string"),
        ("q.jsonl", '{"_id": "q1", "lang": "en"}\n', "q.jsonl:1: query 'q1' has no 'text' field"),
        ("q.jsonl", '{"_id": "q1", "text": "a"}\n[1]\n', "q.jsonl:2: expected a JSON object with '_id' and 'text'"),
        ("q.tsv", "q1\tbrew\nq2 steep\n", "q.tsv:2: expected 'id<TAB>text'"),
        ("q.tsv", "q1\tbrew\n\tsteep\n", "q.tsv:2: expected 'id<TAB>text'"),
        ("q.tsv", b"q1\tbrew\nq2\tst\xffeep\n", "q.tsv:2: not UTF-8 text (invalid start byte at byte 6 of the line)"),
        ("q.tsv", "\n \n", "q.tsv: file is empty: expected one query per line"),
        ("q.json", "[]", "q.json: no query in the file"),
        ("q.json", '{\n"q1": "a",\n"q2": }', "q.json:3: invalid JSON: Expecting value"),
        ("q.json", '{"q1": "a", "q2": 3}', "q.json: query 'q2': expected a text or an object"),
        ("q.json", '["a", 5]', "q.json: item 1: expected a JSON object"),
    ],
)
def test_bad_input_names_file_and_line(tmp_path: Path, name: str, content: str | bytes, message: str) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as info:
        read_queries(path)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "q.jsonl",
            '{"_id": "q1", "text": "a"}\n\n{"_id": "q1", "text": "b"}\n',
            "q.jsonl:3: duplicate query id 'q1' (first on line 1)",
        ),
        ("q.tsv", "q1\ta\nq2\tb\nq1 \tc\n", "q.tsv:3: duplicate query id 'q1' (first on line 1)"),
        (
            "q.json",
            '[{"id": "x", "text": "a"}, {"id": "x", "text": "b"}]',
            "q.json: item 1: duplicate query id 'x' (first at item 0)",
        ),
        (
            "q.json",
            '{"a": {"text": "a"}, "b": {"_id": "a", "text": "b"}}',
            "q.json: key 'b': duplicate query id 'a' (first at key 'a')",
        ),
    ],
)
def test_an_id_given_twice_names_both_places(tmp_path: Path, name: str, content: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        read_queries(write(tmp_path, name, content))
    assert message in str(info.value)


def test_the_wording_of_json_errors_is_an_option(tmp_path: Path) -> None:
    wording = JsonWording(line="not a JSON object ({msg})", document="not valid JSON ({msg}, column {col})")
    jsonl = write(tmp_path, "c.jsonl", '{"_id": "d1", "text": "a"}\n{"_id": "d2" "text": "b"}\n')
    with pytest.raises(InputError, match=r"c\.jsonl:2: not a JSON object \(Expecting ',' delimiter\)"):
        read_corpus(jsonl, wording=wording)
    document = write(tmp_path, "c.json", '{\n"0": "a",\n"0": }')
    with pytest.raises(InputError, match=r"c\.json:3: not valid JSON \(Expecting value, column 6\)"):
        read_corpus(document, wording=wording)


def test_a_missing_file_or_an_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_queries(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="unknown format 'csv'; choose one of jsonl, json, tsv"):
        read_queries(write(tmp_path, "q.csv", "q1,a\n"), format="csv")


# -- documents, JSON forms, and how the form is told -------------------------------------------------
def test_a_documents_title_goes_before_its_text_and_a_querys_only_in_its_place(tmp_path: Path) -> None:
    corpus = write(
        tmp_path,
        "corpus.jsonl",
        '{"_id": "d1", "title": "Tea", "text": "Brew at 80 C."}\n{"_id": "d2", "title": "Only a title"}\n'
        '{"docid": 3, "contents": " body "}\n',
    )
    assert read_corpus(corpus) == {"d1": "Tea\n\nBrew at 80 C.", "d2": "Only a title", "3": "body"}
    assert read_corpus(corpus, joiner=" ")["d1"] == "Tea Brew at 80 C."
    queries = write(tmp_path, "q.jsonl", '{"_id": "q1", "title": "t", "text": "x"}\n{"qid": "q2", "title": "t"}\n')
    assert read_queries(queries) == {"q1": "x", "q2": "t"}
    assert read_texts(queries, what="document") == {"q1": "t\n\nx", "q2": "t"}


def test_json_forms(tmp_path: Path) -> None:
    listed = write(tmp_path, "a.json", '["red apple", {"id": "x", "title": "Pear", "text": "green"}]')
    assert read_corpus(listed) == {"0": "red apple", "x": "Pear\n\ngreen"}
    mapping = write(tmp_path, "b.json", '{"a": "red apple", "b": {"title": "Pear", "text": "green"}}')
    assert read_corpus(mapping) == {"a": "red apple", "b": "Pear\n\ngreen"}
    pretty = write(tmp_path, "c.json", json.dumps({"q1": "a", "q2": "b"}, indent=2))
    assert read_queries(pretty) == {"q1": "a", "q2": "b"}
    # One line holding an id is a JSONL file of one entry, not a {id: text} mapping.
    one = write(tmp_path, "d.jsonl", '{"_id": "q1", "text": "a"}')
    assert read_queries(one) == {"q1": "a"}
    # The form can be named, which a file whose content looks otherwise needs.
    assert read_queries(write(tmp_path, "e.tsv", "{x}\ta\n"), format="tsv") == {"{x}": "a"}


def test_entries_stream_in_file_order(tmp_path: Path) -> None:
    path = write(tmp_path, "q.tsv", "b\t1\na\t2\nq1\t3\nq1\t4\n")
    entries = iter_texts(path, what="query")
    assert [next(entries), next(entries), next(entries)] == [("b", "1"), ("a", "2"), ("q1", "3")]
    with pytest.raises(InputError, match="duplicate"):
        next(entries)


# -- rows ------------------------------------------------------------------------------------------
def test_lines_longer_than_a_chunk_and_line_separators_inside_json(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(rows, "_CHUNK", 7)
    text = '{"_id": "q1", "text": "a\u2028b"}\n' + "q" * 30 + "\nend"
    path = write(tmp_path, "t.txt", gzip.compress(text.encode()))
    lines = list(numbered_lines(path))
    assert [n for n, _ in lines] == [1, 2, 3]
    assert json.loads(lines[0][1])["text"] == "a\u2028b" and lines[1][1] == "q" * 30 and lines[2][1] == "end"


def test_undecodable_bytes_can_be_replaced(tmp_path: Path) -> None:
    path = write(tmp_path, "t.txt", b"ok\nb\xffd\n")
    assert list(numbered_lines(path, errors="replace")) == [(1, "ok"), (2, "b\ufffdd")]


@pytest.mark.parametrize(
    ("content", "shape"),
    [
        ('{"_id": "q1"}\n{"_id": "q2"}\n', "jsonl"),
        ('\n{"_id": "q1"}\n', "jsonl"),
        ('{"q1": {"tier": "A"}}\n', "json"),
        ('{\n  "q1": "a"\n}\n', "json"),
        ('[{"_id": "q1"}]', "json"),
        ('{"_id": "q1" "text": 1}\n', "jsonl"),
        ("q1\ttext\n", None),
        ("qid,tier\n", None),
    ],
)
def test_json_shape(tmp_path: Path, content: str, shape: str | None) -> None:
    found, lines = json_shape(numbered_lines(write(tmp_path, "f", content)), ("_id",))
    assert found == shape
    assert [text for _, text in lines] == content.splitlines()  # the lines looked at are given back


def test_table_rows_are_numbered_by_their_line(tmp_path: Path) -> None:
    header, found = table_rows(numbered_lines(write(tmp_path, "t.tsv", "qid\ttier\nq1\tA\n\nq2\tB\n")))
    assert header == ["qid", "tier"]
    assert list(found) == [(2, {"qid": "q1", "tier": "A"}), (4, {"qid": "q2", "tier": "B"})]
    header, found = table_rows(numbered_lines(write(tmp_path, "t.csv", 'qid,note\nq1,"two\nlines"\n')))
    assert list(found) == [(3, {"qid": "q1", "note": "two\nlines"})]
