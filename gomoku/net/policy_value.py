"""``PolicyValueModel``: one net with its optimizer, its fast inference path and its file.

It owns the net, its Adam optimizer (one for the whole run, so Adam's moments
carry over between updates) and a Paddle Inference predictor that serves
``predict`` (the dygraph net is the fallback). ``version`` counts the changes of
the weights; the predictor is rebuilt when it falls behind.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from gomoku.net.backend import paddle

from gomoku import tempdirs
from gomoku.net.device import resolve_device, resolve_precision
from gomoku.net.inference import InferencePredictor, export_inference
from gomoku.net.model import build_net
from gomoku.net.modelfile import ModelFileError, read_model_file, save_model_file
from gomoku.net.spec import NetSpec
from gomoku.net.training import BatchFit

INFER_PREFIX = "gomoku-infer-"
"""the temporary folder a net is exported to for its predictor (``tempdirs``: named for its process,
removed on SIGTERM too, swept by a later process after a SIGKILL)"""


class PolicyValueModel:
    """The net, its optimizer and its inference path.

    Args:
        spec: board size and architecture.
        device: 'cpu', 'gpu' or 'auto'.
        weight_decay: L2 coefficient on the weights (coupled, as in the loss of docs/algorithm.md, section 3).
        fast_inference: serve ``evaluate`` from a Paddle Inference predictor.
        threads: CPU threads for the predictor.
        precision: the predictor's arithmetic, 'fp32', 'bf16' or 'auto' (``device.resolve_precision``);
            training is fp32 whatever it says.
    """

    def __init__(self, spec: NetSpec, device: str = "auto", weight_decay: float = 1e-4,
                 fast_inference: bool = True, threads: int = 1, precision: str = "fp32"):
        self.spec = spec
        self.device = resolve_device(device)
        paddle.set_device(self.device)
        self.net = build_net(spec)
        self.optimizer = paddle.optimizer.Adam(
            learning_rate=2e-3, parameters=self.net.parameters(), weight_decay=weight_decay)
        self.fast_inference = fast_inference
        self.threads = threads
        self.precision = resolve_precision(precision, self.device)
        self._predictor: Optional[InferencePredictor] = None
        self._predictor_version = -1
        self.version = 0
        """counts the changes of the weights: evaluators and actors compare it to what they hold"""
        self.net.eval()

    @property
    def input_version(self) -> int:
        """The planes the net takes (``gomoku.game.features``), from its spec."""
        return self.spec.inputs

    def weights_changed(self) -> None:
        """Records that the weights changed (an optimizer step, new weights loaded)."""
        self.version += 1

    # ------------------------------------------------------------ inference
    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(log_probs (B, H*W), values (B,))`` for a batch of planes ``(B, C, H, W)``
        (``C`` the planes of the net's input version)."""
        if self.fast_inference:
            if self._predictor_version != self.version:
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
        with tempdirs.folder(INFER_PREFIX) as tmp:
            self.export_inference(tmp)
            self._predictor = InferencePredictor(tmp, self.device, self.threads, self.precision)
        self._predictor_version = self.version

    def export_inference(self, directory: str) -> None:
        """Writes the net as a Paddle Inference model (``model.json`` / ``model.pdiparams``).

        A size-free net is exported with the board's height and width left open,
        so that one predictor serves every board size.
        """
        if self.spec.size_free:
            export_inference(self.net, None, None, directory, self.spec.inputs)
        else:
            export_inference(self.net, self.spec.width, self.spec.height, directory, self.spec.inputs)

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
        self.weights_changed()

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
        """Loads a model file; with ``expect``, refuses one that cannot play that board.

        A size-free model plays any board with its ``n_in_row``; a fixed-size
        model only its own board.

        Raises:
            ModelFileError: the file is missing, unreadable, or for another board.
        """
        spec, weights = read_model_file(path)
        if expect is not None:
            problem = spec.board_mismatch(expect.width, expect.height, expect.n_in_row)
            if problem is not None:
                raise ModelFileError(f"{path} is {problem}")
        model = cls(spec, device=device, **kwargs)
        model.set_weights(weights)
        return model
