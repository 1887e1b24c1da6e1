"""Every process the package starts is started here, so that none outlives its parent or waits for
ever, and a reader finds them all in one place.

* ``start_spawned``: the trainer's worker processes (``actors.workers``), with multiprocessing's
  spawn start method, a pipe to each, and the stop signals blocked until the worker's own
  SIGTERM handler is in place (``STARTUP_SIGNALS``, ``unblock_startup_signals``).
* ``start_python``: this Python running a module or a function of one, its output kept off this
  process's stdout (``search.core.single`` compiles the search core in one while the engine
  answers on its stdout).
* ``start_command``: an outside program spoken to over pipes (``play.engine_process``: an engine).

Each child dies with its parent: Linux kills it when the parent dies (``die_with_parent``,
``PR_SET_PDEATHSIG``). Elsewhere a spawned worker sees the end of its pipe, an engine the end of
its stdin, and the compile process ends when its compile does. A spawned worker ties itself to
its parent (``tie_to_parent``) before anything slow. No child waits for an input nobody writes:
a Python child's stdin is the null device, an engine's a pipe this process writes and closes
(``wait_or_kill`` ends one that will not stop). Ray starts processes of its own
(``actors.ray_actors``, through ``ray.init``): those are Ray's to start and stop.

This module imports only the standard library: a worker imports it before anything slow.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from multiprocessing import resource_tracker
from typing import Callable, Optional

STARTUP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
"""blocked in a spawned worker from before its start until its own SIGTERM handler is in place: a
stop sent meanwhile waits for that handler instead of reaching Paddle's, which is not safe to run
at every moment of an import"""

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder that holds the package


def _libc():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (OSError, AttributeError):
        return None


_LIBC = _libc()  # loaded here, not in a forked child, where loading a library may deadlock


def die_with_parent() -> None:
    """Asks Linux to kill this process when its parent dies (``PR_SET_PDEATHSIG``); elsewhere it does
    nothing. A child started by ``subprocess`` runs it between fork and exec."""
    if _LIBC is not None:
        try:
            _LIBC.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        except AttributeError:
            pass


def _before_exec() -> Optional[Callable[[], None]]:
    """``Popen``'s ``preexec_fn``: ``die_with_parent`` where a child runs code before exec (POSIX)."""
    return die_with_parent if os.name == "posix" else None


def parent_alive(parent_pid: int) -> bool:
    """Whether the process that started this one is still its parent (an orphan gets a new one)."""
    return os.getppid() == parent_pid


def tie_to_parent(parent_pid: int) -> None:
    """A spawned worker's first step: it dies with its parent from now on, and leaves at once if the
    parent died before (a parent killed before ``die_with_parent`` sends no signal)."""
    die_with_parent()
    if not parent_alive(parent_pid):
        os._exit(0)


def unblock_startup_signals() -> None:
    """What a spawned worker calls once its own SIGTERM handler is in place: a stop that arrived
    meanwhile is delivered to that handler now."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STARTUP_SIGNALS)


def start_spawned(target: Callable, *args) -> tuple[multiprocessing.process.BaseProcess,
                                                   multiprocessing.connection.Connection]:
    """Starts a worker process with the spawn start method and returns it with this end of its pipe.

    The worker runs ``target(parent_pid, connection, *args)``: this process's pid, for
    ``tie_to_parent`` and ``parent_alive``, and its end of a two-way pipe. It is a daemon (stopped
    when this process exits normally) and starts with ``STARTUP_SIGNALS`` blocked (it inherits the
    signal mask), to be unblocked by ``unblock_startup_signals``.
    """
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    try:
        process = context.Process(target=target, args=(os.getpid(), child, *args), daemon=True)
        # The resource tracker starts first, on its own: its start unblocks both signals in this process.
        resource_tracker.ensure_running()
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STARTUP_SIGNALS)
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    except BaseException:
        parent.close()
        raise
    finally:
        child.close()
    return process, parent


def start_python(target: str) -> subprocess.Popen:
    """Starts this Python running ``target``: a module (``package.module``, as ``python -m`` runs it)
    or a function of one (``package.module:function``, whose return value is the exit status).

    The child finds this copy of the package (its folder heads ``PYTHONPATH``). Its stdin and its
    stdout are the null device: it waits for no input, and its output stays off this process's
    stdout, which may be a protocol's; its stderr is this process's. It dies with this process.

    Raises:
        ValueError: ``target`` is not a dotted name, with at most one ``:function``.
    """
    module, _, function = target.partition(":")
    if not all(part.isidentifier() for part in module.split(".")) or (function and not function.isidentifier()):
        raise ValueError(f"{target!r} is not a module or module:function")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
    if function:
        command = ["-c", f"from {module} import {function}; raise SystemExit({function}())"]
    else:
        command = ["-m", module]
    return subprocess.Popen([sys.executable, *command], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            env=env, preexec_fn=_before_exec())


def start_command(command: list[str], stderr=None) -> subprocess.Popen:
    """Starts an outside program spoken to over pipes: its stdin and stdout are text pipes, a line at a
    time; its stderr goes to ``stderr`` (None: this process's stderr). It dies with this process."""
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True,
                            bufsize=1, preexec_fn=_before_exec())


def wait_or_kill(process: subprocess.Popen, timeout: float) -> None:
    """Waits up to ``timeout`` seconds for a child started here to exit, then kills it; either way it
    is reaped."""
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
