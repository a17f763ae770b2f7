"""Rendering of results: text tables, JSON, CSV, TREC lines (HTML reports come later)."""
