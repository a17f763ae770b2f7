"""Reading the texts a judge needs: a corpus and queries in BEIR JSONL, JSON or TSV.

The reader is `rankgate.io.texts` (shared with the benchmark datasets and ``rankgate retrieve``);
a judge sees a document as its title, a blank line, and its text.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "corpus.jsonl"
>>> _ = f.write_text('{"_id": "d1", "title": "Tea", "text": "Brew at 80 C."}\\n')
>>> read_texts(f)
{'d1': 'Tea\\n\\nBrew at 80 C.'}
"""

from __future__ import annotations

from rankgate.io.texts import ID_KEYS, TEXT_KEYS, read_texts

__all__ = ["ID_KEYS", "TEXT_KEYS", "read_texts"]
