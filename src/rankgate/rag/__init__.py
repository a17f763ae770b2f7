"""RAG-aware evaluation: chunk and span judgments, answer-aware measures.

Chunks are what RAG systems retrieve; these modules carry document- and span-level judgments
over to them, and score retrieved context against reference answers.

- reading a run of chunks as documents is an evaluation setting (``chunk_sep``, ``chunk_map``,
  ``chunk_agg``; `rankgate.core.chunks`), so every verb and `rankgate.evaluate` apply it;
- span judgments become chunk judgments with ``chunk_offsets`` (`rankgate.core.spans`);
- `rankgate.rag.spans`: character-level SpanRecall@k and SpanPrecision@k, and chunk judgments
  of one chunking carried to another (`spans_of_chunk_qrels`).
"""
