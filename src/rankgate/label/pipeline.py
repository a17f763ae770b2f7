"""`run_job`: the whole of ``rankgate label`` from file paths and options, as one library call.

Reads the runs, texts and existing judgments; builds the judge; pools; judges through
`label_pool`; writes the TREC qrels, the JSONL and the tier tags. The CLI only maps its
options to a `LabelJob` and prints the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rankgate.errors import ConfigError
from rankgate.label.runner import DEFAULT_MAX_DOC_CHARS, Estimate, LabelReport, label_pool
from rankgate.label.types import JUDGES, TIER_HUMAN, TIER_LLM, TIER_WEAK, Judgment

if TYPE_CHECKING:
    from rankgate.core.qrels import Qrels
    from rankgate.core.run import Run
    from rankgate.label.chat import ChatClient
    from rankgate.label.llm import LLMJudge
    from rankgate.label.pooling import Pool
    from rankgate.label.weak import BM25Judge, ClickJudge, CrossEncoderJudge

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


@dataclass
class LabelJob:
    """Every option of ``rankgate label`` (paths are strings; None: not given)."""

    runs: list[str] = field(default_factory=list)
    corpus: str | None = None
    queries: str | None = None
    depth: int = 10
    judge: str = "llm"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    scale: str = "graded"
    prompt: str | None = None
    existing: str | None = None
    merge_existing: bool = False
    existing_tier: str = TIER_HUMAN
    out: str | None = None
    jsonl: str | None = None
    tags_out: str | None = None
    store: str | None = None
    max_judgments: int | None = None
    max_cost: float | None = None
    price_in: float = 0.0
    price_out: float = 0.0
    dry_run: bool = False
    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = 1.0
    parse_retries: int = 2
    max_tokens: int = 256
    temperature: float = 0.0
    json_mode: bool = False
    answer_format: str = "json"
    max_doc_chars: int = DEFAULT_MAX_DOC_CHARS
    retry_failed: bool = False
    tier: str | None = None
    thresholds: tuple[float, ...] | None = None
    normalize: str = "max"
    clicks: str | None = None
    click_model: str = "pbm"  # impression-level logs: pbm, cascade or sdbn
    min_impressions: int = 10
    progress: bool = False


@dataclass
class JobResult:
    """The report, the judgments written, the output paths and any warnings."""

    report: LabelReport
    written: list[Judgment]
    outputs: dict[str, str]
    store: str
    warnings: list[str]


def check_job(job: LabelJob) -> None:
    """Raise `ConfigError` for a combination of options that cannot work, naming the option."""
    if job.judge not in JUDGES:
        raise ConfigError(f"unknown judge {job.judge!r}; choose one of {', '.join(JUDGES)}", key_path="--judge")
    if not job.runs and job.judge != "clicks":
        raise ConfigError("give at least one --run to pool", key_path="--run")
    if job.judge in ("llm", "bm25", "cross-encoder"):
        for name, value in (("--corpus", job.corpus), ("--queries", job.queries)):
            if value is None:
                raise ConfigError(f"the {job.judge} judge reads texts: give {name}", key_path=name)
    if job.judge == "llm":
        if not job.base_url:
            raise ConfigError("--judge llm needs --base-url (e.g. http://localhost:8000/v1)", key_path="--base-url")
        if not job.model:
            raise ConfigError("--judge llm needs --model", key_path="--model")
    if job.judge == "cross-encoder" and not job.model:
        raise ConfigError("--judge cross-encoder needs --model PATH (a local model folder)", key_path="--model")
    if job.judge == "clicks" and not job.clicks:
        raise ConfigError("--judge clicks needs --clicks FILE", key_path="--clicks")
    if job.max_cost is not None and job.price_in == 0 and job.price_out == 0:
        raise ConfigError(
            "--max-cost needs prices: give --price-in and --price-out (per 1M tokens)", key_path="--max-cost"
        )
    if job.prompt is not None and job.judge != "llm":
        raise ConfigError("--prompt applies to --judge llm only", key_path="--prompt")
    if not job.out and not job.dry_run:
        raise ConfigError("give --out QRELS (or --dry-run)", key_path="--out")


def store_path(job: LabelJob) -> str:
    """``--store``, else the --out path with the suffix ``.sqlite`` (``llm.txt`` -> ``llm.sqlite``)."""
    if job.store:
        return job.store
    if job.out:
        return str(Path(job.out).with_suffix(".sqlite"))
    return ":memory:"


def build_client(job: LabelJob, warnings: list[str]) -> ChatClient:
    """The chat client of ``job``'s endpoint options (key from ``$job.api_key_env``; a missing key is warned).

    Every command that asks an LLM (``label``, ``label synth``, ``rag context``) builds its client here.
    """
    from rankgate.label.chat import ChatClient
    from rankgate.label.cost import CostMeter, Prices
    from rankgate.label.ratelimit import RateLimiter
    from rankgate.label.secret import secret_from_env

    base_url, model = job.base_url or "", job.model or ""
    key = secret_from_env(job.api_key_env)
    host = (urlsplit(base_url).hostname or "").lower()
    if key is None and host not in LOCAL_HOSTS:
        warnings.append(f"${job.api_key_env} is not set: sending requests without an API key")
    return ChatClient(
        base_url,
        model,
        api_key=key,
        timeout=job.timeout,
        max_retries=job.max_retries,
        backoff=job.backoff,
        temperature=job.temperature,
        max_tokens=job.max_tokens,
        json_mode=job.json_mode,
        limiter=RateLimiter(job.rpm, job.tpm),
        meter=CostMeter(Prices(job.price_in, job.price_out), max_cost=job.max_cost),
    )


def _build_judge(
    job: LabelJob, queries: dict[str, str] | None, corpus: dict[str, str] | None, warnings: list[str]
) -> LLMJudge | BM25Judge | ClickJudge | CrossEncoderJudge:
    if job.judge == "llm":
        from rankgate.label.llm import LLMJudge
        from rankgate.label.prompts import Prompt

        fmt = job.answer_format
        if job.prompt:
            prompt = Prompt.from_file(job.prompt, job.scale, answer_format=fmt)
        else:
            prompt = Prompt.builtin(job.scale, answer_format=fmt)
        client = build_client(job, warnings)
        return LLMJudge(client, prompt, parse_retries=job.parse_retries, tier=job.tier or TIER_LLM)
    from rankgate.label import weak

    tier = job.tier or TIER_WEAK
    if job.judge == "bm25":
        return weak.BM25Judge(
            corpus or {},
            queries or {},
            thresholds=job.thresholds or weak.BM25_THRESHOLDS,
            normalize=job.normalize,
            tier=tier,
        )
    if job.judge == "clicks":
        return weak.ClickJudge(
            weak.read_clicks(job.clicks or "", model=job.click_model, min_impressions=job.min_impressions),
            thresholds=job.thresholds or weak.CLICK_THRESHOLDS,
            min_impressions=job.min_impressions,
            tier=tier,
        )
    return weak.CrossEncoderJudge(
        job.model or "", thresholds=job.thresholds or weak.CROSS_ENCODER_THRESHOLDS, tier=tier
    )


def run_job(job: LabelJob, *, on_estimate: Callable[[Estimate], None] | None = None) -> JobResult:
    """Pool, judge and write outputs as ``rankgate label`` does (see `LabelJob`)."""
    from rankgate.io.readers import read_qrels, read_run
    from rankgate.label.collection import read_texts
    from rankgate.label.store import JudgmentStore

    check_job(job)
    warnings: list[str] = []
    needs_text = job.judge != "clicks"
    queries = read_texts(job.queries, what="query") if needs_text and job.queries else None
    corpus = read_texts(job.corpus, what="document") if needs_text and job.corpus else None
    runs = [read_run(p) for p in job.runs]
    existing = read_qrels(job.existing) if job.existing else None
    judge = _build_judge(job, queries, corpus, warnings)
    pool = _pool(job, judge, runs, existing, queries, corpus, warnings)
    path = store_path(job)
    if job.dry_run and path != ":memory:" and not Path(path).exists():
        path = ":memory:"  # a dry run creates nothing; of a resumed job, it estimates what is left
    with JudgmentStore(path) as store:
        report = label_pool(
            pool,
            judge,
            store,
            queries=queries,
            corpus=corpus,
            max_judgments=job.max_judgments,
            concurrency=job.concurrency,
            retry_failed=job.retry_failed,
            max_doc_chars=job.max_doc_chars or None,
            dry_run=job.dry_run,
            progress=job.progress,
            on_estimate=on_estimate,
        )
    written = list(report.judgments)
    if job.merge_existing and existing is not None:
        written += [
            Judgment(q, d, g, "file:existing", "qrels", tier=job.existing_tier)
            for q, docs in existing.to_dict().items()
            for d, g in docs.items()
        ]
    outputs = _write_outputs(job, written) if not job.dry_run else {}
    return JobResult(report, written, outputs, path if path != ":memory:" else "", warnings)


def _pool(
    job: LabelJob,
    judge: LLMJudge | BM25Judge | ClickJudge | CrossEncoderJudge,
    runs: list[Run],
    existing: Qrels | None,
    queries: dict[str, str] | None,
    corpus: dict[str, str] | None,
    warnings: list[str],
) -> Pool:
    """The pool to judge: the runs' top ``job.depth`` (a click judge without runs: its logged pairs).

    Raises:
        InputError: no run query has text in the queries, or no document of the runs in the
            corpus, the pool being empty (the message suggests a swap of the two files).
    """
    from rankgate.label.collection import require_some_text
    from rankgate.label.pooling import build_pool, pool_from_pairs
    from rankgate.label.weak import ClickJudge

    if queries is not None:
        require_some_text(
            (q for run in runs for q in run.query_ids.to_pylist()), queries, subject="run query", option="--queries",
            path=str(job.queries), other=corpus, other_option="--corpus", ask="is it the queries file of these runs?",
        )  # fmt: skip
    if runs or not isinstance(judge, ClickJudge):
        pool = build_pool(
            runs,
            job.depth,
            existing=existing,
            queries=set(queries) if queries is not None else None,
            documents=set(corpus) if corpus is not None else None,
        )
    else:
        pool = pool_from_pairs(judge.labelable(), existing=existing)
    if corpus is not None and pool.missing_docs and not pool.pairs:
        require_some_text(
            (d for run in runs for d in run.doc_ids.to_pylist()), corpus, subject="document of the runs",
            option="--corpus", path=str(job.corpus), other=queries, other_option="--queries",
            ask="is it the corpus these runs retrieved from?",
        )  # fmt: skip
    if pool.missing_queries:
        warnings.append(
            f"{len(pool.missing_queries)} run queries have no text in {job.queries} and were left out, "
            f"e.g. {pool.missing_queries[0]!r}"
        )
    if pool.missing_docs:
        warnings.append(
            f"{pool.missing_docs} pooled documents are not in {job.corpus} and were left out, "
            f"e.g. {pool.missing_doc_example!r}"
        )
    return pool


def _write_outputs(job: LabelJob, written: list[Judgment]) -> dict[str, str]:
    """Write the qrels, JSONL and tier tags the job asks for; their paths by kind."""
    from rankgate.label.export import write_jsonl, write_tier_tags, write_trec

    outputs: dict[str, str] = {}
    if job.out:
        write_trec(written, job.out)
        outputs["qrels"] = job.out
    if job.jsonl:
        write_jsonl(written, job.jsonl)
        outputs["jsonl"] = job.jsonl
    if job.tags_out:
        write_tier_tags(written, job.tags_out)
        outputs["tags"] = job.tags_out
    return outputs


def job_from_options(options: dict[str, object]) -> LabelJob:
    """A `LabelJob` from a dict of option values keyed like its fields (unknown keys: error)."""
    names = {f.name for f in dataclasses.fields(LabelJob)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise ConfigError(f"unknown option {unknown[0]!r}")
    return LabelJob(**options)  # type: ignore[arg-type]
