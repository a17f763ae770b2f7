"""The results store: every evaluation kept with its provenance, and the baselines.

SQLite by default (a file, no server), PostgreSQL for a ``postgresql://`` URL; one schema
(`schema`), per-query values as compressed blobs (`codec`), qrels fingerprints
(`fingerprint`) and where a result came from (`provenance`). `base.open_store` opens one.
"""
