"""The training configuration: one dataclass, a docstring per field, and presets.

Defaults are those of docs/algorithm.md, section 6 where it gives one. ``train.py`` turns
every field into a flag (``n_playout`` -> ``--n-playout``); library code takes a
``TrainConfig`` and reads nothing else.
"""

from __future__ import annotations

import argparse
import ast
import inspect
from dataclasses import asdict, dataclass, fields, replace

from gomoku.game.features import check_input_version
from gomoku.game.openings import book_for_board, check_opening_stones
from gomoku.game.rules import check_rule
from gomoku.search.gumbel import check_gumbel
from gomoku.search.heuristic import check_level
from gomoku.search.playout_cap import check_playout_cap
from gomoku.net.flags import DEVICES, PRECISIONS
from gomoku.net.spec import ARCHS, NetSpec, arch_name, trunk_settings
from gomoku.search.recipe import SelfPlayRecipe, check_root_search
from gomoku.search.tree_threats import VctBudgets, check_vct_budgets
from gomoku.util import board_size_arg, usable_cpus


@dataclass
class TrainConfig:
    width: int = 8
    """board width"""
    height: int = 8
    """board height"""
    n_in_row: int = 5
    """stones in a row that win"""
    rule: str = "freestyle"
    """the rule's name, one of gomoku.game.rules.RULES (freestyle: n_in_row or more wins; the others are described by 'python play.py --help' and docs/algorithm.md, section 1; renju is usually played on 15x15); with --init-model, a model trained under another rule is carried over to this one"""
    n_playout: int = SelfPlayRecipe.n_playout
    """MCTS playouts per move, in self-play and for the net in evaluation"""
    c_puct: float = SelfPlayRecipe.c_puct
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
    fresh_batches: bool = True
    """each Adam step of an update draws its own mini-batch from the window (off: every step repeats the update's one batch, as AlphaZero-Gomoku's recipe does)"""
    window_floor: int = 0
    """updates draw from the newest positions only: all of them up to this many, then a window that grows with the positions made (KataGo's rule, gomoku/train/replay.py), at most buffer_size; 0: the whole buffer"""
    average_decay: float = 0.95
    """an exponential moving average of the weights, updated after every Adam step with this decay, plays self-play and evaluations and is saved as the model (its batch norm statistics measured on the window); 0: the trained weights play"""
    lr_patience: int = 0
    """the step schedule: after this many iterations with neither a better probe cross-entropy nor a passed gate, the learning rate is cut by lr_cut (0: no schedule, the KL rule alone)"""
    lr_cut: float = 0.5
    """the step schedule's cut"""
    lr_scale_min: float = 0.0625
    """the step schedule cuts no further than this share of lr"""
    lr_min_delta: float = 0.002
    """the step schedule: the probe's cross-entropy (nats) must fall by more than this to count as better"""
    games_per_iter: int = 8
    """self-play games per iteration (played in lockstep)"""
    updates_per_iter: int = 2
    """mini-batch updates per iteration, once the buffer holds more than a batch (from a trained model: warm_start_fill of it)"""
    warm_start_fill: float = 0.2
    """a run from a trained model (--init-model) makes its first update once its buffer holds this share of buffer_size, not a batch: a few hundred fresh positions, repeated in every mini-batch, would overfit the net and undo part of what it knew (gomoku/train/warm_start.py)"""
    lr_multiplier_start: float = 0.0
    """the adaptive learning-rate multiplier a new run starts at; 0: 1 from random weights, and from --init-model the multiplier the model's own run had reached (the record scripts/ship_model.py writes beside the model keeps it), else 1"""
    check_freq: int = 50
    """iterations between evaluations: the gate against the best model, then the evaluation opponent"""
    gate_games: int = 20
    """games of the gate at each evaluation: the model plays the run's best model (best_model.npz) from balanced openings (else openings of eval_opening_stones or 2 random stones), each opening with colours swapped, and replaces it when it scores more than gate_score; 0: no gate, the best model is the one that did best against the evaluation opponent"""
    gate_score: float = 0.5
    """the gate's score the model must exceed to become the best model"""
    game_batch_num: int = 1500
    """iterations in the whole run"""
    eval_games: int = 10
    """games per evaluation, colours alternating"""
    eval_playouts: int = 0
    """the net's PUCT playouts a move in evaluations; 0: n_playout (set it when self-play searches few, e.g. with --root-search gumbel)"""
    eval_opening_stones: int = 0
    """evaluation games start from openings of this many random central stones, each opening played twice with colours swapped, as in the arena: more distinct games against a deterministic opponent (0: every game from the empty board)"""
    pure_playout_start: int = 1000
    """pure MCTS playouts at the first evaluation"""
    pure_playout_step: int = 1000
    """added to the pure MCTS playouts each time the best model scores 1.0"""
    pure_playout_max: int = 5000
    """pure MCTS playouts stop growing here"""
    eval_opponent: str = "pure"
    """who the net plays in evaluations: 'pure' (pure MCTS, its playouts rising by pure_playout_step), 'heuristic' (the threat-aware heuristic, its level rising by one), or any other player spec the arena reads, played as written with no ladder, e.g. 'engine:COMMAND' (a Gomocup engine's command line), 'heuristic:3', 'az:MODEL:N'"""
    engine_info: str = ""
    """INFO lines for an engine:COMMAND evaluation opponent, "KEY VALUE;KEY VALUE" (e.g. "timeout_turn 1000;max_node 10000")"""
    heuristic_level_start: int = 0
    """the heuristic's level at the first evaluation, when eval_opponent is 'heuristic'"""
    probe_games: str = ""
    """engine-against-engine games (gomoku-arena --out), or 'rapfi' (the probe that ships for the run's largest board and rule, gomoku/data): after every iteration the net alone is scored on their positions, how often its first choice is the engine's move and how well its value foresees the result (gomoku/train/probe.py), in the metrics and the log line; seconds, where a match takes many minutes; empty: none"""
    dirichlet_alpha: float = SelfPlayRecipe.dirichlet_alpha
    """Dirichlet noise concentration for self-play moves"""
    noise_frac: float = SelfPlayRecipe.noise_frac
    """weight of the noise in the self-play move distribution"""
    explore_moves: int = SelfPlayRecipe.explore_moves
    """self-play samples only the first this many moves of a game, then plays the most visited (0: all)"""
    p_full: float = SelfPlayRecipe.p_full
    """playout cap randomisation (KataGo, Wu 2019): the chance a self-play move gets the full search
    (n_playout playouts, noise) and is recorded for training; the other moves get n_fast playouts, no
    noise, and are played but not recorded (KataGo: 0.25; 1 turns it off)"""
    n_fast: int = SelfPlayRecipe.n_fast
    """playouts of a fast search under playout cap randomisation (KataGo: 100 against 600 full)"""
    forced_k: float = SelfPlayRecipe.forced_k
    """forced playouts and policy-target pruning (KataGo, Wu 2019): root children with
    N < sqrt(k P sum N) are visited first, and those visits are pruned from the training pi
    (KataGo: 2; 0 turns it off)"""
    root_search: str = SelfPlayRecipe.root_search
    """self-play search: 'puct' (AlphaZero, visit-count targets) or 'gumbel' (Danihelka et al. 2022:
    Gumbel sampling, sequential halving, completed-Q targets; n_playout simulations per move)"""
    gumbel_m: int = SelfPlayRecipe.gumbel_m
    """Gumbel root search: at most this many root moves are sampled (paper: 16)"""
    gumbel_c_visit: float = SelfPlayRecipe.gumbel_c_visit
    """Gumbel root search: c_visit of sigma(q) = (c_visit + max N) c_scale q (paper and mctx: 50)"""
    gumbel_c_scale: float = SelfPlayRecipe.gumbel_c_scale
    """Gumbel root search: c_scale of sigma(q) (paper: 1.0; DeepMind's mctx: 0.1)"""
    openings: str = ""
    """an openings file, or 'balanced' (the project's balanced openings, gomoku/data; a file there may be named without its folder and .txt): on a board the file is for, openings_share of the self-play games start from one of its openings, drawn at random (the other games as opening_stones says); empty: none"""
    openings_share: float = 0.5
    """the share of self-play games that start from --openings, on its board"""
    eval_openings: str = ""
    """an openings file, or 'balanced': evaluation games on its board start from its openings, each played twice with colours swapped, instead of eval_opening_stones random stones (empty: none)"""
    opening_stones: int = 0
    """self-play games start from 0 to this many random stones near the centre (each count as often; drawn like the arena's openings; placed, not searched, so no training position comes from them): the opening variety the arena and people play; 0: every game from the empty board"""
    win_check: bool = SelfPlayRecipe.win_check
    """on: the self-play and evaluation searches treat a new node whose player to move can complete a line as won, without asking the net, so a move that leaves the opponent a winning line is valued -1 on its first visit (off: the plain search, which learns that from the net)"""
    threats: bool = SelfPlayRecipe.threats
    """on: the self-play and evaluation searches look for a VCF (continuous fours) at each new node before asking the net, counting one found as a proven win, and at the root play their own forced win or keep only the moves that stop the opponent's (includes the in-tree solver and the win check)"""
    vct_depth: int = SelfPlayRecipe.vct_depth
    """with threats: threes in one line of the root's VCT searches (victory by continuous threats: the player's own, and the opponent's that a move must stop) in self-play's full searches; the fast searches of playout cap randomisation and the evaluations keep the default"""
    vct_nodes: int = SelfPlayRecipe.vct_nodes
    """with threats: nodes of each of the root's two VCT searches in self-play's full searches, and the most a move checked against the opponent's VCT gets (fast searches and evaluations keep the default)"""
    defence_vct_nodes: int = SelfPlayRecipe.defence_vct_nodes
    """with threats: the fewest nodes a root move checked against the opponent's VCT gets in self-play's full searches (twice what found the VCT, within this and vct_nodes)"""
    value_mix: float = 0.0
    """value target mixing: z' = (1 - value_mix) z + value_mix Q_root for recorded positions (0: z)"""
    arch: str = "sizefree"
    """network: 'sizefree' (fully convolutional: one net for every board size; the default because it won the time-to-strength race, see docs/training.md), 'conv3' (three convolutions and dense heads sized to one board, docs/algorithm.md, section 3) or 'resnet'"""
    res_blocks: int = 4
    """residual blocks when arch is 'resnet'"""
    res_filters: int = 64
    """residual channels when arch is 'resnet'"""
    sizefree_blocks: int = 4
    """residual blocks when arch is 'sizefree'"""
    sizefree_filters: int = 32
    """residual channels when arch is 'sizefree' (on one CPU thread 32 run several times faster than 64)"""
    global_pool: int = 0
    """residual blocks of the size-free net that also pool a few channels over the whole board into a bias for the others (KataGo's global pooling; 0: none, at most sizefree_blocks); with --init-model and --grow, a net without it grows into one with it and plays as before"""
    inputs: int = 1
    """the net's input version: 1 (stones, last move, who opened) or 2 (those and threat planes for each side: fives, fours, open fours, open threes, and whether each side has a VCF); with --init-model, a higher version than the model's carries it over (its new input channels start at zero weight, so it plays as before)"""
    sizes: str = ""
    """board sizes to train on, e.g. '9,11,15' (square) or '9x9,11x11'; more than one needs --arch sizefree, and each size keeps its own buffer of buffer_size positions; empty: width x height alone"""
    size_schedule: str = "mixed"
    """with several sizes: 'mixed' (self-play takes the sizes in turn, one per iteration; each mini-batch comes from one size, drawn in proportion to the positions held) or 'curriculum' (stage_iters iterations per size, smallest first, training on that size's positions alone; the largest runs to the end). Evaluation plays on the largest size in play"""
    stage_iters: int = 100
    """iterations on each size but the largest in a curriculum"""
    parallel_games: int = 0
    """self-play games in lockstep per worker (the net's batch size); 0 picks 32 on a CPU, 512 on a GPU; 1 with one worker plays each game whole in the trainer's process, on the Python search trees (slow: the path to read)"""
    workers: int = 0
    """self-play processes; 0 uses the CPU cores there are (1 plays in the trainer's process); with --actors ray, Ray actors (0: one per CPU of the cluster)"""
    device: str = "auto"
    """cpu, gpu, or auto (the GPU when Paddle has one)"""
    precision: str = "auto"
    """the arithmetic of the net's inference in self-play and evaluation: fp32, bf16 (a CPU's oneDNN), or auto (bf16 where the CPU does bf16 natively, else fp32); training is always fp32"""
    actors: str = "local"
    """where games are played: 'local' (worker processes on this machine) or 'ray' (Ray actors)"""
    ray_address: str = ""
    """with --actors ray: '' starts a local Ray cluster; 'auto' or HOST:PORT joins a running one"""
    seed: int = 0
    """seed for self-play, sampling and the net's initial weights"""

    def __post_init__(self):
        self.arch = arch_name(self.arch)  # a checkpoint's or a flag's alias reads as its architecture

    def eval_player(self):
        """``eval_opponent`` read as a player spec, with ``engine_info``; on a ladder ('pure',
        'heuristic') the pipeline sets its playouts or level.

        Raises:
            ValueError: a spec the player registry cannot read, a human, or a model player without
                a model file (the message says which).
        """
        from gomoku.search.player_specs import PlayerSpec, parse_engine_info

        try:
            spec = PlayerSpec.parse(self.eval_opponent)
        except ValueError as exc:
            raise ValueError(f"eval_opponent must be 'pure', 'heuristic' or a player spec such as "
                             f"'engine:COMMAND': {exc}") from None
        if not spec.entry.ai or (spec.entry.model and not spec.model):
            raise ValueError(f"eval_opponent must be an AI player, a model player with its model file: "
                             f"got {self.eval_opponent!r}")
        return spec.with_engine_info(parse_engine_info(self.engine_info))

    def validate(self) -> "TrainConfig":
        """Raises ValueError with a clear message for settings that cannot work."""
        if self.width < self.n_in_row or self.height < self.n_in_row:
            raise ValueError(f"the board {self.width}x{self.height} cannot hold {self.n_in_row} in a row")
        positive = ("width", "height", "n_in_row", "n_playout", "batch_size", "buffer_size", "epochs",
                    "games_per_iter", "check_freq", "game_batch_num", "eval_games",
                    "pure_playout_start")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("updates_per_iter", "explore_moves", "parallel_games", "workers", "eval_playouts",
                     "pure_playout_step", "res_blocks", "sizefree_blocks", "global_pool"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        for name in ("lr", "kl_targ", "c_puct"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if not 0.0 <= self.warm_start_fill <= 1.0:
            raise ValueError(f"warm_start_fill must lie between 0 and 1, got {self.warm_start_fill}")
        if not 0.0 <= self.average_decay < 1.0:
            raise ValueError(f"average_decay must lie in [0, 1), got {self.average_decay}")
        for name in ("window_floor", "lr_patience", "gate_games"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")
        if not 0.0 < self.lr_cut < 1.0 or not 0.0 < self.lr_scale_min <= 1.0:
            raise ValueError(f"lr_cut must lie in (0, 1) and lr_scale_min in (0, 1], got {self.lr_cut} and "
                             f"{self.lr_scale_min}")
        if not 0.0 <= self.gate_score < 1.0:
            raise ValueError(f"gate_score must lie in [0, 1), got {self.gate_score}")
        if self.lr_multiplier_start < 0:
            raise ValueError(f"lr_multiplier_start must not be negative (0: from the model's record, else 1), "
                             f"got {self.lr_multiplier_start}")
        if self.batch_size > self.buffer_size:
            raise ValueError(f"batch_size {self.batch_size} is larger than buffer_size {self.buffer_size}")
        if self.device not in DEVICES:
            raise ValueError(f"device must be cpu, gpu or auto, got {self.device!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        if self.actors not in ("local", "ray"):
            raise ValueError(f"actors must be 'local' or 'ray', got {self.actors!r}")
        check_playout_cap(self.n_playout, self.p_full, self.n_fast)
        if not 0.0 <= self.value_mix <= 1.0:
            raise ValueError(f"value_mix must be in [0, 1], got {self.value_mix}")
        if self.p_full < 1.0 and self.n_fast > self.n_playout:
            raise ValueError(f"n_fast ({self.n_fast}) must not exceed n_playout ({self.n_playout}): "
                             f"the fast search is the cheap one")
        check_gumbel(self.gumbel_m, self.gumbel_c_visit, self.gumbel_c_scale)
        if self.forced_k < 0:
            raise ValueError(f"forced_k must not be negative, got {self.forced_k}")
        check_root_search(self.root_search)
        check_vct_budgets(self.vct_depth, self.vct_nodes, self.defence_vct_nodes)
        if not self.threats and VctBudgets(self.vct_depth, self.vct_nodes, self.defence_vct_nodes) != VctBudgets():
            raise ValueError("vct_depth, vct_nodes and defence_vct_nodes set the threat searches' budgets: "
                             "they need threats on")
        if self.root_search == "gumbel" and self.forced_k > 0:
            raise ValueError("forced_k is a PUCT option: Gumbel root search has no forced playouts")
        for field in fields(self):
            if field.type in (bool, "bool") and not isinstance(getattr(self, field.name), bool):
                raise ValueError(f"{field.name} must be True or False, got {getattr(self, field.name)!r}")
        if self.sizefree_filters < 1:
            raise ValueError(f"sizefree_filters must be at least 1, got {self.sizefree_filters}")
        if self.global_pool > self.sizefree_blocks:
            raise ValueError(f"global_pool {self.global_pool} is more than the {self.sizefree_blocks} sizefree_blocks")
        if self.arch not in ARCHS:
            raise ValueError(f"arch must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        sizes = self.board_sizes()
        for width, height in sizes:
            if width < self.n_in_row or height < self.n_in_row:
                raise ValueError(f"a {width}x{height} board in --sizes cannot hold {self.n_in_row} in a row")
            for stones in (self.opening_stones, self.eval_opening_stones):
                check_opening_stones(stones, width, height, self.n_in_row)
        for flag, name in (("openings", self.openings), ("eval_openings", self.eval_openings)):
            if name and not any(book_for_board(name, width, height, self.n_in_row, self.rule) for width, height in sizes):
                raise ValueError(f"--{flag.replace('_', '-')} {name}: its openings are for none of the run's "
                                 f"boards ({', '.join(f'{w}x{h}' for w, h in sizes)}, {self.n_in_row} in a row)")
        if not 0.0 <= self.openings_share <= 1.0:
            raise ValueError(f"openings_share must lie between 0 and 1, got {self.openings_share}")
        if len(sizes) > 1 and self.arch != "sizefree":
            raise ValueError(f"--sizes {self.sizes} trains on {len(sizes)} board sizes: only a size-free "
                             f"net can (add --arch sizefree); arch {self.arch!r} is sized to one board")
        if self.size_schedule not in ("mixed", "curriculum"):
            raise ValueError(f"size_schedule must be 'mixed' or 'curriculum', got {self.size_schedule!r}")
        if self.stage_iters < 1:
            raise ValueError(f"stage_iters must be at least 1, got {self.stage_iters}")
        self.eval_player()
        check_level(self.heuristic_level_start, "heuristic_level_start")
        check_input_version(self.inputs)
        check_rule(self.rule, self.n_in_row)
        return self

    def board_sizes(self) -> list[tuple[int, int]]:
        """The ``(width, height)`` boards of the run, smallest first: ``sizes``, else width x height.

        Raises:
            ValueError: ``sizes`` cannot be read.
        """
        if not self.sizes.strip():
            return [(self.width, self.height)]
        found = set()
        for part in self.sizes.replace(" ", "").split(","):
            try:
                found.add(board_size_arg(part))
            except argparse.ArgumentTypeError as exc:
                raise ValueError(f"cannot read {part!r} in --sizes {self.sizes!r} ({exc}): "
                                 f"use e.g. 9,11,15 or 9x9,15x15") from None
        return sorted(found, key=size_order)

    def size_of_iteration(self, iteration: int) -> tuple[int, int]:
        """The board iteration ``iteration`` (from 0) plays self-play on, by ``size_schedule``."""
        sizes = self.board_sizes()
        if self.size_schedule == "curriculum":
            return sizes[min(iteration // self.stage_iters, len(sizes) - 1)]
        return sizes[iteration % len(sizes)]

    def sizes_played(self, iteration: int) -> list[tuple[int, int]]:
        """The boards iterations 0 to ``iteration`` have played on, smallest first."""
        sizes = self.board_sizes()
        if self.size_schedule == "curriculum":
            return sizes[:min(iteration // self.stage_iters, len(sizes) - 1) + 1]
        return sorted({self.size_of_iteration(i) for i in range(min(iteration + 1, len(sizes)))},
                      key=size_order)

    def model_spec(self, iteration: int, earlier_sizes=()) -> NetSpec:
        """The net's spec after ``iteration`` iterations; a size-free net's names the boards it has
        trained on (``earlier_sizes``: those of the model the run started from), the largest its
        default board."""
        spec = NetSpec.for_config(self)
        if not spec.size_free:
            return spec
        sizes = sorted(set(self.sizes_played(iteration)) | set(earlier_sizes), key=size_order)
        width, height = sizes[-1]
        return replace(spec, width=width, height=height, trained_sizes=tuple(sizes))

    def with_net(self, spec: NetSpec) -> "TrainConfig":
        """These settings with the net ``spec`` describes (a run started from a model file
        trains that model's net, and its checkpoint and model files must say so)."""
        return replace(self, arch=spec.arch, inputs=spec.inputs, **trunk_settings(spec))

    def sizes_in_play(self, iteration: int) -> list[tuple[int, int]]:
        """The boards whose positions iteration ``iteration`` trains on: every size when mixed,
        the stage's own in a curriculum."""
        if self.size_schedule == "curriculum":
            return [self.size_of_iteration(iteration)]
        return self.board_sizes()

    def n_workers(self) -> int:
        return self.workers or usable_cpus()

    def games_in_lockstep(self, device: str = "cpu") -> int:
        """Self-play games each worker keeps in progress (they carry over between iterations)."""
        # On a GPU one process's search feeds the net far below its limit; batches of 512 from a
        # worker per core reached it on a 16-core H100 box (docs/results.md, oneoffs/gpu_sizing.py).
        return self.parallel_games or (512 if device == "gpu" else 32)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        # A config without a field keeps the behaviour it was written with: a conv3 net, and the
        # learner without fresh batches, window, average, schedule or gate.
        data = {"arch": "conv3", "fresh_batches": False, "average_decay": 0.0, "gate_games": 0, **data}
        switches = {f.name for f in fields(cls) if f.type in (bool, "bool")}
        # A checkpoint's config may hold a switch as 0 or 1.
        data = {k: (bool(v) if k in switches and v in (0, 1) else v) for k, v in data.items()}
        return cls(**{k: v for k, v in data.items() if k in known})


def size_order(size: tuple[int, int]) -> tuple:
    """Sort key of board sizes: by area, then by (width, height)."""
    return size[0] * size[1], size


PRESETS = {
    "6x6x4": dict(width=6, height=6, n_in_row=4),
    "8x8x5": dict(width=8, height=8, n_in_row=5),
    # The recipe the shipped 15x15 model trains with (docs/models.md), from random weights: a
    # size-free net on a 9x9 -> 11x11 -> 15x15 curriculum, Gumbel self-play with 64 simulations,
    # games from random central stones, the win check, and the heuristic ladder as the yardstick
    # (pure MCTS is none on 15x15: a shallow threat search beats 5000 playouts).
    "15x15x5": dict(width=15, height=15, n_in_row=5, arch="sizefree", sizes="9,11,15",
                    size_schedule="curriculum", stage_iters=100, root_search="gumbel", n_playout=64,
                    games_per_iter=32, opening_stones=2, win_check=True, buffer_size=50000,
                    eval_opponent="heuristic", eval_playouts=400, eval_opening_stones=2,
                    # What the 15x15 race chose: the threat solver in the search, the threat
                    # planes, and half of the 15x15 games from the balanced openings.
                    threats=True, inputs=2, openings="balanced", openings_share=0.5,
                    eval_openings="balanced",
                    # 128 games in lockstep: the net's batches of 128 run faster per position than
                    # batches of 32, most of all in bf16 (docs/results.md, Self-play and the net's limit).
                    parallel_games=128),
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
