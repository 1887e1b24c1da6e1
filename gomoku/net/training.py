"""Training the net: Adam steps on one mini-batch of ``(planes, pi, z)``, and the KL divergence
that the trainer's adaptive learning rate watches between the policy before and after them.

The loss is ``(z - v)^2 - pi . log p`` (docs/algorithm.md, section 3); L2 on the weights
comes from the optimizer's weight decay.
"""

from __future__ import annotations

import warnings
from typing import Protocol

import numpy as np
from gomoku.net.backend import paddle
import paddle.nn.functional as F

BATCH_NORM_NOTE = "When training, we now always track global mean and variance"
"""the start of the warning Paddle's BatchNorm gives at every forward pass in train mode"""


class Trainable(Protocol):
    """What a step needs of a model (``policy_value.PolicyValueModel`` is one): its net, its
    optimizer, and the note that its weights changed."""

    net: paddle.nn.Layer
    optimizer: paddle.optimizer.Optimizer

    def weights_changed(self) -> None: ...


class BatchFit:
    """Adam steps on one mini-batch, with the policy the net gives it after each step.

    The forward pass that measures a step (``log_p``, for the update's KL) is the
    one the next step differentiates, so ``k`` steps cost ``k + 1`` forward passes.

    Args:
        model: the model to train (a ``policy_value.PolicyValueModel``).
        planes, pis, zs: the batch.
        measure_after: do the forward pass after each step (``False`` for a single step).
    """

    def __init__(self, model: Trainable, planes: np.ndarray, pis: np.ndarray, zs: np.ndarray,
                 measure_after: bool = True):
        self.model = model
        self.measure_after = measure_after
        self._x = paddle.to_tensor(np.asarray(planes, dtype=np.float32))
        self._pi = paddle.to_tensor(np.asarray(pis, dtype=np.float32))
        self._z = paddle.to_tensor(np.asarray(zs, dtype=np.float32))
        self.value_loss = self.policy_loss = 0.0
        """the two terms of the loss at the last forward pass, for the run's metrics"""
        self.log_p = self._forward()

    def _forward(self) -> np.ndarray:
        """The loss at the current weights, kept for the next step; returns the log-policy."""
        self.model.net.train()
        with warnings.catch_warnings():
            # Paddle's BatchNorm warns at every forward pass in train mode that it updates its
            # running mean and variance: what this step wants (the eval-mode net uses them), so
            # the warning tells a user nothing.
            warnings.filterwarnings("ignore", BATCH_NORM_NOTE, UserWarning)
            log_p, value = self.model.net(self._x)
        value_loss = F.mse_loss(value.reshape([-1]), self._z)
        policy_loss = -paddle.mean(paddle.sum(self._pi * log_p, axis=1))
        self._loss = value_loss + policy_loss
        self.value_loss, self.policy_loss = float(value_loss), float(policy_loss)
        self.model.net.eval()
        return log_p.numpy()

    def measure(self) -> np.ndarray:
        """The batch's log-policy at the current weights, as ``log_p`` (after steps taken on other
        batches: the drift an update caused, measured where it started)."""
        self.log_p = self._forward()
        return self.log_p

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
        self.model.weights_changed()
        if self.measure_after:
            self.log_p = self._forward()
        return loss, entropy


def kl_divergence(log_p_old: np.ndarray, log_p_new: np.ndarray) -> float:
    """``mean(sum(p_old * (log p_old - log p_new)))`` over a batch."""
    return float(np.mean(np.sum(np.exp(log_p_old) * (log_p_old - log_p_new), axis=1)))
