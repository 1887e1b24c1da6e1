"""A worker process's side of ``workers.ProcessActors``: its start and its loop.

``worker_start.start_worker`` runs ``worker_main`` once the worker is tied to its parent. The
worker imports Paddle and installs its SIGTERM handler (the stop signals stay blocked until
then), then serves the caller's pipe: a task, self-play ahead until ``COLLECT``, the reply,
self-play ahead until the next message. At the first task it loads the search core (compiling it
once per machine) and only then lowers its priority.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
from typing import Callable, Optional

from gomoku.actors.runner import TaskRunner, load_evaluator
from gomoku.actors.tasks import Progress
from gomoku.processes import unblock_startup_signals

COLLECT = "collect"  # the caller's message to a worker: stop playing ahead, send the result
PROGRESS = "progress"  # a worker's message while it plays: ("progress", Progress)
PROGRESS_EVERY_S = 1.0


def prepare_actor_process(nice: int, handler_set: Optional[Callable[[], None]] = None) -> None:
    """What every actor process does before it plays: import Paddle, put a quiet exit in place of
    Paddle's SIGTERM handler, which prints a C++ "FatalError" report (an actor stopped by its
    caller has nothing to report), then ``settle_actor_process``.

    ``handler_set`` is called once the SIGTERM handler is in place (a worker unblocks the stop
    signals there, so that a stop during the compile ends it at once).

    Raises:
        ValueError: called outside the process's main thread (no handler is installed then).
    """
    import_paddle_quietly(handler_set)
    settle_actor_process(nice)


def import_paddle_quietly(handler_set: Optional[Callable[[], None]] = None) -> None:
    """Imports Paddle and puts a quiet exit in place of its SIGTERM handler; then ``handler_set()``."""
    import warnings

    warnings.filterwarnings("ignore")
    import paddle  # noqa: F401  (installs Paddle's own signal handlers, which ours replaces)

    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))
    if handler_set is not None:
        handler_set()


def settle_actor_process(nice: int) -> None:
    """Loads the search core's kernels (or compiles them, once per machine: ``core.single.core_ready``),
    and only then lowers the process's priority by ``nice``.

    The start runs at the caller's priority: on a machine busy with other work, a process at nice
    10 gets a tenth of the share of each busy process at nice 0, and a start at nice 10 (Paddle's
    import, a compile of a minute of CPU) took minutes (docs/results.md, 2026-11-28); the games,
    which run alongside the learner's updates, yield to them."""
    from gomoku.search.core import core_enabled

    if core_enabled():
        from gomoku.search.core.single import core_ready

        core_ready()
    if nice:
        os.nice(nice)


def worker_main(parent_alive: Callable[[], bool], conn, device: str, threads: int, nice: int = 0,
                precision: str = "fp32") -> None:
    """A worker's life after ``worker_start.start_worker`` (which has tied it to its parent and
    passes the test of whether the parent still lives)."""
    # Started with SIGTERM and SIGINT blocked (processes.start_spawned): a signal sent now stays
    # pending until our own handler is in place.
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and closes us
    import_paddle_quietly(unblock_startup_signals)
    # The core and the lower priority come with the first task: a worker closed before it has none
    # to load.
    _serve(conn, device, threads, precision, parent_alive, settle=lambda: settle_actor_process(nice))
    # Leaving on our own: Python's shutdown puts the default SIGTERM action back, and a stop
    # that arrives meanwhile would end the worker with a signal instead of its exit code 0.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _serve(conn, device: str, threads: int, precision: str = "fp32",
           parent_alive: Optional[Callable[[], bool]] = None, settle: Optional[Callable[[], None]] = None) -> None:
    """A worker's loop: a task, play (and play ahead) until COLLECT, the reply, play ahead until
    the next message; None, EOF or a parent gone ends it. An error while playing ahead between
    tasks is the next task's reply. ``settle`` runs once, when the first task arrives."""

    def keep_playing() -> bool:  # until a message (or the pipe's end) arrives, or the parent dies
        return not conn.poll() and (parent_alive is None or parent_alive())

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
        if settle is not None:
            settle, first = None, settle
            first()
        try:
            if ahead_error is not None:
                failed, ahead_error = ahead_error, None
                raise RuntimeError(f"self-play ahead of this task failed:\n{failed}")
            if model_dir is not None and version != loaded_version:
                evaluator = load_evaluator(model_dir, device, threads, precision)
                loaded_version = version
            report = _progress_sender(conn) if wants_progress else None
            # Self-play goes on ahead until the caller asks for the result (collect's message).
            reply = ("ok", runner.run(task, evaluator, version, keep_playing=keep_playing,
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
            runner.play_ahead(keep_playing=keep_playing)
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
