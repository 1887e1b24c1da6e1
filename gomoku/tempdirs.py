"""Temporary folders that name the process that made them, so that none outlives it for long.

A folder is named ``PREFIX<pid namespace>-<pid>-<random>``. Its process removes it when done
with it, and on SIGTERM too (``remove_own``, called by ``interrupt.end_quietly``): the name
says whose it is, so even a folder whose creation a signal interrupted is found. A process
killed with SIGKILL cannot remove anything: the first folder a later process makes with the
same prefix first sweeps the folders of that prefix whose process is gone (``sweep``). Only
folders made in this pid namespace are swept, since a pid names a process only within one
(a temporary folder may be shared by containers), and never those of a live process, so
two engines that run at once leave each other's folders alone.

Standard library only: ``commands`` imports this module before anything else.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from typing import Iterator, Optional

_used: set[str] = set()  # the prefixes this process has made folders with (and so swept once)


def pid_namespace() -> str:
    """This process's pid namespace (its inode; "0" where there is none to read)."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def owner(name: str, prefix: str) -> Optional[int]:
    """The pid in the name of a folder made here with ``prefix`` (this pid namespace), else None."""
    if not name.startswith(prefix):
        return None
    parts = name[len(prefix):].split("-")
    if len(parts) >= 3 and parts[0] == pid_namespace() and parts[1].isdigit():
        return int(parts[1])
    return None


def sweep(prefix: str, root: Optional[str] = None) -> list[str]:
    """Removes the folders of ``prefix`` in ``root`` (the temporary folder) whose process is gone;
    returns their names."""
    root = root or tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return []
    removed = []
    for name in names:
        pid = owner(name, prefix)
        if pid is not None and pid != os.getpid() and not pid_alive(pid):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
            removed.append(name)
    return removed


def make(prefix: str, root: Optional[str] = None) -> str:
    """A new folder named for this process; the first one of a prefix sweeps the stale ones first."""
    if prefix not in _used:
        _used.add(prefix)  # before the folder exists: remove_own looks for it from then on
        sweep(prefix, root)
    return tempfile.mkdtemp(prefix=f"{prefix}{pid_namespace()}-{os.getpid()}-", dir=root)


@contextmanager
def folder(prefix: str) -> Iterator[str]:
    """``make``'s folder for the block, removed after it."""
    path = make(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def remove_own(root: Optional[str] = None) -> None:
    """Removes every folder this process made in ``root`` (the temporary folder) and still has."""
    root = root or tempfile.gettempdir()
    mine = {f"{prefix}{pid_namespace()}-{os.getpid()}-" for prefix in _used}
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if any(name.startswith(start) for start in mine):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
