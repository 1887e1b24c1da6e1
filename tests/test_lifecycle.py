"""The trainer's processes and files when it is killed or stopped early: no orphaned worker, no
stale temporary file, no empty run directory, one line instead of a traceback."""

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ["--preset", "6x6x4", "--n-playout", "12", "--games-per-iter", "2", "--batch-size", "32",
        "--buffer-size", "2000", "--updates-per-iter", "1", "--epochs", "2", "--check-freq", "2",
        "--eval-games", "2", "--pure-playout-start", "20", "--device", "cpu"]


def _procs():
    """(pid, parent pid, command line, environment) of every process we may read."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except (OSError, IndexError, ValueError):
            continue
        yield int(name), ppid, cmdline, environ


def _marked(mark: str) -> list[int]:
    """The processes that carry ``mark`` in their environment: a trainer and all it started."""
    return [pid for pid, _, _, environ in _procs() if f"GOMOKU_TEST_MARK={mark}".encode() in environ]


def _workers_of(pid: int) -> list[int]:
    return [p for p, ppid, cmdline, _ in _procs() if ppid == pid and b"spawn_main" in cmdline]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.timeout(300)
@pytest.mark.parametrize("delay", [0.0, 1.0])
def test_a_trainer_killed_while_its_workers_start_leaves_none_behind(tmp_path, delay):
    # The trainer is killed (-9: nothing of its own runs) the moment its workers appear, or a
    # second later, while they still import their modules: before the fix they lived on under PID 1.
    mark = uuid.uuid4().hex
    env = dict(os.environ, GOMOKU_TEST_MARK=mark)
    proc = subprocess.Popen([sys.executable, "train.py", *TINY, "--workers", "2", "--run-dir",
                             str(tmp_path / "run")], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 200
        while not _workers_of(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _workers_of(proc.pid), "the trainer started no worker"
        time.sleep(delay)
        proc.kill()
        proc.wait(30)
        deadline = time.monotonic() + 5
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _marked(mark)
        assert not left, f"still running 5 s after the trainer's kill: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _marked(mark):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_worker_whose_parent_is_gone_leaves_at_once():
    # start_worker passed a pid that is not its parent's: it exits before importing anything.
    code = ("import os, sys\n"
            "from gomoku.train.worker_start import start_worker\n"
            "start_worker(os.getppid() + 1)\n"
            "print('still here')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "still here" not in proc.stdout
