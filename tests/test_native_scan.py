"""The native TREC scanner (``rg_scan`` in ``core/_native.c``) reads exactly what the Arrow path reads, or gives up.

Oracles: the Arrow path itself (the same file read with the scanner switched off) and Python's
``float`` for every score. Random text mixes the grammar's corners (blanks, tabs, ``\\v``, CRLF
and lone CR line ends, comments, short and long lines, odd numbers, non-ASCII bytes) and is read
in tiny windows, so lines and queries cross window edges. When the library was not built (no
compiler at install time) it is compiled here into a temporary folder, so these tests always run
the C code a compiler can build.
"""

from __future__ import annotations

import gzip
import platform
import random
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hatch_build
from rankgate.core import native as native_kernels
from rankgate.errors import InputError
from rankgate.io import native_scan, trec
from rankgate.io.readers import read_qrels, read_run
from tests.native_support import use_built_library

LAYOUTS = {"run": trec.RUN_LAYOUT, "qrels": trec.QRELS_LAYOUT}
_ROOM = b"\n" * 64  # blank lines after the rows: a run line with 64 bytes after its start is read whole


@pytest.fixture
def native(tmp_path_factory, monkeypatch):
    use_built_library(tmp_path_factory, monkeypatch)
    return native_scan


@pytest.fixture(scope="module")
def portable_library(tmp_path_factory) -> Path:
    """The kernels built with -DRG_PORTABLE: plain C, no word-at-a-time field ends nor SSE2 lines
    (what a compiler other than gcc or clang builds; gcc or clang for a target without SSE2 keeps
    the word-at-a-time field ends and walks every line)."""
    if shutil.which(hatch_build.compiler_command()[0]) is None:
        pytest.skip("no C compiler")
    target = tmp_path_factory.mktemp("portable") / "_native.so"
    with pytest.MonkeyPatch.context() as m:
        m.setenv("CC", shlex.join([*hatch_build.compiler_command(), "-DRG_PORTABLE"]))
        error = hatch_build.compile_library(Path(native_kernels.LIBRARY).with_name("_native.c"), target)
    assert error is None, error
    return target


@pytest.fixture(params=["built", "portable"])
def each_build(request, native, monkeypatch) -> str:
    """The scanner of the library as built here, then of the portable build; the build's name."""
    if request.param == "portable":
        monkeypatch.setattr(native_kernels, "LIBRARY", request.getfixturevalue("portable_library"))
        monkeypatch.setattr(native_kernels, "_lib", None)
        assert native_kernels.library() is not None
    return str(request.param)


@pytest.mark.parametrize("end", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_lines_near_64_bytes_are_read_as_the_general_path_reads_them(each_build, tmp_path, monkeypatch, end):
    """The whole-line path reads lines whose line feed is among the first 64 bytes; at the edge (a
    line feed at byte 62, 63 or 64, a CRLF across bytes 63 and 64) a line is read whole or walked,
    the same rows either way."""
    lines = []
    for length in range(56, 72):  # bytes before the line end
        head = b"q%d Q0 d%d 1 0.5 " % (length, length)
        lines.append(head + b"t" * (length - len(head)) + end)
    path = tmp_path / "edges.txt"
    path.write_bytes(b"".join(lines * 3) + _ROOM)
    assert check_file(path, "run", monkeypatch)


def test_plain_run_lines_are_read_whole_where_the_build_can(each_build):
    """The whole-line path is taken (rg_scan counts the lines it read whole): by the build here on
    x86-64, for every line with 64 bytes after its start; never by the portable build. Both read
    the same rows."""
    rows = b"".join(b"q%d Q0 d%d %d 0.%d t\n" % (i // 10, i, i % 10, i) for i in range(200))
    text = rows + b"\n" * 64
    buffer = np.frombuffer(text + bytes(16), dtype=np.uint8)
    slot = native_scan._Slot("run", len(text) + 1)
    window = slot.scan(native_kernels.library(), buffer.ctypes.data, len(text))
    assert window.rows == 200
    assert window.doc_bytes.tobytes() == b"".join(b"d%d" % i for i in range(200))
    assert window.values.tolist() == [float(f"0.{i}") for i in range(200)]
    whole = int(slot.counts[6])
    if each_build == "portable" or platform.machine().lower() not in ("x86_64", "amd64"):
        assert whole == 0
    else:
        assert whole >= 200


@pytest.fixture
def small_windows(native, monkeypatch):
    """Windows of 64 bytes (lines up to 256): every file crosses many window edges; the doc ids
    are cut into a new string array every 200 bytes (at 2 GB otherwise)."""
    monkeypatch.setattr(native_scan, "_WINDOW", 64)
    monkeypatch.setattr(native_scan, "_LONGEST_LINE", 256)
    monkeypatch.setattr(native_scan, "_CHUNK_BYTES", 200)
    return native


def general(path: Path, kind: str, monkeypatch) -> trec.Parsed | InputError:
    """The Arrow path's reading of ``path`` (the scanner switched off)."""
    with monkeypatch.context() as m:
        m.setattr(native_kernels, "_lib", False)
        try:
            return trec.read(str(path), LAYOUTS[kind], str(path))
        except InputError as e:
            return e


def assert_same(scanned: native_scan.Scanned, expected: trec.Parsed) -> None:
    """Same query ids, doc ids and values (bit for bit), row by row."""
    queries = scanned.query_ids.combine_chunks()
    want_queries = expected.table["qid"].combine_chunks()
    assert queries.dictionary_decode().to_pylist() == want_queries.dictionary_decode().to_pylist()
    assert queries.dictionary.to_pylist() == sorted(set(queries.dictionary.to_pylist()), key=str.encode)
    assert scanned.doc_ids.to_pylist() == expected.table["docid"].to_pylist()
    assert scanned.values.view(np.uint64).tolist() == expected.values.view(np.uint64).tolist()


def check_file(path: Path, kind: str, monkeypatch) -> bool:
    """Read ``path`` both ways; True when the scanner read it (then both agree)."""
    scanned = native_scan.scan(str(path), trec.sniff_codec(str(path)), kind)
    expected = general(path, kind, monkeypatch)
    if scanned is None:
        return False
    assert not isinstance(expected, InputError), f"the scanner read a file the general path refuses: {expected}"
    assert_same(scanned, expected)
    return True


# -- numbers ----------------------------------------------------------------------------


def _score_texts() -> list[str]:
    rng = random.Random(7)
    texts = ["0", "-0", "+0", "-0.0", "1.", ".5", "+.5", "-.5", "00012.5", "1e5", "1E+05", "2.5e-3", "1e-400",
             "4.9406564584124654e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "9007199254740993",
             "0.1", "0.30000000000000004", "123456789012345678901234567890", "1e22", "1e23", "9007199254740992e1",
             "0.000000000000000000000000001", "3.14159265358979323846264338327950288"]  # fmt: skip
    for _ in range(3000):
        value = rng.choice([rng.random(), rng.uniform(-1e6, 1e6), rng.lognormvariate(0, 30), rng.randint(0, 10**18)])
        style = rng.choice(["repr", "fixed", "exp", "digits"])
        if style == "repr":
            texts.append(repr(float(value)))
        elif style == "fixed":
            texts.append(f"{value:.{rng.randint(0, 20)}f}")
        elif style == "exp":
            texts.append(f"{value:.{rng.randint(0, 18)}e}")
        else:
            texts.append("".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25))))
    return texts


def test_every_score_is_read_as_pythons_float_reads_it(native, tmp_path, monkeypatch):
    texts = _score_texts()
    path = tmp_path / "scores.run"
    path.write_text("".join(f"q{i % 7} Q0 d{i} 1 {t} tag\n" for i, t in enumerate(texts)))
    scanned = native_scan.scan(str(path), None, "run")
    assert scanned is not None
    assert scanned.values.view(np.uint64).tolist() == np.array([float(t) for t in texts]).view(np.uint64).tolist()
    assert check_file(path, "run", monkeypatch)


def _near_halfway_texts(count: int) -> list[str]:
    """Decimals of 16 to 19 significant digits at, and a digit either side of, the exact midpoint of two
    neighbouring doubles: where a once-rounded extended-precision quotient must not be rounded again."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    rng = random.Random(11)
    texts = []
    for _ in range(count):
        value = rng.choice([rng.random(), rng.uniform(0, 1e6), 10 ** rng.uniform(-25, 40)])
        midpoint = (Decimal(value) + Decimal(np.nextafter(value, np.inf))) / 2
        digits = rng.randint(16, 19)
        exact = f"{midpoint:.{digits - 1}e}"
        mantissa, exponent = exact.split("e")
        last = Decimal(1).scaleb(-(digits - 1))
        for nudge in (-last, 0, last):
            texts.append(f"{Decimal(mantissa) + nudge}e{exponent}")
            texts.append(f"{(Decimal(mantissa) + nudge).scaleb(int(exponent)):f}")  # fixed notation
    return texts


def test_scores_near_a_halfway_point_are_read_as_pythons_float_reads_them(native, tmp_path):
    texts = _near_halfway_texts(4000)
    path = tmp_path / "halfway.run"
    path.write_text("".join(f"q{i % 5} Q0 d{i} 1 {t} tag\n" for i, t in enumerate(texts)))
    scanned = native_scan.scan(str(path), None, "run")
    assert scanned is not None
    assert scanned.values.view(np.uint64).tolist() == np.array([float(t) for t in texts]).view(np.uint64).tolist()


@pytest.mark.parametrize("score", ["inf", "-inf", "nan", "1e400", "0x10", "1.5e", "e5", "-", ".", "1_0", "1,5", "--1"])
def test_scores_it_does_not_read_go_to_the_general_path(native, tmp_path, monkeypatch, score):
    path = tmp_path / "bad.run"
    path.write_text(f"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 {score} t\n")
    assert native_scan.scan(str(path), None, "run") is None
    assert isinstance(general(path, "run", monkeypatch), InputError)


@pytest.mark.parametrize(
    ("grade", "read"),
    [("0", True), ("3", True), ("-1", True), ("+2", True), ("2.0", True), ("2.", True), ("007", True),
     ("9007199254740992", True), ("9007199254740993", False), ("1e3", False), ("2.5", False), (".0", False),
     ("x", False)],
)  # fmt: skip
def test_grades_are_read_as_integers_or_left_to_the_general_path(native, tmp_path, monkeypatch, grade, read):
    path = tmp_path / "qrels.txt"
    path.write_text(f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    assert check_file(path, "qrels", monkeypatch) is read


# -- random text ------------------------------------------------------------------------

_SEPARATORS = st.sampled_from([" ", " ", " ", "\t", "  ", " \t ", "\v", "\f"])
_ASCII_TOKENS = st.one_of(
    st.sampled_from(["q1", "q2", "q10", "Q0", "0", "d1", "d2", "doc-3", "#x", "1", "0.5", "-2", "+3", "1e2", "x"]),
    st.text(alphabet="abq019.-+e#_", min_size=1, max_size=6),
)
_TOKENS = st.one_of(_ASCII_TOKENS, st.text(alphabet="abq019.-+e#é\x00\x7f_", min_size=1, max_size=6))
_NUMBERS = st.one_of(
    st.sampled_from(["1", "0", "-1", "2.0", "0.25", "1e-3", ".5", "7."]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-5, 5).map(str),
)

_GRADES = st.one_of(st.integers(-2, 4).map(str), st.sampled_from(["2.0", "+1", "01", "3."]))


@st.composite
def _lines(draw, kind: str, clean: bool) -> str:
    shapes = ["row", "row", "row", "row", "blank", "comment"] + ([] if clean else ["short", "long", "noise"])
    shape = draw(st.sampled_from(shapes))
    if shape == "blank":
        return draw(st.sampled_from(["", " ", "\t", " \t "]))
    if shape == "comment":
        comments = ["#", "# note", "#é comment", "# a b c d e f", "#q1 Q0 d1 1 0.5 t"]
        return draw(st.sampled_from(comments + ([] if clean else ["  # indented"])))
    if shape == "noise":
        return draw(st.text(alphabet="ab \t#\r0.\x00é", max_size=12))
    width = {"row": 6, "short": draw(st.integers(1, 5)), "long": draw(st.integers(7, 9))}[shape]
    if kind == "qrels":
        width = {"row": 4, "short": draw(st.integers(1, 3)), "long": 5}[shape]
    value_at = 4 if kind == "run" else 3
    fields = [
        draw(st.sampled_from(["q1", "q2", "q10", "q2"])) if i == 0
        else draw(st.sampled_from(["d1", "d2", "d3", "d10", "D-4"])) if i == 2
        else draw(_NUMBERS if kind == "run" or not clean else _GRADES) if i == value_at
        else draw(_ASCII_TOKENS if clean else _TOKENS)
        for i in range(width)
    ]  # fmt: skip
    text = draw(_SEPARATORS).join(fields)
    return draw(st.sampled_from(["", "", " ", "\t"])) + text + draw(st.sampled_from(["", "", " "]))


@st.composite
def _files(draw, kind: str) -> bytes:
    clean = draw(st.booleans())  # only rows, blank lines and comments: mostly files the scanner reads
    lines = draw(st.lists(_lines(kind, clean), min_size=1, max_size=30))
    ends = draw(st.sampled_from(["\n", "\n", "\r\n", "mixed"] if not clean else ["\n", "\r\n"]))
    out = []
    for line in lines:
        end = draw(st.sampled_from(["\n", "\r\n", "\r"])) if ends == "mixed" else ends
        out.append(line + end)
    text = "".join(out)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")  # no line end after the last line
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if draw(st.integers(0, 9)) == 0 else data


@pytest.mark.parametrize("whole", [True, False], ids=["read-whole", "walked"])
def test_each_byte_ends_a_field_where_the_general_path_ends_it(each_build, tmp_path, monkeypatch, whole):
    """The scanner finds a field's end 8 bytes at a time, or reads a run line of under 64 bytes from
    the masks of its bytes: every byte value, at every place of a word (and past it), inside a doc
    id. A field byte ('!' to '~') is read; any other byte splits the field as the general path
    does, or the scanner leaves the file to it."""
    tag, room = (b"t", _ROOM) if whole else (b"t" * 60, b"")  # a line of 64 bytes or more is walked
    field_bytes = [b for b in range(256) if 0x21 <= b <= 0x7E]
    lines = []
    for b in field_bytes:
        for place in range(10):
            doc = bytearray(b"abcdefghij")
            doc[place] = b
            lines.append(b"q1 Q0 " + bytes(doc) + b" 1 0.5 " + tag + b"\n")
    path = tmp_path / "fields.txt"
    path.write_bytes(b"".join(lines) + room)
    assert check_file(path, "run", monkeypatch)
    read = 0
    for b in sorted(set(range(256)) - set(field_bytes)):
        for place in range(10):
            doc = bytearray(b"abcdefghij")
            doc[place] = b
            path = tmp_path / f"byte{b}_{place}.txt"
            path.write_bytes(b"q1 Q0 " + bytes(doc) + b" 1 0.5 " + tag + b" t2\nq1 Q0 z 2 0.25 t\n" + room)
            scanned = native_scan.scan(str(path), None, "run")
            if scanned is not None:
                assert_same(scanned, general(path, "run", monkeypatch))
                read += 1
    assert read == 4 * 10  # the blanks (space, tab, \v, \f) split the field; other bytes: the general path


@pytest.mark.parametrize("kind", ["run", "qrels"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_text_is_read_as_the_general_path_reads_it_or_left_to_it(
    small_windows, tmp_path, monkeypatch, kind, data
):
    text = data.draw(_files(kind))
    compressed = data.draw(st.booleans())  # read by the streamed windows, else by the mapped ones
    path = tmp_path / (f"{kind}.txt.gz" if compressed else f"{kind}.txt")
    path.write_bytes(gzip.compress(text) if compressed else text)
    check_file(path, kind, monkeypatch)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_runs_in_one_window_are_read_as_the_general_path_reads_them(native, tmp_path, monkeypatch, data):
    """As above, in one window with room past each line: a run line of under 64 bytes is read from
    the masks of its bytes, not walked field by field."""
    text = data.draw(_files("run"))
    path = tmp_path / "run.txt"
    path.write_bytes(text + b" " * 64 if text.endswith(b"\n") else text)  # room past the last lines too
    check_file(path, "run", monkeypatch)


def test_the_scanner_reads_most_well_formed_random_files(small_windows, tmp_path, monkeypatch):
    """A negative control for the test above: it must not pass by giving up on everything."""
    rng = random.Random(3)
    read = 0
    for i in range(40):
        sep = rng.choice([" ", "\t", "  "])
        rows = [
            sep.join([f"q{rng.randint(1, 5)}", "Q0", f"d{rng.randint(1, 9)}{j}", str(j), repr(rng.random()), "t"])
            for j in range(rng.randint(1, 40))
        ]
        path = tmp_path / f"run{i}.txt"
        path.write_text("\n".join(rows) + rng.choice(["\n", "", "\r\n"]))
        read += check_file(path, "run", monkeypatch)
    assert read >= 35


def test_many_shuffled_query_ids_sharing_their_first_bytes_are_told_apart(native, tmp_path, monkeypatch):
    """The window's table of query ids compares an id's first 8 bytes and its length before its
    other bytes: ids that share 8 bytes, ids that are prefixes of others, and ids of every length
    from 1 to 20, in shuffled lines (each row looks its id up; the table grows past a thousand)."""
    rng = random.Random(5)
    ids = [f"topic-00{i}" for i in range(1500)]  # one head: "topic-00"
    ids += ["abcdefgh"[:n] + "x" * max(0, n - 8) for n in range(1, 21)]  # prefixes of each other
    ids += [f"{i}" for i in range(1000)] + [f"{i:08d}" for i in range(200)]  # "7" and "00000007"
    lines = [f"{q}\tQ0 d{rng.randint(0, 99)} {j} {rng.random()!r} t" for q in ids for j in range(3)]
    rng.shuffle(lines)
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    assert check_file(path, "run", monkeypatch)
    assert len(native_scan.scan(str(path), None, "run").query_ids.chunk(0).dictionary) == len(set(ids))


# -- whole files -------------------------------------------------------------------------


def _big_run(path: Path, rng: random.Random, queries: int = 300, depth: int = 200) -> None:
    order = list(range(queries))
    rng.shuffle(order)  # not in byte order: Run sorts them
    with open(path, "w") as f:
        for q in order:
            for r in range(depth):
                score = round(rng.random() * 10, rng.choice([2, 4, 17]))
                f.write(f"{q} Q0 D{rng.randint(0, 10**6)} {r + 1} {score} run\n")


@pytest.mark.slow
def test_a_large_run_reads_into_the_same_run_both_ways(native, tmp_path, monkeypatch):
    """60,000 lines over the default windows (and gzip-compressed): the same `Run`, hash words included."""
    path = tmp_path / "big.run"
    _big_run(path, random.Random(11))
    compressed = tmp_path / "big.run.gz"
    compressed.write_bytes(gzip.compress(path.read_bytes()))
    monkeypatch.setattr(native_scan, "_WINDOW", 1 << 18)  # several windows, several threads
    monkeypatch.setattr(native_scan, "_CHUNK_BYTES", 1 << 19)  # doc ids in several string arrays
    for file in (path, compressed):
        assert check_file(file, "run", monkeypatch)
        fast = read_run(file, duplicates="max")
        with monkeypatch.context() as m:
            m.setattr(native_kernels, "_lib", False)
            slow = read_run(file, duplicates="max")
        assert fast.query_ids.to_pylist() == slow.query_ids.to_pylist()
        assert np.array_equal(fast.offsets, slow.offsets)
        assert fast.doc_ids.to_pylist() == slow.doc_ids.to_pylist()
        assert np.array_equal(fast.scores.view(np.uint64), slow.scores.view(np.uint64))
        assert np.array_equal(fast.doc_hash_high, slow.doc_hash_high)


def test_ids_past_1_kib_are_read_by_the_scanner(native, tmp_path, monkeypatch):
    """The scanner no longer hashes ids, so a 5,000-byte doc id or query id is read here, not
    left to the general path; the `Run` (hash words of ids past 1 KiB: BLAKE2b) is the same."""
    path = tmp_path / "long.run"
    long_doc, long_query = "d" * 5000, "q" * 2000
    path.write_text(f"q1 Q0 {long_doc} 1 2.5 t\nq1 Q0 short 2 1.5 t\n{long_query} Q0 {long_doc} 1 0.5 t\n")
    assert check_file(path, "run", monkeypatch)
    fast = read_run(path)
    with monkeypatch.context() as m:
        m.setattr(native_kernels, "_lib", False)
        slow = read_run(path)
    assert fast.doc_ids.to_pylist() == slow.doc_ids.to_pylist()
    assert np.array_equal(fast.doc_hash_high, slow.doc_hash_high)


def test_errors_name_the_line_as_before(native, tmp_path):
    path = tmp_path / "bad.run"
    path.write_text("q1 Q0 d1 1 0.5 t\n\nq1 Q0 d2 2 x t\n")
    with pytest.raises(InputError, match=r"bad.run:3.*score 'x' is not a number"):
        read_run(path)
    qrels = tmp_path / "bad.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d1 2\n")
    with pytest.raises(InputError, match=r"bad.qrels:2"):
        read_qrels(qrels)


def test_the_general_path_is_used_without_the_library(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKGATE_NATIVE", "0")
    monkeypatch.setattr(native_kernels, "_lib", None)
    assert native_kernels.library() is None
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 d1 1 0.5 t\n")
    assert native_scan.scan(str(path), None, "run") is None
    assert read_run(path).num_rows == 1


def test_doc_ids_past_the_chunk_limit_start_a_new_string_array(native, tmp_path, monkeypatch):
    """The doc ids are one string array until `_CHUNK_BYTES` of them (Arrow's int32 offsets), then
    another: the rows are the same either way."""
    path = tmp_path / "big.run"
    _big_run(path, random.Random(5), queries=40, depth=100)
    monkeypatch.setattr(native_scan, "_WINDOW", 1 << 12)
    whole = native_scan.scan(str(path), None, "run")
    monkeypatch.setattr(native_scan, "_CHUNK_BYTES", 1 << 13)
    cut = native_scan.scan(str(path), None, "run")
    assert whole is not None and cut is not None
    assert whole.doc_ids.num_chunks == 1 and cut.doc_ids.num_chunks > 3
    assert cut.doc_ids.to_pylist() == whole.doc_ids.to_pylist()
