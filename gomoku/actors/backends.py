"""``make_actors``: the actors a run asks for, on whichever backend it names.

The factory sits above the backends (``actors.InlineActors``,
``workers.ProcessActors``, ``ray_actors.RayActors``) so that none of them
imports another's module to be chosen.
"""

from __future__ import annotations

from typing import Callable, Optional

from gomoku.actors.actors import Actors, InlineActors
from gomoku.actors.workers import ProcessActors

# The learner's updates and the workers' self-play run at the same time, and an iteration
# ends when both are done. The learner is one thread and the longer half with more than a
# couple of updates, so where they share cores it goes first and the workers take the rest.
WORKER_NICE = 10


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
        from gomoku.actors.ray_actors import RayActors

        return RayActors(n_workers, device=device, nice=nice, address=address, log=log, precision=precision)
    if backend != "local":
        raise ValueError(f"unknown actors backend {backend!r}: use 'local' or 'ray'")
    if n_workers > 1:
        return ProcessActors(n_workers, device=device, threads=1, nice=nice, precision=precision)
    return InlineActors()
