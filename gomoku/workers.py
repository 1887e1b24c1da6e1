"""Self-play and evaluation tasks, run in the trainer's process or in worker processes.

A task is a plain dataclass; ``run_task`` plays it with a given net evaluator.
``WorkerPool`` keeps N processes alive for the whole run, each with its own
Paddle Inference predictor (reloaded when the learner exports new weights) and
its share of the games, so self-play uses every core.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import traceback
from dataclasses import dataclass
from typing import Callable, Optional

from gomoku import interrupt
from gomoku.board import Board
from gomoku.mcts import MCTSPlayer
from gomoku.rollout import RolloutEvaluator
from gomoku.selfplay import SelfPlayStream, run_games


@dataclass
class SelfPlayTask:
    """Self-play games from the worker's stream (games in progress carry over between tasks)."""

    board_shape: tuple
    n_games: int
    parallel: int
    n_playout: int
    c_puct: float
    seed: int
    dirichlet_alpha: float = 0.3
    noise_frac: float = 0.25
    explore_moves: int = 0

    def stream_key(self) -> tuple:
        return (self.board_shape, self.parallel, self.n_playout, self.c_puct,
                self.dirichlet_alpha, self.noise_frac, self.explore_moves)


@dataclass
class EvalTask:
    """Net (MCTS) against pure MCTS; game ``first_game + i`` gives the net colour 1 when even."""

    board_shape: tuple
    n_games: int
    first_game: int
    parallel: int
    n_playout: int
    pure_playouts: int
    c_puct: float
    seed: int

    def net_colour(self, i: int) -> int:
        return 1 if (self.first_game + i) % 2 == 0 else 2


class TaskRunner:
    """Runs tasks with a net evaluator, keeping the self-play stream between tasks.

    ``version`` names the weights behind the evaluator: when it changes, the
    games in progress keep their positions but search afresh with the new net.
    """

    def __init__(self):
        self.stream: Optional[SelfPlayStream] = None
        self._key = None
        self._version = None

    def run(self, task, evaluator, version, keep_playing: Optional[Callable[[], bool]] = None):
        """Plays ``task``; returns ``(records, stats)``.

        ``keep_playing``: self-play goes on ahead of the task while it returns true
        (see ``SelfPlayStream.collect``).
        """
        if isinstance(task, SelfPlayTask):
            if self.stream is None or self._key != task.stream_key():
                self.stream = SelfPlayStream(evaluator, task.board_shape, task.parallel, task.n_playout,
                                             task.c_puct, task.seed, dirichlet_alpha=task.dirichlet_alpha,
                                             noise_frac=task.noise_frac,
                                             explore_moves=task.explore_moves)
                self._key = task.stream_key()
            elif self._version != version or self.stream.evaluator is not evaluator:
                self.stream.set_evaluator(evaluator)
            self._version = version
            return self.stream.collect(task.n_games, keep_playing)
        if isinstance(task, EvalTask):
            return _play_evaluation(task, evaluator)
        raise TypeError(f"unknown task {task!r}")


def _play_evaluation(task: EvalTask, evaluator):
    width, height, n_in_row = task.board_shape
    rollouts = RolloutEvaluator(task.seed)  # shared, so the pure players' rollouts batch too

    def new_game(i):
        net = MCTSPlayer(evaluator, c_puct=task.c_puct, n_playout=task.n_playout,
                         seed=task.seed + i, name=f"AlphaZero {task.n_playout}")
        pure = MCTSPlayer(rollouts, c_puct=task.c_puct, n_playout=task.pure_playouts,
                          seed=task.seed + i, name=f"pure MCTS {task.pure_playouts}")
        colour = task.net_colour(i)
        return Board(width, height, n_in_row, start_player=1), {colour: net, 3 - colour: pure}

    return run_games(task.n_games, new_game, task.parallel)


def _worker_main(conn, device: str, threads: int, nice: int = 0) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the trainer handles Ctrl-C and closes us
    if nice:
        os.nice(nice)
    import warnings

    warnings.filterwarnings("ignore")
    import gomoku.net  # noqa: F401  (imports Paddle, which installs its own SIGTERM handler)

    # Paddle's handler prints a C++ "FatalError" report on SIGTERM; a worker stopped by the
    # trainer has nothing to report, so it just leaves. (Installed after Paddle's, to replace it.)
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))
    _serve(conn, device, threads)


def _serve(conn, device: str, threads: int) -> None:
    """A worker's loop: a task, play (and play ahead) until COLLECT, the reply; None ends it."""
    from gomoku.net import InferencePredictor, NetEvaluator

    loaded_version = None
    evaluator = None
    runner = TaskRunner()
    while True:
        message = conn.recv()
        if message is None:
            return
        model_dir, version, task = message
        try:
            if version != loaded_version:
                evaluator = NetEvaluator(InferencePredictor(model_dir, device, threads))
                loaded_version = version
            # Self-play goes on ahead until the caller asks for the result (collect's message).
            reply = ("ok", runner.run(task, evaluator, version, keep_playing=lambda: not conn.poll()))
        except Exception:
            reply = ("error", traceback.format_exc())
        if conn.recv() is None:  # the caller collects (COLLECT) or closes the pool (None)
            return
        conn.send(reply)


COLLECT = "collect"  # the caller's message to a worker: stop playing ahead, send the result


class WorkerError(RuntimeError):
    """A worker process failed; the message holds its traceback."""


class WorkerPool:
    """N persistent self-play processes.

    Args:
        n: processes.
        device: 'cpu' or 'gpu' for their predictors.
        threads: CPU threads per predictor.
        nice: added to the workers' niceness (lower CPU priority than the caller).
    """

    def __init__(self, n: int, device: str = "cpu", threads: int = 1, nice: int = 0):
        ctx = mp.get_context("spawn")
        self._conns = []
        self._procs = []
        self._pending = 0  # workers busy with a task whose result nobody has read yet
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker_main, args=(child, device, threads, nice), daemon=True)
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)

    def __len__(self) -> int:
        return len(self._procs)

    def submit(self, tasks: list, model_dir: str, version: int) -> None:
        """Hands one task to each of the first ``len(tasks)`` workers and returns at once.

        The workers play while the caller does something else (the learner's updates);
        ``collect`` waits for the results. One batch of tasks is in flight at a time.
        """
        if self._pending:
            raise RuntimeError("the previous tasks have not been collected")
        if len(tasks) > len(self._conns):
            raise ValueError(f"{len(tasks)} tasks for {len(self._conns)} workers")
        for conn, task in zip(self._conns, tasks):
            conn.send((model_dir, version, task))
        self._pending = len(tasks)

    def collect(self) -> list:
        """Waits for the tasks of the last ``submit`` and returns their results in order.

        Until this call a worker whose self-play games are done plays ahead (see
        ``SelfPlayStream.collect``); this call tells it to stop and reply.
        """
        results = []
        for conn in self._conns[:self._pending]:
            try:
                conn.send(COLLECT)
            except (BrokenPipeError, OSError):
                pass  # a dead worker: the wait below reports it
        with interrupt.interruptible():  # waiting holds no Paddle state: Ctrl-C may stop it at once
            for conn, proc in zip(self._conns[:self._pending], self._procs):
                try:
                    status, payload = conn.recv()
                except (EOFError, ConnectionResetError):
                    raise WorkerError(f"self-play worker {proc.pid} died (exit code {proc.exitcode})") from None
                if status != "ok":
                    raise WorkerError(f"a self-play worker failed:\n{payload}")
                results.append(payload)
        self._pending = 0
        return results

    def close(self) -> None:
        """Stops the workers: politely when they are idle, at once when a task is in flight.

        A task in flight (the trainer was stopped during its updates) has no result
        worth waiting for: the checkpoint never holds half an iteration.
        """
        for conn in self._conns:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        try:
            if not self._pending:
                for proc in self._procs:
                    proc.join(timeout=5)
        except KeyboardInterrupt:
            pass  # another Ctrl-C while the workers finish their task: stop them instead
        finally:
            for proc in self._procs:
                if proc.is_alive():
                    proc.terminate()
            self._conns, self._procs, self._pending = [], [], 0


def split(total: int, parts: int) -> list[int]:
    """``total`` items over ``parts`` as evenly as possible, zeros dropped."""
    base, extra = divmod(total, parts)
    return [n for n in (base + (1 if i < extra else 0) for i in range(parts)) if n > 0]


# The learner's updates and the workers' self-play run at the same time, and an iteration
# ends when both are done. The learner is one thread and the longer half with more than a
# couple of updates, so where they share cores it goes first and the workers take the rest.
WORKER_NICE = 10


def make_pool(n_workers: int, device: str) -> Optional[WorkerPool]:
    """A pool for more than one worker; None means: play in this process."""
    return WorkerPool(n_workers, device=device, threads=1, nice=WORKER_NICE) if n_workers > 1 else None
