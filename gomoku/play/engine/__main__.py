"""``python -m gomoku.play.engine``: runs the engine's command line."""

import sys

from gomoku.play.engine.cli import main

if __name__ == "__main__":
    sys.exit(main())
