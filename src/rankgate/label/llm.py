"""The LLM judge: render the prompt, ask a `ChatClient`, parse the answer strictly, ask again when unreadable.

`LLMJudge` renders the prompt, asks, parses the answer strictly and, when the answer is
unreadable, asks again (showing the model its reply and what was wrong) up to
``parse_retries`` times before recording the pair as failed. The client, its retries, rate
limits and cost cap are `rankgate.label.chat`'s.
"""

from __future__ import annotations

import hashlib

from rankgate.errors import ConfigError
from rankgate.label.chat import ChatClient, RequestRejected, TransientFailure
from rankgate.label.cost import CostLimitReached
from rankgate.label.prompts import ParseFailure, Prompt
from rankgate.label.types import STATUS_ERROR, STATUS_FAILED, STATUS_OK, TIER_LLM, Judgment, Pair

RAW_KEEP = 2000  # characters of an unreadable answer kept in the store


class LLMJudge:
    """Judge pairs with a chat model and a `Prompt`; the identity is model + prompt hash.

    Args:
        client: the `ChatClient` (entered as a context manager by the caller).
        prompt: the prompt (built-in graded/binary or a custom template).
        parse_retries: extra requests after an unreadable answer before the pair is failed.
        tier: the gold-set tier written with its judgments.
    """

    kind = "llm"
    needs_text = True

    def __init__(self, client: ChatClient, prompt: Prompt, *, parse_retries: int = 2, tier: str = TIER_LLM) -> None:
        if parse_retries < 0:
            raise ConfigError(f"parse_retries must be >= 0. Got {parse_retries!r} instead.", key_path="parse_retries")
        self.client = client
        self.prompt = prompt
        self.parse_retries = parse_retries
        self.tier = tier
        self.model = client.model
        self.prompt_hash = prompt.hash
        self.judge_id = f"llm:{self.model}:{self.prompt_hash}"

    def __repr__(self) -> str:
        return f"LLMJudge({self.judge_id!r})"

    def describe(self) -> dict[str, object]:
        return {
            "judge": self.kind,
            "judge_id": self.judge_id,
            "prompt_hash": self.prompt_hash,
            "prompt_source": self.prompt.source,
            "scale": self.prompt.scale,
            "answer_format": self.prompt.answer_format,
            "parse_retries": self.parse_retries,
            "tier": self.tier,
            **self.client.describe(),
        }

    def cache_key(self, pair: Pair) -> str:
        """SHA-256 of model, prompt hash, query text and document text."""
        blob = "\x00".join((self.model, self.prompt_hash, pair.query, pair.document))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def messages(self, pair: Pair) -> list[dict[str, str]]:
        return self.prompt.messages(pair.query, pair.document)

    async def judge(self, pair: Pair) -> Judgment:
        """Judge one pair; a failure is a judgment with status "failed" or "error", never a guess.

        Raises:
            CostLimitReached: before sending anything that could cross the cost cap.
            BackendError: the endpoint refuses the key, model or URL.
        """
        messages = self.messages(pair)
        result = Judgment(
            pair.query_id,
            pair.doc_id,
            None,
            self.judge_id,
            self.kind,
            model=self.model,
            prompt_hash=self.prompt_hash,
            cache_key=self.cache_key(pair),
            tier=self.tier,
        )
        for round_ in range(self.parse_retries + 1):
            try:
                reply = await self.client.complete(messages)
            except CostLimitReached as e:
                if round_ > 0:  # the unreadable answers are paid for: keep their record (retried next run)
                    result.status = STATUS_ERROR
                    result.error = f"{result.error}; the retry could cross the cost cap"
                    e.partial = result
                raise
            except TransientFailure as e:
                result.status, result.error = STATUS_ERROR, self.client.scrub(str(e))
                return result
            except RequestRejected as e:
                result.status, result.error = STATUS_FAILED, self.client.scrub(str(e))
                return result
            result.attempts += reply.attempts
            result.input_tokens += reply.input_tokens
            result.output_tokens += reply.output_tokens
            result.cost += reply.cost
            result.latency_ms = reply.latency_ms
            try:
                label, reason = self.prompt.parse(reply.content)
            except ParseFailure as e:
                result.raw = reply.content[:RAW_KEEP]
                result.error = f"unreadable answer ({round_ + 1} of {self.parse_retries + 1}): {e}"
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply.content},
                    self.prompt.retry_message(str(e)),
                ]
                continue
            result.label, result.reason, result.status = label, reason, STATUS_OK
            result.raw, result.error = "", ""
            return result
        result.status = STATUS_FAILED
        return result
