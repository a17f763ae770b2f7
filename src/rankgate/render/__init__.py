"""Every text rendering: tables, JSON, CSV, TREC lines, Markdown, JUnit, LaTeX.

Renderers take values the library computed (`Results`, `Comparison`, gate decisions, label
reports) and return text; they compute no metric. The HTML report is `rankgate.report`.
"""
