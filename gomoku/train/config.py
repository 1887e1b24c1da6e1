"""The training configuration: one dataclass, a docstring per field, and presets.

Defaults are those of SPEC section 6 where it gives one. ``train.py`` turns
every field into a flag (``n_playout`` -> ``--n-playout``); library code takes a
``TrainConfig`` and reads nothing else.
"""

from __future__ import annotations

import ast
import inspect
import os
from dataclasses import asdict, dataclass, fields, replace

from gomoku.search.heuristic import LEVELS


@dataclass
class TrainConfig:
    width: int = 8
    """board width"""
    height: int = 8
    """board height"""
    n_in_row: int = 5
    """stones in a row that win"""
    n_playout: int = 400
    """MCTS playouts per move, in self-play and for the net in evaluation"""
    c_puct: float = 5.0
    """PUCT exploration constant"""
    lr: float = 2e-3
    """base Adam learning rate (scaled by the adaptive lr multiplier)"""
    weight_decay: float = 1e-4
    """L2 coefficient on the weights"""
    batch_size: int = 512
    """positions per mini-batch"""
    buffer_size: int = 10000
    """replay buffer size, in augmented positions (FIFO)"""
    epochs: int = 5
    """at most this many Adam steps per mini-batch (fewer when the KL grows too fast)"""
    kl_targ: float = 0.02
    """KL target between the policy before and after an update"""
    games_per_iter: int = 8
    """self-play games per iteration (played in lockstep)"""
    updates_per_iter: int = 2
    """mini-batch updates per iteration, once the buffer holds more than a batch"""
    check_freq: int = 50
    """iterations between evaluations against the evaluation opponent"""
    game_batch_num: int = 1500
    """iterations in the whole run"""
    eval_games: int = 10
    """games per evaluation, colours alternating"""
    pure_playout_start: int = 1000
    """pure MCTS playouts at the first evaluation"""
    pure_playout_step: int = 1000
    """added to the pure MCTS playouts each time the best model scores 1.0"""
    pure_playout_max: int = 5000
    """pure MCTS playouts stop growing here"""
    eval_opponent: str = "pure"
    """who the net plays in evaluations: 'pure' (pure MCTS, its playouts rising by pure_playout_step) or 'heuristic' (the threat-aware heuristic, its level rising by one)"""
    heuristic_level_start: int = 1
    """the heuristic's level at the first evaluation, when eval_opponent is 'heuristic'"""
    dirichlet_alpha: float = 0.3
    """Dirichlet noise concentration for self-play moves"""
    noise_frac: float = 0.25
    """weight of the noise in the self-play move distribution"""
    explore_moves: int = 0
    """self-play samples only the first this many moves of a game, then plays the most visited (0: all)"""
    arch: str = "reference"
    """network: 'reference' (SPEC section 3) or 'resnet'"""
    res_blocks: int = 4
    """residual blocks when arch is 'resnet'"""
    res_filters: int = 64
    """residual channels when arch is 'resnet'"""
    parallel_games: int = 0
    """self-play games in lockstep per worker (the net's batch size); 0 picks 32 on a CPU, 128 on a GPU"""
    workers: int = 0
    """self-play processes; 0 uses the CPU cores there are (1 plays in the trainer's process)"""
    device: str = "auto"
    """cpu, gpu, or auto (the GPU when Paddle has one)"""
    seed: int = 0
    """seed for self-play, sampling and the net's initial weights"""

    def validate(self) -> "TrainConfig":
        """Raises ValueError with a clear message for settings that cannot work."""
        if self.width < self.n_in_row or self.height < self.n_in_row:
            raise ValueError(f"a {self.width}x{self.height} board cannot hold {self.n_in_row} in a row")
        positive = ("width", "height", "n_in_row", "n_playout", "batch_size", "buffer_size", "epochs",
                    "games_per_iter", "check_freq", "game_batch_num", "eval_games",
                    "pure_playout_start")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("updates_per_iter", "explore_moves", "parallel_games", "workers",
                     "pure_playout_step", "res_blocks"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        if self.lr <= 0 or self.kl_targ <= 0 or self.c_puct <= 0:
            raise ValueError("lr, kl_targ and c_puct must be positive")
        if self.batch_size > self.buffer_size:
            raise ValueError(f"batch_size {self.batch_size} is larger than buffer_size {self.buffer_size}")
        if self.device not in ("cpu", "gpu", "auto"):
            raise ValueError(f"device must be cpu, gpu or auto, got {self.device!r}")
        if self.eval_opponent not in ("pure", "heuristic"):
            raise ValueError(f"eval_opponent must be 'pure' or 'heuristic', got {self.eval_opponent!r}")
        if self.heuristic_level_start not in LEVELS:
            raise ValueError(f"heuristic_level_start must be one of {', '.join(map(str, LEVELS))}, "
                             f"got {self.heuristic_level_start}")
        if self.arch not in ("reference", "resnet"):
            raise ValueError(f"arch must be 'reference' or 'resnet', got {self.arch!r}")
        return self

    def n_workers(self) -> int:
        return self.workers or max(1, os.cpu_count() or 1)

    def games_in_lockstep(self, device: str = "cpu") -> int:
        """Self-play games each worker keeps in progress (they carry over between iterations)."""
        return self.parallel_games or (128 if device == "gpu" else 32)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


PRESETS = {
    "6x6x4": dict(width=6, height=6, n_in_row=4),
    "8x8x5": dict(width=8, height=8, n_in_row=5),
    # Pure MCTS is no yardstick on 15x15 (a shallow threat search beats 5000 playouts).
    "15x15x5": dict(width=15, height=15, n_in_row=5, n_playout=800, buffer_size=50000,
                    eval_opponent="heuristic"),
}
DEFAULT_PRESET = "8x8x5"


def preset(name: str, **overrides) -> TrainConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}: choose one of {', '.join(PRESETS)}")
    return replace(TrainConfig(**PRESETS[name]), **overrides)


def field_docs(cls=TrainConfig) -> dict[str, str]:
    """The docstring under each field of a dataclass, read from its source."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body
    docs = {}
    for stmt, following in zip(body, body[1:]):
        if (isinstance(stmt, ast.AnnAssign) and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant) and isinstance(following.value.value, str)):
            docs[stmt.target.id] = following.value.value.strip()
    return docs
