"""Growing a size-free net: the grown net plays as the small one did, and can learn with its new parts."""

import json
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from gomoku.net.grow import check_growable, grow_weights
from gomoku.net.inference import InferencePredictor
from gomoku.net.modelfile import read_model_file
from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.spec import NetSpec
from gomoku.train.checkpoint import read_checkpoint
from gomoku.train.pipeline import TrainPipeline

from tests.helpers import ROOT, TINY, random_planes, tiny_config, train_in_process, trained

SMALL = NetSpec(9, 9, 5, "sizefree", 2, 8, ((9, 9),))
LARGE = replace(SMALL, res_blocks=3, res_filters=12)


def trained_small(rng):
    """A small net whose every weight, batch-norm statistic included, is away from its initial value."""
    return trained(SMALL, rng)


def grown(small, spec=LARGE):
    large = PolicyValueModel(spec, device="cpu")
    large.set_weights(grow_weights(small.spec, small.weights(), spec, large.weights()))
    return large


@pytest.mark.parametrize("size", [9, 15])
def test_a_grown_net_plays_exactly_as_the_small_one(size, tmp_path):
    rng = np.random.default_rng(1)
    small = trained_small(rng)
    large = grown(small)
    planes = random_planes(12, size, size, rng)
    log_p, v = small.predict(planes)
    big_log_p, big_v = large.predict(planes)
    assert np.abs(v).max() > 0.05 and np.exp(log_p).max() > 2.0 / (size * size)  # not a trivial net
    np.testing.assert_allclose(np.exp(big_log_p), np.exp(log_p), atol=1e-5)
    np.testing.assert_allclose(big_v, v, atol=1e-5)
    large.export_inference(str(tmp_path))  # the exported path, which self-play uses, agrees too
    fast_log_p, fast_v = InferencePredictor(str(tmp_path)).run(planes)
    np.testing.assert_allclose(np.exp(fast_log_p), np.exp(log_p), atol=1e-4)
    np.testing.assert_allclose(fast_v, v, atol=1e-4)


def test_growing_only_channels_or_only_blocks_keeps_the_play_too():
    rng = np.random.default_rng(2)
    small = trained_small(rng)
    planes = random_planes(6, 9, 9, rng)
    for spec in (replace(SMALL, res_filters=10), replace(SMALL, res_blocks=4)):
        np.testing.assert_allclose(grown(small, spec).predict(planes)[1], small.predict(planes)[1], atol=1e-5)


def test_the_new_channels_and_blocks_learn():
    rng = np.random.default_rng(3)
    large = grown(trained_small(rng))
    planes = random_planes(32, 9, 9, rng)
    empty = 1.0 - planes[:, 0] - planes[:, 1]
    pis = (empty / empty.sum(axis=(1, 2), keepdims=True)).reshape(32, -1)
    zs = rng.choice([-1.0, 1.0], 32).astype(np.float32)
    before = large.weights()
    assert not before["policy_conv.weight"][:, 8:].any() and not before["blocks.2.bn2.weight"].any()
    for _ in range(3):
        large.train_step(planes, pis, zs, 1e-2)
    after = large.weights()
    # the zero weights that read the new channels and the new block's zero scale move off zero
    assert np.abs(after["policy_conv.weight"][:, 8:]).max() > 1e-4
    assert np.abs(after["value_fc1.weight"][12:20]).max() > 1e-4
    assert np.abs(after["blocks.0.conv1.weight"][:8, 8:]).max() > 1e-4
    assert np.abs(after["blocks.2.bn2.weight"]).max() > 1e-4


def test_a_net_grows_but_never_shrinks():
    with pytest.raises(ValueError, match="grow but not shrink"):
        check_growable(LARGE, SMALL)
    with pytest.raises(ValueError, match="grow but not shrink"):
        check_growable(SMALL, replace(SMALL, res_blocks=4, res_filters=6))
    with pytest.raises(ValueError, match="already has 2 blocks of 8"):
        check_growable(SMALL, SMALL)
    with pytest.raises(ValueError, match="only size-free"):
        check_growable(NetSpec(9, 9, 5, "resnet", 2, 8), replace(LARGE, arch="resnet"))
    with pytest.raises(ValueError, match="does not fit"):
        small = PolicyValueModel(SMALL, device="cpu").weights()
        del small["blocks.1.conv2.weight"]
        grow_weights(SMALL, small, LARGE, PolicyValueModel(LARGE, device="cpu").weights())


def small_model_file(tmp_path):
    path = str(tmp_path / "small.npz")
    PolicyValueModel(replace(SMALL, width=6, height=6, n_in_row=4, trained_sizes=((6, 6),)),
                     device="cpu").save(path)
    return path


def test_a_run_grows_its_initial_model_and_resumes_with_the_grown_net(tmp_path):
    path = small_model_file(tmp_path)
    run = str(tmp_path / "run")
    lines = []
    config = tiny_config(sizefree_blocks=3, sizefree_filters=12, game_batch_num=2)
    pipeline = TrainPipeline(config, run, log=lines.append, init_model=path, grow=True)
    assert any("grew small.npz from 2 blocks of 8 channels to 3 of 12" in line for line in lines)
    pipeline.run(iterations=1)
    spec, _ = read_model_file(os.path.join(run, "current_model.npz"))
    assert (spec.res_blocks, spec.res_filters) == (3, 12)
    again = TrainPipeline.resume(run, log=lambda s: None)
    assert (again.model.spec.res_blocks, again.model.spec.res_filters) == (3, 12)
    again.run()
    with open(os.path.join(run, "metrics.jsonl")) as f:
        starts = [json.loads(line) for line in f if '"start"' in line]
    assert starts[0]["init_model"] == "small.npz" and starts[0]["grown_from"] == "2x8"


def test_a_run_from_a_model_records_that_models_net_so_that_it_resumes(tmp_path):
    # the settings say 4 blocks of 32 channels; the model has 2 of 8, and its net is the run's
    run = str(tmp_path / "run")
    TrainPipeline(tiny_config(game_batch_num=2), run, log=lambda s: None,
                  init_model=small_model_file(tmp_path)).run(iterations=1)
    config = read_checkpoint(os.path.join(run, "checkpoint.pkl"))["config"]
    assert (config["sizefree_blocks"], config["sizefree_filters"]) == (2, 8)
    spec, _ = read_model_file(os.path.join(run, "current_model.npz"))
    assert (spec.res_blocks, spec.res_filters) == (2, 8)
    TrainPipeline.resume(run, log=lambda s: None).run()


def test_train_py_grows_only_when_asked(tmp_path, capsys):
    path = small_model_file(tmp_path)
    # the refusals: usage errors of the command line, in this process
    code, err = train_in_process(capsys, *TINY, "--run-dir", str(tmp_path / "a"), "--init-model", path,
                                 "--sizefree-filters", "16")
    assert code == 2 and "has res_filters 8" in err and "--grow" in err
    code, err = train_in_process(capsys, *TINY, "--run-dir", str(tmp_path / "b"), "--grow")
    assert code == 2 and "needs a model to grow" in err
    code, err = train_in_process(capsys, *TINY, "--run-dir", str(tmp_path / "c"), "--init-model", path, "--grow",
                                 "--sizefree-blocks", "1")
    assert code == 2 and "grow but not shrink" in err
    # the growth: train.py itself
    ok = subprocess.run([sys.executable, "train.py", *TINY, "--run-dir", str(tmp_path / "d"), "--init-model", path,
                         "--grow", "--sizefree-blocks", "3", "--sizefree-filters", "8", "--iterations", "1"],
                        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert "grew small.npz from 2 blocks of 8 channels to 3 of 8" in ok.stdout
