"""CI quality gate: gate config, decisions, the results/baselines store, PR comments.

Nothing heavy is imported here; each part lives in its own module (`rankgate.gate.store`,
`rankgate.gate.provenance`, `rankgate.gate.fingerprint`, ...).
"""
