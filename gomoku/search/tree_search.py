"""The Python backend of the search protocol (``protocol``): the reference trees themselves.

``TreeSearch`` runs a ``mcts.MCTS`` (PUCT) or ``gumbel.GumbelTree`` on the board it is given:
``run`` is ``mcts.search``; ``simulate`` descends each simulation of a round on a copy of the
board, evaluates the leaves that need the net in one call and backs them all up in order (their
subtrees are disjoint, so this grows the tree that one simulation after the other grows).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from gomoku.game.board import Board
from gomoku.search.mcts import MCTS, search
from gomoku.search.tree import TreeNode


class TreeSearch:
    """The search of the reference tree ``tree`` (see the module docstring)."""

    name = "python"

    def __init__(self, tree: MCTS):
        self.tree = tree
        self.board: Optional[Board] = None
        self.evaluator = None

    def start_move(self, board: Board, evaluator) -> None:
        self.board, self.evaluator = board, evaluator

    def run(self, stop: Callable[[int], bool]) -> int:
        return search(self.tree, self.board, self.evaluator, stop)

    def expand_root(self) -> None:
        tree = self.tree
        if not tree.root.expanded:
            tree.root_choice = None
            tree.playout(self.board, self.evaluator)

    def simulate(self, children: Sequence[int]) -> int:
        tree = self.tree
        leaves = []
        for child in children:
            tree.root_choice = int(child)
            copy = self.board.copy()
            leaves.append((tree.select_leaf(copy), copy))
        asked = [copy for leaf, copy in leaves if leaf.value is None]
        if asked:
            priors, values = self.evaluator.evaluate(asked)
        k = 0
        for leaf, copy in leaves:
            if leaf.value is None:
                tree.backup(leaf, copy, priors[k], float(values[k]))
                k += 1
            else:
                tree.backup(leaf, copy, None, leaf.value)
        return len(leaves)

    def root(self, children: bool = True) -> TreeNode:
        return self.tree.root

    def root_state(self) -> tuple[bool, int, int]:
        root = self.tree.root
        return root.expanded, root.proven, root.N

    def advance(self, move: int) -> None:
        self.tree.advance(move)

    def reset(self) -> None:
        self.tree.reset()
