"""Train a Gomoku policy-value network from self-play: ``python train.py --help``.

The trainer lives in ``gomoku.train.cli`` (also the ``gomoku-train`` command); this file runs it
from a checkout. It imports nothing heavy itself: the trainer's worker processes import it
first thing (see ``gomoku.commands``). Its old names (``main``, ``build_parser``...) still
reach the trainer's.
"""

import sys

from gomoku.commands import train


def __getattr__(name):
    from gomoku.train import cli

    return getattr(cli, name)


if __name__ == "__main__":
    sys.exit(train())
