"""Many games in lockstep, one batched evaluator call per step.

Each game keeps its own board and its own players; a player's tree still runs
its playouts one at a time (no virtual loss). At every step each game's player
to move descends to one leaf, the leaves of all games that share an evaluator
go to it in one call, and each tree backs its result up. A finished game's slot
takes the next game at once, so the batch stays full until the last games.

The same runner plays self-play (one player object on both sides of a game,
with noise and tree reuse), evaluation matches and arena games.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from gomoku import interrupt
from gomoku.board import Board


@dataclass
class FinishedGame:
    """A finished game: its moves and, for self-play, the training positions."""

    width: int
    height: int
    n_in_row: int
    start_player: int
    moves: list[int]
    winner: int  # 0 for a draw
    names: dict[int, str] = field(default_factory=dict)
    planes: Optional[np.ndarray] = None  # (T, 4, H, W)
    pis: Optional[np.ndarray] = None  # (T, H*W)
    to_move: Optional[np.ndarray] = None  # (T,) player to move in each position
    index: int = 0  # the game's number in its run

    def outcomes(self) -> np.ndarray:
        """``z`` of each recorded position: +1 / -1 / 0 for the player to move there."""
        if self.winner == 0:
            return np.zeros(len(self.to_move), dtype=np.float32)
        return np.where(self.to_move == self.winner, 1.0, -1.0).astype(np.float32)


@dataclass
class RunStats:
    """What a batch of games cost: moves, playouts, evaluator calls, seconds."""

    games: int = 0
    moves: int = 0
    playouts: int = 0
    seconds: float = 0.0

    def add(self, other: "RunStats") -> None:
        self.games += other.games
        self.moves += other.moves
        self.playouts += other.playouts
        self.seconds += other.seconds


class _Slot:
    __slots__ = ("index", "board", "players", "record", "planes", "pis", "to_move")

    def __init__(self, index, board, players, record):
        self.index = index
        self.board = board
        self.players = players
        self.record = record
        self.planes, self.pis, self.to_move = [], [], []


# new_game(i) -> (board, {1: player, 2: player}); the two entries may be one object (self-play).
GameFactory = Callable[[int], tuple[Board, dict]]


class Lockstep:
    """The slots of games in progress, advanced one playout per game per ``step``.

    Args:
        new_game: builds game ``i``: its board and its player for each colour.
            Players follow ``MCTSPlayer``'s protocol (next_leaf, receive, choose,
            notify_move, reset) and carry an ``evaluator``.
        record: keep planes and pi of every position (for training).
    """

    def __init__(self, new_game: GameFactory, record: bool = False):
        self.new_game = new_game
        self.record = record
        self.slots: list[_Slot] = []
        self.started = 0

    def fill(self, parallel: int, limit: Optional[int] = None) -> None:
        """Opens games until ``parallel`` are in progress (and at most ``limit`` were started)."""
        while len(self.slots) < parallel and (limit is None or self.started < limit):
            board, players = self.new_game(self.started)
            self.slots.append(_Slot(self.started, board, players, self.record))
            self.started += 1

    def step(self, stats: RunStats) -> list[FinishedGame]:
        """One playout for every game, one evaluator call per evaluator; returns finished games.

        A stop request (Ctrl-C, see ``gomoku.interrupt``) raises here, between steps.
        """
        interrupt.check()
        requests: dict[int, tuple] = {}
        ready = []
        movers = _distinct({i: slot.players[slot.board.current_player] for i, slot in enumerate(self.slots)})
        playouts_before = sum(p.playouts_run for p in movers)
        for slot in self.slots:
            player = slot.players[slot.board.current_player]
            leaf = player.next_leaf(slot.board)
            if leaf is None:
                ready.append(slot)
            else:
                evaluator = player.evaluator
                requests.setdefault(id(evaluator), (evaluator, []))[1].append((slot, player, leaf))
        for evaluator, items in requests.values():
            priors, values = evaluator.evaluate([slot.board for slot, _, _ in items])
            for (slot, player, leaf), p, v in zip(items, priors, values):
                player.receive(leaf, slot.board, p, float(v))
        stats.playouts += sum(p.playouts_run for p in movers) - playouts_before
        finished = []
        for slot in ready:
            board = slot.board
            player = slot.players[board.current_player]
            stats.moves += 1
            move, pi = player.choose(board)
            if slot.record:
                slot.planes.append(board.planes())
                slot.pis.append(pi.astype(np.float32))
                slot.to_move.append(board.current_player)
            board.play(move)
            for p in _distinct(slot.players):
                p.notify_move(move)
            if board.game_over:
                self.slots.remove(slot)
                finished.append(_finish(slot))
                stats.games += 1
        return finished

    def reset_searches(self) -> None:
        """Drops every game's search tree (after the evaluator's weights changed)."""
        for slot in self.slots:
            for p in _distinct(slot.players):
                p.reset()


def _distinct(players: dict) -> list:
    return list({id(p): p for p in players.values()}.values())


def run_games(n_games: int, new_game: GameFactory, parallel: int, record: bool = False):
    """Plays ``n_games`` games, ``parallel`` at a time in lockstep.

    Returns:
        ``(records, stats)``: the games in the order of their index, and their cost.
    """
    start = time.perf_counter()
    stats = RunStats()
    lockstep = Lockstep(new_game, record)
    finished = []
    while True:
        lockstep.fill(parallel, limit=n_games)
        if not lockstep.slots:
            break
        finished.extend(lockstep.step(stats))
    stats.seconds = time.perf_counter() - start
    return sorted(finished, key=lambda g: g.index), stats


def _finish(slot: _Slot) -> FinishedGame:
    board = slot.board
    game = FinishedGame(board.width, board.height, board.n_in_row, board.start_player,
                      list(board.history), int(board.winner),
                      {c: str(p) for c, p in slot.players.items()}, index=slot.index)
    if slot.record:
        game.planes = np.stack(slot.planes)
        game.pis = np.stack(slot.pis)
        game.to_move = np.asarray(slot.to_move, dtype=np.int8)
    for p in _distinct(slot.players):
        p.reset()
    return game


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
        from gomoku.mcts import MCTSPlayer

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

    def collect(self, n_games: int, keep_playing: Optional[Callable[[], bool]] = None):
        """Returns ``(games, stats)`` for the next ``n_games`` games in the order they started.

        Later games that finish first wait for a later call. With ``keep_playing``
        the stream then plays ahead, while ``keep_playing()`` is true and until the
        next call's ``n_games`` have finished, so that a worker whose games are done
        goes on playing while the learner still updates (and never runs more than one
        call ahead).
        """
        start = time.perf_counter()
        stats = RunStats()
        wanted = range(self._next, self._next + n_games)
        self._play_until(wanted, stats)
        games = [self._finished.pop(i) for i in wanted]
        self._next += n_games
        if keep_playing is not None:
            self._play_until(range(self._next, self._next + n_games), stats, keep_playing)
        stats.seconds = time.perf_counter() - start
        return games, stats

    def _play_until(self, indices: range, stats: RunStats, keep_playing=lambda: True) -> None:
        while not all(i in self._finished for i in indices) and keep_playing():
            self.lockstep.fill(self.parallel)
            for game in self.lockstep.step(stats):
                self._finished[game.index] = game


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
