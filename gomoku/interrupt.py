"""Ctrl-C that stops at a safe point.

By default Python raises ``KeyboardInterrupt`` wherever the main thread happens to
be. Inside a Paddle call that can break the process: the exception comes out as a
``SystemError`` from C++, or Paddle is left holding an internal lock and the
process hangs at exit. So the trainer installs ``deferred()``: a SIGINT or SIGTERM
only records the request, and the loops call ``check()`` between steps, where
stopping is safe. Waiting on worker processes touches no Paddle state, so inside
``interruptible()`` a signal raises at once. A second signal also raises at once,
for a user who does not want to wait for the current step.

Every command (``commands.run``) ends on SIGTERM through ``end_quietly`` outside such blocks: a
manager stops its engine that way at every match's end, and a user may stop a game so. It
removes the process's temporary folders (``tempdirs``) and ends the process by the signal, at
once and without a word. ``stop_signals_blocked`` starts threads that never take SIGTERM or
SIGINT: a process-directed signal then reaches the main thread, whose handler is the
process's own, or waits while the main thread imports Paddle (``net.backend``) instead of
landing on a thread where Paddle's own handler would print its "FatalError" report.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_requests = 0
_raise_now = False
_signal = None  # the first stop signal since ``deferred()`` began, for the exit code


def _handler(signum, frame) -> None:
    global _requests, _signal
    _requests += 1
    _signal = _signal or signum
    if _raise_now or _requests > 1:
        raise KeyboardInterrupt


def check() -> None:
    """Raises ``KeyboardInterrupt`` if a stop was requested."""
    if _requests:
        raise KeyboardInterrupt


def requested() -> bool:
    """Whether a stop was requested since ``deferred()`` began."""
    return _requests > 0


def stop_signal():
    """The signal that asked the last ``deferred()`` block to stop (SIGINT or SIGTERM), None without one."""
    return _signal


def exit_code(signum) -> int:
    """The shell's exit status of a process that a signal ended: 128 + its number (130 for SIGINT,
    143 for SIGTERM)."""
    return 128 + int(signum)


@contextmanager
def deferred():
    """Within the block, SIGINT and SIGTERM request a stop instead of raising anywhere."""
    global _requests, _signal
    _requests, _signal = 0, None
    previous = {sig: signal.signal(sig, _handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _requests = 0


@contextmanager
def interruptible():
    """Within the block a stop request raises at once (for waits that hold no Paddle state)."""
    global _raise_now
    saved = _raise_now
    _raise_now = True
    try:
        check()
        yield
    finally:
        _raise_now = saved


def end_quietly(signum, frame) -> None:
    """A SIGTERM handler: removes this process's temporary folders, then ends it by the signal
    (the exit status of a process that had no handler), printing nothing."""
    from gomoku import tempdirs

    try:
        tempdirs.remove_own()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except Exception:
        pass  # a closed stream, a folder already gone: nothing of it may keep the process alive
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # not reached where the signal ends the process


@contextmanager
def stop_signals_blocked():
    """SIGINT and SIGTERM blocked in this thread for the block: threads started in it keep them
    blocked for good, and a signal sent meanwhile arrives after it."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
