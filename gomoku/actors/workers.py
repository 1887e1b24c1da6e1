"""``ProcessActors``: the actors as worker processes on this machine, and their lifecycle.

Each worker (the spawn start method, through ``processes.start_spawned``) keeps its own Paddle
Inference predictor for the published weights (exported to a temporary directory at each new
version) and a ``runner.TaskRunner`` (``worker_loop``, the worker's side); the caller sends it one
task at a time on a pipe. A worker whose self-play share is done plays ahead until the caller
sends ``COLLECT``, then replies, and plays ahead again until the next task.

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
import multiprocessing as mp
import multiprocessing.connection
import shutil
import tempfile
import time
import weakref
from typing import Callable, Optional

from gomoku import interrupt, tempdirs
from gomoku.actors.actors import Actors, Pending
from gomoku.actors.tasks import Progress, WorkerError
from gomoku.actors.worker_loop import COLLECT, PROGRESS
from gomoku.actors.worker_start import start_worker
from gomoku.processes import start_spawned

STOP_GRACE_S = 5.0  # how long close() waits at each step: asked, terminated, killed
EXPORT_PREFIX = "gomoku-actors-"  # a process's actors' temporary folder (``tempdirs``)
BUSY_GRACE_S = 1.0  # how long close() waits for workers terminated in the middle of a task before it kills them


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
        self._workers: list[_Worker] = []
        self._pending = 0  # workers busy with a task whose result nobody has read yet
        self._progress: Optional[Callable[[Progress], None]] = None
        self._export_dir: Optional[str] = None
        self._tmp = tempdirs.make(EXPORT_PREFIX)  # sweeps the folders of actors whose process is gone
        _live.add(self)
        try:
            for _ in range(n):
                self._workers.append(_Worker(*start_spawned(start_worker, device, threads, nice, precision)))
        except BaseException:
            self.close()
            raise

    @property
    def slots(self) -> int:
        return len(self._workers)

    def __len__(self) -> int:
        return len(self._workers)

    @property
    def pids(self) -> list[int]:
        return [w.proc.pid for w in self._workers]

    def _in_flight(self) -> bool:
        return self._pending > 0

    def _send_weights(self, model, version: int) -> None:
        directory = tempfile.mkdtemp(prefix="weights-", dir=self._tmp)
        model.export_inference(directory)
        if self._export_dir is not None:
            shutil.rmtree(self._export_dir, ignore_errors=True)  # the workers have loaded it
        self._export_dir = directory

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
        result worth waiting for: it is terminated at once, and killed after
        ``BUSY_GRACE_S`` (its SIGTERM handler must first be scheduled, which on a busy
        machine a worker at nice 10 waited seconds for). Each other step waits at most
        ``STOP_GRACE_S``; a second Ctrl-C skips to the kill.
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
            _join_all([w.proc for w in workers], BUSY_GRACE_S if pending else STOP_GRACE_S)
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

