"""Play Gomoku against a trained model, or watch two players of your choice: ``python play.py --help``.

The flags and examples are in ``gomoku.play.cli`` (also the ``gomoku-play`` command); this file
runs it from a checkout (``main`` and ``parse_args`` still reach the command's).
"""

import sys

from gomoku.commands import play


def __getattr__(name):
    from gomoku.play import cli

    return getattr(cli, name)


if __name__ == "__main__":
    sys.exit(play())
