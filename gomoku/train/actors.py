"""Actors: every game the project plays in bulk is played here.

The trainer, the arena and the benchmark say *what* to play; this module owns
*where*: the worker processes and their lifecycle, the weights they play with,
how games are split into shares and how the results come back. It is the only
module of the package that starts processes.

What callers use (the ``Actors`` interface):

* ``publish(model) -> version``: the weights every later game plays with. The
  weights go out only when ``model.version`` changed since the last publish.
* ``start_self_play(n, settings, seed)``: self-play games with the published
  weights; returns a ``Pending`` whose ``result()`` waits for ``(games, stats)``.
  The caller works meanwhile (the learner's updates). ``self_play`` waits at once.
* ``match(a, b, geometry, openings, seed, ...)``: games between two player specs
  (``search.players.PlayerSpec``), from given openings, A as Black in even games.
  A spec whose model is ``PUBLISHED`` plays the published weights. This is the
  trainer's evaluation (net against pure MCTS) and the arena's pairings.
* ``map(fn, args)``: calls a module-level function once per actor with the
  published evaluator, for measurements (the benchmark).

``start_self_play`` and ``match`` take a ``progress`` callback: it is called in
the caller's process with the totals over all actors (``Progress``: games
finished, moves played, A's points) while it waits for the result. Workers
asked for progress send small ``PROGRESS`` messages on their pipe while they
play their share, at most one a second unless a game finished; without a
callback they send none.

Two backends implement it: ``InlineActors`` plays in the caller's process;
``ProcessActors`` keeps ``n`` worker processes alive, each with its own Paddle
Inference predictor and its own games in lockstep. A backend on other machines
implements the same methods; nothing above this module changes.

Self-play keeps a stream of games per actor and board shape
(``selfplay.SelfPlayStream``): games in progress carry over between calls (also
when a run alternates board sizes), they are handed out in the order they
started, and a worker whose share is done plays ahead (at most
``selfplay.PLAY_AHEAD_CALLS`` calls' games) until the caller collects, and again
after its reply, until the next task: the caller waits for the slowest worker.

Worker processes cannot hang their parent. SIGTERM and SIGINT stay blocked from
before a worker is spawned until it has imported Paddle and installed its own
SIGTERM handler (a signal that arrived meanwhile is then delivered to that
handler, never to Paddle's, which is not safe to run at every moment of an
import). A worker dies with its parent (``PR_SET_PDEATHSIG`` on Linux, and an
end-of-file on its pipe elsewhere). ``close`` asks, then terminates, then kills,
each with a time limit, and every wait for a worker checks that it is alive.
"""

from __future__ import annotations

import atexit
import math
import multiprocessing as mp
import multiprocessing.connection
from multiprocessing import resource_tracker
import os
import shutil
import signal
import tempfile
import time
import traceback
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, Callable, Optional, Sequence

import numpy as np

from gomoku import interrupt
from gomoku.game.board import Board
from gomoku.game.openings import book_for_board
from gomoku.search.lockstep import RunStats, run_games
from gomoku.search.players import PlayerSpec, make_player
from gomoku.search.rollout import RolloutEvaluator
from gomoku.train.selfplay import SelfPlayStream

PUBLISHED = "<published>"
"""The model path of a player spec that plays the weights of the last ``publish``."""

COLLECT = "collect"  # the caller's message to a worker: stop playing ahead, send the result
PROGRESS = "progress"  # a worker's message while it plays: ("progress", Progress)
PROGRESS_EVERY_S = 1.0

# The learner's updates and the workers' self-play run at the same time, and an iteration
# ends when both are done. The learner is one thread and the longer half with more than a
# couple of updates, so where they share cores it goes first and the workers take the rest.
WORKER_NICE = 10

STOP_GRACE_S = 5.0  # how long close() waits at each step: asked, terminated, killed
_STARTUP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


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

    def __add__(self, other: "Progress") -> "Progress":
        return Progress(self.games + other.games, self.moves + other.moves, self.points + other.points)


# ------------------------------------------------------------------ what to play
@dataclass(frozen=True)
class SelfPlaySettings:
    """How self-play games are played (the same for every game of a run)."""

    board_shape: tuple
    """(width, height, n_in_row)"""
    parallel: int
    """games in lockstep per actor"""
    n_playout: int
    c_puct: float
    dirichlet_alpha: float = 0.3
    noise_frac: float = 0.25
    explore_moves: int = 0
    p_full: float = 1.0
    """playout cap randomisation: the chance of a full search (1: every move)"""
    n_fast: int = 100
    """playouts of a fast search"""
    forced_k: float = 0.0
    """forced playouts and policy-target pruning (0: off)"""
    root_search: str = "puct"
    """'puct' or 'gumbel'"""
    gumbel_m: int = 16
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 0.1
    opening_stones: int = 0
    """each game starts from 0 to this many random central stones (0: the empty board)"""
    opening_book: tuple = ()
    """openings (move tuples) that a share of the games start from instead"""
    openings_share: float = 0.0
    """that share"""
    win_check: bool = False
    """a new node whose player to move can complete a line is a known win (see ``mcts.MCTS``)"""
    threats: bool = False
    """VCF at new nodes and forced wins and defences at the root (see ``mcts.MCTS``)"""
    rule: str = "freestyle"
    """the rule the games are played under (``gomoku.game.rules``)"""

    @classmethod
    def from_config(cls, config, board_shape: tuple, parallel: int) -> "SelfPlaySettings":
        """The settings a ``TrainConfig`` gives for games on ``board_shape``: its fields of the same names."""
        names = [f.name for f in fields(cls) if f.name not in ("board_shape", "parallel", "opening_book")]
        book = book_for_board(config.openings, *board_shape) if config.openings else []
        return cls(tuple(board_shape), parallel, **{name: getattr(config, name) for name in names},
                   opening_book=tuple(tuple(moves) for moves in book))

    def player_kwargs(self) -> dict:
        """The keyword arguments of each self-play player."""
        if self.root_search == "gumbel":
            return dict(m_max=self.gumbel_m, c_visit=self.gumbel_c_visit, c_scale=self.gumbel_c_scale,
                        p_full=self.p_full, n_fast=self.n_fast, win_check=self.win_check,
                        threats=self.threats)
        return dict(dirichlet_alpha=self.dirichlet_alpha, noise_frac=self.noise_frac,
                    explore_moves=self.explore_moves, p_full=self.p_full, n_fast=self.n_fast,
                    forced_k=self.forced_k, win_check=self.win_check, threats=self.threats)


@dataclass
class SelfPlayTask:
    """``n_games`` games from an actor's self-play stream; a stream started by this task takes
    ``seed`` as its own (see ``SelfPlayStream``), a running one keeps the seed it has."""

    settings: SelfPlaySettings
    n_games: int
    seed: int


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

    @property
    def a_points(self) -> float:
        """1 for a win of A, 0.5 for a draw, 0 for a loss."""
        if self.winner == 0:
            return 0.5
        return 1.0 if self.winner == self.a_colour else 0.0


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


def play_match(task: MatchTask, published=None,
               report: Optional[Callable[[Progress], None]] = None) -> tuple[list[MatchGame], RunStats]:
    """Plays a match share in lockstep: every AlphaZero leaf of its games goes to the net in one
    call, and the rollouts of all its pure MCTS players in one call too. ``report`` gets the
    share's ``Progress`` after every step."""
    width, height, n_in_row = task.geometry
    models: dict = {PUBLISHED: published} if published is not None else {}
    rollouts = RolloutEvaluator(game_seed(task.seed, task.first_game, 2))

    def build(spec: PlayerSpec, board: Board, seed: int):
        if spec.model == PUBLISHED and published is None:
            raise WorkerError("a match asks for the published weights, but none were published")
        player = make_player(spec, board, c_puct=task.c_puct, seed=seed, device=task.device, models=models,
                             precision=task.precision)
        if spec.kind == "pure":
            player.evaluator = rollouts
        return player

    def new_game(i: int):
        index = task.first_game + i
        board = Board(width, height, n_in_row, start_player=1, rule=task.rule)
        for move in task.openings[i]:
            board.do_move(move)
        colour = a_colour(index)
        players = {colour: build(task.a, board, game_seed(task.seed, index, 0)),
                   3 - colour: build(task.b, board, game_seed(task.seed, index, 1))}
        return board, players

    def on_step(finished, stats):
        points = sum(_points(g.winner, a_colour(task.first_game + g.index)) for g in finished)
        report(Progress(len(finished), stats.moves, points))

    records, stats = run_games(len(task.openings), new_game, min(task.parallel, len(task.openings)),
                               on_step=on_step if report is not None else None)
    games = [MatchGame(task.first_game + r.index, list(task.openings[r.index]), r.moves,
                       a_colour(task.first_game + r.index), r.winner) for r in records]
    return games, stats


def _points(winner: int, colour: int) -> float:
    return 0.5 if winner == 0 else float(winner == colour)


class _Stream:
    """A self-play stream with the settings it was made for and the weights it last played."""

    __slots__ = ("stream", "settings", "version")

    def __init__(self, stream: SelfPlayStream, settings: SelfPlaySettings, version):
        self.stream = stream
        self.settings = settings
        self.version = version


class TaskRunner:
    """Plays tasks with an actor's evaluator, keeping a self-play stream per board shape between tasks.

    A run that alternates board sizes (a size-free net) finds each size's games
    in progress where it left them. ``version`` names the weights behind the
    evaluator: when it changes, the games in progress keep their positions but
    search afresh with the new net.
    """

    def __init__(self):
        self.streams: dict[tuple, _Stream] = {}  # by board shape
        self._last_games: Optional[tuple[_Stream, int]] = None  # the last self-play task's stream and size

    def run(self, task, evaluator, version, keep_playing: Optional[Callable[[], bool]] = None,
            report: Optional[Callable[[Progress], None]] = None):
        """Plays ``task``; returns its result (``(games, stats)`` for games).

        ``keep_playing``: self-play goes on ahead of the task while it returns true
        (see ``SelfPlayStream.collect``). ``report`` gets the task's ``Progress``
        after every step of its games.
        """
        if isinstance(task, SelfPlayTask):
            s = task.settings
            shape = tuple(s.board_shape)
            held = self.streams.get(shape)
            if held is None or held.settings != s:
                stream = SelfPlayStream(evaluator, s.board_shape, s.parallel, s.n_playout, s.c_puct,
                                        task.seed, root_search=s.root_search, opening_stones=s.opening_stones,
                                        opening_book=s.opening_book, openings_share=s.openings_share,
                                        rule=s.rule,
                                        **s.player_kwargs())
                held = self.streams[shape] = _Stream(stream, s, version)
            elif held.version != version or held.stream.evaluator is not evaluator:
                held.stream.set_evaluator(evaluator)
            held.version = version
            on_step = None if report is None else lambda done, stats: report(Progress(done, stats.moves))
            self._last_games = (held, task.n_games)
            return held.stream.collect(task.n_games, keep_playing, on_step=on_step)
        self._last_games = None
        if isinstance(task, MatchTask):
            return play_match(task, evaluator, report)
        if isinstance(task, CallTask):
            return task.fn(task.arg, evaluator)
        raise TypeError(f"unknown task {task!r}")

    def play_ahead(self, keep_playing: Callable[[], bool]) -> None:
        """Between tasks: if the last task was self-play, goes on with its stream while
        ``keep_playing()`` is true (up to its bound), so a worker whose games were collected
        does not idle while the caller waits for the other workers and starts the next task.
        The next self-play task's figures count what it plays (its stream reports it)."""
        if self._last_games is not None:
            held, n_games = self._last_games
            held.stream.play_ahead(n_games, keep_playing)


def merge_games(results: list) -> tuple[list, RunStats]:
    """Joins the actors' ``(games, stats)``; the seconds are the slowest actor's, as they ran side by side."""
    games, total = [], RunStats()
    for records, stats in results:
        games.extend(records)
        total.add(stats)
    total.seconds = max((stats.seconds for _, stats in results), default=0.0)
    return games, total


class Pending:
    """Work handed to the actors; ``result()`` waits for it (at most once)."""

    def __init__(self, wait: Callable[[], Any]):
        self._wait = wait

    def result(self):
        return self._wait()


# ------------------------------------------------------------------ the interface
class Actors(ABC):
    """Where games are played. See the module docstring for the contract."""

    @property
    @abstractmethod
    def slots(self) -> int:
        """How many actors share the work."""

    @abstractmethod
    def publish(self, model) -> int:
        """Makes ``model``'s current weights the ones later games play with; returns their version."""

    @abstractmethod
    def _start(self, tasks: list, progress: Optional[Callable[[Progress], None]] = None) -> Pending:
        """Starts one task per actor (at most ``slots``); the Pending gives their results in order.

        ``progress`` gets the summed ``Progress`` of the tasks while they play.
        """

    # -- recipes, the same for every backend
    def start_self_play(self, n_games: int, settings: SelfPlaySettings, seed: int,
                        progress: Optional[Callable[[Progress], None]] = None) -> Pending:
        """Starts ``n_games`` self-play games; ``result()`` gives ``(games, stats)``.

        The games are split over the actors; actor ``k`` gets the stream seed
        ``stream_seed(seed, k)``. An actor's stream keeps the seed of the task that
        started it and derives each game's seed from it and the game's index, so no
        two games of a run share a random stream: not between actors, not when a
        stream plays ahead, and not after a restart (a new stream, a new seed).
        ``progress`` (see the module docstring) is called until ``result()`` returns.
        """
        tasks = [SelfPlayTask(settings, share, stream_seed(seed, k))
                 for k, share in enumerate(split(n_games, self.slots))]
        pending = self._start(tasks, progress)
        return Pending(lambda: merge_games(pending.result()))

    def self_play(self, n_games: int, settings: SelfPlaySettings, seed: int):
        return self.start_self_play(n_games, settings, seed).result()

    def match(self, a: PlayerSpec, b: PlayerSpec, geometry: tuple, openings: Sequence[list],
              seed: int, parallel: int = 16, c_puct: float = 5.0, device: str = "cpu",
              progress: Optional[Callable[[Progress], None]] = None,
              precision: str = "fp32", rule: str = "freestyle") -> tuple[list[MatchGame], RunStats]:
        """Plays ``len(openings)`` games of A against B under ``rule``; game ``i`` starts from ``openings[i]``.

        A plays Black in even games and White in odd ones. Each actor plays a
        contiguous share of the games, ``parallel`` at a time in lockstep; the
        same arguments and the same number of actors give the same games.
        ``progress`` gets the games finished, moves played and A's points so far.

        Returns:
            ``(games, stats)``, the games in order of their index.
        """
        tasks, first = [], 0
        for share in split(len(openings), self.slots):
            tasks.append(MatchTask(a, b, tuple(geometry), first, [list(o) for o in openings[first:first + share]],
                                   parallel, c_puct, seed, device, precision, rule))
            first += share
        games, stats = merge_games(self._start(tasks, progress).result())
        return sorted(games, key=lambda g: g.index), stats

    def map(self, fn: Callable, args: Sequence) -> list:
        """``fn(arg, evaluator)`` for each arg, one per actor (at most ``slots`` args)."""
        return self._start([CallTask(fn, arg) for arg in args]).result()

    def close(self) -> None:
        """Stops whatever the actors run; safe to call more than once."""

    def __enter__(self) -> "Actors":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class InlineActors(Actors):
    """One actor: the caller's own process, which plays each task as it is started."""

    def __init__(self):
        self._model = None
        self._model_version = None
        self._evaluator = None
        self._version = 0
        self._runner = TaskRunner()

    @property
    def slots(self) -> int:
        return 1

    def publish(self, model) -> int:
        from gomoku.search.evaluator import NetEvaluator

        if model is not self._model:
            self._model = model
            self._evaluator = NetEvaluator(model)  # its cache follows model.version
        elif self._model_version == model.version:
            return self._version
        self._model_version = model.version
        self._version += 1
        return self._version

    def _start(self, tasks: list, progress: Optional[Callable[[Progress], None]] = None) -> Pending:
        results = [self._runner.run(task, self._evaluator, self._version, report=progress) for task in tasks]
        return Pending(lambda: results)


# ------------------------------------------------------------------ worker processes
def _die_with_parent() -> None:
    """Asks Linux to kill this process when its parent dies (elsewhere the pipe's EOF ends it)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def prepare_actor_process(nice: int) -> None:
    """What every actor process does before it plays: lower its priority, import Paddle, and put a
    quiet exit in place of Paddle's SIGTERM handler, which prints a C++ "FatalError" report
    (an actor stopped by its caller has nothing to report).

    Raises:
        ValueError: called outside the process's main thread (no handler is installed then).
    """
    if nice:
        os.nice(nice)
    import warnings

    warnings.filterwarnings("ignore")
    import paddle  # noqa: F401  (installs Paddle's own signal handlers, which ours replaces)

    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))


def load_evaluator(model_dir: str, device: str, threads: int, precision: str = "fp32"):
    """A ``NetEvaluator`` on a predictor for the net exported in ``model_dir``."""
    from gomoku.net.inference import InferencePredictor
    from gomoku.search.evaluator import NetEvaluator

    return NetEvaluator(InferencePredictor(model_dir, device, threads, precision))


def _worker_main(conn, device: str, threads: int, nice: int = 0, precision: str = "fp32") -> None:
    # Started with SIGTERM and SIGINT blocked (see ProcessActors._spawn): a signal sent now
    # stays pending until our own handler is in place.
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and closes us
    _die_with_parent()
    prepare_actor_process(nice)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STARTUP_SIGNALS)
    _serve(conn, device, threads, precision)
    # Leaving on our own: Python's shutdown puts the default SIGTERM action back, and a stop
    # that arrives meanwhile would end the worker with a signal instead of its exit code 0.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _serve(conn, device: str, threads: int, precision: str = "fp32") -> None:
    """A worker's loop: a task, play (and play ahead) until COLLECT, the reply, play ahead until
    the next message; None or EOF ends it. An error while playing ahead between tasks is the
    next task's reply."""

    loaded_version = None
    evaluator = None
    runner = TaskRunner()
    ahead_error = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if message is None:
            return
        model_dir, version, task, wants_progress = message
        try:
            if ahead_error is not None:
                failed, ahead_error = ahead_error, None
                raise RuntimeError(f"self-play ahead of this task failed:\n{failed}")
            if model_dir is not None and version != loaded_version:
                evaluator = load_evaluator(model_dir, device, threads, precision)
                loaded_version = version
            report = _progress_sender(conn) if wants_progress else None
            # Self-play goes on ahead until the caller asks for the result (collect's message).
            reply = ("ok", runner.run(task, evaluator, version, keep_playing=lambda: not conn.poll(),
                                      report=report))
        except Exception:
            reply = ("error", traceback.format_exc())
        try:
            if conn.recv() is None:  # the caller collects (COLLECT) or closes (None)
                return
            conn.send(reply)
        except (EOFError, OSError):
            return
        try:  # until the next message: the caller still waits for the other workers' games
            runner.play_ahead(keep_playing=lambda: not conn.poll())
        except (EOFError, OSError):
            return
        except Exception:
            ahead_error = traceback.format_exc()


def _progress_sender(conn) -> Callable[[Progress], None]:
    """Sends a task's progress to the caller: when a game finished, else at most once a second.

    The messages are few and small (a task's games plus one a second), so they fit the
    pipe's buffer even while the caller is busy and reads them only at ``result()``.
    """
    last = {"games": -1, "time": 0.0}

    def send(progress: Progress) -> None:
        now = time.monotonic()
        if progress.games != last["games"] or now - last["time"] >= PROGRESS_EVERY_S:
            conn.send((PROGRESS, progress))
            last.update(games=progress.games, time=now)

    return send


class _Worker:
    __slots__ = ("proc", "conn")

    def __init__(self, proc, conn):
        self.proc = proc
        self.conn = conn


_live: "weakref.WeakSet[ProcessActors]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Stops the workers of actors nobody closed, before multiprocessing's own exit handler
    (registered earlier, so it runs later) would wait for them without a time limit."""
    for actors in list(_live):
        actors.close()


class ProcessActors(Actors):
    """``n`` persistent worker processes (the spawn start method).

    Args:
        n: processes.
        device: 'cpu' or 'gpu' for their predictors.
        threads: CPU threads per predictor.
        nice: added to the workers' niceness (lower CPU priority than the caller).
        precision: the predictors' arithmetic ('fp32', 'bf16' or 'auto').
    """

    def __init__(self, n: int, device: str = "cpu", threads: int = 1, nice: int = 0, precision: str = "fp32"):
        if n < 1:
            raise ValueError(f"need at least one worker, got {n}")
        self.device = device
        self._ctx = mp.get_context("spawn")
        self._workers: list[_Worker] = []
        self._pending = 0  # workers busy with a task whose result nobody has read yet
        self._progress: Optional[Callable[[Progress], None]] = None
        self._model_ref = None
        self._model_version = None
        self._version = 0
        self._export_dir: Optional[str] = None
        self._tmp = tempfile.mkdtemp(prefix="gomoku-actors-")
        _live.add(self)
        try:
            for _ in range(n):
                self._workers.append(self._spawn(device, threads, nice, precision))
        except BaseException:
            self.close()
            raise

    def _spawn(self, device: str, threads: int, nice: int, precision: str) -> _Worker:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_worker_main, args=(child, device, threads, nice, precision), daemon=True)
        # The child inherits the signal mask: it starts with SIGTERM and SIGINT blocked. The
        # resource tracker starts first, on its own: its start unblocks both in this process.
        resource_tracker.ensure_running()
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STARTUP_SIGNALS)
        try:
            proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        child.close()
        return _Worker(proc, parent)

    @property
    def slots(self) -> int:
        return len(self._workers)

    def __len__(self) -> int:
        return len(self._workers)

    @property
    def pids(self) -> list[int]:
        return [w.proc.pid for w in self._workers]

    def publish(self, model) -> int:
        current = self._model_ref() if self._model_ref is not None else None
        if current is model and self._model_version == model.version:
            return self._version
        if self._pending:
            raise RuntimeError("cannot publish while tasks are in flight")
        directory = tempfile.mkdtemp(prefix="weights-", dir=self._tmp)
        model.export_inference(directory)
        if self._export_dir is not None:
            shutil.rmtree(self._export_dir, ignore_errors=True)  # the workers have loaded it
        self._export_dir = directory
        self._model_ref = weakref.ref(model)
        self._model_version = model.version
        self._version += 1
        return self._version

    def _start(self, tasks: list, progress: Optional[Callable[[Progress], None]] = None) -> Pending:
        """Hands one task to each of the first ``len(tasks)`` workers and returns at once.

        One batch of tasks is in flight at a time. Until ``result()`` a worker
        whose self-play games are done plays ahead; ``result()`` tells it to stop
        and reply.
        """
        if self._pending:
            raise RuntimeError("the previous tasks have not been collected")
        if len(tasks) > len(self._workers):
            raise ValueError(f"{len(tasks)} tasks for {len(self._workers)} workers")
        for worker, task in zip(self._workers, tasks):
            worker.conn.send((self._export_dir, self._version, task, progress is not None))
        self._pending = len(tasks)
        self._progress = progress
        return Pending(self._collect)

    def _collect(self) -> list:
        busy = self._workers[:self._pending]
        for worker in busy:
            try:
                worker.conn.send(COLLECT)
            except (BrokenPipeError, OSError):
                pass  # a dead worker: the wait below reports it
        progress, self._progress = self._progress, None
        shares = [Progress() for _ in busy]
        results: list = [None] * len(busy)
        waiting = set(range(len(busy)))
        with interrupt.interruptible():  # waiting holds no Paddle state: Ctrl-C may stop it at once
            while waiting:
                ready = mp.connection.wait([busy[i].conn for i in waiting], timeout=1.0)
                for i in sorted(waiting):
                    worker = busy[i]
                    if worker.conn not in ready:
                        if not worker.proc.is_alive() and not worker.conn.poll():
                            self._died(worker)
                        continue
                    message = self._receive(worker)
                    if message[0] == PROGRESS:
                        shares[i] = message[1]
                        if progress is not None:
                            progress(sum(shares, Progress()))
                        continue
                    status, payload = message
                    if status != "ok":
                        raise WorkerError(f"a worker failed:\n{payload}")
                    results[i] = payload
                    waiting.discard(i)
        self._pending = 0
        return results

    @classmethod
    def _receive(cls, worker: _Worker):
        """The worker's next message; a worker that dies instead is a WorkerError, never a hang."""
        try:
            return worker.conn.recv()
        except (EOFError, ConnectionResetError, BrokenPipeError, OSError):
            cls._died(worker)

    @staticmethod
    def _died(worker: _Worker):
        worker.proc.join(STOP_GRACE_S)
        raise WorkerError(f"worker process {worker.proc.pid} died (exit code {worker.proc.exitcode})")

    def close(self) -> None:
        """Stops the workers: asked to leave when idle, then terminated, then killed.

        A task in flight (the trainer was stopped during its updates) has no
        result worth waiting for: it is terminated at once. Each step waits at
        most ``STOP_GRACE_S``; a second Ctrl-C skips to the kill.
        """
        _live.discard(self)
        workers, self._workers = self._workers, []
        pending, self._pending = self._pending, 0
        try:
            for worker in workers:
                try:
                    worker.conn.send(None)
                except (BrokenPipeError, OSError):
                    pass
            if not pending:
                _join_all([w.proc for w in workers], STOP_GRACE_S)
            for worker in workers:
                if worker.proc.is_alive():
                    worker.proc.terminate()
            _join_all([w.proc for w in workers], STOP_GRACE_S)
        except KeyboardInterrupt:
            pass  # another Ctrl-C while the workers stop: kill them instead
        finally:
            for worker in workers:
                if worker.proc.is_alive():
                    worker.proc.kill()
            try:
                _join_all([w.proc for w in workers], STOP_GRACE_S)
            except KeyboardInterrupt:
                pass  # killed already; nothing is left to wait for but the reaping
            for worker in workers:
                worker.conn.close()
            shutil.rmtree(self._tmp, ignore_errors=True)


def _join_all(procs: list, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))


def make_actors(n_workers: int, device: str = "cpu", nice: int = 0, backend: str = "local",
                address: Optional[str] = None, log: Callable[[str], None] = print,
                precision: str = "fp32") -> Actors:
    """The actors a run asks for.

    Args:
        n_workers: local worker processes (1 plays in the caller's process), or
            Ray actors (0: one per CPU of the cluster).
        device: where the actors' predictors run.
        precision: the arithmetic of the actors' predictors ('fp32', 'bf16' or 'auto').
        nice: added to the actors' niceness.
        backend: 'local' (processes on this machine) or 'ray' (``ray_actors.RayActors``).
        address: with 'ray', the cluster to join; None starts a local one.
        log: where a backend reports trouble it survives (a lost Ray actor).

    Raises:
        ValueError: an unknown backend.
        RuntimeError: 'ray' without Ray installed.
    """
    if backend == "ray":
        from gomoku.train.ray_actors import RayActors

        return RayActors(n_workers, device=device, nice=nice, address=address, log=log, precision=precision)
    if backend != "local":
        raise ValueError(f"unknown actors backend {backend!r}: use 'local' or 'ray'")
    if n_workers > 1:
        return ProcessActors(n_workers, device=device, threads=1, nice=nice, precision=precision)
    return InlineActors()
