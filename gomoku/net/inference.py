"""The fast evaluation path: a net exported for Paddle Inference, and its predictor.

The predictor runs oneDNN on a CPU and CUDA on a GPU; it is several times
faster than the dygraph net at self-play batch sizes. On a CPU it can run in
bfloat16 (oneDNN's bf16 kernels): the weights and inputs stay fp32 in the file
and at the interface, the convolutions compute in bf16. On a CPU with native
bf16 (AVX-512 BF16 or AMX) that is several times faster, and the move
probabilities move by a few hundredths at most (``docs/`` has the figures).
"""

from __future__ import annotations

import os
from typing import Optional

import numpy as np
from gomoku.net.backend import paddle

from gomoku.game.features import check_input_version, input_channels


INPUT_VERSION_FILE = "input_version.txt"
"""beside an exported net: its input version (``gomoku.game.features``); without it, version 1"""


def export_inference(net, width: Optional[int], height: Optional[int], directory: str,
                     inputs: int = 1) -> None:
    """Writes ``net`` as a Paddle Inference model (``model.json`` / ``model.pdiparams``) and its
    input version (``INPUT_VERSION_FILE``), so that a predictor knows which planes to ask for.

    ``width`` and ``height`` None leave them open (a size-free net): the
    predictor then takes any board size; with oneDNN it runs a fixed size as
    fast as a predictor exported for that size.
    """
    net.eval()
    spec = [paddle.static.InputSpec([None, input_channels(inputs), height, width], "float32", "planes")]
    paddle.jit.save(net, os.path.join(directory, "model"), input_spec=spec)
    with open(os.path.join(directory, INPUT_VERSION_FILE), "w") as f:
        f.write(f"{inputs}\n")


class InferencePredictor:
    """A Paddle Inference predictor for an exported net (the fast evaluation path).

    Args:
        model_dir: a directory written by ``PolicyValueModel.export_inference``.
        device: 'cpu' (oneDNN) or 'gpu'.
        threads: CPU math threads.
        precision: 'fp32', 'bf16' (CPU only) or 'auto' (``device.resolve_precision``).
    """

    def __init__(self, model_dir: str, device: str = "cpu", threads: int = 1, precision: str = "fp32"):
        from paddle import inference

        from gomoku.net.device import resolve_precision

        self.precision = resolve_precision(precision, device)
        self.input_version = read_input_version(model_dir)
        """the planes this net takes (``gomoku.game.features``)"""
        program = next(os.path.join(model_dir, f) for f in sorted(os.listdir(model_dir))
                       if f.endswith((".json", ".pdmodel")))
        config = inference.Config(program, os.path.join(model_dir, "model.pdiparams"))
        if device == "gpu":
            config.enable_use_gpu(256, 0)
        else:
            config.disable_gpu()
            config.enable_mkldnn()
            if self.precision == "bf16":
                config.enable_mkldnn_bfloat16()
            config.set_cpu_math_library_num_threads(threads)
        config.disable_glog_info()
        self._predictor = inference.create_predictor(config)
        self._input = self._predictor.get_input_handle(self._predictor.get_input_names()[0])
        self._outputs = [self._predictor.get_output_handle(n) for n in self._predictor.get_output_names()]

    def run(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``planes (B, C, H, W)`` -> ``(log_probs (B, H*W), values (B,))``."""
        self._input.reshape(planes.shape)
        self._input.copy_from_cpu(np.ascontiguousarray(planes, dtype=np.float32))
        self._predictor.run()
        log_p, value = (h.copy_to_cpu() for h in self._outputs)
        return log_p, value.reshape(-1)

    predict = run  # so a predictor can stand in for a model in NetEvaluator


def read_input_version(model_dir: str) -> int:
    """The input version of the net exported in ``model_dir`` (1 when it does not say)."""
    path = os.path.join(model_dir, INPUT_VERSION_FILE)
    if not os.path.isfile(path):
        return 1
    with open(path) as f:
        return check_input_version(int(f.read().strip()))
