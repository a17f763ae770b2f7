"""The endpoint and budget options of the verbs that ask an LLM besides ``rankgate label`` itself.

``rankgate label synth`` and ``rankgate rag context`` take the options of ``rankgate label``
that shape the chat client (endpoint, key variable, prices and cost cap, rate limits, retries,
the store and ``--retry-failed``, the progress bar) under the same names, and gather them into a
`LabelJob`, from which `rankgate.label.pipeline.build_client` builds the client and whose
``retry_failed`` goes to `rankgate.label.runner.label_pool`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import click

from rankgate.errors import ConfigError

if TYPE_CHECKING:
    from rankgate.label.pipeline import LabelJob

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS = [
    click.option("--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1."),
    click.option("--model", required=True, help="Model name at the endpoint."),
    click.option(
        "--api-key-env",
        default="OPENAI_API_KEY",
        show_default=True,
        help="Variable holding the API key (never written).",
    ),
    click.option(
        "--max-cost", type=float, help="Stop before the cost could cross this (needs --price-in/--price-out)."
    ),
    click.option(
        "--price-in", type=click.FloatRange(min=0), default=0.0, show_default=True, help="Per 1M input tokens."
    ),
    click.option(
        "--price-out", type=click.FloatRange(min=0), default=0.0, show_default=True, help="Per 1M output tokens."
    ),
    click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True, help="Requests in flight."),
    click.option("--rpm", type=click.FloatRange(min=0, min_open=True), help="Requests per minute limit."),
    click.option("--tpm", type=click.FloatRange(min=0, min_open=True), help="Tokens per minute limit."),
    click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True),
    click.option("--max-retries", type=click.IntRange(min=0), default=5, show_default=True, help="Per request."),
    click.option("--backoff", type=click.FloatRange(min=0), default=1.0, show_default=True, help="Base backoff (s)."),
    click.option(
        "--parse-retries",
        type=click.IntRange(min=0),
        default=2,
        show_default=True,
        help="Re-asks after an unreadable answer before it counts as malformed.",
    ),
    click.option("--max-tokens", type=click.IntRange(min=1), default=256, show_default=True, help="Answer cap."),
    click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True),
    click.option("--json-mode", is_flag=True, help='Ask for response_format {"type": "json_object"}.'),
    click.option("--max-doc-chars", type=click.IntRange(min=0), default=6000, show_default=True, help="0: no cut."),
    click.option("--store", type=click.Path(dir_okay=False), help="Judgment store (SQLite) that makes reruns free."),
    click.option("--retry-failed", is_flag=True, help="Ask again for answers stored as unreadable (failed)."),
    click.option("--dry-run", is_flag=True, help="Print the estimate; send nothing."),
    click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr."),
]
NAMES = (
    "base_url", "model", "api_key_env", "max_cost", "price_in", "price_out", "concurrency", "rpm", "tpm", "timeout",
    "max_retries", "backoff", "parse_retries", "max_tokens", "temperature", "json_mode", "max_doc_chars", "store",
    "retry_failed", "dry_run", "progress",
)  # fmt: skip


def llm_options(func: F) -> F:
    """Add the endpoint and budget options (see the module) to a command."""
    for option in reversed(_OPTIONS):
        func = option(func)
    return func


def pop_llm_job(options: dict[str, Any]) -> LabelJob:
    """Take the endpoint and budget options out of a command's ``options`` as a `LabelJob`."""
    from rankgate.label.pipeline import LabelJob

    values = {name: options.pop(name) for name in NAMES}
    if values["max_cost"] is not None and not (values["price_in"] or values["price_out"]):
        raise ConfigError(
            "--max-cost needs prices: give --price-in and --price-out (per 1M tokens)", key_path="--max-cost"
        )
    return LabelJob(**values)


@contextlib.contextmanager
def interrupt_message(noun: str = "judgments") -> Iterator[None]:
    """Ctrl-C while judging (`LabelInterrupted`) counts ``noun`` (the CLI's `Interrupted` line says
    what is kept and that the same command resumes; exit 130). Every verb that asks an LLM runs in one."""
    from rankgate.label.outcome import LabelInterrupted

    try:
        yield
    except LabelInterrupted as stop:
        stop.noun = noun
        raise
