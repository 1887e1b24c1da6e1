"""An exponential moving average of a net's weights, and batch norm's statistics measured anew.

Checkpoints of one run scatter in strength from one to the next: each update moves the weights
toward the last few mini-batches. The average of the recent weights sits between them and plays
more evenly (Polyak averaging; KataGo and many AlphaZero reproductions play an average).

Batch norm's running mean and variance are not weights to average: the averaged weights give each
layer other inputs than any of the nets they came from, so ``recompute_batch_norm`` measures the
statistics again on positions of the replay window, as stochastic weight averaging does.
"""

from __future__ import annotations

import warnings
from typing import Iterable

import numpy as np
from gomoku.net.backend import paddle
from gomoku.net.training import BATCH_NORM_NOTE

# The state-dict names batch norm keeps its running statistics under (Paddle's BatchNorm layers).
BN_MEAN, BN_VARIANCE = "_mean", "_variance"


def is_statistic(name: str) -> bool:
    """True for a batch norm running statistic in a state dict (not a weight the optimizer trains)."""
    return name.rsplit(".", 1)[-1] in (BN_MEAN, BN_VARIANCE)


class WeightAverage:
    """The exponential moving average of the trained weights: after each step,
    ``average = decay * average + (1 - decay) * weights``.

    Args:
        decay: the weight of the old average at each step (0.99: about the last 100 steps).
        weights: the net's state dict to start from (its statistics are carried, not averaged).
    """

    def __init__(self, decay: float, weights: dict[str, np.ndarray]):
        if not 0.0 < decay < 1.0:
            raise ValueError(f"the average's decay must lie strictly between 0 and 1, got {decay}")
        self.decay = decay
        self.weights = {k: np.array(v, dtype=np.float32, copy=True) for k, v in weights.items()}

    def add(self, weights: dict[str, np.ndarray]) -> None:
        """Takes one step's weights into the average (batch norm statistics are copied as they are)."""
        for name, value in weights.items():
            if is_statistic(name):
                self.weights[name] = np.array(value, dtype=np.float32, copy=True)
            else:
                self.weights[name] *= self.decay
                self.weights[name] += (1.0 - self.decay) * value


def recompute_batch_norm(net: paddle.nn.Layer, batches: Iterable[np.ndarray]) -> int:
    """Sets every batch norm layer's running mean and variance to those of its inputs over
    ``batches`` (arrays of input planes), the net running in training mode as it does in an update.

    Returns:
        how many positions were measured (0 leaves the statistics as they were).
    """
    named = [(name, layer) for name, layer in net.named_sublayers()
             if isinstance(layer, (paddle.nn.BatchNorm2D, paddle.nn.BatchNorm1D))]
    layers = [layer for _, layer in named]
    sums: dict[int, list] = {id(layer): [0.0, 0.0, 0] for layer in layers}

    def measure(layer, inputs):
        x = inputs[0]
        axes = [0] + list(range(2, len(x.shape)))
        count = int(np.prod([x.shape[a] for a in axes]))
        entry = sums[id(layer)]
        entry[0] = entry[0] + paddle.sum(x, axis=axes).numpy().astype(np.float64)
        entry[1] = entry[1] + paddle.sum(x * x, axis=axes).numpy().astype(np.float64)
        entry[2] += count

    hooks = [layer.register_forward_pre_hook(measure) for layer in layers]
    measured = 0
    try:
        net.train()
        with paddle.no_grad(), warnings.catch_warnings():
            # train mode is what measures the inputs here; Paddle's note that it tracks the running
            # statistics in train mode says nothing to a user (gomoku.net.training)
            warnings.filterwarnings("ignore", BATCH_NORM_NOTE, UserWarning)
            for planes in batches:
                net(paddle.to_tensor(np.asarray(planes, dtype=np.float32)))
                measured += len(planes)
    finally:
        for hook in hooks:
            hook.remove()
        net.eval()
    if measured == 0:
        return 0
    statistics = dict(net.state_dict())
    for name, layer in named:
        total, squares, count = sums[id(layer)]
        mean = total / count
        statistics[f"{name}.{BN_MEAN}"] = paddle.to_tensor(mean.astype(np.float32))
        statistics[f"{name}.{BN_VARIANCE}"] = paddle.to_tensor(np.maximum(squares / count - mean * mean, 0.0)
                                                              .astype(np.float32))
    net.set_state_dict(statistics)
    return measured
