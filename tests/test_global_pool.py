"""Global pooling blocks in the size-free net: off, nothing changes; on, any board size, both
evaluation paths, the model file, and growing a net without them into one with them."""

import json
from dataclasses import replace

import numpy as np
import pytest

from gomoku.net.grow import check_growable, grow_weights
from gomoku.net.modelfile import read_model_file
from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.spec import NetSpec, pooling_blocks
from gomoku.train.config import TrainConfig

from tests.helpers import ROOT, random_planes, trained

PLAIN = NetSpec(9, 9, 5, "sizefree", 2, 8, ((9, 9),))
POOLED = replace(PLAIN, res_blocks=3, res_filters=12, global_pool=2)


def test_pooling_blocks_are_spread_through_the_trunk():
    assert pooling_blocks(6, 2) == (2, 4) and pooling_blocks(8, 1) == (4,) and pooling_blocks(3, 3) == (0, 1, 2)
    assert pooling_blocks(6, 0) == ()


def test_without_pooling_the_net_and_its_file_are_as_before(tmp_path):
    # the same parameters as a net of before the option: the shipped model's weights fit it exactly
    spec, weights = read_model_file(f"{ROOT}/models/gomoku_15x15_5.npz")
    assert spec.global_pool == 0
    model = PolicyValueModel(spec, device="cpu")
    assert set(model.weights()) == set(weights)
    model.set_weights(weights)
    path = tmp_path / "again.npz"
    model.save(str(path))
    with np.load(path) as data:
        meta = json.loads(str(data["__meta__"]))
    assert "global_pool" not in meta  # a file without pooling reads as files always have
    assert read_model_file(str(path))[0] == spec


@pytest.mark.parametrize("size", [9, 15])
def test_a_pooled_net_plays_any_board_alike_on_both_paths_and_from_its_file(size, tmp_path):
    rng = np.random.default_rng(size)
    model = trained(POOLED, rng)
    planes = random_planes(8, size, size, rng)
    log_p, v = model.predict(planes)  # the exported predictor, height and width left open
    slow_log_p, slow_v = model.predict_dygraph(planes)
    # oneDNN and the dygraph kernels sum in other orders: float32 differences of a few 1e-5 (3e-5 seen
    # on 15x15), far below what a path that dropped a layer would give
    np.testing.assert_allclose(np.exp(log_p), np.exp(slow_log_p), atol=2e-4)
    np.testing.assert_allclose(v, slow_v, atol=2e-4)
    path = str(tmp_path / "pooled.npz")
    model.save(path)
    again = PolicyValueModel.load(path, device="cpu")
    assert again.spec.global_pool == 2
    np.testing.assert_allclose(again.predict(planes)[1], v, atol=1e-6)


def test_the_pooling_sees_the_board_size():
    # a uniform input has the same mean and max on any board: only the size-scaled mean differs
    from gomoku.net.backend import paddle

    model = trained(POOLED, np.random.default_rng(5))
    block = model.net.blocks[pooling_blocks(3, 2)[0]]
    small = block(paddle.to_tensor(np.ones((1, 12, 9, 9), np.float32))).numpy()[0, :, 4, 4]
    large = block(paddle.to_tensor(np.ones((1, 12, 15, 15), np.float32))).numpy()[0, :, 7, 7]
    assert np.abs(small - large).max() > 1e-3


@pytest.mark.parametrize("small_spec", [PLAIN, replace(PLAIN, global_pool=1)])
def test_growing_into_pooling_keeps_the_play_and_the_pooling_learns(small_spec):
    rng = np.random.default_rng(7)
    small = trained(small_spec, rng)
    large = PolicyValueModel(POOLED, device="cpu")
    large.set_weights(grow_weights(small_spec, small.weights(), POOLED, large.weights()))
    for size in (9, 15):
        planes = random_planes(10, size, size, rng)
        log_p, v = small.predict(planes)
        assert np.abs(v).max() > 0.05  # not a trivial net
        big_log_p, big_v = large.predict(planes)
        np.testing.assert_allclose(np.exp(big_log_p), np.exp(log_p), atol=1e-5)
        np.testing.assert_allclose(big_v, v, atol=1e-5)
    planes = random_planes(32, 9, 9, rng)
    empty = 1.0 - planes[:, 0] - planes[:, 1]
    pis = (empty / empty.sum(axis=(1, 2), keepdims=True)).reshape(32, -1)
    zs = rng.choice([-1.0, 1.0], 32).astype(np.float32)
    if not small_spec.global_pool:
        assert not large.weights()["blocks.1.pool_fc.weight"].any()
    for _ in range(3):
        large.train_step(planes, pis, zs, 1e-2)
    assert np.abs(large.weights()["blocks.1.pool_fc.weight"]).max() > 1e-4


def test_pooling_can_be_gained_but_not_lost_or_moved():
    check_growable(PLAIN, replace(PLAIN, global_pool=1))  # pooling alone is a way to grow
    with pytest.raises(ValueError, match="not lose them"):
        check_growable(POOLED, replace(POOLED, res_filters=16, global_pool=1))
    # 2 blocks pool block 1; 4 blocks with one pooling block pool block 2 instead
    with pytest.raises(ValueError, match="would not all pool"):
        check_growable(replace(PLAIN, global_pool=1), replace(PLAIN, res_blocks=4, global_pool=1))
    with pytest.raises(ValueError, match="global_pool must lie between 0 and the 2"):
        replace(PLAIN, global_pool=3)
    with pytest.raises(ValueError, match="size-free net's option"):
        NetSpec(9, 9, 5, "resnet", 2, 8, global_pool=1)


def test_the_setting_reaches_the_spec_and_is_checked():
    config = TrainConfig(sizefree_blocks=3, sizefree_filters=12, global_pool=2)
    assert NetSpec.for_config(config).global_pool == 2
    assert config.with_net(NetSpec.for_config(config)).global_pool == 2
    with pytest.raises(ValueError, match="global_pool 4 is more than the 3"):
        TrainConfig(sizefree_blocks=3, global_pool=4).validate()
    assert TrainConfig.from_dict({"arch": "sizefree"}).global_pool == 0  # old checkpoints: none
