"""``python -m gomoku.plot``: the short name of ``python -m gomoku.train.plot``."""

import sys

from gomoku.train.plot import main

if __name__ == "__main__":
    sys.exit(main())
