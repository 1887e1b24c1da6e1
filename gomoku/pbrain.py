"""``python -m gomoku.pbrain``: the short name of ``python -m gomoku.play.pbrain``."""

import sys

from gomoku.play.pbrain import main

if __name__ == "__main__":
    sys.exit(main())
