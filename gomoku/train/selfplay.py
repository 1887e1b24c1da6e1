"""Self-play for training: a stream of games that never drains, and their training arrays."""

from __future__ import annotations

import time
from typing import Callable, Optional, Sequence

import numpy as np

from gomoku.game.board import Board
from gomoku.search.lockstep import FinishedGame, Lockstep, RunStats, _distinct, run_games
from gomoku.search.mcts import MCTSPlayer


class SelfPlayStream:
    """Self-play that never drains: ``parallel`` games always in progress.

    ``collect(n)`` returns the next ``n`` games in the order they started,
    playing until all of them have finished; the games still in progress go
    on at the next call, so the batch stays full however few games an
    iteration asks for. Handing games out in the order they started, not the
    order they finished, keeps short games from crowding the first
    collections after a start: the first games to finish are the short ones.
    Game ``i`` uses seed ``seed + i`` for its noise and move sampling and
    opens with player ``1 + i % 2``, so the games do not depend on
    ``parallel`` while the evaluator is unchanged.

    Args:
        evaluator: the net evaluator shared by all games.
        board_shape: ``(width, height, n_in_row)``.
        parallel: games in lockstep.
        n_playout, c_puct: search settings.
        seed: base seed.
        player_kwargs: passed to each ``MCTSPlayer`` (noise settings).
    """

    def __init__(self, evaluator, board_shape: Sequence[int], parallel: int, n_playout: int,
                 c_puct: float, seed: int, **player_kwargs):
        self.evaluator = evaluator
        self.parallel = parallel
        width, height, n_in_row = board_shape

        def new_game(i):
            player = MCTSPlayer(self.evaluator, c_puct=c_puct, n_playout=n_playout, self_play=True,
                                seed=seed + i, name="self-play", **player_kwargs)
            return Board(width, height, n_in_row, start_player=1 + i % 2), {1: player, 2: player}

        self.lockstep = Lockstep(new_game, record=True)
        self._finished: dict[int, FinishedGame] = {}  # by index, until handed out
        self._next = 0  # the index of the next game to hand out

    def set_evaluator(self, evaluator) -> None:
        """Switches the games in progress to new weights; their search trees start afresh."""
        self.evaluator = evaluator
        for slot in self.lockstep.slots:
            for p in _distinct(slot.players):
                p.evaluator = evaluator
        self.lockstep.reset_searches()

    def collect(self, n_games: int, keep_playing: Optional[Callable[[], bool]] = None,
                on_step: Optional[Callable[[int, RunStats], None]] = None):
        """Returns ``(games, stats)`` for the next ``n_games`` games in the order they started.

        Later games that finish first wait for a later call. With ``keep_playing``
        the stream then plays ahead, while ``keep_playing()`` is true and until the
        next call's ``n_games`` have finished, so that a worker whose games are done
        goes on playing while the learner still updates (and never runs more than one
        call ahead). ``on_step(done, stats)`` is called after every step until the
        ``n_games`` have finished, with how many of them have.
        """
        start = time.perf_counter()
        stats = RunStats()
        wanted = range(self._next, self._next + n_games)
        self._play_until(wanted, stats, on_step=on_step)
        games = [self._finished.pop(i) for i in wanted]
        self._next += n_games
        if keep_playing is not None:
            self._play_until(range(self._next, self._next + n_games), stats, keep_playing)
        stats.seconds = time.perf_counter() - start
        return games, stats

    def _play_until(self, indices: range, stats: RunStats, keep_playing=lambda: True, on_step=None) -> None:
        while not all(i in self._finished for i in indices) and keep_playing():
            self.lockstep.fill(self.parallel)
            for game in self.lockstep.step(stats):
                self._finished[game.index] = game
            if on_step is not None:
                on_step(sum(i in self._finished for i in indices), stats)


def self_play_games(evaluator, board_shape: Sequence[int], n_games: int, parallel: int,
                    n_playout: int, c_puct: float, seed: int, **player_kwargs):
    """Exactly ``n_games`` self-play games (game ``i`` as in ``SelfPlayStream``), in index order."""
    stream = SelfPlayStream(evaluator, board_shape, parallel, n_playout, c_puct, seed, **player_kwargs)
    return run_games(n_games, stream.lockstep.new_game, parallel, record=True)


def training_arrays(games: Sequence[FinishedGame]):
    """Stacks games into ``(planes, pis, zs)`` arrays, before augmentation."""
    planes = np.concatenate([g.planes for g in games])
    pis = np.concatenate([g.pis for g in games])
    zs = np.concatenate([g.outcomes() for g in games])
    return planes, pis, zs
