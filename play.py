"""Play Gomoku against a trained model, or watch two players of your choice: ``python play.py --help``.

The flags and examples are in ``gomoku.play.cli`` (also the ``gomoku-play`` command); this file
runs it from a checkout.
"""

import sys

from gomoku.play.cli import main, parse_args  # noqa: F401

if __name__ == "__main__":
    sys.exit(main())
