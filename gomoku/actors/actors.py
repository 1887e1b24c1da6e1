"""Actors: the interface of whatever plays the games the project plays in bulk.

The trainer, the arena and the benchmark say *what* to play (``tasks``); the
actors decide *where*: the weights they play with, how games are split into
shares and how the results come back. This module states the interface, its
recipes (the same for every backend) and the simplest backend.

What callers use (the ``Actors`` interface):

* ``publish(model) -> version``: the weights every later game plays with. The
  weights go out only when ``model.version`` changed since the last publish.
* ``start_self_play(n, settings, seed)``: self-play games with the published
  weights; returns a ``Pending`` whose ``result()`` waits for ``(games, stats)``.
  The caller works meanwhile (the learner's updates). ``self_play`` waits at once.
* ``match(a, b, geometry, openings, seed, ...)``: games between two player specs
  (``search.player_specs.PlayerSpec``), from given openings, A as Black in even games.
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

Backends: ``InlineActors`` (here) plays in the caller's process;
``workers.ProcessActors`` keeps ``n`` worker processes alive, each with its own
Paddle Inference predictor and its own games in lockstep;
``ray_actors.RayActors`` does the same with Ray actors on a cluster.
``backends.make_actors`` picks one for a run; nothing above them changes.

Self-play keeps a stream of games per actor and board shape
(``selfplay.SelfPlayStream``, held by ``runner.TaskRunner``): games in progress
carry over between calls (also when a run alternates board sizes), they are
handed out in the order they started (a game far longer than the rest is passed
over until it ends, see ``SelfPlayStream``), and an actor whose share is done plays
ahead (at most ``selfplay.PLAY_AHEAD_CALLS`` calls' games) until the caller
collects, and again after its reply, until the next task: the caller waits for
the slowest actor. The trainer asks for each stream's snapshot with its games and
keeps it in the checkpoint, so that a resumed run's actors go on with the games
that were in progress (``stream_state``).

The in-process actor playing one game at a time is the exception: it plays each
game whole with ``selfplay.play_game`` (``selfplay.GameByGame``), the same games
as its lockstep stream would play on the Python trees, and none is in progress
between calls.
"""

from __future__ import annotations

import weakref
from abc import ABC, abstractmethod
from typing import Any, Callable, Optional, Sequence

from gomoku.actors.runner import TaskRunner
from gomoku.actors.selfplay import GameByGame
from gomoku.actors.tasks import (CallTask, MatchGame, MatchTask, Progress, SelfPlaySettings, SelfPlayTask,
                                 merge_games, split, stream_seed)
from gomoku.search.lockstep import RunStats
from gomoku.search.player_specs import PlayerSpec


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

    # What was published last: a weak reference to the model, its ``version`` then, and the
    # version number the actors play with (counted up by each publish that sends weights).
    _model_ref: Optional[weakref.ref] = None
    _model_version: Optional[int] = None
    _version: int = 0

    def publish(self, model) -> int:
        """Makes ``model``'s current weights the ones later games play with; returns their version.

        The weights go out only when the model or its ``version`` changed since the last
        publish; otherwise the version stays.

        Raises:
            RuntimeError: weights would go out while tasks are in flight.
        """
        current = self._model_ref() if self._model_ref is not None else None
        if current is model and self._model_version == model.version:
            return self._version
        if self._in_flight():
            raise RuntimeError("cannot publish while tasks are in flight")
        self._send_weights(model, self._version + 1)
        self._model_ref = weakref.ref(model)
        self._model_version = model.version
        self._version += 1
        return self._version

    @abstractmethod
    def _send_weights(self, model, version: int) -> None:
        """Hands ``model``'s current weights, numbered ``version``, to the actors (called by ``publish``)."""

    def _in_flight(self) -> bool:
        """Whether tasks were started and their results not collected yet."""
        return False

    @abstractmethod
    def _start(self, tasks: list, progress: Optional[Callable[[Progress], None]] = None) -> Pending:
        """Starts one task per actor (at most ``slots``); the Pending gives their results in order.

        ``progress`` gets the summed ``Progress`` of the tasks while they play.
        """

    # -- recipes, the same for every backend
    def start_self_play(self, n_games: int, settings: SelfPlaySettings, seed: int,
                        progress: Optional[Callable[[Progress], None]] = None,
                        resume: Optional[Sequence[dict]] = None, snapshots: bool = False) -> Pending:
        """Starts ``n_games`` self-play games; ``result()`` gives ``(games, stats)``.

        The games are split over the actors; actor ``k`` gets the stream seed
        ``stream_seed(seed, k)``. An actor's stream keeps the seed of the task that
        started it and derives each game's seed from it and the game's index, so no
        two games of a run share a random stream: not between actors, not when a
        stream plays ahead, and not after a restart (a new stream, a new seed, or a
        stream restored from its snapshot, which goes on with its own seed and indices).
        ``progress`` (see the module docstring) is called until ``result()`` returns.

        With ``snapshots``, ``result()`` gives ``(games, stats, snapshots)``: each actor's
        stream as it stood when it handed its games over (``SelfPlayStream.snapshot``; None
        for an actor lost with its games). ``resume``: such snapshots from a stopped run;
        actor ``k`` without a stream for ``settings`` goes on with ``resume[k]``'s games.
        """
        resume = list(resume or ())
        tasks = [SelfPlayTask(settings, share, stream_seed(seed, k), resume[k] if k < len(resume) else None,
                              snapshots)
                 for k, share in enumerate(split(n_games, self.slots))]
        pending = self._start(tasks, progress)
        if not snapshots:
            return Pending(lambda: merge_games(pending.result()))

        def with_snapshots():
            results = pending.result()
            return (*merge_games(results), [r[2] if len(r) > 2 else None for r in results])

        return Pending(with_snapshots)

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
    """One actor: the caller's own process, which plays each task as it is started.

    Self-play one game at a time (``parallel`` 1, the learner's setting) plays each game whole
    with ``selfplay.play_game`` on the players' Python trees (``GameByGame``, a stream per board
    shape): the slow path, which a reader follows from the trainer to the net through few files.
    More games at a time go to the runner's lockstep streams, and so do matches and calls.
    """

    def __init__(self):
        self._evaluator = None
        self._runner = TaskRunner()
        self._by_game: dict[tuple, GameByGame] = {}  # one game at a time: a stream per board shape

    @property
    def slots(self) -> int:
        return 1

    def _send_weights(self, model, version: int) -> None:
        from gomoku.search.evaluator import NetEvaluator

        current = self._model_ref() if self._model_ref is not None else None
        if model is not current:  # a new evaluator; the current one's cache follows model.version
            self._evaluator = NetEvaluator(model)

    def _start(self, tasks: list, progress: Optional[Callable[[Progress], None]] = None) -> Pending:
        results = []
        for task in tasks:
            if isinstance(task, SelfPlayTask) and task.settings.parallel == 1:
                results.append(self._game_by_game(task, progress))
            else:
                results.append(self._runner.run(task, self._evaluator, self._version, report=progress))
        return Pending(lambda: results)

    def _game_by_game(self, task: SelfPlayTask, progress: Optional[Callable[[Progress], None]]):
        """A self-play task played one whole game at a time, by ``selfplay.play_game``."""
        s, shape = task.settings, tuple(task.settings.board_shape)
        stream = self._by_game.get(shape)
        if stream is None or stream.settings != s:
            stream = GameByGame(self._evaluator, s, task.seed if task.resume is None else task.resume["seed"])
            if task.resume is not None:
                stream.restore(task.resume)
            self._by_game[shape] = stream
        stream.evaluator = self._evaluator  # no game is in progress: the next one plays the published weights
        on_game = None if progress is None else lambda done, stats: progress(Progress(done, stats.moves))
        games, stats = stream.collect(task.n_games, on_game)
        return (games, stats, stream.snapshot()) if task.snapshot else (games, stats)
