"""The search tree's nodes: each node keeps its children's statistics as arrays.

Notation (``mcts`` explains the search): for the edge from a node to its child
``a``, ``N(a)`` visits, ``Q(a)`` mean value, ``P(a)`` prior, all from the
viewpoint of the player to move at the node. A node selects ``argmax Q + U``
with ``U = c_puct * P * sqrt(N_node) / (1 + N(a))``, passing over children
known to lose; the in-tree solver's results (``proven``, ``win``, ``lost``,
``plies``) live on the nodes too. ``Leaf`` is where a descent stopped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from gomoku.game.board import Board

HINT_PRIOR = 0.5  # the prior a root move that starts the player's own VCT gets at least (``threats``)


class TreeNode:
    """A position in the search tree; statistics of its children are arrays on it.

    Children are indexed ``0..k-1`` in the order of ``moves`` (the legal moves
    when the node was expanded); child nodes are created on their first visit.
    """

    __slots__ = ("moves", "child_P", "child_N", "child_Q", "children", "N", "value", "lost", "proven", "win",
                 "plies", "W", "visited_P")

    def __init__(self):
        self.moves: Optional[np.ndarray] = None
        self.child_P: Optional[np.ndarray] = None
        self.child_N: Optional[np.ndarray] = None
        self.child_Q: Optional[np.ndarray] = None
        self.children: dict[int, TreeNode] = {}
        self.N = 0
        self.value = 0.0  # the evaluator's value for the player to move here, set on expansion
        self.lost: Optional[np.ndarray] = None  # children known to lose (the win check), once one is
        self.proven = 0  # the in-tree solver's result for the player to move here: 1 won, -1 lost, 0 not known
        self.win = -1  # the index of a child known to win for the player to move here (the in-tree solver)
        self.plies = 0  # with ``proven``: the moves left to the game's end along the line that proved it
        # Kept by the backup, in the order of the playouts: the sum of the values backed up into the
        # children (their ``N @ Q``) and the prior mass of the visited children, which first-play
        # urgency reads. Sums kept in playout order are the same to the bit in the compiled core.
        self.W = 0.0
        self.visited_P = 0.0

    @property
    def expanded(self) -> bool:
        return self.moves is not None

    def expand(self, moves: np.ndarray, priors: np.ndarray, value: float = 0.0) -> None:
        """Creates the edges for ``moves`` with priors renormalised over them; keeps ``value``."""
        self.value = float(value)
        p = priors[moves].astype(np.float64)
        total = p.sum()
        self.child_P = p / total if total > 0 else np.full(len(moves), 1.0 / len(moves))
        self.moves = moves
        self.child_N = np.zeros(len(moves))
        self.child_Q = np.zeros(len(moves))

    def select(self, c_puct: float, fpu: Optional[float] = None) -> int:
        """Index of the child maximising Q + U, passing over children known to lose while others
        remain; a child known to win is taken at once."""
        if self.win >= 0:
            return self.win
        scores = self.puct(c_puct, fpu)
        if self.lost is not None and not self.lost.all():
            scores = np.where(self.lost, -np.inf, scores)
        return int(scores.argmax())

    def mark_lost(self, index: int) -> None:
        """Child ``index`` leaves the opponent a line to complete: a known loss for the mover here."""
        if self.lost is None:
            self.lost = np.zeros(len(self.moves), dtype=bool)
        self.lost[index] = True

    def puct(self, c_puct: float, fpu: Optional[float] = None) -> np.ndarray:
        """``Q + U`` of every child; unvisited ones count as 0, or as ``MCTS`` says with ``fpu``."""
        scale = c_puct * math.sqrt(self.N)
        q = self.child_Q
        if fpu is not None:
            unvisited = self.child_N == 0
            if unvisited.any():
                mean = (self.value + self.W) / (1.0 + float(self.child_N.sum()))
                q = np.where(unvisited, mean - fpu * math.sqrt(self.visited_P), q)
        return q + scale * self.child_P / (1.0 + self.child_N)

    def best_index(self) -> int:
        """Index of the most visited child; among equally visited ones, the highest Q.

        Ties are common at a few hundred playouts when two moves look alike to the
        prior, and the first index would be an arbitrary pick between them. A child
        known to win comes first; children known to lose come last.
        """
        if self.win >= 0:
            return self.win
        visits = self.child_N
        if self.lost is not None and not self.lost.all():
            visits = np.where(self.lost, -1.0, visits)
        tied = np.flatnonzero(visits == visits.max())
        return int(tied[np.argmax(self.child_Q[tied])])

    def child(self, index: int) -> "TreeNode":
        node = self.children.get(index)
        if node is None:
            node = self.children[index] = type(self)()
        return node


class GumbelNode(TreeNode):
    """A tree node that also keeps the net's value of its own position (``v``).

    It also keeps, once first asked, its prior logits (``logp``) and the child the
    deterministic rule takes while no child has a visit (``first``): both depend only
    on the priors, which do not change once the node is expanded and its hint applied.
    """

    __slots__ = ("v", "logp", "first")

    def __init__(self):
        super().__init__()
        self.v = 0.0
        self.logp: Optional[np.ndarray] = None
        self.first = -1


@dataclass
class Leaf:
    """Where a descent stopped: the node, the path to it, and its value if the game is over."""

    node: TreeNode
    path: list  # [(node, child index)] from the root
    value: Optional[float]  # for the player to move at the leaf; None if it needs evaluating
    moves: Optional[np.ndarray] = None  # the moves to expand it with; None: every legal move
    plies: int = 0  # with a known result: the moves left to the game's end
    hint: Optional[int] = None  # a move to favour in the priors on expansion (the root's own VCT)


def legal_moves(board: Board) -> np.ndarray:
    """The legal moves as an array: the empty cells, less Black's forbidden points under renju."""
    moves = (board.stones() == 0).nonzero()[0]
    forbidden = board.forbidden_moves()  # [] at once unless renju with Black to move
    return np.setdiff1d(moves, forbidden, assume_unique=True) if forbidden else moves


def favour(node: TreeNode, move: int) -> None:
    """Raises the prior of child ``move`` to at least ``HINT_PRIOR``, scaling the others to keep the sum 1."""
    where = np.flatnonzero(node.moves == move)
    if not len(where) or len(node.moves) < 2:
        return
    index = int(where[0])
    p = node.child_P
    if p[index] >= HINT_PRIOR:
        return
    rest = 1.0 - p[index]
    p *= (1.0 - HINT_PRIOR) / rest if rest > 0 else 0.0
    p[index] = HINT_PRIOR
