"""A run that starts from a trained model (``train.py --init-model``).

The model is loaded, grown to a larger net if asked (``gomoku.net.grow``), carried over to a later
input version or to the run's rule. Then the run treats it as the trained net it is, not as random
weights:

- it goes on at the step the model's own run had reached: the adaptive learning-rate multiplier
  that ``scripts/ship_model.py`` writes into the model's record (``lr_multiplier`` in the JSON file
  beside the model), unless ``lr_multiplier_start`` sets one;
- it makes its first update only once its buffer holds ``warm_start_fill`` of ``buffer_size``.

Both guard against the same harm. A run from random weights updates as soon as the buffer holds a
batch, at a multiplier of 1, and loses nothing by it. A trained net that takes several Adam steps at
a step its run had long left behind, on a few hundred positions that every mini-batch repeats,
overfits them and forgets part of what it knew; the KL-adaptive step takes a few iterations to
bring it back (docs/training.md, "Stopping and resuming": "Going on from a model").
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Callable, Optional

from gomoku.net.grow import carry_inputs, grown_model
from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.spec import NetSpec, trunk_of
from gomoku.train.config import TrainConfig


def load_initial_model(config: TrainConfig, init_model: str, grow: bool, threads: int,
                       log: Callable[[str], None]) -> tuple[PolicyValueModel, dict]:
    """The run's first net, from ``init_model``, and what the metrics' start record adds about it
    (``init_model``, and ``grown_from``, ``inputs_from`` or ``rule_from`` where they apply).

    Raises:
        ValueError: a fixed-size model for a run on several board sizes, or a model that cannot
            grow to the config's net (``gomoku.net.grow.check_growable``).
        ModelFileError: a missing or unreadable model, or one for another board.
    """
    name = os.path.basename(init_model)
    start: dict = {"init_model": name}
    model = PolicyValueModel.load(init_model, device=config.device, expect=NetSpec.for_config(config),
                                  weight_decay=config.weight_decay, threads=threads, precision=config.precision)
    if len(config.board_sizes()) > 1 and not model.spec.size_free:
        raise ValueError(f"{init_model} is a fixed-size model ({model.spec.board_name()}): "
                         f"only a size-free model can train on several board sizes")
    if grow:
        small = model.spec
        model = grown_model(model, trunk_of(config, small.arch), device=config.device,
                            weight_decay=config.weight_decay, threads=threads, precision=config.precision)
        start["grown_from"] = f"{small.res_blocks}x{small.res_filters}"
        pooling = ""
        if model.spec.global_pool != small.global_pool:
            start["global_pool_from"] = small.global_pool
            pooling = f", {small.global_pool} global pooling blocks to {model.spec.global_pool}"
        log(f"grew {name} from {small.res_blocks} blocks of {small.res_filters} channels to "
            f"{model.spec.res_blocks} of {model.spec.res_filters}{pooling}; it plays as before until training "
            f"changes it")
    if config.inputs > model.spec.inputs:
        start["inputs_from"] = model.spec.inputs
        spec, weights = carry_inputs(model.spec, model.weights(), config.inputs)
        model = PolicyValueModel(spec, device=config.device, weight_decay=config.weight_decay,
                                 threads=threads, precision=config.precision)
        model.set_weights(weights)
        log(f"{name} takes input version {model.spec.inputs} now (it took {start['inputs_from']}); its new "
            f"input planes start at zero weight, so it plays as before until training changes it")
    if model.spec.rule != config.rule:
        # Transfer: the net keeps its weights and learns the run's rule from here on; its files
        # say the run's rule, since that is what it plays from now.
        start["rule_from"] = model.spec.rule
        model.spec = replace(model.spec, rule=config.rule)
        log(f"{name} was trained for {start['rule_from']}: this run trains it for {config.rule}")
    return model, start


def record_of(model_path: str) -> Optional[dict]:
    """The record ``scripts/ship_model.py`` wrote beside a model (NAME.json for NAME.npz), or None
    where there is none or it cannot be read: a record is a help here, never a requirement."""
    try:
        with open(os.path.splitext(model_path)[0] + ".json") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def starting_lr_multiplier(config: TrainConfig, record: Optional[dict]) -> tuple[float, str]:
    """The adaptive multiplier a new run starts at, and where it came from: ``lr_multiplier_start``
    when set; else the one the initial model's ``record`` (``record_of``) keeps; else 1."""
    if config.lr_multiplier_start > 0:
        return config.lr_multiplier_start, "--lr-multiplier-start"
    reached = record.get("lr_multiplier") if record is not None else None
    if isinstance(reached, (int, float)) and not isinstance(reached, bool) and reached > 0:
        return float(reached), "the model's record"
    return 1.0, "the default"


def first_update_at(config: TrainConfig, from_model: bool) -> int:
    """Positions a board size's buffer must hold (more than) before the run's first update on it:
    a batch for a run from random weights, ``warm_start_fill`` of the buffer for a trained net."""
    if not from_model:
        return config.batch_size
    return max(config.batch_size, int(config.warm_start_fill * config.buffer_size))
