"""``python -m gomoku.play.arena``: runs the arena's command line."""

import sys

from gomoku.play.arena.run import main

if __name__ == "__main__":
    sys.exit(main())
