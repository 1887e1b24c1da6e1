"""``python -m gomoku.bench``: the short name of ``python -m gomoku.train.bench``."""

import sys

from gomoku.train.bench import main

if __name__ == "__main__":
    sys.exit(main())
