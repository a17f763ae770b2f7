"""Prompts whose answer is a JSON object other than a relevance verdict, for `LLMJudge`.

`LLMJudge` asks, retries unreadable answers and stores what it got; it reads an answer through
its prompt's ``parse``, which must give ``(label, reason)``. A `StructuredPrompt` keeps that
contract for other answers: a 0/1 verdict under another key (``{"supported": 1, "reason":
"..."}``, context recall and precision), or free-text fields (``{"question": "...", "answer":
"..."}``, synthetic questions) whose label is 1 and whose reason is the object as JSON.
Answers are read as strictly as relevance verdicts (`rankgate.label.prompts.parse_answer`):
one JSON object (a code fence and a leading ``<think>`` block tolerated), exactly the asked keys,
none twice, no empty text.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from rankgate.label.prompts import (
    ANSWER_FORMAT_VERSION,
    ParseFailure,
    Prompt,
    _bare_label,
    _no_duplicate_keys,
    fence,
    reply_body,
)

STRUCTURED_VERSION = "structured-v1"


@dataclass(frozen=True)
class StructuredPrompt(Prompt):
    """A built-in prompt with its own answer object (the templates are rankgate's, not a user's file).

    Attributes:
        fields: the keys of the answer object, e.g. ``("question", "answer")``.
        verdict: the key holding a 0/1 label (``"supported"``); None: every field is text, the label is 1.
        shape: the answer object as the model is shown it (in the retry message).
        query_fence, document_fence: the fence names of the two texts (`fence`).
    """

    fields: tuple[str, ...] = ()
    verdict: str | None = None
    shape: str = ""
    query_fence: str = "QUERY"
    document_fence: str = "PASSAGE"

    def __post_init__(self) -> None:  # a built-in template: no user placeholders to check
        if self.verdict is not None and self.verdict not in self.fields:
            raise ValueError(f"the verdict key {self.verdict!r} must be one of the fields")

    @property
    def labels(self) -> tuple[int, ...]:
        return (0, 1)

    @property
    def hash(self) -> str:
        """First 16 hex digits of the SHA-256 of everything that shapes an answer and how it is read."""
        parts = (ANSWER_FORMAT_VERSION, STRUCTURED_VERSION, self.system, self.template, *self.fields, str(self.verdict))
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]

    def messages(self, query: str, document: str) -> list[dict[str, str]]:
        """System and user messages; ``{query}`` and ``{document}`` are fenced where the template has them."""
        user = self.template.format(query=fence(self.query_fence, query), document=fence(self.document_fence, document))
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def retry_message(self, problem: str) -> dict[str, str]:
        text = f"Your reply could not be read: {problem}. Reply again with only the JSON object {self.shape}"
        text += " and nothing else."
        return {"role": "user", "content": text}

    def parse(self, text: str) -> tuple[int, str]:
        """``(verdict, reason)``, or ``(1, the object as JSON)`` for text fields; `ParseFailure` otherwise.

        >>> p = StructuredPrompt("{document}", fields=("supported", "reason"), verdict="supported")
        >>> p.parse('{"supported": 1, "reason": "Stated in [2]."}'), p.parse("No")
        ((1, 'Stated in [2].'), (0, ''))
        >>> q = StructuredPrompt("{document}", fields=("question", "answer"))
        >>> q.parse('```json\\n{"question": "Who?", "answer": "Ada"}\\n```')
        (1, '{"question": "Who?", "answer": "Ada"}')
        >>> q.parse('{"question": "", "answer": "Ada"}')
        Traceback (most recent call last):
        ...
        rankgate.label.prompts.ParseFailure: "question" must be a non-empty string
        """
        obj = read_object(text, self.fields, self.labels if self.verdict else None)
        if self.verdict is None:
            for key in self.fields:
                if not isinstance(obj.get(key), str) or not str(obj[key]).strip():
                    raise ParseFailure(f'"{key}" must be a non-empty string')
            return 1, json.dumps({k: str(obj[k]).strip() for k in self.fields}, ensure_ascii=False)
        value = obj.get(self.verdict)
        if isinstance(value, bool) or not isinstance(value, int) or value not in self.labels:
            raise ParseFailure(f'"{self.verdict}" must be 0 or 1 (got {str(value)[:40]!r})')
        reason = obj.get("reason", "")
        if not isinstance(reason, str):
            raise ParseFailure('"reason" must be a string')
        return value, reason.strip()


def read_object(text: str, fields: tuple[str, ...], labels: tuple[int, ...] | None) -> dict[str, object]:
    """The one JSON object of an answer, with no key outside ``fields``; a bare yes/no/0/1 when ``labels``.

    A bare answer becomes ``{fields[0]: label}`` (the verdict key comes first).
    """
    body = reply_body(text)
    if labels is not None:
        bare = _bare_label(body, labels)
        if bare is not None:
            return {fields[0]: bare}
    try:
        obj = json.loads(body, object_pairs_hook=_no_duplicate_keys)
    except ParseFailure:
        raise
    except (ValueError, RecursionError):
        raise ParseFailure("the reply is not a single JSON object") from None
    if not isinstance(obj, dict):
        raise ParseFailure("the reply is not a single JSON object")
    extra = sorted(set(obj) - set(fields))
    if extra:
        raise ParseFailure(f"unexpected key {extra[0]!r}; only {', '.join(repr(f) for f in fields)} are allowed")
    missing = [f for f in fields if f not in obj and f != "reason"]
    if missing:
        raise ParseFailure(f"the key {missing[0]!r} is missing")
    return obj
