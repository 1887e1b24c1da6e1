"""A run directory's checkpoint and its lock.

``checkpoint.pkl`` is a magic line, a SHA-256 of the payload, then a pickle of a
dict (see ``TrainPipeline.checkpoint_state``), written atomically. The ``lock``
file keeps two trainers out of one run directory.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle

from gomoku.util import atomic_write

CHECKPOINT = "checkpoint.pkl"
CHECKPOINT_MAGIC = b"GOMOKU-ZERO-CKPT-1\n"


class CheckpointError(ValueError):
    """A checkpoint that is missing, truncated, corrupted or from another version."""


class RunBusyError(RuntimeError):
    """Another trainer is already working in this run directory."""


def lock_run_dir(run_dir: str):
    """Takes the run directory's lock for this process (released when it exits, even on kill -9).

    Raises:
        RunBusyError: another live process holds it: two trainers would overwrite
            each other's checkpoints.
    """
    os.makedirs(run_dir, exist_ok=True)
    handle = open(os.path.join(run_dir, "lock"), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        owner = handle.read().strip() or "unknown"
        handle.close()
        raise RunBusyError(f"another trainer (pid {owner}) is using {run_dir}; stop it first") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def write_checkpoint(path: str, state: dict) -> None:
    """Pickles ``state`` behind a magic line and a SHA-256, atomically."""
    payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.sha256(payload).hexdigest().encode()

    def write(f):
        f.write(CHECKPOINT_MAGIC)
        f.write(digest + b"\n")
        f.write(payload)

    atomic_write(path, write)


def read_checkpoint(path: str) -> dict:
    """Reads a checkpoint, checking its magic line and digest first.

    Raises:
        CheckpointError: missing, truncated, corrupted, or not a checkpoint.
    """
    if not os.path.isfile(path):
        run_dir = os.path.dirname(path) or "."
        if os.path.isfile(os.path.join(run_dir, "lock")):
            # train.py takes the lock first thing: this run stopped before its first checkpoint.
            raise CheckpointError(f"no checkpoint at {path}: the run in {run_dir} stopped before its first "
                                  f"checkpoint, so there is nothing to resume; start it again")
        raise CheckpointError(f"no checkpoint at {path}: is this a run directory of train.py?")
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(CHECKPOINT_MAGIC):
        raise CheckpointError(f"{path} is not a Gomoku Zero checkpoint")
    rest = data[len(CHECKPOINT_MAGIC):]
    digest, _, payload = rest.partition(b"\n")
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        raise CheckpointError(f"{path} is corrupted or truncated (its checksum does not match)")
    try:
        return pickle.loads(payload)
    except Exception as exc:
        raise CheckpointError(f"{path} cannot be read ({exc})") from None
