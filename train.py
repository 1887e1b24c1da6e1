"""Train a Gomoku policy-value network from self-play: ``python train.py --help``.

The trainer lives in ``gomoku.train.cli`` (also the ``gomoku-train`` command); this file runs it
from a checkout.
"""

import sys

from gomoku.train.cli import build_parser, check_net_flags, command, log, main  # noqa: F401

if __name__ == "__main__":
    sys.exit(command())
