"""numba's cache of the core's kernels on disk, and the lock that lets one process compile them.

The kernels (``jit.njit``) are cached by numba beside their modules (``cache_dir``: the
``__pycache__`` there, or numba's user-wide cache where the package's folder is read-only, or
``NUMBA_CACHE_DIR``). ``cached`` says whether a fresh copy is there. ``compile_lock`` lets one
process of the machine compile them at a time, so that processes that start together (a trainer's
workers, tests in parallel, an engine beside a trainer) compile them once while the others wait,
then load them (``single.core_ready``).
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Iterator, Optional


COMPILE_WAIT_S = 3600.0
"""The longest a process waits for another one that compiles the kernels before it compiles them
too (a compile takes a minute or two of CPU; on a 2-core machine busy with other work it took
more than 15 minutes of wall time, docs/results.md, 2026-11-28)."""
COMPILE_STALL_S = 300.0
"""A compiling process whose CPU time has not grown for this long is taken to be stuck: the waiter
compiles the kernels itself."""
LOCK_NAME = "gomoku-core-compile.lock"


def cache_dir() -> str:
    """The folder where numba keeps the kernels' compiled code for this copy of the package:
    ``NUMBA_CACHE_DIR`` where it is set, else the ``__pycache__`` beside the kernels' modules."""
    return os.environ.get("NUMBA_CACHE_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")


def cached(folder: Optional[str] = None, sources: Optional[str] = None) -> bool:
    """Whether the kernels' compiled code is in numba's cache already and fresh, read from its
    files. numba keeps an index for each compiled function, named after its module's file, and
    compiles a function again when its module's source is newer than that index; so the cache is
    fresh when the main kernel has an index and every module with indexes has one no older than
    its source (a function the warm-up never compiles keeps an old index and is not waited for).
    ``folder`` and ``sources``: the cache and the kernels' sources, by default numba's and this package's."""
    here = sources or os.path.dirname(os.path.abspath(__file__))
    indexes = glob.glob(os.path.join(folder or cache_dir(), "**", "*.nbi"), recursive=True)
    newest: dict = {}
    for index in indexes:
        module = os.path.basename(index).split(".", 1)[0]
        newest[module] = max(newest.get(module, 0.0), os.path.getmtime(index))
    if "descent" not in newest:
        return False
    for source in glob.glob(os.path.join(here, "*.py")):
        module = os.path.splitext(os.path.basename(source))[0]
        if module in newest and newest[module] < os.path.getmtime(source):
            return False
    return True


def _open_lock():
    """The lock file beside the cache (else in the temporary folder, named after the cache), opened
    for appending; None where neither can be written."""
    folder = cache_dir()
    tag = hashlib.sha256(folder.encode()).hexdigest()[:12]
    for path in (os.path.join(folder, LOCK_NAME), os.path.join(tempfile.gettempdir(), f"{LOCK_NAME}-{tag}")):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            return open(path, "a+")
        except OSError:
            continue
    return None


def _holder(handle) -> str:
    handle.seek(0)
    return handle.read().strip() or "?"


def _cpu_ticks(pid: str) -> Optional[int]:
    """The CPU time process ``pid`` has used so far, in clock ticks; None where it cannot be read."""
    try:
        with open(f"/proc/{int(pid)}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime
    except (OSError, ValueError, IndexError):
        return None


def _sibling(pid: str) -> bool:
    """Whether process ``pid`` has this process's parent (a trainer's other worker, say)."""
    try:
        with open(f"/proc/{int(pid)}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1]) == os.getppid()
    except (OSError, ValueError, IndexError):
        return False


@contextmanager
def compile_lock(wait_s: Optional[float] = None, poll_s: float = 0.2,
                 stall_s: Optional[float] = None) -> Iterator[bool]:
    """Holds, for the block, the machine's lock on compiling this copy's kernels: a file lock
    (``flock``) beside numba's cache, which the kernel releases when its holder exits or dies, so a
    compile that crashed or was killed never blocks another. Yields True when held; False when
    another process held it for ``wait_s`` seconds (``COMPILE_WAIT_S``), or held it without using
    any CPU for ``stall_s`` (``COMPILE_STALL_S``; it says so, and the block runs without the lock),
    or where there is no file lock to take.

    A process that waits says so on standard error, unless the holder is its sibling (the workers
    of one trainer: the one that compiles says it for all)."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system: each process compiles on its own, as numba does
        yield False
        return
    handle = _open_lock()
    if handle is None:
        yield False
        return
    wait_s = COMPILE_WAIT_S if wait_s is None else wait_s
    stall_s = COMPILE_STALL_S if stall_s is None else stall_s
    started = time.monotonic()
    told = False
    seen = (None, None, started)  # the holder, its CPU ticks, when they last grew
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _holder(handle)
                now = time.monotonic()
                ticks = _cpu_ticks(holder)
                if holder != seen[0] or ticks is None or ticks != seen[1]:
                    seen = (holder, ticks, now)
                waited = now - started
                stalled = now - seen[2] >= stall_s
                if waited >= wait_s or stalled:
                    why = f"it used no CPU for {now - seen[2]:.0f} s" if stalled else f"after {waited:.0f} s"
                    print(f"stopped waiting for process {holder}, which compiles the search core into "
                          f"{cache_dir()} ({why}): compiling it here too", file=sys.stderr, flush=True)
                    yield False
                    return
                if not told and not _sibling(holder):
                    print(f"process {holder} is compiling the search core (once per machine): waiting for it",
                          file=sys.stderr, flush=True)
                told = True
                time.sleep(poll_s)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield True
    finally:
        handle.close()  # releases the lock
