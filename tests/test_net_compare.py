"""scripts/net_compare.py: nets grown from a run's net, trained on the same batches, scored on held-out games."""

import os
import subprocess
import sys

import numpy as np
import pytest

from gomoku.game.symmetry import augment
from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.spec import NetSpec
from gomoku.train.checkpoint import write_checkpoint
from gomoku.train.replay import ReplayBuffer

from tests.helpers import ROOT, random_planes, tiny_config

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import net_compare  # noqa: E402


def iterations(rng, counts):
    """A buffer's rows as the trainer adds them: each iteration's positions under every symmetry."""
    buffer = ReplayBuffer(10_000, (4, 6, 6), 36)
    for n in counts:
        planes = random_planes(n, 6, 6, rng)
        pis = rng.dirichlet(np.ones(36), n).astype(np.float32)
        buffer.extend(*augment(planes, pis, rng.choice([-1.0, 1.0], n)))
    return buffer.state()


def tiny_checkpoint(tmp_path, rng):
    config = tiny_config(arch="sizefree", sizefree_blocks=1, sizefree_filters=8)
    model = PolicyValueModel(NetSpec.for_config(config), device="cpu")
    path = str(tmp_path / "checkpoint.pkl")
    write_checkpoint(path, {"config": config.to_dict(), "weights": model.weights(),
                            "buffer": iterations(rng, [9, 7, 5, 6])})
    return path


def test_the_held_out_rows_are_the_newest_whole_iterations():
    state = iterations(np.random.default_rng(1), [9, 7, 5, 6])
    planes = state["planes"]
    assert len(planes) == 8 * 27
    assert net_compare.last_iteration_rows(planes) == 8 * 6
    assert net_compare.held_out_start(planes, 0.15) == 8 * 21  # one iteration is 22% of the rows
    assert net_compare.held_out_start(planes, 0.3) == 8 * 16  # two are needed for 30%
    with pytest.raises(ValueError, match="cannot tell where"):
        net_compare.held_out_start(planes[:-3], 0.15)
    assert net_compare.parse_nets("6x48, 8x64p2") == [(6, 48, 0), (8, 64, 2)]
    with pytest.raises(ValueError, match="is not a net"):
        net_compare.parse_nets("8x")


@pytest.mark.timeout(240)
def test_the_script_compares_nets_on_a_tiny_checkpoint(tmp_path):
    path = tiny_checkpoint(tmp_path, np.random.default_rng(2))
    done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "net_compare.py"), path,
                           "--nets", "1x8,2x8p1", "--steps", "2", "--every", "1", "--batch-size", "16",
                           "--time-s", "0.05"], capture_output=True, text=True, timeout=220)
    assert done.returncode == 0, done.stderr
    rows = [line.split("|") for line in done.stdout.splitlines() if line.startswith("| 1x8 |")
            or line.startswith("| 2x8p1 |")]
    scores = [r for r in rows if len(r) == 8]
    assert len(scores) == 6 and len(rows) == 8  # steps 0, 1 and 2 of each net, then their timings
    # the grown net plays as the base does before training: the same held-out losses at step 0
    assert scores[0][4:6] == scores[3][4:6]
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "net_compare.py"), str(tmp_path / "none")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("net_compare: ")
