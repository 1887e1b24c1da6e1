"""The Ray backend on a cluster of two nodes (two raylets on this machine, one CPU each): the
actors spread over both, a node lost in the middle of an iteration costs none of its games, and
a node that comes back gets an actor again.

Skipped where Ray is not installed (``pip install -r requirements-ray.txt``).
"""

import os
import signal
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from gomoku.train.config import TrainConfig  # noqa: E402
from gomoku.train.pipeline import TrainPipeline  # noqa: E402
from gomoku.actors.ray_actors import RayActors  # noqa: E402

# How long a node that joined may take to get an actor: Ray starts a worker process there, which
# imports Paddle (seconds when idle, minutes with every core busy several times over).
PLACED_S = 240
# The cluster declares a node dead after three missed health checks a second apart, each given two
# seconds: a killed raylet is known dead within about five seconds (Ray's default is about thirty),
# while a live one on a busy machine still has seconds to answer.
HEALTH_CHECKS = {"health_check_initial_delay_ms": 1000, "health_check_period_ms": 1000,
                 "health_check_timeout_ms": 2000, "health_check_failure_threshold": 3}


@pytest.fixture
def cluster():
    """A head node of one CPU; the test adds the others. Everything stops when the test ends."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "_system_config": HEALTH_CHECKS})
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def whole_games_only(pipeline: TrainPipeline) -> None:
    """The buffer holds exactly the augmented positions of the games that arrived, with full pi."""
    assert len(pipeline.buffer) == 8 * pipeline.positions
    (only,) = pipeline.buffer.buffers.values()
    assert np.allclose(only.pis[:len(only)].sum(axis=1), 1.0, atol=1e-4)


@pytest.mark.timeout(900)  # a hang guard, for a machine whose cores are all busy
@pytest.mark.parametrize("graceful", [True, False], ids=["stopped", "killed"])
def test_a_lost_node_costs_no_games_and_a_returning_node_gets_actors(cluster, tmp_path, graceful):
    """``graceful``: the node's raylet is stopped (``ray stop``: Ray knows at once that the node is
    gone), or killed (a machine that dies: the actor is unreachable first, and gone later)."""
    worker = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    head = cluster.head_node.node_id
    config = TrainConfig(width=6, height=6, n_in_row=4, n_playout=12, games_per_iter=4, batch_size=32,
                         buffer_size=20000, updates_per_iter=1, epochs=1, check_freq=100, device="cpu",
                         sizefree_blocks=1, sizefree_filters=8)
    lines = []
    pipeline = TrainPipeline(config, str(tmp_path / "run"), log=lines.append)
    actors = RayActors(0, device="cpu", address=cluster.address, log=lines.append)  # one per CPU
    pipeline.actors = actors
    try:
        assert sorted(actors.actor_nodes()) == sorted([head, worker.node_id])
        pipeline.run_iteration()
        assert pipeline.games == 4

        (victim,) = [pid for pid, node in zip(actors.actor_pids(), actors.actor_nodes()) if node == worker.node_id]
        real_refresh = actors.refresh

        def refresh_then_lose_a_node():
            # Mid-iteration: the weights are out and the batch is split over both actors; the
            # node goes before its actor's share comes back (a share that is done early returns
            # at once, so losing the node after the start would race with it).
            real_refresh()
            actors.refresh = real_refresh
            cluster.remove_node(worker, allow_graceful=graceful)
            try:  # a lost machine takes its processes with it; here one can outlive its raylet
                os.kill(victim, signal.SIGKILL)
            except ProcessLookupError:
                pass

        actors.refresh = refresh_then_lose_a_node
        pipeline.run_iteration()
        # The head's actor played the lost share again: the iteration has all its games.
        assert pipeline.games == 8 and actors.lost_games == 0, lines
        assert [line for line in lines if "node was lost" in line], lines
        assert actors.actor_nodes() == [head], lines
        whole_games_only(pipeline)
        pipeline.run_iteration()  # on the head alone
        assert pipeline.games == 12

        back = cluster.add_node(num_cpus=1)
        deadline = time.monotonic() + PLACED_S
        while back.node_id not in actors.actor_nodes():
            assert time.monotonic() < deadline, f"no actor on the node that came back: {lines}"
            actors.refresh()
            time.sleep(0.5)
        pipeline.run_iteration()
        assert pipeline.games == 16 and actors.lost_games == 0
        assert sorted(actors.actor_nodes()) == sorted([head, back.node_id])
        whole_games_only(pipeline)
    finally:
        actors.close()
