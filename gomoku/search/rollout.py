"""The random-rollout evaluator that turns the MCTS of ``mcts.py`` into pure MCTS.

Priors are uniform over the board. A leaf's value comes from one uniformly
random playout to the end of the game. Playing random moves until someone
completes a line is, in distribution, the same as drawing a random order in
which to fill all the empty cells (the player to move takes the 1st, 3rd, ...
cell, the opponent the 2nd, 4th, ...) and asking which line is completed first.
That second form needs no move-by-move loop: for every possible line
(``n_in_row`` cells in a row) it is complete once its last cell is filled, if all
its cells end up with one owner. The earliest such time decides the game, and a
batch of rollouts is a handful of NumPy operations.

The rule (``Board.rule``) changes which lines count. Under standard a line wins
only if it is exactly ``n_in_row`` when completed: neither cell just beyond its
ends already holds its owner's stone then (a stone filled later comes after the
game's end). Under caro it does not win when the opponent's stones are just beyond
both of its ends then (``Rule.dead_lines`` judges both). Under renju Black's forbidden points make the fill order depend on
the position, so those rollouts are played move by move: each move is the next
cell of a random order of the empty cells, Black passing over the cells forbidden
to it (which stay in the order, for White or for later).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from gomoku.game import rules
from gomoku.game.board import Board
from gomoku.game.lines import line_cells, line_ends
from gomoku.game.rules import BLACK

_NEVER = np.iinfo(np.int32).max


def random_rollout_values(boards: Sequence[Board], rng: np.random.Generator) -> np.ndarray:
    """One random playout per board; +1 / -1 / 0 for the player to move on each.

    All boards must share one geometry and one rule, and have no winner yet.
    """
    first = boards[0]
    rule = first.rule
    if rule.restricted:
        return np.array([_renju_rollout(board, rng) for board in boards])
    lines = line_cells(first.width, first.height, first.n_in_row)
    cells = np.frombuffer(b"".join(bytes(b.cells) for b in boards), dtype=np.uint8).reshape(len(boards), -1)
    mover = np.array([b.current_player for b in boards], dtype=np.int32)[:, None]
    empty = cells == 0
    # Random keys for empty cells, 2.0 for stones: sorting puts the fill order first.
    keys = np.where(empty, rng.random(cells.shape), 2.0)
    rank = np.argsort(np.argsort(keys, axis=1), axis=1)  # fill order of each empty cell
    fill_time = np.where(empty, rank, -1)
    # The mover fills ranks 0, 2, 4...; the opponent (3 - mover) fills ranks 1, 3, 5...
    owner = np.where(empty, mover + (rank & 1) * (3 - 2 * mover), cells)

    line_owner = owner[:, lines]  # (B, n_lines, n_in_row)
    one_owner = (line_owner == line_owner[:, :, :1]).all(axis=2)
    done_at = np.where(one_owner, fill_time[:, lines].max(axis=2), _NEVER)
    if rule.ends_matter:
        # The rule's dead lines, judged by the stones just beyond the ends when the line is
        # completed (a cell filled later, or off the board, reads as empty): an exact player's
        # own stone there makes an overline; under caro the opponent's at both ends block it.
        ends = line_ends(first.width, first.height, first.n_in_row)
        pad = np.zeros((len(boards), 1), dtype=owner.dtype)
        end_owner = np.concatenate([owner, pad], axis=1)[:, ends]  # (B, n_lines, 2)
        end_time = np.concatenate([fill_time, np.full((len(boards), 1), _NEVER)], axis=1)[:, ends]
        beyond = np.where(end_time <= done_at[:, :, None], end_owner, 0)
        dead = rule.dead_lines(line_owner[:, :, 0], beyond)
        done_at = np.where(dead, _NEVER, done_at)
    first_line = done_at.argmin(axis=1)
    batch = np.arange(len(boards))
    winner = np.where(done_at[batch, first_line] < _NEVER, line_owner[batch, first_line, 0], 0)
    return np.where(winner == 0, 0.0, np.where(winner == mover[:, 0], 1.0, -1.0))


def _renju_rollout(board: Board, rng: np.random.Generator) -> float:
    """One random playout under renju (the rule with forbidden points), move by move with legal
    moves only; +1 / -1 / 0 for the player to move on ``board``."""
    game = board.copy()
    mover = game.current_player
    geometry = rules.renju_geometry(game.width, game.height)
    padded = game.cells + [rules.WHITE]  # the cells with a blocked sentinel, for the forbidden test
    # The fill order, last cell first: moves are taken from the end.
    order = [m for m in rng.permutation(game.size).tolist() if game.cells[m] == 0]
    while game.winner is None:
        if game.current_player == BLACK:
            # Board.play ends the game as a draw when Black has no allowed cell left.
            at = len(order) - 1
            while at >= 0 and rules.forbidden_reason(padded, order[at], geometry) is not None:
                at -= 1
            if at < 0:
                return 0.0  # (not reached: Board.play has drawn the game already)
            move = order.pop(at)
        else:
            move = order.pop()
        padded[move] = game.current_player
        game.play(move)
    if game.winner == 0:
        return 0.0
    return 1.0 if game.winner == mover else -1.0


class RolloutEvaluator:
    """Uniform priors and a random rollout's result: the evaluator of pure MCTS.

    Args:
        seed: seeds the rollouts.
    """

    def __init__(self, seed: Optional[int] = None):
        self.rng = np.random.default_rng(seed)

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        size = boards[0].size
        priors = np.full((len(boards), size), 1.0 / size)
        return priors, random_rollout_values(boards, self.rng)


def pure_mcts_player(n_playout: int = 1000, c_puct: float = 5.0, seed: Optional[int] = None):
    """The evaluation opponent: MCTS with random rollouts, most visited move, no tree reuse."""
    from gomoku.search.mcts_player import MCTSPlayer

    return MCTSPlayer(RolloutEvaluator(seed), c_puct=c_puct, n_playout=n_playout,
                      seed=seed, name="pure MCTS")
