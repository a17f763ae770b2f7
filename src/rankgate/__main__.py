"""``python -m rankgate``: the command line, with the exit code the installed ``rankgate`` gives."""

import sys

from rankgate.cli import main

sys.exit(main())
