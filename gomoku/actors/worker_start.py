"""The first thing a worker process runs: it ties its life to its parent's before anything slow.

A spawned worker imports its parent's main module and this module before it runs any code of
ours, and everything heavy (NumPy, Paddle) after. This module imports nothing but the standard
library (and ``processes``, which imports nothing more), so that it asks Linux for ``PR_SET_PDEATHSIG``
a fraction of a second after the worker starts. A parent killed before that moment sends no signal, so the worker then compares its
parent's pid with the one the parent passed it and leaves at once if they differ; after that
moment the kernel kills it with the parent. ``workers.ProcessActors`` starts workers here
(through ``processes.start_spawned``).
"""

from __future__ import annotations

from gomoku.processes import parent_alive, tie_to_parent  # the standard library only, like this module


def start_worker(parent_pid: int, *args) -> None:
    """The worker's target: dies with its parent (or at once if the parent is already gone),
    then runs ``worker_loop.worker_main`` with the test of whether the parent still lives."""
    tie_to_parent(parent_pid)
    from gomoku.actors.worker_loop import worker_main  # the heavy imports, once tied to the parent

    worker_main(lambda: parent_alive(parent_pid), *args)
