"""Subtopic judgments for diversity measures: ndeval's ``qid subtopic docid grade`` lines.

The layout of a TREC qrels file, with the subtopic where trec_eval's qrels hold an unused
iteration field. A file whose second field is "0" on every line is a plain qrels file (one
iteration), not subtopic judgments, and is refused: diversity needs the subtopics.
"""

from __future__ import annotations

import os

from rankgate.errors import InputError
from rankgate.io.source import read_bytes

SubtopicQrels = dict[str, dict[str, dict[str, int]]]  # qid -> docid -> subtopic -> grade


def read_subtopic_qrels(path: str | os.PathLike[str]) -> SubtopicQrels:
    """``{qid: {docid: {subtopic: grade}}}`` from a ``qid subtopic docid grade`` file (compressed or not).

    Raises:
        InputError: a line that is not four fields with an integer grade (named by file:line), a
            (query, subtopic, doc) judged twice, or a file with no subtopics (plain qrels).
    """
    source = str(path)
    out: SubtopicQrels = {}
    subtopics: set[str] = set()
    for number, raw in enumerate(read_bytes(path).decode("utf-8", errors="replace").splitlines(), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        where = f"{source}:{number}"
        if len(fields) != 4:
            raise InputError(f"{where}: expected 'qid subtopic docid grade', got {len(fields)} fields: {raw.strip()!r}")
        qid, subtopic, doc, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(f"{where}: the grade {grade_text!r} is not an integer") from None
        judged = out.setdefault(qid, {}).setdefault(doc, {})
        if subtopic in judged:
            raise InputError(f"{where}: query {qid!r}, subtopic {subtopic!r}, doc {doc!r} is judged twice")
        judged[subtopic] = grade
        subtopics.add(subtopic)
    if not out:
        raise InputError("the subtopic qrels hold no judgments", source=source)
    if subtopics == {"0"}:
        raise InputError(
            "the second field is 0 on every line: this is a plain qrels file, not subtopic judgments "
            "('qid subtopic docid grade', subtopics numbered from 1, as ndeval reads them)",
            source=source,
        )
    return out
