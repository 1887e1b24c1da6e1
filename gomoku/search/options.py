"""Options of the play search beyond the plain PUCT search (docs/algorithm.md, section 4), and their command-line flags.

The arena, ``play.py``, the engine and the strength table take the same four
options (see ``mcts.MCTS`` for what each does); they travel together as one
``SearchOptions`` and are read from the same flags everywhere.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, fields, replace
from typing import Optional

from gomoku.util import switch_arg


def check_search_options(fpu: Optional[float], win_check: bool, solve: bool = False, threats: bool = False) -> None:
    """Raises ValueError unless ``fpu`` is None or a finite number >= 0 and the switches are bools."""
    if fpu is not None and (isinstance(fpu, bool) or not isinstance(fpu, (int, float))
                            or not math.isfinite(fpu) or fpu < 0):
        raise ValueError(f"fpu must be a number of at least 0 (or None for the plain search's 0), got {fpu!r}")
    if not isinstance(win_check, bool):
        raise ValueError(f"win_check must be True or False, got {win_check!r}")
    if not isinstance(solve, bool):
        raise ValueError(f"solve must be True or False, got {solve!r}")
    if not isinstance(threats, bool):
        raise ValueError(f"threats must be True or False, got {threats!r}")


@dataclass(frozen=True)
class SearchOptions:
    """How an AlphaZero player searches, beyond c_puct and its playouts; the defaults are the plain PUCT search.

    Raises:
        ValueError: on construction, for values ``check_search_options`` refuses.
    """

    fpu: Optional[float] = None
    """first-play urgency: an unvisited move counts as its node's mean value less fpu * sqrt(visited priors)"""
    win_check: bool = False
    """a new node whose player to move can complete a line is won, without a net call"""
    solve: bool = False
    """the in-tree solver: the win check, only blocks where a line is threatened, and proven results backed up"""
    threats: bool = False
    """the in-tree solver, a VCF search at new nodes, forced wins and defences at the root"""

    def __post_init__(self):
        check_search_options(self.fpu, self.win_check, self.solve, self.threats)
        if self.threats:
            object.__setattr__(self, "solve", True)  # the threat searches include the in-tree solver
        if self.solve:
            object.__setattr__(self, "win_check", True)  # the in-tree solver includes the win check

    def kwargs(self) -> dict:
        """The keyword arguments of ``mcts.MCTS`` and ``mcts_player.MCTSPlayer``; ``threats`` only when on, so
        that callers that build other searches from them see the keywords they always did."""
        return dict(fpu=self.fpu, win_check=self.win_check, solve=self.solve,
                    **({"threats": True} if self.threats else {}))

    def for_gumbel(self) -> "SearchOptions":
        """These options as a Gumbel search takes them: those only PUCT reads (``PUCT_ONLY``) at their defaults."""
        return replace(self, **{f.name: f.default for f in fields(self) if f.name in PUCT_ONLY})

    def gumbel_kwargs(self) -> dict:
        """The keyword arguments of ``gumbel.GumbelPlayer``: ``kwargs`` without the options only PUCT reads."""
        return {key: value for key, value in self.kwargs().items() if key not in PUCT_ONLY}

    def words(self) -> list[str]:
        """For names and reports, e.g. ``['fpu 0.25', 'solver']``; empty for the plain search."""
        return (([] if self.fpu is None else [f"fpu {self.fpu:g}"])
                + (["threat solver"] if self.threats else ["solver"] if self.solve
                   else ["win check"] if self.win_check else []))

    def flags(self) -> str:
        """The flags that give these options where the plain search is the default (the arena, the
        strength table), e.g. ``' --fpu 0.25 --solve'``."""
        return ((f" --fpu {self.fpu:g}" if self.fpu is not None else "")
                + (" --threats" if self.threats else " --solve" if self.solve
                   else " --win-check" if self.win_check else ""))

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "SearchOptions":
        """The options that ``add_search_flags``'s flags gave: the ``--search`` preset, then each flag given.

        ``--win-check off`` without ``--solve`` turns the in-tree solver off too; ``--solve on`` includes the win check;
        ``--threats on`` includes the in-tree solver, and ``--solve off`` or ``--win-check off`` without ``--threats``
        turns the threat searches off too. A namespace without ``threats`` (a parser without that flag)
        reads as the preset's.
        """
        base = SEARCH_PRESETS[args.search]
        fpu = base.fpu if args.fpu is None else None if args.fpu == FPU_OFF else args.fpu
        win_check = base.win_check if args.win_check is None else args.win_check
        solve = args.solve if args.solve is not None else base.solve and win_check
        flag = getattr(args, "threats", None)
        threats = flag if flag is not None else base.threats and solve
        return cls(fpu, win_check, solve, threats)


PUCT_ONLY = ("fpu",)
"""the options only PUCT's descent reads: Gumbel's search picks its root children by sequential halving and
its other children by its own rule"""

SEARCH_PRESETS = {"plain": SearchOptions(), "sharp": SearchOptions(fpu=0.25, solve=True)}
"""``--search``: the plain PUCT search (none of the options), and the strongest options measured (docs/search.md)."""

FPU_OFF = "off"
"""``--fpu off``: an unvisited move counts as 0, as in the plain search."""


def fpu_arg(text: str):
    """Flag parser for ``--fpu``: a finite number of at least 0, or ``off``."""
    if text.strip().lower() == FPU_OFF:
        return FPU_OFF
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number of at least 0 nor off")
    return value


def add_search_flags(parser: argparse.ArgumentParser, whose: str = "the AlphaZero players' searches",
                     default: str = "plain") -> None:
    """Adds ``--search``, ``--fpu``, ``--win-check``, ``--solve`` and ``--threats``; ``SearchOptions.from_args``
    reads them.

    ``default`` names the preset (a key of ``SEARCH_PRESETS``) that applies without ``--search``.
    """
    shown = SEARCH_PRESETS[default]
    parser.add_argument("--search", choices=tuple(SEARCH_PRESETS), default=default,
                        help=f"options of {whose}: plain is the plain PUCT search, sharp adds --fpu 0.25 "
                             f"--solve; the flags below change one option of it (default: {default})")
    parser.add_argument("--fpu", type=fpu_arg, metavar="R|off",
                        help=f"first-play urgency: an unvisited move counts as its position's mean value less "
                             f"R * sqrt(prior of the visited moves) (Leela Zero, KataGo; 0.25 is usual); off: "
                             f"as 0, as the plain search does (default: {'off' if shown.fpu is None else f'{shown.fpu:g}'})")
    parser.add_argument("--win-check", type=switch_arg, nargs="?", const=True, metavar="on|off",
                        help=f"treat a position whose player to move can complete a line as won, without "
                             f"asking the net; alone: on (default: {'on' if shown.win_check else 'off'})")
    parser.add_argument("--solve", type=switch_arg, nargs="?", const=True, metavar="on|off",
                        help=f"also keep only the blocks where the opponent threatens to complete a line, count "
                             f"two such threats as lost, and back results known for certain up the tree (an "
                             f"in-tree MCTS solver; includes the win check); alone: on "
                             f"(default: {'on' if shown.solve else 'off'})")
    parser.add_argument("--threats", type=switch_arg, nargs="?", const=True, metavar="on|off",
                        help=f"also look for a win by continuous fours (VCF) before asking the net at each new "
                             f"position and count one found as won, and at the root play the own VCF or keep "
                             f"only the moves that stop the opponent's VCF or VCT (includes --solve); alone: on "
                             f"(default: {'on' if shown.threats else 'off'})")
