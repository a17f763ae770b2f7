"""Opening inputs: decompression by content, format detection, atomic writes."""

from __future__ import annotations

import atexit
import contextlib
import functools
import lzma
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import pyarrow as pa

from rankgate.errors import InputError
from rankgate.io.values import plain_float

COMPRESSED_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd"}
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
FORMATS: tuple[str, ...] = ("trec", "json", "jsonl", "csv", "tsv", "parquet")
EXTENSIONS = {
    ".trec": "trec",
    ".run": "trec",
    ".qrels": "trec",
    ".txt": "trec",
    ".res": "trec",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".parq": "parquet",  # ranx's Run.save(".parq")
}
BOM = b"\xef\xbb\xbf"
# What reading a corrupt or truncated compressed file raises (lzma's error is none of the others).
try:  # ISA-L's gzip decoder (the isal package, a dependency where it has wheels): 3x zlib's speed
    from isal.igzip_lib import IsalError

    _ISAL_ERRORS: tuple[type[BaseException], ...] = (cast(type[BaseException], IsalError),)  # its stub: an instance
except ImportError:  # pragma: no cover - platforms without isal's wheels read gzip through Arrow
    _ISAL_ERRORS = ()

DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    pa.ArrowException,
    lzma.LZMAError,
    *_ISAL_ERRORS,
)


STDIN = "-"  # as a path to read: standard input
_SPOOLED: dict[str, str] = {}  # pipe or stdin -> the temporary copy every later read opens


def local_path(path: str | os.PathLike[str]) -> str:
    """A path that can be opened again and sought in: ``path`` itself, or a copy of what it streams.

    A pipe (``<(cat run)``, ``/dev/stdin`` fed by ``|``) or ``-`` (standard input) can be read
    only once, and Arrow seeks in what it reads. So the stream is copied once to a temporary file
    (removed at exit) and every later read, in any reader, opens that copy. A device (other
    than standard input) is refused: ``/dev/zero`` would never end.
    """
    key = str(path)
    if key in _SPOOLED:
        return _SPOOLED[key]
    if key != STDIN:
        try:
            mode = os.stat(key).st_mode
        except OSError:
            return key  # missing or unreadable: the caller's open names the error
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            return key
        if not stat.S_ISFIFO(mode):
            raise InputError("is a device or socket, not a file or a pipe", source=key)
    _SPOOLED[key] = _spool(key)
    return _SPOOLED[key]


def _spool(key: str) -> str:
    import shutil
    import sys

    fd, copy = tempfile.mkstemp(prefix="rankgate-stdin-" if key == STDIN else "rankgate-pipe-")
    if not _SPOOLED:
        atexit.register(_remove_spooled)
    try:
        with os.fdopen(fd, "wb") as out:
            if key == STDIN:
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            else:
                with open(key, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
    except OSError as e:
        os.unlink(copy)
        raise InputError(f"cannot read ({e.strerror or e})", source=key) from None
    return copy


def _remove_spooled() -> None:
    for copy in _SPOOLED.values():
        with contextlib.suppress(OSError):
            os.unlink(copy)
    _SPOOLED.clear()


def sniff_codec(path: str | os.PathLike[str]) -> str | None:
    """Compression of the file from its first bytes (gzip, bz2, xz, zstd), or None."""
    try:
        with Path(local_path(path)).open("rb") as f:
            head = f.read(8)
    except FileNotFoundError:
        raise InputError("file not found", source=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", source=str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read file ({e.strerror})", source=str(path)) from None
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def open_stream(path: str | os.PathLike[str], codec: str | None) -> object:
    """Something Arrow's readers take: the path itself, or a decompressing stream."""
    path = local_path(path)
    if codec is None:
        return path
    if codec == "xz":
        return lzma.open(path, "rb")
    if codec == "gzip" and _ISAL_ERRORS:
        from isal import igzip

        return igzip.open(path, "rb")
    return pa.input_stream(str(path), compression=codec)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, decompressed when its content is gzip, bz2, xz or zstd."""
    codec = sniff_codec(path)
    path = local_path(path)
    try:
        if codec is None:
            return Path(path).read_bytes()
        if codec == "xz":
            return lzma.decompress(Path(path).read_bytes())
        if codec == "gzip" and _ISAL_ERRORS:
            from isal import igzip

            return igzip.decompress(Path(path).read_bytes())
        with pa.input_stream(str(path), compression=codec) as stream:
            return bytes(stream.read())
    except DECOMPRESS_ERRORS as e:
        raise InputError(f"cannot decompress {codec} file ({e})", source=str(path)) from None


def read_head(path: str | os.PathLike[str], size: int = 65536) -> bytes:
    """The first ``size`` bytes of the file, decompressed when it is compressed (for format sniffing)."""
    codec = sniff_codec(path)
    stream = open_stream(path, codec)
    if isinstance(stream, str):
        with open(stream, "rb") as f:
            return f.read(size)
    try:
        return bytes(stream.read(size))  # type: ignore[attr-defined]
    except DECOMPRESS_ERRORS as e:
        raise InputError(f"cannot decompress file ({e})", source=str(path)) from None
    finally:
        stream.close()  # type: ignore[attr-defined]


def block_size_for(data: bytes, minimum: int) -> int:
    """An Arrow CSV block size that holds ``data``'s longest line (a longer line fails the parse).

    trec_eval reads lines of any length, so must we.
    """
    if len(data) < minimum:
        return minimum
    import numpy as np

    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))
    longest = int(np.diff(ends, prepend=-1, append=len(data)).max())
    return max(minimum, longest + 1)


def stem(path: str | os.PathLike[str]) -> str:
    """File name without its format and compression suffixes: ``runs/bm25.trec.gz`` -> ``bm25``."""
    name = Path(path).name
    for _ in range(2):
        base, ext = os.path.splitext(name)
        if ext.lower() in COMPRESSED_SUFFIXES or ext.lower() in EXTENSIONS:
            name = base
    return name


def suffixes(path: str | os.PathLike[str]) -> tuple[str, str | None]:
    """(format extension, compression) of a file name: ``run.jsonl.gz`` -> (".jsonl", "gzip").

    >>> suffixes("runs/BM25.TREC.zst"), suffixes("qrels.tsv")
    (('.trec', 'zstd'), ('.tsv', None))
    """
    base, ext = os.path.splitext(Path(path).name.lower())
    codec = COMPRESSED_SUFFIXES.get(ext)
    return (os.path.splitext(base)[1], codec) if codec is not None else (ext, None)


def detect_format(path: str | os.PathLike[str], data: bytes | None) -> str:
    """Format from the extension (compression suffix ignored), else from the first bytes."""
    ext, _ = suffixes(path)
    if ext in EXTENSIONS and ext != ".txt":
        return EXTENSIONS[ext]
    if data is None:
        return "trec"
    return sniff_format(data)


def sniff_format(data: bytes) -> str:
    data = data[:65536]
    if data.startswith(b"PAR1"):
        return "parquet"
    text = data[len(BOM) :] if data.startswith(BOM) else data
    stripped = text.lstrip()
    if stripped.startswith(b"{") or stripped.startswith(b"["):
        first_line = stripped.split(b"\n", 1)[0].strip()
        return "jsonl" if first_line.endswith(b"}") and b"\n{" in stripped.replace(b"\r\n", b"\n") else "json"
    first = stripped.split(b"\n", 1)[0].rstrip(b"\r").lower()
    # A header's first field is a column name; a TREC line's is a query id such as "query1", or
    # even "topic": a header holds no number, where a TREC line has its grade (or rank and score).
    header_words = (b"query", b"qid", b"query-id", b"query_id", b"queryid", b"topic", b"topic_id", b"q_id")
    for delimiter, fmt in ((b"\t", "tsv"), (b",", "csv")):
        fields = [f.strip().strip(b'"') for f in first.split(delimiter)]
        if delimiter in first and fields[0] in header_words and not any(_is_number(f) for f in fields[1:]):
            return fmt
    return "trec"


def _is_number(field: bytes) -> bool:
    """Whether ``field`` reads as a number as Arrow reads one (a TREC line's grade, rank or score)."""
    try:
        plain_float(field.decode("latin-1"))
    except ValueError:
        return False
    return True


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[str]]:
    """Write to a temporary file beside ``path`` and move it in place only on success.

    Only a regular file (or a new one) is replaced so: the rename happens at the end of any
    symlinks, so a link stays a link and its target gets the new content. A device, a named
    pipe or ``/dev/stdout`` is written straight into, as a shell's ``>`` would (renaming over
    it would replace ``/dev/null`` for the whole machine when run as root).

    The file gets the permissions an ordinary ``open(path, "w")`` would give it (those of the
    file it replaces, else 0666 less the umask), not the temporary file's private 0600.
    A failure to create, flush or move the file is an `InputError` naming the path.
    """
    target = Path(path)
    if _written_in_place(target):
        with _open_in_place(target, mode) as f:
            yield f
        return
    target = Path(os.path.realpath(target))  # a symlink (even a dangling one) stays; its target is replaced
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise InputError(f"cannot write {target}: {e.strerror or e}") from None
    try:
        with _fdopen(fd, mode) as f:
            yield f
            try:
                f.flush()
                if hasattr(os, "fchmod"):  # POSIX
                    os.fchmod(f.fileno(), _mode_for(target))
                os.fsync(f.fileno())
            except OSError as e:
                raise InputError(f"cannot write {target}: {e.strerror or e}") from None
        try:
            os.replace(tmp, target)
        except OSError as e:
            raise InputError(f"cannot write {target}: {e.strerror or e}") from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _fdopen(fd: int, mode: str) -> IO[Any]:
    """``fd`` as a file: binary, or UTF-8 text with ``\n`` line endings."""
    if "b" in mode:
        return os.fdopen(fd, mode)
    return os.fdopen(fd, mode, encoding="utf-8", newline="\n")


_FD_ALIASES = re.compile(r"/dev/(stdout|stderr|fd/\d+)|/proc/(self|\d+)/fd/\d+")


def _written_in_place(target: Path) -> bool:
    """Whether ``target`` is something other than a regular file, a directory or nothing.

    ``/dev/stdout`` and its kin count even when they lead to a regular file: renaming over
    that file would leave the shell writing to a deleted one.
    """
    if _FD_ALIASES.fullmatch(os.path.abspath(target)):
        return True
    try:
        st = target.stat()
    except OSError:
        return False  # missing (or unreadable): the rename path creates it or names the error
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))


@contextlib.contextmanager
def _open_in_place(target: Path, mode: str) -> Iterator[IO[str]]:
    """Open a device, pipe or ``/dev/stdout`` for writing as it is: not truncated, never created."""
    try:
        fd = os.open(target, os.O_WRONLY | (os.O_APPEND if _is_regular(target) else 0))
    except OSError as e:
        raise InputError(f"cannot write {target}: {e.strerror or e}") from None
    with _fdopen(fd, mode) as f:
        yield f
        try:
            f.flush()
        except OSError as e:
            raise InputError(f"cannot write {target}: {e.strerror or e}") from None


def _is_regular(target: Path) -> bool:
    try:
        return stat.S_ISREG(target.stat().st_mode)
    except OSError:
        return False


def _mode_for(target: Path) -> int:
    """The permission bits a plain ``open(target, "w")`` would leave."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it: put it straight back
    os.umask(mask)
    return mask
