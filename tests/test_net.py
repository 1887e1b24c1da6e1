import json
import os

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.net.modelfile import ModelFileError, read_model_file, read_model_spec
from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.spec import NetSpec
from gomoku.search.evaluator import NetEvaluator


@pytest.fixture(scope="module")
def model():
    import paddle

    paddle.seed(0)
    return PolicyValueModel(NetSpec(6, 6, 4), device="cpu")


def random_planes(n, rng):
    return (rng.random((n, 4, 6, 6)) > 0.7).astype(np.float32)


def test_outputs_are_distributions_and_values(model):
    log_p, v = model.predict(random_planes(5, np.random.default_rng(0)))
    assert log_p.shape == (5, 36) and v.shape == (5,)
    assert np.allclose(np.exp(log_p).sum(axis=1), 1, atol=1e-5)
    assert np.all(np.abs(v) <= 1)


def test_fast_path_matches_dygraph(model):
    planes = random_planes(16, np.random.default_rng(1))
    fast = model.predict(planes)
    slow = model.predict_dygraph(planes)
    assert np.abs(fast[0] - slow[0]).max() < 1e-4
    assert np.abs(fast[1] - slow[1]).max() < 1e-4


def test_batched_evaluation_equals_one_by_one(model):
    rng = np.random.default_rng(2)
    boards = []
    for _ in range(6):
        b = Board(6, 6, 4)
        for m in rng.permutation(36)[:5]:
            b.do_move(int(m))
        boards.append(b)
    evaluator = NetEvaluator(model, cache_size=0)
    priors, values = evaluator.evaluate(boards)
    for i, b in enumerate(boards):
        p1, v1 = evaluator.evaluate([b])
        assert np.abs(p1[0] - priors[i]).max() < 1e-5 and abs(v1[0] - values[i]) < 1e-5


def test_net_overfits_a_tiny_batch():
    import paddle

    paddle.seed(1)
    net = PolicyValueModel(NetSpec(6, 6, 4), device="cpu", weight_decay=0.0)
    rng = np.random.default_rng(3)
    planes = random_planes(8, rng)
    pis = np.zeros((8, 36), dtype=np.float32)
    pis[np.arange(8), rng.integers(0, 36, 8)] = 1.0
    zs = rng.choice([-1.0, 1.0], 8).astype(np.float32)
    first, first_entropy = net.train_step(planes, pis, zs, 2e-3)
    for _ in range(150):
        loss, entropy = net.train_step(planes, pis, zs, 2e-3)
    assert first > 3.0 and loss < 0.3
    assert entropy < first_entropy


def test_batch_fit_steps_like_train_step_and_measures_the_new_policy():
    import paddle

    paddle.seed(2)
    a = PolicyValueModel(NetSpec(6, 6, 4), device="cpu")
    b = PolicyValueModel(NetSpec(6, 6, 4), device="cpu")
    b.set_weights(a.weights())
    rng = np.random.default_rng(4)
    planes = random_planes(16, rng)
    pis = rng.dirichlet(np.ones(36), 16).astype(np.float32)
    zs = rng.choice([-1.0, 0.0, 1.0], 16).astype(np.float32)
    fit = b.fit_batch(planes, pis, zs)
    assert np.allclose(fit.log_p, a.predict_dygraph(planes)[0], atol=1e-6)
    for lr in (2e-3, 1e-3, 3e-3):
        expected = a.train_step(planes, pis, zs, lr)
        assert fit.step(lr) == pytest.approx(expected, rel=1e-5)
        # log_p is the policy after the step, the one the next step starts from
        assert np.allclose(fit.log_p, a.predict_dygraph(planes)[0], atol=1e-5)
        assert np.allclose(b.predict(planes)[0], fit.log_p, atol=1e-4)  # the predictor is rebuilt
    for name, w in a.weights().items():
        assert np.allclose(w, b.weights()[name], atol=1e-6), name


def test_model_file_round_trip_carries_metadata(tmp_path, model):
    path = tmp_path / "m.npz"
    model.save(str(path))
    spec, weights = read_model_file(str(path))
    assert (spec.width, spec.height, spec.n_in_row, spec.arch) == (6, 6, 4, "conv3")
    loaded = PolicyValueModel.load(str(path), device="cpu")
    planes = random_planes(3, np.random.default_rng(4))
    assert np.allclose(loaded.predict(planes)[0], model.predict(planes)[0], atol=1e-5)
    assert not list(tmp_path.glob("*.tmp"))


def test_a_model_file_that_names_the_conv3_net_reference_loads_as_conv3(tmp_path, model):
    # The shipped 6x6 and 8x8 models name it so, as may any model file a run wrote with that name.
    path = str(tmp_path / "old.npz")
    model.save(path)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    meta = {**json.loads(str(arrays["__meta__"])), "arch": "reference"}
    np.savez(path, **{**arrays, "__meta__": np.array(json.dumps(meta))})
    assert read_model_spec(path).arch == "conv3"
    planes = random_planes(3, np.random.default_rng(5))
    assert np.allclose(PolicyValueModel.load(path, device="cpu").predict(planes)[0], model.predict(planes)[0],
                       atol=1e-5)
    shipped = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models", "gomoku_6x6_4.npz")
    assert PolicyValueModel.load(shipped, device="cpu").spec.arch == "conv3"


def test_model_for_another_board_is_refused_with_both_sizes(tmp_path, model):
    path = tmp_path / "m.npz"
    model.save(str(path))
    with pytest.raises(ModelFileError, match=r"6x6, 4 in a row.*8x8, 5 in a row"):
        PolicyValueModel.load(str(path), device="cpu", expect=NetSpec(8, 8, 5))


def test_missing_and_corrupt_model_files(tmp_path):
    with pytest.raises(ModelFileError, match="no model file"):
        read_model_file(str(tmp_path / "none.npz"))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(ModelFileError, match="not a model file"):
        read_model_file(str(bad))


def test_optimizer_state_survives_a_new_process_layout(tmp_path):
    a = PolicyValueModel(NetSpec(6, 6, 4), device="cpu")
    rng = np.random.default_rng(5)
    planes = random_planes(4, rng)
    pis = np.full((4, 36), 1 / 36, dtype=np.float32)
    zs = np.zeros(4, dtype=np.float32)
    a.train_step(planes, pis, zs, 1e-3)
    state = a.optimizer_state()
    assert any(k.startswith("conv1.weight") for k in state)
    # a second model in the same process gets other internal parameter names
    b = PolicyValueModel(NetSpec(6, 6, 4), device="cpu")
    b.set_weights(a.weights())
    b.set_optimizer_state(state)
    a.train_step(planes, pis, zs, 1e-3)
    b.train_step(planes, pis, zs, 1e-3)
    for name, w in a.weights().items():
        assert np.allclose(w, b.weights()[name], atol=1e-6), name


def test_residual_option_builds_and_saves(tmp_path):
    spec = NetSpec(6, 6, 4, arch="resnet", res_blocks=1, res_filters=16)
    m = PolicyValueModel(spec, device="cpu", fast_inference=False)
    m.save(str(tmp_path / "r.npz"))
    loaded = PolicyValueModel.load(str(tmp_path / "r.npz"), device="cpu", fast_inference=False)
    assert loaded.spec == spec


def test_the_device_report_says_what_paddle_sees_and_why_auto_chose(monkeypatch):
    import paddle

    from gomoku.net import device

    report = device.device_report("auto")
    if not paddle.device.is_compiled_with_cuda():
        assert report.startswith("device cpu:") and "CPU build" in report and "no GPU" in report
        assert "auto chose the CPU because Paddle sees no GPU" in report
        with pytest.raises(ValueError, match="sees no GPU"):
            device.resolve_device("gpu")
    monkeypatch.setattr(paddle.device, "is_compiled_with_cuda", lambda: True)
    monkeypatch.setattr(paddle.device.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(paddle.device.cuda, "get_device_name", lambda i: "Test GPU")
    report = device.device_report("auto")
    assert report.startswith("device gpu:") and "CUDA" in report and "1 GPU(s): Test GPU" in report
    assert "auto chose the GPU" in report
    assert device.device_report("cpu").startswith("device cpu:") and "--device cpu asked for it" in \
        device.device_report("cpu")


def test_auto_precision_is_bf16_only_on_a_cpu_that_does_it_natively(monkeypatch):
    from gomoku.net import device

    monkeypatch.setattr(device, "cpu_flags", lambda: frozenset({"avx2", "avx512f"}))
    assert device.resolve_precision("auto", "cpu") == "fp32"
    assert "no native bf16" in device.precision_report("auto", "cpu")
    monkeypatch.setattr(device, "cpu_flags", lambda: frozenset({"avx2", "amx_bf16"}))
    assert device.resolve_precision("auto", "cpu") == "bf16"
    assert device.resolve_precision("auto", "gpu") == "fp32"
    assert device.resolve_precision("fp32", "cpu") == "fp32"
    assert "amx_bf16" in device.precision_report("auto", "cpu")
    with pytest.raises(ValueError, match="fp16"):
        device.resolve_precision("fp16", "cpu")
    with pytest.raises(ValueError, match="for the CPU"):
        device.resolve_precision("bf16", "gpu")


@pytest.mark.skipif("not __import__('gomoku.net.device').net.device.cpu_has_bf16()",
                    reason="the CPU has no native bf16")
def test_bf16_inference_stays_close_to_fp32():
    import paddle

    paddle.seed(3)
    spec = NetSpec(9, 9, 5, "sizefree", 2, 16)
    fp32 = PolicyValueModel(spec, device="cpu")
    bf16 = PolicyValueModel(spec, device="cpu", precision="bf16")
    bf16.set_weights(fp32.weights())
    planes = (np.random.default_rng(1).random((16, 4, 9, 9)) > 0.7).astype(np.float32)
    (log_p, v), (log_p16, v16) = fp32.predict(planes), bf16.predict(planes)
    assert bf16.precision == "bf16" and not np.array_equal(log_p, log_p16)  # bf16 really ran
    assert np.abs(np.exp(log_p16) - np.exp(log_p)).max() < 0.05
    assert np.abs(v16 - v).max() < 0.05


def test_a_damaged_model_file_is_told_from_a_foreign_one(model, tmp_path):
    whole = tmp_path / "whole.npz"
    model.save(str(whole))
    data = whole.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])  # a copy that stopped half way
    with pytest.raises(ModelFileError, match="is damaged"):
        read_model_file(str(cut))
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.zeros(3))
    with pytest.raises(ModelFileError, match="a .npz archive but not a Gomoku Zero model file"):
        read_model_file(str(foreign))
    corrupt = tmp_path / "corrupt.npz"
    middle = len(data) // 2
    corrupt.write_bytes(data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64]) + data[middle + 64:])
    with pytest.raises(ModelFileError, match="is damaged"):
        read_model_file(str(corrupt))


def test_a_training_step_of_a_net_with_batch_norm_warns_nothing():
    # Paddle's BatchNorm warns at every train-mode forward pass that it tracks the running
    # statistics; the step silences exactly that warning (gomoku.net.training.BATCH_NORM_NOTE).
    import warnings

    net = PolicyValueModel(NetSpec(6, 6, 4, "sizefree", 1, 8), device="cpu")
    assert any("BatchNorm" in type(layer).__name__ for layer in net.net.sublayers())
    rng = np.random.default_rng(4)
    pis = np.full((4, 36), 1 / 36, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net.train_step(random_planes(4, rng), pis, np.zeros(4, dtype=np.float32), 1e-3)
    assert [str(w.message) for w in caught if "track global mean" in str(w.message)] == []
