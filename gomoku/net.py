"""The policy-value network in Paddle, its model file, and its fast inference path.

``PolicyValueNet`` maps the 4 input planes of ``Board.planes`` to log move
probabilities over all ``width * height`` cells and a value in [-1, 1] for the
player to move. ``PolicyValueModel`` owns the net, its Adam optimizer (one for
the whole run) and a Paddle Inference predictor that serves evaluations
(oneDNN on a CPU, the GPU where Paddle has one); the dygraph net is the fallback.

A model file is a NumPy ``.npz`` archive: the weights under their parameter
names plus ``__meta__``, a JSON string with the board size, ``n_in_row`` and the
architecture, so loading it needs no flags. It loads without pickle.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F

from gomoku.board import Board
from gomoku.util import atomic_write

MODEL_FORMAT = "gomoku-zero-model/1"


class ModelFileError(ValueError):
    """A model file that is missing, unreadable, or made for another board."""


@dataclass(frozen=True)
class NetSpec:
    """What a model file must record to rebuild its net."""

    width: int = 8
    height: int = 8
    n_in_row: int = 5
    arch: str = "reference"
    """'reference' (SPEC section 3) or 'resnet' (residual blocks)"""
    res_blocks: int = 0
    """residual blocks, for arch='resnet'"""
    res_filters: int = 64
    """channels of the residual trunk, for arch='resnet'"""

    @classmethod
    def for_config(cls, config) -> "NetSpec":
        """The net a ``TrainConfig`` asks for."""
        return cls(config.width, config.height, config.n_in_row, config.arch,
                   config.res_blocks if config.arch == "resnet" else 0, config.res_filters)

    @property
    def size(self) -> int:
        return self.width * self.height

    def board_name(self) -> str:
        return f"{self.width}x{self.height}, {self.n_in_row} in a row"


class PolicyValueNet(nn.Layer):
    """The reference net: a 3-layer conv trunk, a policy head and a value head."""

    def __init__(self, width: int, height: int):
        super().__init__()
        self.conv1 = nn.Conv2D(4, 32, 3, padding=1)
        self.conv2 = nn.Conv2D(32, 64, 3, padding=1)
        self.conv3 = nn.Conv2D(64, 128, 3, padding=1)
        self.policy_conv = nn.Conv2D(128, 4, 1)
        self.policy_fc = nn.Linear(4 * width * height, width * height)
        self.value_conv = nn.Conv2D(128, 2, 1)
        self.value_fc1 = nn.Linear(2 * width * height, 64)
        self.value_fc2 = nn.Linear(64, 1)

    def trunk(self, x):
        x = F.relu(self.conv1(x))  # (B, 32, H, W)
        x = F.relu(self.conv2(x))  # (B, 64, H, W)
        return F.relu(self.conv3(x))  # (B, 128, H, W)

    def forward(self, x):
        x = self.trunk(x)
        p = F.relu(self.policy_conv(x)).flatten(1)  # (B, 4*H*W)
        log_p = F.log_softmax(self.policy_fc(p), axis=-1)  # (B, H*W)
        v = F.relu(self.value_conv(x)).flatten(1)  # (B, 2*H*W)
        v = paddle.tanh(self.value_fc2(F.relu(self.value_fc1(v))))  # (B, 1)
        return log_p, v


class ResidualBlock(nn.Layer):
    def __init__(self, filters: int):
        super().__init__()
        self.conv1 = nn.Conv2D(filters, filters, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(filters)
        self.conv2 = nn.Conv2D(filters, filters, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(filters)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class ResidualPolicyValueNet(PolicyValueNet):
    """The same heads on a deeper residual trunk (an option, not the default)."""

    def __init__(self, width: int, height: int, blocks: int, filters: int):
        super().__init__(width, height)
        self.conv1 = nn.Conv2D(4, filters, 3, padding=1)
        self.conv2 = self.conv3 = None
        self.blocks = nn.LayerList([ResidualBlock(filters) for _ in range(blocks)])
        self.policy_conv = nn.Conv2D(filters, 4, 1)
        self.value_conv = nn.Conv2D(filters, 2, 1)

    def trunk(self, x):
        x = F.relu(self.conv1(x))  # (B, F, H, W)
        for block in self.blocks:
            x = block(x)
        return x


def build_net(spec: NetSpec) -> PolicyValueNet:
    if spec.arch == "reference":
        return PolicyValueNet(spec.width, spec.height)
    if spec.arch == "resnet":
        return ResidualPolicyValueNet(spec.width, spec.height, spec.res_blocks, spec.res_filters)
    raise ValueError(f"unknown architecture {spec.arch!r}: use 'reference' or 'resnet'")


def resolve_device(device: str) -> str:
    """'cpu', 'gpu' or 'auto' (the GPU when this Paddle build has one) -> 'cpu' or 'gpu'."""
    if device not in ("cpu", "gpu", "auto"):
        raise ValueError(f"device must be cpu, gpu or auto, got {device!r}")
    has_gpu = paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
    if device == "gpu" and not has_gpu:
        raise ValueError("--device gpu was asked for, but this Paddle build sees no GPU")
    return "gpu" if device == "gpu" or (device == "auto" and has_gpu) else "cpu"


class InferencePredictor:
    """A Paddle Inference predictor for an exported net (the fast evaluation path).

    Args:
        model_dir: a directory written by ``PolicyValueModel.export_inference``.
        device: 'cpu' (oneDNN) or 'gpu'.
        threads: CPU math threads.
    """

    def __init__(self, model_dir: str, device: str = "cpu", threads: int = 1):
        from paddle import inference

        program = next(os.path.join(model_dir, f) for f in sorted(os.listdir(model_dir))
                       if f.endswith((".json", ".pdmodel")))
        config = inference.Config(program, os.path.join(model_dir, "model.pdiparams"))
        if device == "gpu":
            config.enable_use_gpu(256, 0)
        else:
            config.disable_gpu()
            config.enable_mkldnn()
            config.set_cpu_math_library_num_threads(threads)
        config.disable_glog_info()
        self._predictor = inference.create_predictor(config)
        self._input = self._predictor.get_input_handle(self._predictor.get_input_names()[0])
        self._outputs = [self._predictor.get_output_handle(n) for n in self._predictor.get_output_names()]

    def run(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``planes (B, 4, H, W)`` -> ``(log_probs (B, H*W), values (B,))``."""
        self._input.reshape(planes.shape)
        self._input.copy_from_cpu(np.ascontiguousarray(planes, dtype=np.float32))
        self._predictor.run()
        log_p, value = (h.copy_to_cpu() for h in self._outputs)
        return log_p, value.reshape(-1)

    predict = run  # so a predictor can stand in for a model in NetEvaluator


class PolicyValueModel:
    """The net, its optimizer and its inference path.

    Args:
        spec: board size and architecture.
        device: 'cpu', 'gpu' or 'auto'.
        weight_decay: L2 coefficient on the weights (coupled, as in the loss of SPEC section 3).
        fast_inference: serve ``evaluate`` from a Paddle Inference predictor.
        threads: CPU threads for the predictor.
    """

    def __init__(self, spec: NetSpec, device: str = "auto", weight_decay: float = 1e-4,
                 fast_inference: bool = True, threads: int = 1):
        self.spec = spec
        self.device = resolve_device(device)
        paddle.set_device(self.device)
        self.net = build_net(spec)
        self.optimizer = paddle.optimizer.Adam(
            learning_rate=2e-3, parameters=self.net.parameters(), weight_decay=weight_decay)
        self.fast_inference = fast_inference
        self.threads = threads
        self._predictor: Optional[InferencePredictor] = None
        self._stale = True
        self.net.eval()

    # ------------------------------------------------------------ inference
    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(log_probs (B, size), values (B,))`` for a batch of planes."""
        if self.fast_inference:
            if self._stale or self._predictor is None:
                self.refresh_inference()
            return self._predictor.run(planes)
        return self.predict_dygraph(planes)

    def predict_dygraph(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.net.eval()
        with paddle.no_grad():
            log_p, value = self.net(paddle.to_tensor(np.asarray(planes, dtype=np.float32)))
        return log_p.numpy(), value.numpy().reshape(-1)

    def refresh_inference(self) -> None:
        """Rebuilds the predictor from the current weights (after training steps)."""
        with tempfile.TemporaryDirectory(prefix="gomoku-infer-") as tmp:
            self.export_inference(tmp)
            self._predictor = InferencePredictor(tmp, self.device, self.threads)
        self._stale = False

    def export_inference(self, directory: str) -> None:
        """Writes the net as a Paddle Inference model (``model.json`` / ``model.pdiparams``)."""
        self.net.eval()
        spec = [paddle.static.InputSpec([None, 4, self.spec.height, self.spec.width], "float32", "planes")]
        paddle.jit.save(self.net, os.path.join(directory, "model"), input_spec=spec)

    # ------------------------------------------------------------- training
    def train_step(self, planes: np.ndarray, pis: np.ndarray, zs: np.ndarray, lr: float):
        """One Adam step on ``(z - v)^2 - pi . log p`` (+ L2 through weight decay).

        Returns:
            ``(loss, entropy)``: the batch's loss before the step and the mean policy entropy.
        """
        return BatchFit(self, planes, pis, zs, measure_after=False).step(lr)

    def fit_batch(self, planes: np.ndarray, pis: np.ndarray, zs: np.ndarray) -> "BatchFit":
        """Starts Adam steps on one mini-batch, with one forward pass a step (see ``BatchFit``)."""
        return BatchFit(self, planes, pis, zs)

    # -------------------------------------------------------- weights, state
    def weights(self) -> dict[str, np.ndarray]:
        return {k: v.numpy() for k, v in self.net.state_dict().items()}

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        own = self.net.state_dict()
        missing = sorted(set(own) - set(weights))
        extra = sorted(set(weights) - set(own))
        if missing or extra:
            raise ModelFileError(f"the weights do not fit this net (missing {missing[:3]}, unexpected {extra[:3]})")
        for name, value in weights.items():
            if tuple(own[name].shape) != tuple(value.shape):
                raise ModelFileError(f"weight {name} has shape {tuple(value.shape)}, the net wants {tuple(own[name].shape)}")
        self.net.set_state_dict({k: paddle.to_tensor(v) for k, v in weights.items()})
        self._stale = True

    def optimizer_state(self) -> dict:
        """Adam's moments keyed by parameter name, so a new process can restore them."""
        by_internal = {p.name: name for name, p in self.net.named_parameters()}
        state = {}
        for key, value in self.optimizer.state_dict().items():
            if key == "LR_Scheduler":
                continue
            internal = next((n for n in by_internal if key.startswith(n + "_")), None)
            if internal is not None:
                state[by_internal[internal] + key[len(internal):]] = value.numpy()
        return state

    def set_optimizer_state(self, state: dict) -> None:
        by_name = {name: p.name for name, p in self.net.named_parameters()}
        restored = {}
        for key, value in state.items():
            name = next((n for n in sorted(by_name, key=len, reverse=True) if key.startswith(n + "_")), None)
            if name is None:
                raise ValueError(f"optimizer state entry {key!r} matches no parameter")
            restored[by_name[name] + key[len(name):]] = paddle.to_tensor(value)
        self.optimizer.set_state_dict(restored)

    def save(self, path: str) -> None:
        """Writes the model file atomically (``.npz`` with weights and metadata)."""
        save_model_file(path, self.spec, self.weights())

    @classmethod
    def load(cls, path: str, device: str = "auto", expect: Optional[NetSpec] = None,
             **kwargs) -> "PolicyValueModel":
        """Loads a model file; with ``expect``, refuses one made for another board.

        Raises:
            ModelFileError: the file is missing, unreadable, or for another board.
        """
        spec, weights = read_model_file(path)
        if expect is not None and (spec.width, spec.height, spec.n_in_row) != (
                expect.width, expect.height, expect.n_in_row):
            raise ModelFileError(
                f"{path} is a model for {spec.board_name()}, but this board is {expect.board_name()}")
        model = cls(spec, device=device, **kwargs)
        model.set_weights(weights)
        return model


class BatchFit:
    """Adam steps on one mini-batch, with the policy the net gives it after each step.

    The forward pass that measures a step (``log_p``, for the update's KL) is the
    one the next step differentiates, so ``k`` steps cost ``k + 1`` forward passes.

    Args:
        model: the ``PolicyValueModel`` to train.
        planes, pis, zs: the batch.
        measure_after: do the forward pass after each step (``False`` for a single step).
    """

    def __init__(self, model: PolicyValueModel, planes: np.ndarray, pis: np.ndarray, zs: np.ndarray,
                 measure_after: bool = True):
        self.model = model
        self.measure_after = measure_after
        self._x = paddle.to_tensor(np.asarray(planes, dtype=np.float32))
        self._pi = paddle.to_tensor(np.asarray(pis, dtype=np.float32))
        self._z = paddle.to_tensor(np.asarray(zs, dtype=np.float32))
        self.log_p = self._forward()

    def _forward(self) -> np.ndarray:
        """The loss at the current weights, kept for the next step; returns the log-policy."""
        self.model.net.train()
        log_p, value = self.model.net(self._x)
        value_loss = F.mse_loss(value.reshape([-1]), self._z)
        policy_loss = -paddle.mean(paddle.sum(self._pi * log_p, axis=1))
        self._loss = value_loss + policy_loss
        self.model.net.eval()
        return log_p.numpy()

    def step(self, lr: float) -> tuple[float, float]:
        """One Adam step; ``log_p`` is then the policy after it.

        Returns:
            ``(loss, entropy)``: the batch's loss before the step and the mean policy entropy.
        """
        loss = float(self._loss)
        entropy = float(-np.mean(np.sum(np.exp(self.log_p) * self.log_p, axis=1)))
        optimizer = self.model.optimizer
        optimizer.set_lr(lr)
        self._loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        self.model._stale = True
        if self.measure_after:
            self.log_p = self._forward()
        return loss, entropy


def read_model_file(path: str) -> tuple[NetSpec, dict[str, np.ndarray]]:
    """Reads a model file's spec and weights, with a clear error for any problem."""
    if not os.path.isfile(path):
        raise ModelFileError(f"no model file at {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["__meta__"]))
            weights = {k: data[k] for k in data.files if k != "__meta__"}
    except Exception as exc:  # zip, JSON and key errors all mean the same to a user
        raise ModelFileError(f"{path} is not a readable Gomoku Zero model file ({exc})") from None
    if meta.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"{path} has format {meta.get('format')!r}, expected {MODEL_FORMAT!r}")
    fields = {k: meta[k] for k in NetSpec.__dataclass_fields__ if k in meta}
    return NetSpec(**fields), weights


class NetEvaluator:
    """Evaluates boards with the model for MCTS, with a cache of recent positions.

    Transpositions (the same stones reached by different move orders, with the
    same last move) and positions shared by parallel games are evaluated once.

    Args:
        model: anything with ``predict(planes) -> (log_probs, values)``.
        cache_size: positions to remember; 0 turns the cache off.
    """

    def __init__(self, model, cache_size: int = 100_000):
        self.model = model
        self.cache_size = cache_size
        self._cache: dict = {}
        self.calls = 0
        self.positions = 0
        self.hits = 0

    def clear_cache(self) -> None:
        """Forget cached evaluations (call after the weights change)."""
        self._cache.clear()

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        n = len(boards)
        size = boards[0].size
        priors = np.empty((n, size), dtype=np.float32)
        values = np.empty(n, dtype=np.float32)
        keys = [(bytes(b.cells), b.history[-1] if b.history else -1, b.current_player) for b in boards]
        todo = []
        for i, key in enumerate(keys):
            hit = self._cache.get(key) if self.cache_size else None
            if hit is None:
                todo.append(i)
            else:
                priors[i], values[i] = hit
        self.hits += n - len(todo)
        if todo:
            first = boards[0]
            planes = np.zeros((len(todo), 4, size), dtype=np.float32)
            for row, i in enumerate(todo):
                boards[i].fill_planes(planes[row])
            log_p, value = self.model.predict(planes.reshape(len(todo), 4, first.height, first.width))
            p = np.exp(log_p)
            self.calls += 1
            self.positions += len(todo)
            if self.cache_size and len(self._cache) + len(todo) > self.cache_size:
                self._cache.clear()
            for row, i in enumerate(todo):
                priors[i] = p[row]
                values[i] = value[row]
                if self.cache_size:
                    self._cache[keys[i]] = (p[row], value[row])
        return priors, values


def save_model_file(path: str, spec: NetSpec, weights: dict[str, np.ndarray]) -> None:
    """Writes a model file atomically: ``weights`` under their names and the spec in ``__meta__``."""
    arrays = dict(weights)
    arrays["__meta__"] = np.array(json.dumps({"format": MODEL_FORMAT, **asdict(spec)}))
    atomic_write(path, lambda f: np.savez(f, **arrays))
