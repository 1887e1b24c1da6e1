"""How an actor plays a task: a match share, a call, or self-play from its streams.

Every backend's actor (the caller's process, a worker process, a Ray actor)
holds one ``TaskRunner`` and an evaluator for the published weights
(``load_evaluator`` builds one from exported files), and hands it each task.
"""

from __future__ import annotations

from typing import Callable, Optional

from gomoku.game.board import Board
from gomoku.search.lockstep import RunStats, run_games
from gomoku.search.player_specs import PlayerSpec, close_players, make_player
from gomoku.search.rollout import RolloutEvaluator
from gomoku.actors.selfplay import SelfPlayStream
from gomoku.actors.tasks import (PUBLISHED, CallTask, MatchGame, MatchTask, Progress, SelfPlaySettings,
                                 SelfPlayTask, WorkerError, a_colour, game_seed)


def load_evaluator(model_dir: str, device: str, threads: int, precision: str = "fp32"):
    """A ``NetEvaluator`` on a predictor for the net exported in ``model_dir``."""
    from gomoku.net.inference import InferencePredictor
    from gomoku.search.evaluator import NetEvaluator

    return NetEvaluator(InferencePredictor(model_dir, device, threads, precision))


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
        if isinstance(getattr(player, "evaluator", None), RolloutEvaluator):
            player.evaluator = rollouts  # every rollout player's leaves in one call a step
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

    def match_game(record) -> MatchGame:
        index = task.first_game + record.index
        return MatchGame(index, list(task.openings[record.index]), record.moves, a_colour(index), record.winner,
                         record.faults, record.fault_notes)

    done: list[MatchGame] = []  # the finished games, in the order they ended, each made once

    def on_step(finished, stats):
        if len(finished) > len(done):
            done.extend(match_game(record) for record in finished[len(done):])
        if report is not None:
            report(Progress(len(done), stats.moves, sum(g.a_points for g in done), tuple(done)))

    try:
        _, stats = run_games(len(task.openings), new_game, min(task.parallel, len(task.openings)), on_step=on_step)
    finally:
        close_players(models)  # the engine processes of the share's games
    return sorted(done, key=lambda g: g.index), stats


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
    search afresh with the new net. A task that carries a snapshot of a stopped run's
    stream (``SelfPlayTask.resume``) and finds no stream for its settings goes on with
    that stream's games; one that asks for a snapshot gets it with its games.
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
                resume = task.resume
                stream = SelfPlayStream(evaluator, s.board_shape, s.parallel, s.recipe,
                                        task.seed if resume is None else resume["seed"],
                                        opening_stones=s.opening_stones, opening_book=s.opening_book,
                                        openings_share=s.openings_share, rule=s.rule)
                if resume is not None:
                    stream.restore(resume)
                held = self.streams[shape] = _Stream(stream, s, version)
            elif held.version != version or held.stream.evaluator is not evaluator:
                held.stream.set_evaluator(evaluator)
            held.version = version
            on_step = None if report is None else lambda done, stats: report(Progress(done, stats.moves))
            self._last_games = (held, task.n_games)
            games, stats = held.stream.collect(task.n_games, keep_playing, on_step=on_step)
            return (games, stats, held.stream.snapshot()) if task.snapshot else (games, stats)
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

