"""A run directory's checkpoint and its lock. A run lives in one directory:

* ``checkpoint.pkl``: everything needed to go on exactly where it stopped
  (config, weights, Adam state, lr multiplier, iteration, best win ratio, pure
  MCTS playouts, the heuristic level, the replay buffer of each board size, the random
  state, counters, the self-play games in progress of each actor and board size
  (``stream_state``); the schedule's position is the iteration), rewritten
  atomically after every iteration;
* ``current_model.npz``: the net as it is, a model file rewritten atomically after
  every iteration, so a run has something to play from its first iteration on (and
  rewritten from the checkpoint on resume: a kill between the two writes left it behind);
* ``best_model.npz``: the net that did best against pure MCTS, written at evaluations;
* ``metrics.jsonl``: one JSON object per iteration and per evaluation;
* ``lock``: the pid of the trainer working in it.

``checkpoint.pkl`` is a magic line, a SHA-256 of the payload, then a pickle of a
dict (see ``TrainPipeline.checkpoint_state``), written atomically. The ``lock``
file keeps two trainers out of one run directory. Whoever takes the lock removes the
temporary files of atomic writes that a killed trainer left, and a run that stops before
its first checkpoint removes what it wrote (``discard_unstarted_run``): it cannot be resumed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import re

from gomoku.util import atomic_write

CHECKPOINT = "checkpoint.pkl"
LOCK = "lock"
_STALE_TEMP = re.compile(r"(checkpoint\.pkl|.+\.npz)\.[^.]+\.tmp")  # util.atomic_write's temporary names
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
    handle = open(os.path.join(run_dir, LOCK), "a+")
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
    _remove_stale_temp_files(run_dir)  # nobody else writes here now: a temporary file is a killed write's
    return handle


def _remove_stale_temp_files(run_dir: str) -> list[str]:
    removed = []
    for name in os.listdir(run_dir):
        if _STALE_TEMP.fullmatch(name):
            try:
                os.unlink(os.path.join(run_dir, name))
                removed.append(name)
            except OSError:
                pass
    return removed


def discard_unstarted_run(run_dir: str, written: tuple[str, ...]) -> bool:
    """With the lock held, at the end of a run: a run directory without a checkpoint cannot be
    resumed, so the files the run wrote (``written`` and the lock) go, and the directory too if
    nothing else is left in it. Returns whether the directory is gone."""
    if os.path.exists(os.path.join(run_dir, CHECKPOINT)):
        return False
    _remove_stale_temp_files(run_dir)
    for name in (*written, LOCK):
        try:
            os.unlink(os.path.join(run_dir, name))
        except FileNotFoundError:
            pass
    try:
        os.rmdir(run_dir)
    except OSError:  # something of the user's is in it
        return False
    return True


def lock_holder(run_dir: str):
    """The pid a live trainer wrote into the run's lock (``"unknown"`` if none), or None when no
    live process holds the lock."""
    try:
        handle = open(os.path.join(run_dir, LOCK))
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read().strip() or "unknown"
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


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
        CheckpointError: missing (also because a live trainer has not written it yet),
            truncated, corrupted, or not a checkpoint.
    """
    if not os.path.isfile(path):
        run_dir = os.path.dirname(path) or "."
        owner = lock_holder(run_dir)
        if owner is not None:
            raise CheckpointError(f"another trainer (pid {owner}) is using {run_dir} and has not written its "
                                  f"first checkpoint yet; resume once it has stopped")
        if os.path.isfile(os.path.join(run_dir, LOCK)):
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
