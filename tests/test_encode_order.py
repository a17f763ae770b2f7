"""The encoder's batches (token count order within units), its threads, and its agreement with plain
sentence-transformers and FAISS: the same vectors (to 1e-6) and the same hits. Nothing here is timed."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from rankgate.bench.encoders import UNIT_BATCHES, longest_first
from rankgate.bench.indexes import ExactIndex
from rankgate.bench.progress import SILENT
from rankgate.bench.threads import ENCODE_THREADS_VARIABLE, encode_threads, torch_threads_set
from rankgate.errors import ConfigError
from tests.bench_support import minilm  # noqa: F401  (session fixture)

WORDS = ("dense", "retrieval", "ranks", "passages", "by", "inner", "product", "of", "vectors", "and", "query")


def texts_of_many_lengths(n: int) -> list[str]:
    """Texts of 1 to 40 words in a scrambled length order (and one past MiniLM's 256 tokens)."""
    out = [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(1 + (i * 7) % 40)) for i in range(n)]
    out[5] = " ".join(WORDS * 30)  # truncated at 256 tokens
    return out


def test_longest_first_keeps_ties_in_order() -> None:
    assert longest_first([3, 9, 3, 5, 9]).tolist() == [1, 4, 3, 0, 2]
    assert longest_first([]).tolist() == []


@pytest.mark.extra("bench")
def test_vectors_and_hits_are_plain_sentence_transformers_and_faiss(minilm: Any) -> None:  # noqa: F811
    faiss = pytest.importorskip("faiss")
    docs = texts_of_many_lengths(70)
    queries = ["inner product of vectors", "ranks passages", "the query"]
    mine = minilm.encode(docs, normalize=True, batch_size=4)
    plain = minilm.model.encode(docs, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
    assert mine.dtype == np.float32 and mine.shape == plain.shape
    assert float(np.abs(mine - plain).max()) <= 1e-6
    q = minilm.model.encode(queries, normalize_embeddings=True, convert_to_numpy=True)
    exact = ExactIndex()
    exact.build(mine, SILENT)
    hits = exact.search(q, 10)
    flat = faiss.IndexFlatIP(plain.shape[1])
    flat.add(plain)
    scores, ids = flat.search(q, 10)
    assert hits.ids.tolist() == ids.tolist()
    assert np.allclose(hits.scores, scores, atol=1e-5)
    one = minilm.encode(queries[:1], normalize=True)  # a single query: one batch, no sorting
    assert float(np.abs(one[0] - q[0]).max()) <= 1e-6


@pytest.mark.extra("bench")
def test_batches_are_cut_by_token_count_within_units(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    docs = texts_of_many_lengths(75)
    batch_size = 3
    unit = batch_size * UNIT_BATCHES  # 24 texts: units [0, 24), [24, 48), [48, 72), [72, 75)
    tokenizer = minilm.model.tokenizer
    count = {t: len(tokenizer(t, truncation=True, max_length=minilm.model.max_seq_length)["input_ids"]) for t in docs}
    real_encode = minilm.model.encode
    batches: list[list[str]] = []

    def spy(batch: list[str], **kwargs: Any) -> np.ndarray:
        batches.append(list(batch))
        return np.asarray(real_encode(batch, **kwargs))

    monkeypatch.setattr(minilm.model, "encode", spy)
    steps: list[int] = []
    minilm.encode(docs, normalize=True, batch_size=batch_size, progress=steps.append)
    assert steps == [len(b) for b in batches] and sum(steps) == len(docs)
    assert sorted(t for b in batches for t in b) == sorted(docs)  # each text once
    position = {t: i for i, t in enumerate(docs)}
    for lo in range(0, len(docs), unit):
        mine = [b for b in batches if position[b[0]] // unit == lo // unit]
        assert all(position[t] // unit == lo // unit for b in mine for t in b)  # a batch never spans units
        assert [len(b) for b in mine] == [batch_size] * (len(mine) - 1) + [len(mine[-1])]
        counts = [sorted(count[t] for t in b) for b in mine]
        assert all(a[0] >= b[-1] for a, b in itertools.pairwise(counts)), counts  # longest first: little padding


def test_encode_threads_from_the_argument_or_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENCODE_THREADS_VARIABLE, raising=False)
    assert encode_threads() is None and encode_threads(3) == 3
    monkeypatch.setenv(ENCODE_THREADS_VARIABLE, "2")
    assert encode_threads() == 2 and encode_threads(1) == 1
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(ENCODE_THREADS_VARIABLE, bad)
        with pytest.raises(ConfigError, match=ENCODE_THREADS_VARIABLE):
            encode_threads()


@pytest.mark.extra("bench")
def test_encoder_runs_with_its_threads_and_restores_them(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    import torch

    before = torch.get_num_threads()
    seen: list[int] = []
    real_encode = minilm.model.encode

    def spy(batch: list[str], **kwargs: Any) -> np.ndarray:
        seen.append(torch.get_num_threads())
        return np.asarray(real_encode(batch, **kwargs))

    monkeypatch.setattr(minilm.model, "encode", spy)
    monkeypatch.setattr(minilm, "threads", 1)
    minilm.encode(["one text", "another text"], normalize=True, batch_size=1)
    assert seen == [1, 1] and torch.get_num_threads() == before
    with torch_threads_set(None):
        assert torch.get_num_threads() == before


@pytest.mark.extra("bench")
def test_query_encoder_encodes_a_query_on_one_thread(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    import torch

    from rankgate.retrieve.encode import QueryEncoder

    monkeypatch.delenv(ENCODE_THREADS_VARIABLE, raising=False)
    before = torch.get_num_threads()
    seen: list[int] = []
    real_encode = minilm.model.encode

    def spy(batch: list[str], **kwargs: Any) -> np.ndarray:
        seen.append(torch.get_num_threads())
        return np.asarray(real_encode(batch, **kwargs))

    monkeypatch.setattr(minilm.model, "encode", spy)
    vector = QueryEncoder(minilm).vector("ranks passages")
    assert seen == [1] and torch.get_num_threads() == before
    plain = real_encode(["ranks passages"], normalize_embeddings=True, convert_to_numpy=True)[0]
    assert float(np.abs(vector - plain).max()) <= 1e-6
    monkeypatch.setenv(ENCODE_THREADS_VARIABLE, "2")
    assert QueryEncoder(minilm).threads == 2
