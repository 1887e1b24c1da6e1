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
        "--eval-games", "2", "--gate-games", "2", "--pure-playout-start", "20", "--device", "cpu"]


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
            "from gomoku.actors.worker_start import start_worker\n"
            "start_worker(os.getppid() + 1)\n"
            "print('still here')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "still here" not in proc.stdout


def _train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "train.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=250)


def _tiny_pipeline(run_dir: str):
    from gomoku.train.config import TrainConfig
    from gomoku.train.pipeline import TrainPipeline

    config = TrainConfig(width=6, height=6, n_in_row=4, n_playout=8, games_per_iter=2, batch_size=16,
                         buffer_size=600, updates_per_iter=1, epochs=1, check_freq=50, workers=1, device="cpu")
    return TrainPipeline(config, run_dir, log=lambda line: None)


def test_taking_the_lock_removes_the_temporary_files_of_killed_writes(tmp_path):
    from gomoku.train.checkpoint import lock_run_dir

    stale = ["checkpoint.pkl.k2x_9a1b.tmp", "current_model.npz.3hf8q0zz.tmp", "best_model.npz.abc.tmp"]
    for name in [*stale, "notes.tmp", "checkpoint.pkl"]:
        (tmp_path / name).write_bytes(b"x")
    lock_run_dir(str(tmp_path)).close()
    assert sorted(os.listdir(tmp_path)) == ["checkpoint.pkl", "lock", "notes.tmp"]


@pytest.mark.timeout(300)
def test_a_resume_rewrites_the_model_from_the_checkpoint_and_an_early_stop_leaves_no_folder(tmp_path):
    from gomoku.net.modelfile import read_model_file
    from gomoku.train.checkpoint import read_checkpoint

    run = str(tmp_path / "run")
    pipeline = _tiny_pipeline(run)
    pipeline.run(iterations=1)
    weights = read_checkpoint(os.path.join(run, "checkpoint.pkl"))["learner"]["average"]  # the weights that play
    # A kill between the checkpoint and the model: the model is a step behind the checkpoint.
    stale = _tiny_pipeline(str(tmp_path / "other"))
    stale.model.save(os.path.join(run, "current_model.npz"))
    assert not os.path.exists(tmp_path / "other")  # built, never run: nothing on disk
    from gomoku.train.pipeline import TrainPipeline

    TrainPipeline.resume(run, log=lambda line: None).run(iterations=0)
    saved = read_model_file(os.path.join(run, "current_model.npz"))[1]
    assert all((saved[name] == value).all() for name, value in weights.items())

    # Stopped before its first checkpoint: the run's folder goes, unless something else is in it.
    for extra in (None, "notes.txt"):
        early = str(tmp_path / f"early-{extra}")
        pipeline = _tiny_pipeline(early)

        def stop():
            raise KeyboardInterrupt

        pipeline.run_iteration = stop
        if extra:
            os.makedirs(early)
            open(os.path.join(early, extra), "w").close()
        pipeline.run(iterations=1)
        assert (os.listdir(early) if extra else os.path.exists(early)) == ([extra] if extra else False)


@pytest.mark.timeout(300)
def test_the_trainer_gives_the_right_reason_in_one_line(tmp_path):
    from gomoku.train.checkpoint import lock_run_dir

    # Another trainer in its first iteration: it holds the lock and has no checkpoint yet.
    busy = str(tmp_path / "busy")
    held = lock_run_dir(busy)
    try:
        resumed = _train("--resume", busy)
    finally:
        held.close()
    assert resumed.returncode == 2
    assert resumed.stderr.strip() == (f"error: another trainer (pid {os.getpid()}) is using {busy} and has not "
                                      f"written its first checkpoint yet; resume once it has stopped")
    # --run-dir on an existing run: one line, no usage.
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "checkpoint.pkl").write_bytes(b"x")
    again = _train("--preset", "6x6x4", "--run-dir", str(taken))
    assert again.returncode == 2
    assert again.stderr.strip() == f"error: {taken} already holds a run: use --resume {taken}, or another --run-dir"
