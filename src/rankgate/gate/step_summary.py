"""Appending the gate's Markdown to the GitHub Actions job summary, within GitHub's size limit."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from rankgate.errors import BackendError

MAX_SUMMARY_BYTES = 1024 * 1024  # GitHub drops a step summary over 1 MiB
TRUNCATED_NOTE = "\n\n_… truncated to fit a GitHub comment: see the JSON output._\n"


def write_step_summary(markdown: str, *, env: Mapping[str, str] = os.environ) -> bool:
    """Append ``markdown`` to the GitHub Actions job summary; False when ``GITHUB_STEP_SUMMARY`` is unset.

    The summary is one file per step that GitHub renders after the job; appending keeps
    what earlier commands of the step wrote. An addition that would take it past GitHub's
    1 MiB limit is cut, with a note.
    """
    path = (env.get("GITHUB_STEP_SUMMARY") or "").strip()
    if not path:
        return False
    target = Path(path)
    try:
        used = target.stat().st_size if target.exists() else 0
        data = (markdown.rstrip("\n") + "\n\n").encode("utf-8")
        room = MAX_SUMMARY_BYTES - used
        if len(data) > room:
            note = TRUNCATED_NOTE.encode()
            keep = max(room - len(note), 0)
            data = data[:keep].decode("utf-8", errors="ignore").encode("utf-8") + (note if room > len(note) else b"")
        with target.open("ab") as f:
            f.write(data)
    except OSError as e:
        raise BackendError(f"cannot append to the job summary GITHUB_STEP_SUMMARY={path}: {e.strerror or e}") from None
    return True
