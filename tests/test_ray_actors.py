"""The Ray backend of the actors: the same run on a local Ray cluster, and what a killed actor costs.

Skipped where Ray is not installed (``pip install -r requirements-ray.txt``).
"""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from gomoku.actors.backends import make_actors
from gomoku.train.checkpoint import read_checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ["--preset", "6x6x4", "--n-playout", "12", "--games-per-iter", "4", "--batch-size", "32",
        "--buffer-size", "2000", "--updates-per-iter", "1", "--epochs", "2", "--check-freq", "2",
        "--eval-games", "2", "--gate-games", "2", "--pure-playout-start", "20", "--device", "cpu"]


def test_ray_actors_without_ray_say_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if it were not installed
    with pytest.raises(RuntimeError, match="pip install -r requirements-ray.txt"):
        make_actors(2, "cpu", backend="ray")


@pytest.mark.timeout(1200)  # two runs of train.py, each given up to 500 s on a busy machine: a hang guard
def test_train_py_on_a_local_ray_cluster_trains_stops_and_resumes(tmp_path):
    pytest.importorskip("ray")
    run = str(tmp_path / "run")
    # One actor: the command line's way to Ray and back; two actors sharing an iteration are
    # the in-process test's below.
    flags = [*TINY, "--actors", "ray", "--workers", "1", "--check-freq", "1", "--run-dir", run]
    first = subprocess.run([sys.executable, "train.py", *flags, "--iterations", "1"], cwd=ROOT,
                           capture_output=True, text=True, timeout=500)
    assert first.returncode == 0, first.stderr
    assert "1 Ray actor(s)" in first.stdout and "eval vs pure MCTS" in first.stdout
    state = read_checkpoint(os.path.join(run, "checkpoint.pkl"))
    assert state["iteration"] == 1 and state["games"] == 4
    again = subprocess.run([sys.executable, "train.py", "--resume", run, "--iterations", "1"], cwd=ROOT,
                           capture_output=True, text=True, timeout=500)
    assert again.returncode == 0, again.stderr
    assert "Ray actor" in again.stdout
    assert "self-play on 6x6 goes on with the" in again.stdout  # the actors' games in progress went on
    state = read_checkpoint(os.path.join(run, "checkpoint.pkl"))
    assert state["iteration"] == 2 and state["games"] == 8 and state["config"]["actors"] == "ray"


def test_a_killed_ray_actor_loses_its_games_and_nothing_else(tmp_path):
    pytest.importorskip("ray")
    from gomoku.train.config import TrainConfig
    from gomoku.train.pipeline import TrainPipeline
    from gomoku.actors.ray_actors import RayActors

    config = TrainConfig(width=6, height=6, n_in_row=4, n_playout=12, games_per_iter=4, batch_size=32,
                         buffer_size=2000, updates_per_iter=1, epochs=1, check_freq=100, device="cpu")
    lines = []
    pipeline = TrainPipeline(config, str(tmp_path / "run"), log=lines.append)
    actors = RayActors(2, device="cpu", log=lines.append)
    pipeline.actors = actors
    try:
        pipeline.run_iteration()
        assert pipeline.games == 4 and len(pipeline.buffer) == 8 * pipeline.positions
        victim = actors.actor_pids()[0]
        real_start = actors.start_self_play

        def start_then_kill(*args, **kwargs):
            pending = real_start(*args, **kwargs)
            os.kill(victim, signal.SIGKILL)  # mid-iteration: its share has not come back
            return pending

        actors.start_self_play = start_then_kill
        before = (pipeline.games, pipeline.positions, len(pipeline.buffer))
        pipeline.run_iteration()
        actors.start_self_play = real_start
        lost = [line for line in lines if "Ray actor died" in line]
        assert len(lost) == 1 and actors.lost_games == 2
        # Only the other actor's whole games arrived; the buffer holds exactly their positions.
        assert pipeline.games == before[0] + 2
        assert len(pipeline.buffer) == 8 * pipeline.positions > before[2]
        (only,) = pipeline.buffer.buffers.values()
        assert np.allclose(only.pis[:len(only)].sum(axis=1), 1.0, atol=1e-4)
        pipeline.run_iteration()  # Ray restarted the actor: the next iteration has all its games
        assert pipeline.games == before[0] + 2 + 4
    finally:
        actors.close()


def _starting_pool(monkeypatch, status, started_after=None):
    """A RayActors whose one created actor Ray reports with ``status`` (its ``_start_status``),
    without Ray: its start joins after ``started_after`` polls (None: never)."""
    from gomoku.actors import ray_actors

    for name, value in (("STATUS_S", 0.0), ("START_REPORT_S", 0.0), ("NO_CPU_TIMEOUT_S", 0.05),
                        ("START_TIMEOUT_S", 0.2)):
        monkeypatch.setattr(ray_actors, name, value)
    pool = object.__new__(ray_actors.RayActors)
    pool._actors, pool._coming, lines = [], [("handle", "ref")], []
    pool._log = lines.append
    polls = {"n": 0}

    def take_newcomers(timeout, until_all=False):
        polls["n"] += 1
        if started_after is not None and polls["n"] >= started_after and pool._coming:
            pool._coming.clear()
            pool._actors.append(ray_actors._Member("handle", 1, "node"))

    pool._take_newcomers = take_newcomers
    pool._start_status = lambda: status
    return pool, lines


def test_a_start_that_waits_for_a_free_cpu_says_so(monkeypatch):
    from gomoku.actors.ray_actors import StartStatus
    from gomoku.actors.tasks import WorkerError

    pool, _ = _starting_pool(monkeypatch, StartStatus({"PENDING_CREATION": 1}, waiting_for_cpu=1, cpus=2, free=0))
    with pytest.raises(WorkerError) as caught:
        pool._wait_for_the_start()
    message = str(caught.value)
    assert message.startswith("no Ray actor started in ") and "the cluster had no free CPU for them" in message
    assert "Ray lists them as 1 PENDING_CREATION; the cluster has 2 CPU(s), 0 free" in message


def test_a_slow_start_is_waited_for_and_told_apart_from_a_missing_cpu(monkeypatch):
    from gomoku.actors.ray_actors import StartStatus
    from gomoku.actors.tasks import WorkerError

    # Ray holds a CPU for the actor (no demand left): it is starting, slowly; the wait goes on past
    # NO_CPU_TIMEOUT_S, says how it goes, and ends at START_TIMEOUT_S with what Ray said.
    starting = StartStatus({"PENDING_CREATION": 1}, waiting_for_cpu=0, cpus=2, free=0)
    pool, lines = _starting_pool(monkeypatch, starting)
    with pytest.raises(WorkerError) as caught:
        pool._wait_for_the_start()
    message = str(caught.value)
    assert "within 0.2 s, although Ray held a CPU for each: they were still starting" in message
    assert "Ray lists them as 1 PENDING_CREATION" in message and "load average" in message
    assert lines and "0 of 1 actor(s) started after" in lines[0] and "waiting (up to 0.2 s" in lines[0]
    # One that starts in time joins the pool.
    pool, _ = _starting_pool(monkeypatch, starting, started_after=3)
    pool._wait_for_the_start()
    assert len(pool._actors) == 1 and not pool._coming
