"""``python -m gomoku.arena``: the short name of ``python -m gomoku.play.arena``."""

import sys

from gomoku.play.arena import main

if __name__ == "__main__":
    sys.exit(main())
