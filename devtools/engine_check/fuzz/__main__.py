"""``python -m devtools.engine_check.fuzz``: runs the fuzz's command line."""

import sys

from devtools.engine_check.fuzz.cli import main

if __name__ == "__main__":
    sys.exit(main())
