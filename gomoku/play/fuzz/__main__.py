"""``python -m gomoku.play.fuzz``: runs the fuzz's command line."""

import sys

from gomoku.play.fuzz.cli import main

if __name__ == "__main__":
    sys.exit(main())
