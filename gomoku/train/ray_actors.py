"""Actors on Ray: the games of ``actors.ProcessActors``, played by Ray actors on any machine of a cluster.

``RayActors`` implements the ``actors.Actors`` interface, so the trainer, the
arena and the benchmark use it unchanged. Each Ray actor is one CPU slot: it
keeps its own Paddle Inference predictor and its own games in lockstep
(``actors.TaskRunner``), exactly as a local worker process does. Ray is an
optional dependency (``requirements-ray.txt``); this module is imported only
when ``--actors ray`` asks for it.

* ``publish`` exports the net for Paddle Inference and puts the files' bytes in
  Ray's object store once per version; every actor reads them from there (Ray
  copies an object to each machine once) and loads a new predictor when the
  version changes.
* A task is a call of the actor's ``play``. The actor runs two threads, so the
  caller's ``collect`` reaches it while it plays: a self-play share that is done
  plays ahead until then, as the local workers do. Calls carry a ticket number,
  so a ``collect`` that overtakes its ``play`` still counts.
* An actor that dies mid-task (its process killed, its machine lost) is
  restarted by Ray (``max_restarts=-1``). Its self-play games of that task are
  lost and the loss is logged; the games that had come back are kept, so the
  replay buffer only ever receives whole games. A match share is played again
  on the restarted actor, once.
* The package travels to the cluster with the job (Ray's ``py_modules``), so a
  machine that joins needs the requirements installed, not a clone of the repo.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from typing import Callable, Optional

from gomoku import interrupt
from gomoku.search.lockstep import RunStats
from gomoku.train.actors import (Actors, CallTask, MatchGame, MatchTask, Pending, Progress, TaskRunner, WorkerError,
                                 load_evaluator, prepare_actor_process)
from gomoku.util import usable_cpus

INSTALL_HINT = "--actors ray needs Ray: pip install -r requirements-ray.txt"
WAIT_POLL_S = 1.0  # how often a wait for the actors wakes up to let Ctrl-C through


def import_ray():
    """Ray, or a clear error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise RuntimeError(INSTALL_HINT) from None
    return ray


class GameActor:
    """One Ray actor's state: a predictor for the published weights and a ``TaskRunner``.

    Args:
        device: 'cpu' or 'gpu' for the predictor.
        threads: CPU threads of the predictor.
        nice: added to the process's niceness.
        precision: the predictor's arithmetic ('fp32', 'bf16' or 'auto').
    """

    def __init__(self, device: str = "cpu", threads: int = 1, nice: int = 0, precision: str = "fp32"):
        try:
            prepare_actor_process(nice)
        except ValueError:
            pass  # not the process's main thread: Ray keeps its own SIGTERM handling
        self._device, self._threads, self._precision = device, threads, precision
        self._runner = TaskRunner()
        self._evaluator = None
        self._loaded: Optional[int] = None
        self._collected = 0  # the highest ticket the caller has collected
        self._dir = tempfile.mkdtemp(prefix="gomoku-ray-actor-")

    def pid(self) -> int:
        return os.getpid()

    def play(self, ticket: int, weights: Optional[dict], task):
        """Plays ``task`` with ``weights`` (``{"version", "files"}`` or None); self-play goes on
        ahead until ``collect(ticket)``."""
        if weights is not None and weights["version"] != self._loaded:
            self._load(weights)
        return self._runner.run(task, self._evaluator, self._loaded,
                                keep_playing=lambda: self._collected < ticket)

    def collect(self, ticket: int) -> None:
        self._collected = max(self._collected, ticket)

    def _load(self, weights: dict) -> None:
        directory = tempfile.mkdtemp(prefix=f"v{weights['version']}-", dir=self._dir)
        for name, data in weights["files"].items():
            with open(os.path.join(directory, name), "wb") as f:
                f.write(data)
        self._evaluator = load_evaluator(directory, self._device, self._threads, self._precision)
        self._loaded = weights["version"]


def _totals(results: list) -> Progress:
    """The ``Progress`` that finished game shares add up to."""
    total = Progress()
    for result in results:
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], RunStats):
            games, stats = result
            points = sum(g.a_points for g in games if isinstance(g, MatchGame))
            total = total + Progress(len(games), stats.moves, points)
    return total


def _package_dir() -> str:
    import gomoku

    return os.path.dirname(os.path.abspath(gomoku.__file__))


class RayActors(Actors):
    """Ray actors, one per CPU slot of the cluster (or ``n``).

    Args:
        n: actors; 0 takes one per CPU of the cluster (a local cluster gets the
            machine's cores).
        device: 'cpu' or 'gpu' for the actors' predictors.
        nice: added to the actors' niceness.
        address: None or "" starts a local cluster for this run; "auto" or
            "HOST:PORT" joins a running one (``ray start --head``).
        log: where the loss of an actor's games is reported.
        precision: the arithmetic of the actors' predictors ('fp32', 'bf16' or 'auto').

    Raises:
        RuntimeError: Ray is not installed.
    """

    def __init__(self, n: int = 0, device: str = "cpu", nice: int = 0, address: Optional[str] = None,
                 log: Callable[[str], None] = print, precision: str = "fp32"):
        ray = import_ray()
        self._ray = ray
        self._log = log
        self._started_cluster = False
        if not ray.is_initialized():
            options = dict(runtime_env={"py_modules": [_package_dir()]}, log_to_driver=False,
                           include_dashboard=False, logging_level="ERROR")
            if address:
                ray.init(address=address, **options)
            else:
                ray.init(num_cpus=n or usable_cpus(), **options)
                self._started_cluster = True
        n = n or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0, max_concurrency=2)(GameActor)
        self._actors = [remote.remote(device, 1, nice, precision) for _ in range(n)]
        self._weights = None  # the object ref of the published files
        self._model_ref = None
        self._model_version = None
        self._version = 0
        self._ticket = 0
        self._busy: list = []  # (actor, ref, task) of the tasks in flight
        self._restarting: list = []  # actors that died: Ray is starting them again
        self.lost_games = 0

    @property
    def slots(self) -> int:
        return len(self._actors)

    def actor_pids(self) -> list[int]:
        """The process ids of the actors (to test what a killed actor does)."""
        return self._ray.get([a.pid.remote() for a in self._actors])

    def publish(self, model) -> int:
        current = self._model_ref() if self._model_ref is not None else None
        if current is model and self._model_version == model.version:
            return self._version
        if self._busy:
            raise RuntimeError("cannot publish while tasks are in flight")
        with tempfile.TemporaryDirectory(prefix="gomoku-ray-publish-") as directory:
            model.export_inference(directory)
            files = {}
            for name in os.listdir(directory):
                with open(os.path.join(directory, name), "rb") as f:
                    files[name] = f.read()
        self._version += 1
        self._weights = self._ray.put({"version": self._version, "files": files})
        self._model_ref = weakref.ref(model)
        self._model_version = model.version
        return self._version

    def _start(self, tasks: list, progress: Optional[Callable] = None) -> Pending:
        """Calls ``play`` on one actor per task. Ray actors report no progress while they play:
        ``progress`` is called once, with the totals, when the results are in."""
        if self._busy:
            raise RuntimeError("the previous tasks have not been collected")
        if len(tasks) > len(self._actors):
            raise ValueError(f"{len(tasks)} tasks for {len(self._actors)} actors")
        self._await_restarts()
        self._ticket += 1
        self._busy = [(actor, actor.play.remote(self._ticket, self._weights, task), task)
                      for actor, task in zip(self._actors, tasks)]
        if progress is None:
            return Pending(self._collect)

        def collect_and_report():
            results = self._collect()
            progress(_totals(results))
            return results

        return Pending(collect_and_report)

    def _collect(self) -> list:
        ray = self._ray
        busy, ticket = self._busy, self._ticket
        for actor, _, _ in busy:
            actor.collect.remote(ticket)
        results = []
        try:
            for actor, ref, task in busy:
                try:
                    results.append(self._wait(ref))
                except ray.exceptions.RayActorError as exc:
                    results.append(self._after_a_death(actor, task, exc))
                except ray.exceptions.RayTaskError as exc:
                    raise WorkerError(f"a Ray actor failed:\n{exc}") from None
        finally:
            self._busy = []
        return results

    def _await_restarts(self) -> None:
        """Waits until the actors that died are back: a call to an actor that Ray is still
        restarting would fail at once."""
        restarting, self._restarting = self._restarting, []
        for actor in restarting:
            self._wait(actor.pid.options(max_task_retries=-1).remote())

    def _wait(self, ref):
        """``ray.get`` in short waits, so that Ctrl-C stops the wait at once."""
        ray = self._ray
        with interrupt.interruptible():  # waiting holds no Paddle state
            while True:
                ready, _ = ray.wait([ref], timeout=WAIT_POLL_S)
                if ready:
                    return ray.get(ref)

    def _after_a_death(self, actor, task, exc):
        """What a task whose actor died gives: nothing for self-play, a second try for a match."""
        self._restarting.append(actor)
        if isinstance(task, MatchTask):
            self._log(f"a Ray actor died during a match ({type(exc).__name__}); playing its share again")
            self._await_restarts()
            self._ticket += 1
            ref = actor.play.remote(self._ticket, self._weights, task)
            actor.collect.remote(self._ticket)
            return self._wait(ref)
        if isinstance(task, CallTask):
            raise WorkerError(f"a Ray actor died during a call: {exc}") from None
        self.lost_games += task.n_games
        self._log(f"a Ray actor died ({type(exc).__name__}); its {task.n_games} self-play game(s) of this "
                  f"iteration are lost, Ray restarts it")
        return [], RunStats(seconds=0.0)

    def close(self) -> None:
        ray = self._ray
        actors, self._actors, self._busy = self._actors, [], []
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already gone with its cluster
                pass
        if self._started_cluster and ray.is_initialized():
            ray.shutdown()
            self._started_cluster = False
