"""``python -m gomoku.play.engine``: runs the engine's command line as ``pbrain-gomokuzero`` does
(``commands.run``: a quiet end on SIGTERM, one line without Paddle)."""

import sys

from gomoku.commands import engine

if __name__ == "__main__":
    sys.exit(engine())
