"""The policy network's player: the legal move its net rates highest, without search."""

from __future__ import annotations

from typing import Optional

import numpy as np

from gomoku.game.board import Board
from gomoku.search.player_protocol import SearchResult
from gomoku.search.tree import Leaf


class PolicyPlayer:
    """Plays the legal move the policy network rates highest, without search."""

    n_playout = 1
    playouts_run = 0  # no search

    def __init__(self, evaluator, name: str = "policy net"):
        self.evaluator = evaluator
        self.name = name
        self._priors: Optional[np.ndarray] = None

    @property
    def progress(self) -> float:
        return 0.0 if self._priors is None else 1.0

    def next_leaf(self, board: Board) -> Optional[Leaf]:
        return None if self._priors is not None else Leaf(None, [], None)

    def receive(self, leaf: Leaf, board: Board, priors: np.ndarray, value: float) -> None:
        self._priors = np.asarray(priors, dtype=np.float64)

    def choose(self, board: Board) -> SearchResult:
        legal = np.asarray(board.legal_moves())
        p = self._priors[legal]
        pi = np.zeros(board.size)
        pi[legal] = p / p.sum() if p.sum() > 0 else 1.0 / len(legal)
        self._priors = None
        return SearchResult(int(legal[np.argmax(p)]), pi)

    def notify_move(self, move: int) -> None:
        self._priors = None

    def reset(self) -> None:
        self._priors = None

    def get_action(self, board: Board, return_probs: bool = False, stop=None):
        """The policy's favourite legal move (one net call: ``stop`` has nothing to end)."""
        if board.game_over:
            raise ValueError("the game is over: there is no move to choose")
        priors, _ = self.evaluator.evaluate([board])
        self._priors = np.asarray(priors[0], dtype=np.float64)
        result = self.choose(board)
        return (result.move, result.pi) if return_probs else result.move

    def __str__(self) -> str:
        return self.name
