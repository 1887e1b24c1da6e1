"""The learner (gomoku/train/learner.py), the replay window, the average of the weights, the gate
and the live view: what each computes, and that a run records them and resumes them."""

import json
import os

import numpy as np
import pytest

from gomoku.train.replay import ReplayBuffer, SizedReplayBuffer, replay_window
from tests.helpers import tiny_config


# ------------------------------------------------------------------ the window
def test_the_window_is_everything_up_to_its_floor_then_grows_slower_than_the_data():
    assert replay_window(5000, capacity=10_000, floor=0) == 10_000  # no floor: the whole buffer
    assert replay_window(800, capacity=10_000, floor=1000) == 800
    assert replay_window(1000, capacity=10_000, floor=1000) == 1000
    sizes = [replay_window(n, capacity=10**9, floor=1000) for n in (2000, 4000, 8000, 16000)]
    assert all(a < b for a, b in zip(sizes, sizes[1:]))  # it grows ...
    assert all(size < n for size, n in zip(sizes, (2000, 4000, 8000, 16000)))  # ... slower than the data
    # KataGo's numbers: with a floor of 250,000 rows and 1,000,000 made, about 494,000.
    assert replay_window(1_000_000, capacity=10**9, floor=250_000) == pytest.approx(494_000, rel=0.01)
    assert replay_window(10**9, capacity=20_000, floor=1000) == 20_000  # never past the buffer


def test_a_sample_from_the_window_draws_only_the_newest_rows():
    buffer = ReplayBuffer(capacity=50, planes_shape=(1, 2, 2), n_moves=4)
    for start in (0, 30, 60):  # wraps around the ring
        zs = np.arange(start, start + 30, dtype=np.float32)
        buffer.extend(np.zeros((30, 1, 2, 2), np.uint8), np.zeros((30, 4), np.float32), zs)
    rng = np.random.default_rng(0)
    drawn = np.concatenate([buffer.sample(5, rng, newest=10)[2] for _ in range(40)])
    assert set(drawn.tolist()) == set(range(80, 90))  # the ten newest of 90
    assert set(buffer.sample(50, rng)[2].tolist()) == set(range(40, 90))  # no window: all it holds
    assert len(set(buffer.sample(8, rng, newest=3)[2].tolist())) == 8  # a window smaller than a batch widens


# ------------------------------------------------------------------ the learner
class CountingBuffer:
    """A buffer of random positions that counts the mini-batches drawn from it."""

    def __init__(self, n=400, size=6, channels=4, seed=0):
        rng = np.random.default_rng(seed)
        self.inner = SizedReplayBuffer(n, [(size, size)], channels)
        planes = (rng.random((n, channels, size, size)) < 0.2).astype(np.float32)
        pis = rng.dirichlet(np.ones(size * size), n).astype(np.float32)
        self.inner.extend(planes, pis, rng.choice([-1.0, 1.0], n).astype(np.float32))
        self.draws = []

    def sample(self, n, rng, sizes=None, newest=0):
        self.draws.append(newest)
        return self.inner.sample(n, rng, sizes, newest)

    def can_sample(self, n, sizes=None):
        return self.inner.can_sample(n, sizes)


def make_learner(**overrides):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec
    from gomoku.train.learner import Learner

    config = tiny_config(**overrides).validate()
    model = PolicyValueModel(NetSpec.for_config(config), device="cpu")
    return Learner(model, config, np.random.default_rng(0)), model


def test_each_step_of_an_update_draws_a_fresh_batch_from_the_window():
    learner, _ = make_learner(epochs=3, kl_targ=10.0, average_decay=0.0)
    buffer = CountingBuffer()
    result = learner.update(buffer, None, window=200)
    assert result.steps == 3 and result.rows == 3 * 32 and buffer.draws == [200, 200, 200]
    assert result.loss == pytest.approx(result.value_loss + result.policy_loss, abs=1e-4)
    assert result.lr == pytest.approx(learner.config.lr) and result.kl >= 0

    repeating, _ = make_learner(epochs=3, kl_targ=10.0, fresh_batches=False, average_decay=0.0)
    buffer = CountingBuffer()
    assert repeating.update(buffer, None, window=0).steps == 3 and buffer.draws == [0]  # one batch, three steps


def test_the_kl_rule_stops_an_update_and_shrinks_the_step():
    learner, _ = make_learner(epochs=5, kl_targ=1e-9, lr=0.05, average_decay=0.0)
    result = learner.update(CountingBuffer(), None, window=0)
    assert result.steps == 1 and result.kl > 4e-9 and learner.lr_multiplier == pytest.approx(1 / 1.5)


def test_the_average_plays_and_lags_the_trained_weights():
    learner, model = make_learner(epochs=4, kl_targ=10.0, lr=0.01, average_decay=0.5)
    assert learner.playing is not model
    start = {k: v.copy() for k, v in model.weights().items()}
    buffer = CountingBuffer()
    learner.update(buffer, None, window=0)
    learner.refresh_playing(buffer, None, window=0)
    name = next(k for k in start if k.endswith("weight") and start[k].ndim == 4)
    trained, averaged = model.weights()[name], learner.playing.weights()[name]
    # the average lies between the start and the trained weights, nearer the latter after 4 steps at 0.5
    assert 0.5 < np.linalg.norm(averaged - start[name]) / np.linalg.norm(trained - start[name]) < 1.0
    # its batch norm statistics were measured anew, so they differ from the trained net's running ones
    mean = next(k for k in start if k.endswith("._mean"))
    assert not np.allclose(learner.playing.weights()[mean], model.weights()[mean])


def test_batch_norm_statistics_are_those_of_the_layers_inputs():
    from gomoku.net.averaging import WeightAverage, recompute_batch_norm
    from gomoku.net.backend import paddle

    net = paddle.nn.Sequential(paddle.nn.Conv2D(2, 3, 1), paddle.nn.BatchNorm2D(3))
    x = np.random.default_rng(1).normal(2.0, 3.0, (40, 2, 4, 4)).astype(np.float32)
    assert recompute_batch_norm(net, [x[:25], x[25:]]) == 40
    with paddle.no_grad():
        inputs = net[0](paddle.to_tensor(x)).numpy()
    state = net.state_dict()
    assert np.allclose(state["1._mean"].numpy(), inputs.mean(axis=(0, 2, 3)), atol=1e-4)
    assert np.allclose(state["1._variance"].numpy(), inputs.var(axis=(0, 2, 3)), rtol=1e-3)

    average = WeightAverage(0.75, {"w": np.zeros(2), "bn._mean": np.zeros(2)})
    average.add({"w": np.ones(2), "bn._mean": np.full(2, 5.0)})
    assert np.allclose(average.weights["w"], 0.25) and np.allclose(average.weights["bn._mean"], 5.0)
    with pytest.raises(ValueError, match="decay"):
        WeightAverage(1.0, {})


def test_the_schedule_cuts_the_step_when_neither_probe_nor_gate_improves():
    learner, _ = make_learner(lr_patience=3, lr_cut=0.5, lr_scale_min=0.25, average_decay=0.0)
    assert learner.after_iteration(2.0, None) is None  # the first probe is the best yet
    assert [learner.after_iteration(2.0, None) for _ in range(2)] == [None, None]
    line = learner.after_iteration(1.999, None)  # better by less than lr_min_delta: flat
    assert "x1 -> x0.5" in line and learner.schedule.lr_scale == 0.5
    for _ in range(2):
        assert learner.after_iteration(2.0, None) is None
    assert learner.after_iteration(2.0, True) is None  # a passed gate is progress
    assert learner.after_iteration(1.5, None) is None  # so is a better probe
    for _ in range(3):
        learner.after_iteration(1.5, False)
    assert learner.schedule.lr_scale == 0.25
    for _ in range(6):
        assert learner.after_iteration(1.5, False) is None  # no cut below lr_scale_min
    assert learner.schedule.lr_scale == 0.25
    multiplier = learner.lr_multiplier
    assert learner.update(CountingBuffer(), None, 0).lr == pytest.approx(learner.config.lr * multiplier * 0.25)


# ------------------------------------------------------------------ the run
def test_a_run_gates_records_its_curve_and_resumes_an_old_checkpoint(tmp_path):
    from gomoku.train.checkpoint import read_checkpoint, write_checkpoint
    from gomoku.train.pipeline import TrainPipeline
    from gomoku.actors.tasks import MatchGame

    run = str(tmp_path / "run")
    lines = []
    pipeline = TrainPipeline(tiny_config(check_freq=1, gate_games=4, eval_games=2, average_decay=0.9,
                                         window_floor=100), run, log=lines.append)
    pipeline.run(iterations=2)
    records = [json.loads(line) for line in open(os.path.join(run, "metrics.jsonl"))]
    updated = [r for r in records if r["event"] == "iteration" and "loss" in r]
    assert updated and all({"value_loss", "policy_loss", "lr", "lr_scale", "window", "reuse"} <= r.keys()
                           for r in updated)
    gates = [r["gate"] for r in records if r["event"] == "evaluation"]
    assert gates[0].get("first") and gates[1]["games"] == 4
    assert any("gate vs best" in line and "4 games" in line and "s)" in line for line in lines)
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(run))  # the live view

    # A gate the model loses keeps the best model; one it wins replaces it.
    best = os.path.join(run, "best_model.npz")
    before = os.path.getmtime(best), open(best, "rb").read()

    def scored(a_wins):
        def match(a, b, geometry, openings, seed, **kwargs):
            assert b.model == best
            colours = [1 if i % 2 == 0 else 2 for i in range(len(openings))]
            return [MatchGame(i, [], [], c, c if a_wins else 3 - c) for i, c in enumerate(colours)], None
        return match

    pipeline.actors.match = scored(False)
    gate = pipeline.gate((6, 6, 4))
    assert not gate["passed"] and gate["as_black"] == [0, 0, 2] and open(best, "rb").read() == before[1]
    pipeline.actors.match = scored(True)
    assert pipeline.gate((6, 6, 4))["passed"]

    # A checkpoint without the learner's state: one batch an update, no average, no gate, no schedule.
    path = os.path.join(run, "checkpoint.pkl")
    state = read_checkpoint(path)
    for key in ("learner", "rows_made"):
        del state[key]
    for key in ("fresh_batches", "average_decay", "gate_games", "window_floor", "lr_patience"):
        del state["config"][key]
    write_checkpoint(path, state)
    old = TrainPipeline.resume(run, log=lambda s: None)
    assert (old.config.fresh_batches, old.config.average_decay, old.config.gate_games) == (False, 0.0, 0)
    assert old.learner.playing is old.model and old.rows_made == 8 * old.positions
    old.run(iterations=1)
    assert TrainPipeline.resume(run, log=lambda s: None).iteration == 3
