"""Options of the play search beyond the SPEC's reference PUCT search, and their command-line flags.

The arena, ``play.py``, the engine and the strength table take the same three
options (see ``mcts.MCTS`` for what each does); they travel together as one
``SearchOptions`` and are read from the same flags everywhere.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Optional


def check_search_options(fpu: Optional[float], win_check: bool, solve: bool = False) -> None:
    """Raises ValueError unless ``fpu`` is None or a finite number >= 0 and ``win_check`` and ``solve`` bools."""
    if fpu is not None and (isinstance(fpu, bool) or not isinstance(fpu, (int, float))
                            or not math.isfinite(fpu) or fpu < 0):
        raise ValueError(f"fpu must be a number of at least 0 (or None for the reference 0 value), got {fpu!r}")
    if not isinstance(win_check, bool):
        raise ValueError(f"win_check must be True or False, got {win_check!r}")
    if not isinstance(solve, bool):
        raise ValueError(f"solve must be True or False, got {solve!r}")


@dataclass(frozen=True)
class SearchOptions:
    """How an AlphaZero player searches, beyond c_puct and its playouts; the defaults are the reference search.

    Raises:
        ValueError: on construction, for values ``check_search_options`` refuses.
    """

    fpu: Optional[float] = None
    """first-play urgency: an unvisited move counts as its node's mean value less fpu * sqrt(visited priors)"""
    win_check: bool = False
    """a new node whose player to move can complete a line is won, without a net call"""
    solve: bool = False
    """the win check, only blocks where a line is threatened, and proven results backed up"""

    def __post_init__(self):
        check_search_options(self.fpu, self.win_check, self.solve)
        if self.solve:
            object.__setattr__(self, "win_check", True)  # the solver includes the win check

    def kwargs(self) -> dict:
        """The keyword arguments of ``mcts.MCTS`` and ``mcts.MCTSPlayer``."""
        return dict(fpu=self.fpu, win_check=self.win_check, solve=self.solve)

    def words(self) -> list[str]:
        """For names and reports, e.g. ``['fpu 0.25', 'solver']``; empty for the reference search."""
        return (([] if self.fpu is None else [f"fpu {self.fpu:g}"])
                + (["solver"] if self.solve else ["win check"] if self.win_check else []))

    def flags(self) -> str:
        """The command-line flags that give these options, e.g. ``' --fpu 0.25 --solve'``."""
        return ((f" --fpu {self.fpu:g}" if self.fpu is not None else "")
                + (" --solve" if self.solve else " --win-check" if self.win_check else ""))

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "SearchOptions":
        """The options that ``add_search_flags``'s flags gave."""
        return cls(args.fpu, args.win_check, args.solve)


def fpu_arg(text: str) -> float:
    """Flag parser for ``--fpu``: a finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of at least 0")
    return value


def add_search_flags(parser: argparse.ArgumentParser, whose: str = "the AlphaZero players' searches") -> None:
    """Adds ``--fpu``, ``--win-check`` and ``--solve``; ``SearchOptions.from_args`` reads them."""
    parser.add_argument("--fpu", type=fpu_arg, metavar="R",
                        help=f"first-play urgency of {whose}: an unvisited move counts as its position's "
                             f"mean value less R * sqrt(prior of the visited moves) (Leela Zero, KataGo; "
                             f"0.25 is usual) instead of 0 (default: 0, the reference)")
    parser.add_argument("--win-check", action="store_true",
                        help=f"{whose} treat a position whose player to move can complete a line as won, "
                             f"without asking the net")
    parser.add_argument("--solve", action="store_true",
                        help=f"{whose} also keep only the blocks where the opponent threatens to complete "
                             f"a line, count two such threats as lost, and back results known for certain "
                             f"up the tree (an MCTS solver; includes --win-check)")
