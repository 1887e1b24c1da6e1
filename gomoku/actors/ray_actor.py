"""One Ray actor of ``ray_actors.RayActors``: the state of its process (a predictor for the
published weights and a ``TaskRunner``), and what Ray says of actors that have not started yet.
Ray itself is imported only when a run asks for it (``import_ray``).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Optional

from gomoku.actors.runner import TaskRunner, load_evaluator
from gomoku.actors.worker_loop import prepare_actor_process
from gomoku.util import usable_cpus

INSTALL_HINT = "--actors ray needs Ray: pip install -r requirements-ray.txt"


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

    def where(self) -> tuple[int, str]:
        """The actor's process id and the id of its Ray node (the answer also says it has started)."""
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

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
        # The predictor reads the files once, when it is made: the directory goes right after, so
        # an actor that Ray kills leaves no weights behind.
        with tempfile.TemporaryDirectory(prefix=f"gomoku-ray-v{weights['version']}-") as directory:
            for name, data in weights["files"].items():
                with open(os.path.join(directory, name), "wb") as f:
                    f.write(data)
            self._evaluator = load_evaluator(directory, self._device, self._threads, self._precision)
        self._loaded = weights["version"]


@dataclass
class StartStatus:
    """What Ray says of actors that have not started (``RayActors._start_status``)."""

    states: dict = field(default_factory=dict)  # Ray's state -> how many of the actors are in it
    waiting_for_cpu: Optional[int] = None  # how many actors (of any job) wait for a CPU; None: unknown
    cpus: float = 0.0  # the cluster's CPUs
    free: float = 0.0  # of which free

    def all_wait_for_cpu(self, coming: int) -> bool:
        """Whether every one of the ``coming`` actors waits for a CPU the cluster does not have free."""
        return self.waiting_for_cpu is not None and self.waiting_for_cpu >= coming and self.free < 1

    def _ray_says(self) -> str:
        states = ", ".join(f"{n} {state}" for state, n in sorted(self.states.items())) or "no state"
        return f"Ray lists them as {states}; the cluster has {self.cpus:g} CPU(s), {self.free:g} free"

    def _load(self) -> str:
        try:
            load = os.getloadavg()[0]
        except OSError:
            return ""
        return f"; this machine's load average is {load:.1f} on {usable_cpus()} core(s)"

    def no_cpu(self) -> str:
        return (f"the cluster had no free CPU for them: they waited for one each ({self._ray_says()}); other "
                f"jobs hold its CPUs, or --workers asks for more actors than it has")

    def starting(self) -> str:
        return (f"they were still starting (a Ray worker, Paddle's import, the search core's compile), "
                f"slowly on a busy machine ({self._ray_says()}{self._load()})")

    def describe(self) -> str:
        waiting = "" if not self.waiting_for_cpu else f"; {self.waiting_for_cpu} wait for a free CPU"
        return f"{self._ray_says()}{waiting}{self._load()}"
