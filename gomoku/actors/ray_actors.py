"""Actors on Ray: the games of ``workers.ProcessActors``, played by Ray actors on any machine of a cluster.

``RayActors`` implements the ``actors.Actors`` interface, so the trainer, the
arena and the benchmark use it unchanged. Each Ray actor is one CPU slot: it
keeps its own Paddle Inference predictor and its own games in lockstep
(``runner.TaskRunner``), exactly as a local worker process does. Ray is an
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
* The actors are spread over the cluster's nodes (Ray's SPREAD strategy), one
  per CPU of the cluster, or ``n``. Ray does not restart them: this class keeps
  the pool. Before each batch of tasks, actors that have started join it, and
  missing ones are created; Ray places them where a CPU is free, so a node that
  joins or comes back gets actors again.
* An actor that fails (``RayActorError``) is dropped and killed. Its self-play
  share is played again by the actors that are left when its node was lost or
  cut off, so the iteration keeps its number of games; when the actor's own
  process died on a node that is still there, its games of this iteration are
  lost and logged (a crash may be the share's own doing, such as memory, and is
  not chased around the cluster). The replay buffer only ever receives whole
  games. A match share is played again once, on another actor; a call fails.
* No wait hangs on an actor that is gone: every wait polls (so Ctrl-C gets
  through), an actor's death reaches the caller as Ray's error, the nodes of busy
  actors are checked every few seconds, a call that finds its actor unreachable
  decides within ``SETTLE_S``, and a wait for actors to start has a time limit.
* The start. ``ray.init`` without an address starts a cluster of this run's own, even where one
  runs on the machine already. An actor's start (a Ray worker process, the package, Paddle's
  import, the search core: ``worker_loop.prepare_actor_process``) takes a minute of CPU or so;
  on a 2-core machine busy with other work it took three (docs/results.md, 2026-11-28). So the
  first wait asks Ray what the actors that have not started are doing: while Ray holds a CPU for
  each, they are starting, and the run waits for them up to ``START_TIMEOUT_S`` (saying so every
  ``START_REPORT_S``); when every one of them waits for a CPU that the cluster does not have free
  (Ray's pending demand), it stops after ``NO_CPU_TIMEOUT_S`` and says so.
* The package travels to the cluster with the job (Ray's ``py_modules``), so a
  machine that joins needs the requirements installed, not a clone of the repo.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from gomoku import interrupt
from gomoku.search.lockstep import RunStats
from gomoku.actors.actors import Actors, Pending
from gomoku.actors.tasks import CallTask, MatchGame, MatchTask, Progress, SelfPlayTask, WorkerError
from gomoku.actors.ray_actor import GameActor, StartStatus, import_ray
from gomoku.util import usable_cpus

WAIT_POLL_S = 1.0  # how often a wait for the actors wakes up to let Ctrl-C through
NODE_CHECK_S = 5.0  # how often a wait for results asks the cluster whether the busy actors' nodes are alive
START_TIMEOUT_S = 900.0  # how long a run waits for its first actors while Ray holds a CPU for each (they start)
NO_CPU_TIMEOUT_S = 120.0  # how long it waits while every actor not started waits for a free CPU of the cluster
START_REPORT_S = 60.0  # how often a slow start says how it goes
STATUS_S = 5.0  # how often the wait asks Ray about the actors that have not started
NO_ACTOR_TIMEOUT_S = 300.0  # how long a batch waits for an actor when none is left
SETTLE_S = 10.0  # how long a failed call may take to say whether the actor or its node died


def _totals(results: list) -> Progress:
    """The ``Progress`` that finished game shares add up to."""
    total = Progress()
    for result in results:
        if isinstance(result, tuple) and len(result) >= 2 and isinstance(result[1], RunStats):
            games, stats = result[:2]  # a self-play result may carry its stream's snapshot third
            matched = tuple(g for g in games if isinstance(g, MatchGame))
            total = total + Progress(len(games), stats.moves, sum(g.a_points for g in matched), matched)
    return total


def _package_dir() -> str:
    import gomoku

    return os.path.dirname(os.path.abspath(gomoku.__file__))


@dataclass(eq=False)
class _Member:
    """A started actor of the pool: its handle, process id and Ray node id."""

    handle: Any
    pid: int
    node: str


@dataclass(eq=False)
class _Share:
    """A task of the batch being collected: where its result goes, and how often it was handed out again."""

    index: int
    task: Any
    tries: int = 0


class RayActors(Actors):
    """Ray actors, one per CPU of the cluster (or ``n``), spread over its nodes.

    Args:
        n: actors; 0 takes one per CPU of the cluster, counted again before each
            batch (a local cluster gets the machine's cores).
        device: 'cpu' or 'gpu' for the actors' predictors.
        nice: added to the actors' niceness.
        address: None or "" starts a local cluster for this run; "auto" or
            "HOST:PORT" joins a running one (``ray start --head``). A cluster that
            was joined is left running by ``close``; the actors are killed.
        log: where the loss of an actor, a node or games is reported.
        precision: the arithmetic of the actors' predictors ('fp32', 'bf16' or 'auto').

    Raises:
        RuntimeError: Ray is not installed.
        WorkerError: no actor started within ``START_TIMEOUT_S``, or one could not start.
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
                try:
                    ray.init(address=address, **options)
                except ConnectionError as exc:
                    raise WorkerError(f"cannot join the Ray cluster at {address}: {exc}. Is `ray start --head` "
                                      f"running there? With Ray's token authentication this machine needs "
                                      f"RAY_AUTH_MODE=token and the head's token (~/.ray/auth_token or "
                                      f"RAY_AUTH_TOKEN)") from None
            else:  # "local": a cluster of its own, even where another one runs on this machine
                ray.init(address="local", num_cpus=n or usable_cpus(), **options)
                self._started_cluster = True
        self._n = n
        self._remote = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0, max_concurrency=2,
                                  scheduling_strategy="SPREAD")(GameActor)
        self._actor_args = (device, 1, nice, precision)
        self._actors: list[_Member] = []  # started, in the pool
        self._coming: list[tuple] = []  # (handle, ref of its `where`): created, not started yet
        self._weights = None  # the object ref of the published files
        self._ticket = 0
        self._busy: list = []  # (member, ref, task) of the batch in flight
        self.lost_games = 0
        try:
            self._create_missing()
            self._wait_for_the_start()
        except BaseException:
            self.close()
            raise
        self._log(f"  Ray: {self._placement()}")

    # ------------------------------------------------------------ the pool
    @property
    def slots(self) -> int:
        return len(self._actors)

    def actor_pids(self) -> list[int]:
        """The process ids of the actors (to test what a killed actor does)."""
        return [m.pid for m in self._actors]

    def actor_nodes(self) -> list[str]:
        """The Ray node id of each actor, in the pool's order."""
        return [m.node for m in self._actors]

    def refresh(self) -> None:
        """Takes the actors that have started into the pool and creates the missing ones, which
        Ray places where a CPU is free. With no actor left, waits up to ``NO_ACTOR_TIMEOUT_S``
        for one. Every batch of tasks starts with it.

        Raises:
            WorkerError: no actor is left and none started in time.
        """
        before = len(self._actors)
        self._take_newcomers(0.0)
        self._create_missing()
        if not self._actors:
            self._log(f"no Ray actor is left: waiting up to {NO_ACTOR_TIMEOUT_S:g} s for a node with a free CPU")
            deadline = time.monotonic() + NO_ACTOR_TIMEOUT_S
            while not self._actors:
                if time.monotonic() >= deadline:
                    raise WorkerError(f"no Ray actor started within {NO_ACTOR_TIMEOUT_S:g} s: the cluster has "
                                      f"no free CPU")
                self._create_missing()  # again for those that were lost before they started
                self._take_newcomers(WAIT_POLL_S)
        if len(self._actors) > before:
            self._log(f"  Ray: {len(self._actors) - before} actor(s) joined; {self._placement()}")

    def _wait_for_the_start(self) -> None:
        """Waits for the created actors to start (see the module docstring); those still starting at
        the end join later (``refresh``).

        Raises:
            WorkerError: none started: every one waited for a free CPU for ``NO_CPU_TIMEOUT_S``, or
                they were still starting after ``START_TIMEOUT_S``; the message says which, and what
                Ray said.
        """
        started = time.monotonic()
        created = len(self._coming)
        next_status = started + STATUS_S
        next_report = started + START_REPORT_S
        no_cpu_since = None
        status = None
        while self._coming:
            self._take_newcomers(WAIT_POLL_S, until_all=True)
            now = time.monotonic()
            if not self._coming or now < next_status:
                continue
            next_status = now + STATUS_S
            status = self._start_status()
            if status.all_wait_for_cpu(len(self._coming)):
                no_cpu_since = now if no_cpu_since is None else no_cpu_since
            else:
                no_cpu_since = None
            if no_cpu_since is not None and now - no_cpu_since >= NO_CPU_TIMEOUT_S:
                why = f"in {now - no_cpu_since:.0f} s: {status.no_cpu()}"
                break
            if now - started >= START_TIMEOUT_S:
                why = f"within {START_TIMEOUT_S:g} s, although Ray held a CPU for each: {status.starting()}"
                break
            if now >= next_report:
                next_report = now + START_REPORT_S
                self._log(f"  Ray: {len(self._actors)} of {created} actor(s) started after {now - started:.0f} s; "
                          f"{status.describe()}: waiting (up to {START_TIMEOUT_S:g} s while they start)")
        else:
            return
        if not self._actors:
            raise WorkerError(f"no Ray actor started {why}")
        self._log(f"  Ray: {len(self._coming)} actor(s) not started {why}; they join when they start")

    def _start_status(self) -> "StartStatus":
        """What Ray says of the actors created and not started: their states, and how many of them
        wait for a CPU (Ray's pending demand; None where Ray does not say)."""
        ray = self._ray
        status = StartStatus()
        try:
            ours = {handle._actor_id.hex() for handle, _ in self._coming}
            table = ray._private.state.actors()
            for actor_id, info in table.items():
                if actor_id in ours:
                    status.states[info.get("State", "?")] = status.states.get(info.get("State", "?"), 0) + 1
        except Exception:  # Ray's internals moved: the states stay unknown
            pass
        try:
            resources, free = ray.cluster_resources(), ray.available_resources()
            status.cpus, status.free = resources.get("CPU", 0.0), free.get("CPU", 0.0)
        except Exception:
            pass
        try:
            from ray.autoscaler.v2.sdk import get_cluster_status

            demand = get_cluster_status(ray.get_runtime_context().gcs_address).resource_demands
            status.waiting_for_cpu = sum(request.count for d in demand.ray_task_actor_demand
                                         for request in d.bundles_by_count if request.bundle.get("CPU"))
        except Exception:  # no such API in this Ray: "waiting for a CPU" is not told apart
            pass
        return status

    def _placement(self) -> str:
        nodes = {m.node for m in self._actors}
        return f"{len(self._actors)} actor(s) on {len(nodes)} node(s)"

    def _target(self) -> int:
        return self._n or max(1, int(self._ray.cluster_resources().get("CPU", 0)))

    def _create_missing(self) -> None:
        for _ in range(self._target() - len(self._actors) - len(self._coming)):
            handle = self._remote.remote(*self._actor_args)
            self._coming.append((handle, handle.where.remote()))

    def _take_newcomers(self, timeout: float, until_all: bool = False) -> None:
        """Moves the created actors that have started into the pool, waiting up to ``timeout``
        until all have (``until_all``) or until the pool has one."""
        ray = self._ray
        deadline = time.monotonic() + timeout
        with interrupt.interruptible():  # waiting holds no Paddle state
            while self._coming:
                refs = [ref for _, ref in self._coming]
                wait_s = min(WAIT_POLL_S, max(0.0, deadline - time.monotonic()))
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=wait_s)
                for handle, ref in [c for c in self._coming if c[1] in ready]:
                    self._coming.remove((handle, ref))
                    self._admit(handle, ref)
                if time.monotonic() >= deadline or (self._actors and not until_all):
                    return

    def _admit(self, handle, ref) -> None:
        ray = self._ray
        try:
            pid, node = ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            if exc.actor_init_failed:
                raise WorkerError(f"a Ray actor could not start:\n{exc}") from None
            self._kill(handle)  # lost with its node before it started: the next refresh makes another
            return
        self._actors.append(_Member(handle, pid, node))

    def _drop(self, member: _Member) -> None:
        if member in self._actors:
            self._actors.remove(member)
        self._kill(member.handle)

    def _kill(self, handle) -> None:
        try:
            self._ray.kill(handle, no_restart=True)
        except Exception:  # already gone, with its node or its cluster
            pass

    def _alive_nodes(self) -> set:
        return {node["NodeID"] for node in self._ray.nodes() if node["Alive"]}

    # ------------------------------------------------------------ the interface
    def _in_flight(self) -> bool:
        return bool(self._busy)

    def _send_weights(self, model, version: int) -> None:
        with tempfile.TemporaryDirectory(prefix="gomoku-ray-publish-") as directory:
            model.export_inference(directory)
            files = {}
            for name in os.listdir(directory):
                with open(os.path.join(directory, name), "rb") as f:
                    files[name] = f.read()
        self._weights = self._ray.put({"version": version, "files": files})

    # A batch is split over the actors there are when it starts: the pool is brought up to date
    # first (while a batch is in flight, _start refuses the next one).
    def start_self_play(self, *args, **kwargs) -> Pending:
        self._refresh_when_idle()
        return super().start_self_play(*args, **kwargs)

    def match(self, *args, **kwargs):
        self._refresh_when_idle()
        return super().match(*args, **kwargs)

    def map(self, *args, **kwargs) -> list:
        self._refresh_when_idle()
        return super().map(*args, **kwargs)

    def _refresh_when_idle(self) -> None:
        if not self._busy:
            self.refresh()

    def _start(self, tasks: list, progress: Optional[Callable] = None) -> Pending:
        """Calls ``play`` on one actor per task. Ray actors report no progress while they play:
        ``progress`` is called once, with the totals, when the results are in."""
        if self._busy:
            raise RuntimeError("the previous tasks have not been collected")
        if len(tasks) > len(self._actors):
            raise ValueError(f"{len(tasks)} tasks for {len(self._actors)} actors")
        self._ticket += 1
        self._busy = [(member, self._play(member, task), task) for member, task in zip(self._actors, tasks)]
        if progress is None:
            return Pending(self._collect)

        def collect_and_report():
            results = self._collect()
            progress(_totals(results))
            return results

        return Pending(collect_and_report)

    def _play(self, member: _Member, task):
        return member.handle.play.remote(self._ticket, self._weights, task)

    def _collect(self) -> list:
        """The batch's results in order; a share whose actor failed is played again or lost
        (see the module docstring)."""
        ray = self._ray
        for member, _, _ in self._busy:
            member.handle.collect.remote(self._ticket)
        flight = {ref: (member, _Share(i, task)) for i, (member, ref, task) in enumerate(self._busy)}
        results: list = [None] * len(flight)
        again: list[_Share] = []  # shares to hand to another actor
        next_check = time.monotonic() + NODE_CHECK_S
        try:
            with interrupt.interruptible():  # waiting holds no Paddle state
                while flight or again:
                    self._hand_out(again, flight)
                    if not flight:
                        continue
                    ready, _ = ray.wait(list(flight), num_returns=1, timeout=WAIT_POLL_S)
                    for ref in ready:
                        member, share = flight.pop(ref)
                        try:
                            results[share.index] = ray.get(ref)
                        except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as exc:
                            # the actor died, or its node did with the result in its object store
                            self._after_a_failure(member, share, exc, again, results)
                        except ray.exceptions.RayTaskError as exc:
                            raise WorkerError(f"a Ray actor failed:\n{exc}") from None
                    if flight and time.monotonic() >= next_check:
                        next_check = time.monotonic() + NODE_CHECK_S
                        alive = self._alive_nodes()
                        for ref, (member, share) in list(flight.items()):
                            if member.node not in alive:
                                del flight[ref]
                                self._after_a_failure(member, share, None, again, results)
        finally:
            self._busy = []
        return results

    def _hand_out(self, again: list, flight: dict) -> None:
        """Gives each share in ``again`` to an actor of the pool that is not busy; with no actor
        left, waits for a new one (``refresh``, which has a time limit)."""
        while again:
            busy = {id(member) for member, _ in flight.values()}
            idle = [m for m in self._actors if id(m) not in busy]
            if not idle:
                if flight:
                    return  # the next actor that is done takes it
                self.refresh()
                continue
            share = again.pop(0)
            self._ticket += 1
            ref = self._play(idle[0], share.task)
            idle[0].handle.collect.remote(self._ticket)  # no play ahead: the batch is waiting for it
            flight[ref] = (idle[0], share)

    def _after_a_failure(self, member: _Member, share: _Share, exc, again: list, results: list) -> None:
        """What a share whose actor failed (``exc``, or None when its node was seen gone) gives:
        see the module docstring."""
        task = share.task
        crashed = isinstance(task, SelfPlayTask) and exc is not None and self._crashed(member, exc)
        self._drop(member)
        what = type(exc).__name__ if exc is not None else "the cluster lists its node as dead"
        if isinstance(task, CallTask):
            raise WorkerError(f"a Ray actor died during a call: {exc or what}") from None
        if isinstance(task, MatchTask):
            if share.tries:
                raise WorkerError(f"a Ray actor died during a match, and again when its share was played "
                                  f"again ({what})")
            self._log(f"a Ray actor died during a match ({what}); playing its share again")
            again.append(_Share(share.index, task, share.tries + 1))
            return
        if crashed:
            self.lost_games += task.n_games
            results[share.index] = ([], RunStats(seconds=0.0))
            self._log(f"a Ray actor died ({what}); its {task.n_games} self-play game(s) of this iteration "
                      f"are lost, and a new actor takes its place")
            return
        self._log(f"a Ray node was lost or cut off (node {member.node[:12]}; {what}): its actor's "
                  f"{task.n_games} self-play game(s) of this iteration are played again by the others")
        again.append(_Share(share.index, task, share.tries + 1))

    def _crashed(self, member: _Member, exc) -> bool:
        """Whether a failed actor's own process died on a node that is still in the cluster (rather
        than with its node, or out of reach). Ray says an actor died once it knows; a call that
        merely found the actor unreachable is tried again until Ray knows, its node is gone, or
        ``SETTLE_S`` have passed (then the node counts as cut off)."""
        ray = self._ray
        deadline = time.monotonic() + SETTLE_S
        with interrupt.interruptible():
            while member.node in self._alive_nodes():
                if isinstance(exc, ray.exceptions.ActorDiedError):
                    return True
                if time.monotonic() >= deadline:
                    return False
                try:
                    ray.get(member.handle.where.remote(), timeout=WAIT_POLL_S)
                    return False  # it answers: the call was lost on the way, not the actor
                except ray.exceptions.GetTimeoutError:
                    pass
                except ray.exceptions.RayActorError as again:
                    exc = again
                    time.sleep(min(WAIT_POLL_S, 0.25))
        return False

    def close(self) -> None:
        """Kills the actors; stops the cluster only if this run started it."""
        ray = self._ray
        handles = [m.handle for m in self._actors] + [h for h, _ in self._coming]
        handles += [m.handle for m, _, _ in self._busy if m not in self._actors]
        self._actors, self._coming, self._busy = [], [], []
        for handle in handles:
            self._kill(handle)
        if self._started_cluster and ray.is_initialized():
            ray.shutdown()
            self._started_cluster = False
