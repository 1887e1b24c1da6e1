"""Many games in lockstep, one batched evaluator call per step.

Each game keeps its own board and its own players; a player's tree still runs
its playouts one at a time (no virtual loss). At every step each game's player
to move descends to one leaf, the leaves of all games that share an evaluator
go to it in one call, and each tree backs its result up. A finished game's slot
takes the next game at once, so the batch stays full until the last games.

The same runner plays self-play (one player object on both sides of a game,
with noise and tree reuse, see ``actors.selfplay``), evaluation matches and
arena games.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from gomoku import interrupt
from gomoku.game.board import Board
from gomoku.game.features import input_channels, planes
from gomoku.game.rules import FREESTYLE
from gomoku.search.core import core_enabled
from gomoku.search.core.games import CoreGames, supported


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
    planes: Optional[np.ndarray] = None  # (T, C, H, W), the planes of the recording net's input version
    pis: Optional[np.ndarray] = None  # (T, H*W)
    to_move: Optional[np.ndarray] = None  # (T,) player to move in each position
    root_values: Optional[np.ndarray] = None  # (T,) the search's root value, for the player to move
    index: int = 0  # the game's number in its run
    rule: str = FREESTYLE  # the board's rule: a board rebuilt from ``moves`` needs it
    faults: dict = field(default_factory=dict)
    """``{colour: {fault: count}}`` of the players that count faults (engines), those with any"""
    fault_notes: list = field(default_factory=list)
    """a line on each of those faults"""

    def outcomes(self) -> np.ndarray:
        """``z`` of each recorded position: +1 / -1 / 0 for the player to move there.

        With playout cap randomisation only some positions are recorded
        (``len(to_move) <= len(moves)``); ``z`` is still the game's result.
        """
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
    __slots__ = ("index", "board", "players", "record", "planes", "pis", "to_move", "root_values", "searches",
                 "playouts", "forfeit")

    def __init__(self, index, board, players, record):
        self.forfeit = None  # the winner, when the other player gave up the game (an engine's illegal move)
        self.index = index
        self.board = board
        self.players = players
        self.record = record
        self.planes, self.pis, self.to_move, self.root_values = [], [], [], []
        self.searches = None  # on the compiled core: the search of each player (``core.games``)


# new_game(i) -> (board, {1: player, 2: player}); the two entries may be one object (self-play).
GameFactory = Callable[[int], tuple[Board, dict]]


class Lockstep:
    """The slots of games in progress, advanced one playout per game per ``step``.

    Args:
        new_game: builds game ``i``: its board and its player for each colour.
            Players follow ``player.Player`` and carry an ``evaluator``.
        record: keep planes and pi of every position the mover's search marks as a
            training target (the ``SearchResult``'s ``recorded``). The
            planes are those of the input version of the mover's evaluator (1 without one).
    """

    def __init__(self, new_game: GameFactory, record: bool = False, compiled: Optional[bool] = None):
        self.new_game = new_game
        self.record = record
        self.slots: list[_Slot] = []
        self.started = 0
        self.core = CoreGames(self._play_chosen) if (core_enabled() if compiled is None else compiled) else None
        self._finished: list[FinishedGame] = []

    def fill(self, parallel: int, limit: Optional[int] = None) -> None:
        """Opens games until ``parallel`` are in progress (and at most ``limit`` were started)."""
        while len(self.slots) < parallel and (limit is None or self.started < limit):
            self.adopt(self.started, *self.new_game(self.started))
            self.started += 1

    def adopt(self, index: int, board: Board, players: dict) -> "_Slot":
        """Puts game ``index`` in a slot as it stands on ``board`` (``fill`` opens new games through
        it; a resumed self-play stream puts back its games in progress); returns the slot, whose
        recorded positions the caller may fill in."""
        slot = _Slot(index, board, players, self.record)
        self.slots.append(slot)
        if self.core is not None and supported(board, players):
            self.core.add(slot)
        return slot

    def step(self, stats: RunStats) -> list[FinishedGame]:
        """One playout for every game, one evaluator call per evaluator; returns finished games.

        Games on the compiled core (``core.games``) run there; the others here, on the
        players' own trees. A stop request (Ctrl-C, see ``gomoku.interrupt``) raises here,
        between steps.
        """
        interrupt.check()
        self._finished = []
        if self.core is not None and len(self.core):
            self.core.step(stats)
        requests: dict[int, tuple] = {}
        ready = []
        reference = [slot for slot in self.slots if slot.searches is None]
        movers = distinct_players({i: slot.players[slot.board.current_player] for i, slot in enumerate(reference)})
        playouts_before = sum(p.playouts_run for p in movers)
        for slot in reference:
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
        for slot in ready:
            stats.moves += 1
            self._play_chosen(slot, slot.players[slot.board.current_player])
        for game in self._finished:
            stats.games += 1
        return self._finished

    def _play_chosen(self, slot: _Slot, player) -> tuple[int, bool]:
        """The mover's search is done: it chooses, the position is recorded, the move played.
        Returns the move and whether the game is over (then it is among the step's finished games)."""
        board = slot.board
        result = player.choose(board)
        move = result.move
        if move is None:  # the player forfeits: an engine answered with no legal move
            slot.forfeit = board.opponent
            self.slots.remove(slot)
            self._finished.append(_finish(slot))
            return move, True
        if slot.record and result.recorded:
            slot.planes.append(planes(board, _input_version(player)))
            slot.pis.append(result.pi.astype(np.float32))
            slot.to_move.append(board.current_player)
            slot.root_values.append(result.root_value)
        board.play(move)
        for p in distinct_players(slot.players):
            p.notify_move(move)
        if board.game_over:
            self.slots.remove(slot)
            self._finished.append(_finish(slot))
        return move, board.game_over

    def reset_searches(self) -> None:
        """Drops every game's search tree (after the evaluator's weights changed)."""
        if self.core is not None:
            self.core.reset_searches()
        for slot in self.slots:
            if slot.searches is None:
                for p in distinct_players(slot.players):
                    p.reset()


def _input_version(player) -> int:
    """The input version of the planes ``player``'s net takes (1 for a player without a net)."""
    return getattr(getattr(player, "evaluator", None), "input_version", 1)


def distinct_players(players: dict) -> list:
    return list({id(p): p for p in players.values()}.values())


def run_games(n_games: int, new_game: GameFactory, parallel: int, record: bool = False,
              on_step: Optional[Callable[[list, RunStats], None]] = None, compiled: Optional[bool] = None):
    """Plays ``n_games`` games, ``parallel`` at a time in lockstep.

    ``on_step(finished, stats)`` is called after every step with the games finished so far.
    ``compiled``: play on the compiled core where it can (None: unless turned off, ``core``).

    Returns:
        ``(records, stats)``: the games in the order of their index, and their cost.
    """
    start = time.perf_counter()
    stats = RunStats()
    lockstep = Lockstep(new_game, record, compiled)
    finished = []
    while True:
        lockstep.fill(parallel, limit=n_games)
        if not lockstep.slots:
            break
        finished.extend(lockstep.step(stats))
        if on_step is not None:
            on_step(finished, stats)
    stats.seconds = time.perf_counter() - start
    return sorted(finished, key=lambda g: g.index), stats


def _finish(slot: _Slot) -> FinishedGame:
    board = slot.board
    game = FinishedGame(board.width, board.height, board.n_in_row, board.start_player,
                      list(board.history), int(board.winner if slot.forfeit is None else slot.forfeit),
                      {c: str(p) for c, p in slot.players.items()}, index=slot.index, rule=board.rule)
    if slot.record:
        size = board.width * board.height
        # a game may record no position at all (playout cap randomisation)
        channels = input_channels(_input_version(next(iter(slot.players.values()))))
        game.planes = np.stack(slot.planes) if slot.planes else np.zeros((0, channels, board.height, board.width),
                                                                          np.float32)
        game.pis = np.stack(slot.pis) if slot.pis else np.zeros((0, size), np.float32)
        game.to_move = np.asarray(slot.to_move, dtype=np.int8)
        game.root_values = np.asarray(slot.root_values, dtype=np.float32)
    for colour, p in slot.players.items():
        if getattr(p, "faults", None):
            game.faults[colour] = dict(p.faults)
            game.fault_notes.extend(f"{p}: {note}" for note in p.fault_notes)
    for p in distinct_players(slot.players):
        p.reset()
    return game
