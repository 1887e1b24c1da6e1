"""The first thing a worker process runs: it ties its life to its parent's before anything slow.

A spawned worker imports its parent's main module and this module before it runs any code of
ours, and everything heavy (NumPy, Paddle) after. This module imports nothing but the standard
library (and ``util``, which imports nothing more), so that it asks Linux for ``PR_SET_PDEATHSIG``
a fraction of a second after the worker starts. A parent killed before that moment sends no signal, so the worker then compares its
parent's pid with the one the parent passed it and leaves at once if they differ; after that
moment the kernel kills it with the parent. ``workers.ProcessActors`` starts workers here.
"""

from __future__ import annotations

import os

from gomoku.util import die_with_parent  # the standard library only, like this module


def parent_alive(parent_pid: int) -> bool:
    """Whether the process that started this one is still its parent (an orphan gets a new one)."""
    return os.getppid() == parent_pid


def start_worker(parent_pid: int, *args) -> None:
    """The worker's target: dies with its parent (or at once if the parent is already gone),
    then runs ``worker_loop.worker_main`` with the test of whether the parent still lives."""
    die_with_parent()
    if not parent_alive(parent_pid):
        os._exit(0)
    from gomoku.actors.worker_loop import worker_main  # the heavy imports, once tied to the parent

    worker_main(lambda: parent_alive(parent_pid), *args)
