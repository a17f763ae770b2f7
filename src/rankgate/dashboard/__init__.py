"""The web dashboard over the results store (``rankgate serve``).

`app.create_app` builds the FastAPI app (server-rendered pages, JSON endpoints, assets);
`server.serve` runs it with uvicorn, bound to localhost unless a token is given. The store is
read through `data.StoreReader` (read-only, summaries cached); `pages` and `comparing` build
what each page shows; `figures` draws in the report's style; `sources` holds the optional
query texts, tags, corpus, judgments and runs; `ops` reads operational figures. See
docs/dashboard.md.
"""
