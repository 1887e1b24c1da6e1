"""``python -m gomoku.pbrain``: the short name of ``python -m gomoku.play.engine``."""

import sys

from gomoku.play.engine import main

if __name__ == "__main__":
    sys.exit(main())
