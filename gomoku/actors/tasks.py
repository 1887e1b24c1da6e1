"""What the actors play and what comes back: tasks, their settings, and match scores.

``SelfPlaySettings`` is what a worker's self-play games are played by: the players'
recipe (``search.recipe``) and the games' openings and rule, read from the ``TrainConfig``
fields of the same names. A ``MatchTask`` is a share of a match between two player specs; its games
come back as ``MatchGame`` records, scored from A's side (``points``, ``Tally``).
The seed helpers give every game, side and actor a random stream of its own.
Nothing here starts a process or plays a move: see ``actors`` for where games are
played and ``runner`` for how an actor plays a task.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Optional, Sequence

import numpy as np

from gomoku.game.openings import book_for_board
from gomoku.search.lockstep import RunStats
from gomoku.search.player_specs import PlayerSpec
from gomoku.search.recipe import SelfPlayRecipe

PUBLISHED = "<published>"
"""The model path of a player spec that plays the weights of the last ``publish``."""

class WorkerError(RuntimeError):
    """A worker process failed or died; the message says which and how."""


@dataclass(frozen=True)
class Progress:
    """How far the games of a task (or, summed, of all actors) have got."""

    games: int = 0
    """games finished"""
    moves: int = 0
    """moves played"""
    points: float = 0.0
    """A's points in the finished games of a match (1 a win, 0.5 a draw); 0 in self-play"""
    finished: tuple = ()
    """the ``MatchGame`` of every finished game of a match (self-play reports none)"""

    def __add__(self, other: "Progress") -> "Progress":
        return Progress(self.games + other.games, self.moves + other.moves, self.points + other.points,
                        self.finished + other.finished)


# ------------------------------------------------------------------ what to play
@dataclass(frozen=True)
class SelfPlaySettings:
    """How self-play games are played (the same for every game of a run): the players' recipe
    and the games' board, openings and rule. ``from_config`` reads them from the ``TrainConfig``
    fields of the same names."""

    board_shape: tuple
    """(width, height, n_in_row)"""
    parallel: int
    """games in lockstep per actor"""
    recipe: SelfPlayRecipe = SelfPlayRecipe()
    opening_stones: int = 0
    opening_book: tuple = ()
    """openings (move tuples) that a share of the games start from instead"""
    openings_share: float = 0.0
    """that share (0 here: without a book no game starts from one)"""
    rule: str = "freestyle"

    @classmethod
    def from_config(cls, config, board_shape: tuple, parallel: int) -> "SelfPlaySettings":
        """The settings a ``TrainConfig`` gives for games on ``board_shape``: its fields of the same names."""
        recipe = SelfPlayRecipe(**{f.name: getattr(config, f.name) for f in fields(SelfPlayRecipe)})
        book = book_for_board(config.openings, *board_shape, config.rule) if config.openings else []
        return cls(tuple(board_shape), parallel, recipe, config.opening_stones,
                   tuple(tuple(moves) for moves in book), config.openings_share, config.rule)


@dataclass
class SelfPlayTask:
    """``n_games`` games from an actor's self-play stream; a stream started by this task takes
    ``seed`` as its own (see ``SelfPlayStream``), a running one keeps the seed it has."""

    settings: SelfPlaySettings
    n_games: int
    seed: int
    resume: Optional[dict] = None
    """a snapshot of a stream of a stopped run (``SelfPlayStream.snapshot``): an actor without a
    stream for these settings restores it instead of starting one from ``seed``"""
    snapshot: bool = False
    """the result is ``(games, stats, snapshot)``: the stream as it stood when its games were handed over"""


@dataclass
class MatchGame:
    """One finished game of a match, from A's side."""

    index: int
    opening: list[int]
    moves: list[int]
    """every move from the empty board, the opening's first"""
    a_colour: int
    winner: int
    """the winning colour, 0 for a draw"""
    faults: dict = field(default_factory=dict)
    """``{colour: {fault: count}}`` of an engine player's faults in the game (``engine_player``)"""
    fault_notes: list = field(default_factory=list)
    """a line on each fault"""

    @property
    def a_points(self) -> float:
        """1 for a win of A, 0.5 for a draw, 0 for a loss."""
        return points(self.winner, self.a_colour)


@dataclass
class Tally:
    """Wins, draws and losses of player A over some games."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Mean points per game (1 / 0.5 / 0); NaN with no games."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else math.nan

    def __add__(self, other: "Tally") -> "Tally":
        return Tally(self.wins + other.wins, self.draws + other.draws, self.losses + other.losses)

    def add(self, points: float) -> None:
        if points == 1.0:
            self.wins += 1
        elif points == 0.5:
            self.draws += 1
        else:
            self.losses += 1

    def to_json(self) -> dict:
        score = self.score
        return {"games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
                "score": None if math.isnan(score) else round(score, 4)}


def tally_by_colour(games: Sequence[MatchGame]) -> tuple[Tally, Tally]:
    """A's results over ``games``: as Black, and as White."""
    as_black, as_white = Tally(), Tally()
    for game in games:
        (as_black if game.a_colour == 1 else as_white).add(game.a_points)
    return as_black, as_white


@dataclass
class MatchTask:
    """The games ``first_game`` to ``first_game + len(openings) - 1`` of a match."""

    a: PlayerSpec
    b: PlayerSpec
    geometry: tuple
    first_game: int
    openings: list
    """the opening moves of each game of the share"""
    parallel: int
    c_puct: float
    seed: int
    device: str = "cpu"
    precision: str = "fp32"
    rule: str = "freestyle"


@dataclass
class CallTask:
    """``fn(arg, evaluator)`` in an actor; ``fn`` must be importable (a module-level function)."""

    fn: Callable
    arg: Any


def a_colour(index: int) -> int:
    """A's colour in game ``index`` of a match: Black (1) in even games, White (2) in odd ones."""
    return 1 if index % 2 == 0 else 2


def game_seed(seed: int, index: int, side: int) -> int:
    """A seed of its own for each game and side, so no two players share a random stream."""
    return int(np.random.SeedSequence([seed, index, side]).generate_state(1)[0])


def stream_seed(seed: int, actor: int) -> int:
    """The seed of actor ``actor``'s self-play stream, from the caller's seed for the call."""
    return int(np.random.SeedSequence([seed, actor, 7]).generate_state(1)[0])


def split(total: int, parts: int) -> list[int]:
    """``total`` items over ``parts`` as evenly as possible, zeros dropped."""
    base, extra = divmod(total, parts)
    return [n for n in (base + (1 if i < extra else 0) for i in range(parts)) if n > 0]


def points(winner: int, colour: int) -> float:
    """The points of the player of ``colour`` in a game ``winner`` won: 1 a win, 0.5 a draw (0), 0 a loss."""
    return 0.5 if winner == 0 else float(winner == colour)


def merge_games(results: list) -> tuple[list, RunStats]:
    """Joins the actors' ``(games, stats)``; the seconds are the slowest actor's, as they ran side by side."""
    games, total = [], RunStats()
    for records, stats, *_ in results:
        games.extend(records)
        total.add(stats)
    total.seconds = max((result[1].seconds for result in results), default=0.0)
    return games, total

