"""CI quality gate: the gate config, decisions, the gate runner and the GitHub integration.

Nothing heavy is imported here. The store the gate reads baselines from is `rankgate.store`;
the text of its report (headline, Markdown, JUnit) is written by `rankgate.render`.
"""
