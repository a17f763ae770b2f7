"""The run's tag, as trec_eval prints it for ``runid``: the sixth field of the run file's last data line."""

from __future__ import annotations

import os

from rankgate.io.source import read_bytes, sniff_codec
from rankgate.io.trec import is_content, split_lines


def last_run_tag(path: str) -> str:
    """The sixth field of the last data line of a run file: what trec_eval prints as ``runid``.

    Reads the file's tail only, unless the file is compressed.
    """
    if sniff_codec(path) is None:
        size = os.path.getsize(path)
        step = 1 << 16
        with open(path, "rb") as f:
            while True:
                start = max(0, size - step)
                f.seek(start)
                tail = f.read(size - start)
                tag = _last_tag(tail if start == 0 else tail[tail.find(b"\n") + 1 :])
                if tag is not None or start == 0:
                    return tag or ""
                step *= 4
    return _last_tag(read_bytes(path)) or ""


def _last_tag(data: bytes) -> str | None:
    for line in reversed(split_lines(data)):
        if is_content(line, "run"):
            fields = line.split()
            return fields[5].decode("utf-8", "replace") if len(fields) >= 6 else None
    return None
