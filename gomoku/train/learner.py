"""The learner: how the replay window's positions become the weights that play.

* **KL-adaptive Adam** (docs/algorithm.md, section 6): an update takes up to ``epochs`` Adam
  steps at ``lr * lr_multiplier * lr_scale`` and stops early once the policy has moved more than
  ``4 * kl_targ`` (KL divergence) from where the update began; the multiplier then adapts.
* **Fresh mini-batches** (``fresh_batches``): each step of an update draws its own mini-batch
  from the window, so an update's steps see ``epochs`` times as many positions instead of
  repeating one batch. The KL is measured on the update's first batch, before and after.
* **A step schedule** (``lr_patience``): when neither the probe's cross-entropy improves nor a
  gate is passed for ``lr_patience`` iterations, ``lr_scale`` is cut by ``lr_cut`` (down to
  ``lr_scale_min``). The KL rule keeps the steps safe; this one makes them smaller once the
  run has stopped gaining from their size, as KataGo and minigo cut their learning rates.
* **An average of the weights** (``average_decay``): an exponential moving average of the
  weights after every step, its batch norm statistics measured anew on the window
  (``gomoku.net.averaging``). The average is the model that plays self-play, is probed,
  gated, evaluated and saved as ``current_model.npz``; the raw weights keep training.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from gomoku import interrupt
from gomoku.net.averaging import WeightAverage, recompute_batch_norm
from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.training import kl_divergence
from gomoku.train.config import TrainConfig

# Mini-batches the average's batch norm statistics are measured on after each iteration's updates.
BN_BATCHES = 4


@dataclass
class UpdateResult:
    loss: float
    value_loss: float
    policy_loss: float
    entropy: float
    kl: float
    lr_multiplier: float
    lr: float
    """the step's learning rate: lr * lr_multiplier * lr_scale, as the update used it"""
    steps: int
    rows: int
    """positions the update's steps trained on (a position repeated in several steps counts each time)"""


@dataclass
class Schedule:
    """The step schedule's state, kept in the checkpoint."""

    lr_scale: float = 1.0
    flat: int = 0
    """iterations since the probe last improved or a gate was passed"""
    best_probe: Optional[float] = None
    cuts: int = 0


class Learner:
    """Updates ``model`` from a replay buffer, with the schedule and the average above.

    Args:
        model: the net that trains (its optimizer keeps Adam's moments for the whole run).
        config: the run's settings.
        rng: the run's random source (mini-batches).
        lr_multiplier: the KL rule's multiplier to start from.
    """

    def __init__(self, model: PolicyValueModel, config: TrainConfig, rng: np.random.Generator,
                 lr_multiplier: float = 1.0):
        self.model = model
        self.config = config
        self.rng = rng
        self.lr_multiplier = lr_multiplier
        self.schedule = Schedule()
        self.average: Optional[WeightAverage] = None
        self.playing: PolicyValueModel = model
        """the model that plays, is probed, gated and saved: the average when there is one"""
        if config.average_decay > 0:
            self.playing = PolicyValueModel(model.spec, device=model.device, weight_decay=config.weight_decay,
                                            threads=model.threads, precision=model.precision)
            self.restart_average()

    def restart_average(self) -> None:
        """Starts the average at the training net's weights (a new run, or new weights loaded)."""
        if self.playing is self.model:
            return
        self.average = WeightAverage(self.config.average_decay, self.model.weights())
        self.playing.spec = self.model.spec
        self.playing.set_weights(self.average.weights)

    # --------------------------------------------------------------- update
    def update(self, buffer, sizes, window: int) -> UpdateResult:
        """One KL-adaptive update from the newest ``window`` positions of ``buffer`` (boards ``sizes``)."""
        cfg = self.config
        lr = cfg.lr * self.lr_multiplier * self.schedule.lr_scale
        first = self.model.fit_batch(*buffer.sample(cfg.batch_size, self.rng, sizes, window))
        before = first.log_p
        kl, steps = 0.0, 0
        loss = entropy = value_loss = policy_loss = 0.0
        for k in range(cfg.epochs):
            interrupt.check()  # between two of Paddle's steps: a stop need not wait for the update's end
            fit = first if k == 0 or not cfg.fresh_batches else self.model.fit_batch(
                *buffer.sample(cfg.batch_size, self.rng, sizes, window))
            if k == 0:  # the figures of the update are those of its first batch, before any step
                value_loss, policy_loss = fit.value_loss, fit.policy_loss
                loss, entropy = fit.step(lr)
            else:
                fit.step(lr)
            steps += 1
            if self.average is not None:
                self.average.add(self.model.weights())
            if fit is not first:
                first.measure()
            kl = kl_divergence(before, first.log_p)
            if kl > cfg.kl_targ * 4:
                break
        if kl > cfg.kl_targ * 2 and self.lr_multiplier > 0.1:
            self.lr_multiplier /= 1.5
        elif kl < cfg.kl_targ / 2 and self.lr_multiplier < 10:
            self.lr_multiplier *= 1.5
        return UpdateResult(loss, value_loss, policy_loss, entropy, kl, self.lr_multiplier, lr, steps,
                            steps * cfg.batch_size)

    def refresh_playing(self, buffer, sizes, window: int) -> None:
        """After an iteration's updates: the average's weights go to the playing model, with batch
        norm statistics measured on the window (nothing to do without an average)."""
        if self.average is None:
            return
        self.playing.spec = self.model.spec
        self.playing.set_weights(self.average.weights)
        if buffer.can_sample(self.config.batch_size, sizes):
            batches = (buffer.sample(self.config.batch_size, self.rng, sizes, window)[0] for _ in range(BN_BATCHES))
            recompute_batch_norm(self.playing.net, batches)
            self.playing.weights_changed()

    # ------------------------------------------------------------- schedule
    def after_iteration(self, probe_loss: Optional[float], gate_passed: Optional[bool]) -> Optional[str]:
        """Moves the step schedule on by one iteration; returns a line to log when it cuts the step.

        Args:
            probe_loss: the probe's cross-entropy this iteration (None without a probe).
            gate_passed: this iteration's gate result (None when no gate was played).
        """
        cfg, state = self.config, self.schedule
        if cfg.lr_patience <= 0:
            return None
        improved = gate_passed is True
        if probe_loss is not None and (state.best_probe is None or probe_loss < state.best_probe - cfg.lr_min_delta):
            state.best_probe = probe_loss
            improved = True
        state.flat = 0 if improved else state.flat + 1
        if state.flat < cfg.lr_patience or state.lr_scale <= cfg.lr_scale_min:
            return None
        old = state.lr_scale
        state.lr_scale = max(cfg.lr_scale_min, state.lr_scale * cfg.lr_cut)
        state.flat = 0
        state.cuts += 1
        return (f"  step schedule: no gain in the probe or the gate for {cfg.lr_patience} iterations: "
                f"learning rate x{old:.3g} -> x{state.lr_scale:.3g}")

    # ---------------------------------------------------------- checkpoint
    def state(self) -> dict:
        return {"schedule": asdict(self.schedule),
                "average": None if self.average is None else self.playing.weights()}

    def load_state(self, state: Optional[dict]) -> None:
        """Restores ``state()``; None (a checkpoint from before the learner kept one) starts the
        schedule afresh and the average at the training weights."""
        if not state:
            self.restart_average()
            return
        self.schedule = Schedule(**state["schedule"])
        if self.average is None:
            return
        if state.get("average") is None:
            self.restart_average()
            return
        self.playing.set_weights(state["average"])
        self.average = WeightAverage(self.config.average_decay, state["average"])
