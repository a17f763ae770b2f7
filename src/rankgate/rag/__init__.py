"""RAG-aware evaluation: chunk and span judgments, answer-aware measures.

Chunks are what RAG systems retrieve; these modules carry document- and span-level judgments
over to them, and score retrieved context against reference answers.
"""
