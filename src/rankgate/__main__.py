"""``python -m rankgate``: the command line, as the installed ``rankgate`` runs it."""

from rankgate.cli import run

run()
