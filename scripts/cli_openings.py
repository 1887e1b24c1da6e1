"""Writes an openings file of this project in the "offset" format of c-gomoku-cli and Gomocup.

    python scripts/cli_openings.py balanced --size 15x15 > balanced_15x15_offset.txt
    c-gomoku-cli ... -openings file=balanced_15x15_offset.txt type=offset order=sequential -repeat

Each line is one opening, Black first: ``x,y`` offsets from the centre cell (``size // 2``),
separated by ", ". The openings keep their order, so ``order=sequential`` with ``-repeat``
plays them as ``gomoku-arena --openings`` does: each twice, colours swapped.

An opening with an odd number of stones leaves White to move; c-gomoku-cli follows the turn.
"""

from __future__ import annotations

import argparse
import sys

from gomoku.game.openings import OpeningError, load_openings
from gomoku.game.rules import RULES
from gomoku.util import board_size_arg


def offset_line(opening: list[int], width: int, height: int) -> str:
    """One opening as c-gomoku-cli's offset notation."""
    half_x, half_y = width // 2, height // 2
    return ", ".join(f"{move % width - half_x},{move // width - half_y}" for move in opening)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write openings in c-gomoku-cli's offset format.")
    parser.add_argument("openings", help="an openings file, 'balanced' for the shipped ones, or a shipped "
                        "file's name (renju_balanced_15x15)")
    parser.add_argument("--size", type=board_size_arg, default=(15, 15), metavar="WxH",
                        help="the board (default: 15x15); c-gomoku-cli plays square boards only")
    parser.add_argument("--n-in-row", type=int, default=5, help="stones in a row that win (default: 5)")
    parser.add_argument("--rule", choices=RULES, default="freestyle",
                        help="the rule whose balanced openings 'balanced' means (default: freestyle)")
    args = parser.parse_args(argv)
    width, height = args.size
    try:
        openings = load_openings(args.openings, width, height, args.n_in_row, args.rule)
    except OpeningError as exc:
        print(f"cli_openings: error: {exc}", file=sys.stderr)
        return 2
    for opening in openings:
        print(offset_line(opening, width, height))
    return 0


if __name__ == "__main__":
    sys.exit(main())
