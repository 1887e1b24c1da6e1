"""A run from a trained model goes on at its run's step and waits for a share of its buffer before updating
(docs/training.md, "Stopping and resuming": "Going on from a model")."""

import json
import os

import pytest

from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.spec import NetSpec
from gomoku.train.checkpoint import read_checkpoint
from gomoku.train.pipeline import TrainPipeline
from gomoku.train.warm_start import first_update_at, record_of, starting_lr_multiplier

from tests.helpers import tiny_config

TINY_NET = NetSpec(6, 6, 4, "sizefree", 1, 8, ((6, 6),))


def model_with_record(tmp_path, record):
    path = str(tmp_path / "model.npz")
    PolicyValueModel(TINY_NET, device="cpu").save(path)
    if record is not None:
        (tmp_path / "model.json").write_text(record if isinstance(record, str) else json.dumps(record))
    return path


def metrics(run):
    with open(os.path.join(run, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("record, flag, expected, source", [
    ({"lr_multiplier": 0.296}, 0.0, 0.296, "the model's record"),
    ({"lr_multiplier": 0.296}, 0.5, 0.5, "--lr-multiplier-start"),
    ({"model": "model.npz"}, 0.0, 1.0, "the default"),  # a record from before the step was kept
    ({"lr_multiplier": -2}, 0.0, 1.0, "the default"),
    ({"lr_multiplier": True}, 0.0, 1.0, "the default"),
    ("{not json", 0.0, 1.0, "the default"),
    (None, 0.0, 1.0, "the default"),
])
def test_the_starting_step_comes_from_the_flag_then_the_models_record(tmp_path, record, flag, expected, source):
    path = model_with_record(tmp_path, record)
    assert starting_lr_multiplier(tiny_config(lr_multiplier_start=flag), record_of(path)) == (expected, source)
    # a run from random weights has no record to read
    assert starting_lr_multiplier(tiny_config(lr_multiplier_start=flag), None)[0] == (flag or 1.0)


def test_the_first_update_waits_for_a_share_of_the_buffer_only_from_a_model():
    config = tiny_config(batch_size=32, buffer_size=600, warm_start_fill=0.5)
    assert first_update_at(config, from_model=False) == 32
    assert first_update_at(config, from_model=True) == 300
    assert first_update_at(tiny_config(warm_start_fill=0.0), from_model=True) == tiny_config().batch_size


@pytest.mark.parametrize("bad", [{"warm_start_fill": 1.5}, {"warm_start_fill": -0.1}, {"lr_multiplier_start": -1.0}])
def test_bad_warm_start_settings_are_refused(bad):
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        tiny_config(**bad).validate()


@pytest.mark.timeout(240)
def test_a_run_from_a_model_goes_on_at_its_step_and_updates_once_the_buffer_holds_its_share(tmp_path):
    path = model_with_record(tmp_path, {"lr_multiplier": 0.25})
    run = str(tmp_path / "run")
    lines = []
    config = tiny_config(buffer_size=600, warm_start_fill=0.5, check_freq=1000, game_batch_num=30)
    pipeline = TrainPipeline(config, run, log=lines.append, init_model=path)
    assert pipeline.lr_multiplier == 0.25 and pipeline.first_update_at == 300
    assert any("starts at x0.25 (the model's record)" in line and "holds 300 positions" in line for line in lines)
    buffers = [0]
    while buffers[-1] <= 300:  # a 6x6 game records 8 augmented positions a move: a few iterations
        pipeline.run(iterations=1)
        buffers.append(metrics(run)[-2]["buffer"])  # the iteration's record, then the stop
        assert len(buffers) < 20, "the buffer does not fill"
    pipeline.run(iterations=1)  # its updates sample the buffer that now holds more than 300
    iterations = [r for r in metrics(run) if r["event"] == "iteration"]
    assert "loss" in iterations[-1] and "kl" in iterations[-1]
    assert not any("loss" in r for r in iterations[:-1]), "an update before the buffer held its share"

    # the threshold is the run's: a resume keeps it, and records where the run began
    again = TrainPipeline.resume(run, log=lambda s: None)
    assert again.first_update_at == 300
    again.run(iterations=1)
    start = next(r for r in metrics(run) if r["event"] == "start")
    assert start["init_model"] == "model.npz" and start["lr_multiplier"] == 0.25


@pytest.mark.timeout(120)
def test_a_run_from_random_weights_updates_as_soon_as_the_buffer_holds_a_batch(tmp_path):
    run = str(tmp_path / "run")
    pipeline = TrainPipeline(tiny_config(warm_start_fill=0.9, check_freq=1000), run, log=lambda s: None)
    assert pipeline.lr_multiplier == 1.0 and pipeline.first_update_at == 32
    first = pipeline.run_iteration()
    assert first["buffer"] > 32  # 2 games of 6x6, 8 positions a move
    assert "loss" in pipeline.run_iteration()
    assert read_checkpoint(os.path.join(run, "checkpoint.pkl"))["first_update_at"] == 32
