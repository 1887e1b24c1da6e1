"""Which backend of the search protocol (``protocol``) searches a game: the one place that decides.

``choose(board, evaluator, root_search)`` answers ``("core", "")`` where the compiled core can run
the search, else ``("python", why)``; ``open_search`` makes the backend for a tree. Every caller
(the lockstep games, the players' own searches, the engine) asks here.
"""

from __future__ import annotations

from typing import Optional

from gomoku.search.core import core_enabled
from gomoku.search.core.jit import available
from gomoku.search.core.planes import CORE_INPUTS
from gomoku.search.core.single import CoreSearch, core_ready
from gomoku.search.tree_search import TreeSearch

CORE, PYTHON = "core", "python"
TREE_SEARCHES = ("puct", "gumbel")
"""the root searches the core runs (``protocol``'s ``root_search``)"""


def board_reason(board) -> str:
    """Why the core cannot play on ``board`` ("" where it can)."""
    if board.game_over:
        return "the game is over"
    if not board.rule.flanked_wins:
        return f"{board.rule} is not on the core"
    return ""


def choose(board, evaluator, root_search: Optional[str] = "puct") -> tuple[str, str]:
    """``(CORE, "")`` where the core can search ``board`` with ``evaluator`` and ``root_search``;
    else ``(PYTHON, the reason)``. ``root_search`` None: a player without a search tree."""
    from gomoku.search.evaluator import NetEvaluator

    if not available:
        return PYTHON, "numba is not installed"
    if not core_enabled():
        return PYTHON, "the core is turned off (GOMOKU_CORE)"
    if root_search not in TREE_SEARCHES:
        return PYTHON, "the player has no search tree" if root_search is None else f"{root_search} is not on the core"
    reason = board_reason(board)
    if reason:
        return PYTHON, reason
    if type(evaluator) is not NetEvaluator:
        if getattr(evaluator, "input_version", None) is None:  # random rollouts (``rollout``) have no input
            return PYTHON, "pure MCTS has no net"
        return PYTHON, f"the evaluator {type(evaluator).__name__} is not a net's"
    if evaluator.input_version not in CORE_INPUTS:
        return PYTHON, f"input version {evaluator.input_version} is not on the core"
    return CORE, ""


def open_search(tree, board, evaluator, kept=None, background: bool = True):
    """The backend for ``tree`` (an ``mcts.MCTS`` or ``gumbel.GumbelTree``) on ``board`` with
    ``evaluator``: ``kept`` (the backend used before, kept for its tree) if it is of the kind chosen,
    else a new one. The core's backend also needs its kernels loaded (``core.single.core_ready``;
    with ``background`` a first compile runs in another process while the Python trees search)."""
    where, _ = choose(board, evaluator, tree.kind)
    if where == CORE:
        if core_ready(background=background):
            return kept if isinstance(kept, CoreSearch) else CoreSearch(tree)
    return kept if isinstance(kept, TreeSearch) else TreeSearch(tree)
