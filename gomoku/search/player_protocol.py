"""What every player is: the ``Player`` protocol, and ``SearchResult``, what a player decides.

A player is driven in two halves so that a lockstep runner can batch the leaves of many
games into one net call (``lockstep``): ``next_leaf`` gives the next position it wants
evaluated (None once it has decided), ``receive`` takes the evaluation, ``choose`` returns
the decision as a ``SearchResult``, and ``notify_move`` tells it the move played (its own or
the opponent's). ``get_action`` is the same search driven alone, for one game. The tree
players (``mcts_player.MCTSPlayer``, ``gumbel.GumbelPlayer``), the policy net's player and
the heuristic (``policy_player``, ``heuristic``) and an external engine all follow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol

import numpy as np

from gomoku.game.board import Board
from gomoku.search.tree import Leaf


@dataclass(frozen=True)
class SearchResult:
    """One decision: the move and what a training position records of it."""

    move: Optional[int]
    """the move to play; None when the player gives the game up (an engine that answered no legal move)"""
    pi: np.ndarray
    """the policy target over all cells: the visit distribution, the improved policy, or the move alone"""
    root_value: float = 0.0
    """the search's value of the position for the player to move (0 for a player without one)"""
    recorded: bool = True
    """whether the position is a training target (a fast search of playout cap randomisation is not)"""


class Player(Protocol):
    """The interface of every player (see the module docstring)."""

    name: str

    def next_leaf(self, board: Board) -> Optional[Leaf]:
        """The next position to evaluate (played on ``board`` up to the leaf), or None once decided."""

    def receive(self, leaf: Leaf, board: Board, priors: np.ndarray, value: float) -> None:
        """The evaluator's priors and value for the leaf of ``next_leaf``; ``board`` is restored."""

    def choose(self, board: Board) -> SearchResult:
        """The decision, once ``next_leaf`` has returned None."""

    def notify_move(self, move: int) -> None:
        """A move was played on the game's board (by either side)."""

    def reset(self) -> None:
        """Forgets the game, for a new one."""

    def get_action(self, board: Board, return_probs: bool = False, stop=None):
        """The whole search alone: the move (and pi with ``return_probs``)."""
