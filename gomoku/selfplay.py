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

from gomoku.board import Board


@dataclass
class GameRecord:
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


def run_games(n_games: int, new_game: GameFactory, parallel: int, record: bool = False,
              on_game_end: Optional[Callable[[GameRecord], None]] = None):
    """Plays ``n_games`` games, ``parallel`` at a time in lockstep.

    Args:
        n_games: games to play.
        new_game: builds game ``i``: its board and its player for each colour.
            Players follow ``MCTSPlayer``'s protocol (next_leaf, receive, choose,
            notify_move, reset) and carry an ``evaluator``.
        parallel: games in lockstep (the batch size of evaluator calls).
        record: keep planes and pi of every position (for training).
        on_game_end: called with each finished game.

    Returns:
        ``(records, stats)``: the games in the order of their index, and their cost.
    """
    start = time.perf_counter()
    stats = RunStats()
    finished: dict[int, GameRecord] = {}
    started = 0
    slots: list[_Slot] = []

    def open_slot():
        nonlocal started
        board, players = new_game(started)
        slots.append(_Slot(started, board, players, record))
        started += 1

    while started < min(parallel, n_games):
        open_slot()

    while slots:
        requests: dict[int, tuple] = {}
        ready = []
        for slot in slots:
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
        for slot in ready:
            board = slot.board
            player = slot.players[board.current_player]
            stats.playouts += player.n_playout
            stats.moves += 1
            move, pi = player.choose(board)
            if slot.record:
                slot.planes.append(board.planes())
                slot.pis.append(pi.astype(np.float32))
                slot.to_move.append(board.current_player)
            board.play(move)
            for p in {id(p): p for p in slot.players.values()}.values():
                p.notify_move(move)
            if board.game_over:
                slots.remove(slot)
                game = _finish(slot)
                finished[slot.index] = game
                stats.games += 1
                if on_game_end is not None:
                    on_game_end(game)
                if started < n_games:
                    open_slot()
    stats.seconds = time.perf_counter() - start
    return [finished[i] for i in sorted(finished)], stats


def _finish(slot: _Slot) -> GameRecord:
    board = slot.board
    game = GameRecord(board.width, board.height, board.n_in_row, board.start_player,
                      list(board.history), int(board.winner),
                      {c: str(p) for c, p in slot.players.items()})
    if slot.record:
        game.planes = np.stack(slot.planes)
        game.pis = np.stack(slot.pis)
        game.to_move = np.asarray(slot.to_move, dtype=np.int8)
    for p in {id(p): p for p in slot.players.values()}.values():
        p.reset()
    return game


def self_play_games(evaluator, board_shape: Sequence[int], n_games: int, parallel: int,
                    n_playout: int, c_puct: float, seed: int, **player_kwargs):
    """Self-play games with one evaluator (the net), recording training positions.

    Game ``i`` uses seed ``seed + i`` for its noise and move sampling, so the
    games do not depend on ``parallel``. Players alternate who opens the game.
    """
    from gomoku.mcts import MCTSPlayer

    width, height, n_in_row = board_shape

    def new_game(i):
        player = MCTSPlayer(evaluator, c_puct=c_puct, n_playout=n_playout, self_play=True,
                            seed=seed + i, name="self-play", **player_kwargs)
        return Board(width, height, n_in_row, start_player=1 + i % 2), {1: player, 2: player}

    return run_games(n_games, new_game, parallel, record=True)


def training_arrays(games: Sequence[GameRecord]):
    """Stacks games into ``(planes, pis, zs)`` arrays, before augmentation."""
    planes = np.concatenate([g.planes for g in games])
    pis = np.concatenate([g.pis for g in games])
    zs = np.concatenate([g.outcomes() for g in games])
    return planes, pis, zs
