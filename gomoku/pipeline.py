"""TrainPipeline: self-play -> 8-fold augmentation -> replay buffer -> KL-adaptive Adam -> evaluation.

One iteration plays ``games_per_iter`` self-play games (in lockstep, over the
worker processes) and runs ``updates_per_iter`` updates, then adds the games'
positions under every board symmetry to a FIFO replay buffer. With worker
processes the two overlap: the workers play with the weights as they were when
the iteration began while the learner updates them, so no core waits for the
other half. The updates therefore sample the buffer as the previous iteration
left it; in one process the games are played first and the updates follow, in
the same order of data. An update samples a
mini-batch and takes up to ``epochs`` Adam steps on it at
``lr * lr_multiplier``, stopping early once the KL divergence from the policy
before the update exceeds ``4 * kl_targ``; the multiplier then adapts (SPEC
section 6). Every ``check_freq`` iterations the net plays pure MCTS.

A run lives in one directory:

* ``checkpoint.pkl``: everything needed to go on exactly where it stopped
  (config, weights, Adam state, lr multiplier, iteration, best win ratio, pure
  MCTS playouts, the replay buffer, the random state, counters), rewritten
  atomically after every iteration;
* ``current_model.npz`` / ``best_model.npz``: model files, after each evaluation;
* ``metrics.jsonl``: one JSON object per iteration and per evaluation.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import shutil
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from gomoku import interrupt
from gomoku.config import TrainConfig
from gomoku.net import NetEvaluator, NetSpec, PolicyValueModel
from gomoku.selfplay import RunStats, training_arrays
from gomoku.symmetry import augment
from gomoku.util import atomic_write
from gomoku.workers import EvalTask, SelfPlayTask, TaskRunner, make_pool, split

CHECKPOINT = "checkpoint.pkl"
CHECKPOINT_MAGIC = b"GOMOKU-ZERO-CKPT-1\n"
METRICS = "metrics.jsonl"


class CheckpointError(ValueError):
    """A checkpoint that is missing, truncated, corrupted or from another version."""


class RunBusyError(RuntimeError):
    """Another trainer is already working in this run directory."""


def lock_run_dir(run_dir: str):
    """Takes the run directory's lock for this process (released when it exits, even on kill -9).

    Raises:
        RunBusyError: another live process holds it: two trainers would overwrite
            each other's checkpoints.
    """
    os.makedirs(run_dir, exist_ok=True)
    handle = open(os.path.join(run_dir, "lock"), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        owner = handle.read().strip() or "unknown"
        handle.close()
        raise RunBusyError(f"another trainer (pid {owner}) is using {run_dir}; stop it first") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


class ReplayBuffer:
    """A FIFO of the last ``capacity`` training positions, kept as ring arrays.

    Planes are stored as uint8 (they are 0/1), move probabilities and outcomes as float32.
    """

    def __init__(self, capacity: int, planes_shape: tuple, n_moves: int):
        self.capacity = capacity
        self.planes = np.zeros((capacity, *planes_shape), dtype=np.uint8)
        self.pis = np.zeros((capacity, n_moves), dtype=np.float32)
        self.zs = np.zeros(capacity, dtype=np.float32)
        self.count = 0  # filled rows
        self.head = 0  # next row to write

    def __len__(self) -> int:
        return self.count

    def extend(self, planes: np.ndarray, pis: np.ndarray, zs: np.ndarray) -> None:
        if len(planes) > self.capacity:  # only the newest fit
            planes, pis, zs = planes[-self.capacity:], pis[-self.capacity:], zs[-self.capacity:]
        rows = (self.head + np.arange(len(planes))) % self.capacity
        self.planes[rows] = planes
        self.pis[rows] = pis
        self.zs[rows] = zs
        self.head = int((self.head + len(planes)) % self.capacity)
        self.count = min(self.capacity, self.count + len(planes))

    def sample(self, n: int, rng: np.random.Generator):
        rows = rng.choice(self.count, size=n, replace=False)
        return self.planes[rows].astype(np.float32), self.pis[rows], self.zs[rows]

    def state(self) -> dict:
        order = (self.head - self.count + np.arange(self.count)) % self.capacity  # oldest first
        return {"planes": self.planes[order], "pis": self.pis[order], "zs": self.zs[order]}

    def load_state(self, state: dict) -> None:
        self.count = self.head = 0
        self.extend(state["planes"], state["pis"], state["zs"])


@dataclass
class UpdateResult:
    loss: float
    entropy: float
    kl: float
    lr_multiplier: float
    steps: int


def kl_divergence(log_p_old: np.ndarray, log_p_new: np.ndarray) -> float:
    """``mean(sum(p_old * (log p_old - log p_new)))`` over a batch."""
    return float(np.mean(np.sum(np.exp(log_p_old) * (log_p_old - log_p_new), axis=1)))


class TrainPipeline:
    """Wires self-play, the buffer, updates, evaluation and checkpoints for one run.

    Args:
        config: the run's settings.
        run_dir: where checkpoints, models and metrics go.
        log: where progress lines go (print by default).
        init_model: a model file to start from instead of random weights.
    """

    def __init__(self, config: TrainConfig, run_dir: str, log: Callable[[str], None] = print,
                 init_model: Optional[str] = None):
        self.config = config.validate()
        self.run_dir = run_dir
        self.log = log
        self.spec = NetSpec.for_config(config)
        import paddle

        paddle.seed(config.seed)
        threads = 1 if config.n_workers() > 1 else (os.cpu_count() or 1)
        if init_model is not None:
            self.model = PolicyValueModel.load(init_model, device=config.device, expect=self.spec,
                                               weight_decay=config.weight_decay, threads=threads)
            self.spec = self.model.spec
        else:
            self.model = PolicyValueModel(self.spec, device=config.device,
                                          weight_decay=config.weight_decay, threads=threads)
        self.evaluator = NetEvaluator(self.model)
        self.buffer = ReplayBuffer(config.buffer_size, (4, config.height, config.width),
                                   config.width * config.height)
        self.rng = np.random.default_rng(config.seed)
        self.iteration = 0
        self.lr_multiplier = 1.0
        self.best_win_ratio = 0.0
        self.pure_playouts = config.pure_playout_start
        self.games = 0
        self.positions = 0
        self.elapsed = 0.0  # seconds of training across sessions
        self.pool = None
        self._runner = TaskRunner()  # plays tasks in this process when there is no pool
        self._version = 0  # bumps whenever the weights change, so workers reload
        self._exported = -1  # the version last exported for the workers

    # --------------------------------------------------------------- resume
    @classmethod
    def resume(cls, run_dir: str, log: Callable[[str], None] = print, **overrides) -> "TrainPipeline":
        """Rebuilds a pipeline from ``run_dir/checkpoint.pkl``.

        ``overrides`` may change settings that do not alter the board or the net
        (for example ``game_batch_num``, ``workers`` or ``device``).

        Raises:
            CheckpointError: no checkpoint, or one that cannot be read.
            ValueError: an override that would change the board or the net.
        """
        state = read_checkpoint(os.path.join(run_dir, CHECKPOINT))
        config = TrainConfig.from_dict(state["config"])
        fixed = ("width", "height", "n_in_row", "arch", "res_blocks", "res_filters")
        for key, value in overrides.items():
            if key in fixed and value != getattr(config, key):
                raise ValueError(f"cannot change {key} of an existing run ({getattr(config, key)} -> {value})")
            setattr(config, key, value)
        pipeline = cls(config, run_dir, log)
        pipeline.model.set_weights(state["weights"])
        pipeline.model.set_optimizer_state(state["optimizer"])
        pipeline.buffer.load_state(state["buffer"])
        pipeline.rng.bit_generator.state = state["rng"]
        for key in ("iteration", "lr_multiplier", "best_win_ratio", "pure_playouts", "games",
                    "positions", "elapsed"):
            setattr(pipeline, key, state[key])
        return pipeline

    def checkpoint_state(self) -> dict:
        return {
            "config": self.config.to_dict(),
            "weights": self.model.weights(),
            "optimizer": self.model.optimizer_state(),
            "buffer": self.buffer.state(),
            "rng": self.rng.bit_generator.state,
            "iteration": self.iteration,
            "lr_multiplier": self.lr_multiplier,
            "best_win_ratio": self.best_win_ratio,
            "pure_playouts": self.pure_playouts,
            "games": self.games,
            "positions": self.positions,
            "elapsed": self.elapsed,
        }

    def save_checkpoint(self) -> None:
        write_checkpoint(os.path.join(self.run_dir, CHECKPOINT), self.checkpoint_state())

    # ------------------------------------------------------------ the loop
    def run(self, iterations: Optional[int] = None) -> None:
        """Trains until ``game_batch_num`` iterations (or ``iterations`` more).

        Ctrl-C stops after saving a checkpoint of the last finished iteration.
        """
        cfg = self.config
        lock = lock_run_dir(self.run_dir)
        end = cfg.game_batch_num if iterations is None else min(cfg.game_batch_num, self.iteration + iterations)
        # Ctrl-C and `kill` both stop cleanly, at the next safe point (see gomoku/interrupt.py),
        # also when a shell started us with SIGINT ignored.
        with interrupt.deferred():
            try:
                self.pool = make_pool(cfg.n_workers(), self.model.device)
                self.log(f"run {self.run_dir}: {cfg.width}x{cfg.height}, {cfg.n_in_row} in a row, "
                         f"{cfg.n_playout} playouts, {cfg.n_workers()} worker(s) x "
                         f"{cfg.games_in_lockstep(self.model.device)} games in lockstep, "
                         f"device {self.model.device}; iteration {self.iteration} of {cfg.game_batch_num}")
                while self.iteration < end:
                    interrupt.check()
                    self.run_iteration()
            except KeyboardInterrupt:
                if os.path.exists(os.path.join(self.run_dir, CHECKPOINT)):
                    self.log(f"interrupted: the checkpoint holds iteration {self.iteration}; "
                             f"resume with: python train.py --resume {self.run_dir}")
                else:
                    self.log("interrupted before the first iteration finished: there is no "
                             "checkpoint to resume, so start the run afresh")
            finally:
                if self.pool is not None:
                    self.pool.close()
                    self.pool = None
                lock.close()

    def run_iteration(self) -> dict:
        """One iteration: self-play alongside the updates, buffer, maybe an evaluation, checkpoint."""
        cfg = self.config
        start = time.perf_counter()
        finish_self_play = self.start_self_play()
        update_start = time.perf_counter()
        update = None
        if len(self.buffer) > cfg.batch_size:
            for _ in range(cfg.updates_per_iter):
                interrupt.check()
                update = self.update()
        update_s = time.perf_counter() - update_start
        games, stats = finish_self_play()
        planes, pis, zs = training_arrays(games)
        self.buffer.extend(*augment(planes, pis, zs))
        self.games += len(games)
        self.positions += len(planes)

        self.iteration += 1
        record = {
            "event": "iteration", "iteration": self.iteration, "games": self.games,
            "episode_len": round(len(planes) / len(games), 2), "buffer": len(self.buffer),
            # None when the workers had the games ready (played ahead in the last iteration)
            "playouts_per_s": round(stats.playouts / stats.seconds) if stats.playouts else None,
            "selfplay_s": round(stats.seconds, 2), "update_s": round(update_s, 2),
        }
        if update is not None:
            record.update(loss=round(update.loss, 4), entropy=round(update.entropy, 4),
                          kl=round(update.kl, 5), lr_multiplier=round(update.lr_multiplier, 4))
        if self.iteration % cfg.check_freq == 0:
            record_eval = self.evaluate()
        else:
            record_eval = None
        self.elapsed += time.perf_counter() - start
        record["wall_s"] = round(self.elapsed, 1)
        self.save_checkpoint()
        self._append_metrics(record)
        self.log(_format_iteration(record))
        if record_eval is not None:
            self._append_metrics(record_eval)
            self.log(_format_eval(record_eval))
        return record

    # ------------------------------------------------------------ self-play
    def _tasks(self, make, n_games: int) -> list:
        workers = len(self.pool) if self.pool is not None else 1
        shares = split(n_games, workers)
        tasks, first = [], 0
        for share in shares:
            tasks.append(make(share, first))
            first += share
        return tasks

    def _start_tasks(self, tasks: list) -> Callable[[], list]:
        """Starts ``tasks`` on the workers with the current weights; the returned function
        waits for their results. Without workers the tasks are played here, at once."""
        if self.pool is None:
            results = [self._runner.run(task, self.evaluator, self._version) for task in tasks]
            return lambda: results
        model_dir = os.path.join(self.run_dir, "inference")
        if self._exported != self._version:
            shutil.rmtree(model_dir, ignore_errors=True)
            os.makedirs(model_dir)
            self.model.export_inference(model_dir)
            self._exported = self._version
        self.pool.submit(tasks, model_dir, self._version)
        return self.pool.collect

    def _run_tasks(self, tasks: list) -> list:
        return self._start_tasks(tasks)()

    def start_self_play(self) -> Callable[[], tuple]:
        """Starts ``games_per_iter`` self-play games; the returned function gives ``(games, stats)``."""
        cfg = self.config
        seed = int(self.rng.integers(2**31))
        parallel = cfg.games_in_lockstep(self.model.device)

        def make(n, first):
            return SelfPlayTask((cfg.width, cfg.height, cfg.n_in_row), n, parallel, cfg.n_playout,
                                cfg.c_puct, seed + first, cfg.dirichlet_alpha, cfg.noise_frac,
                                cfg.explore_moves)

        finish = self._start_tasks(self._tasks(make, cfg.games_per_iter))
        return lambda: _merge(finish())

    # --------------------------------------------------------------- update
    def update(self) -> UpdateResult:
        """One KL-adaptive update on a fresh mini-batch (SPEC section 6, step 4)."""
        cfg = self.config
        planes, pis, zs = self.buffer.sample(cfg.batch_size, self.rng)
        fit = self.model.fit_batch(planes, pis, zs)
        old_log_p = fit.log_p
        kl = 0.0
        steps = 0
        for _ in range(cfg.epochs):
            loss, entropy = fit.step(cfg.lr * self.lr_multiplier)
            steps += 1
            kl = kl_divergence(old_log_p, fit.log_p)
            if kl > cfg.kl_targ * 4:
                break
        if kl > cfg.kl_targ * 2 and self.lr_multiplier > 0.1:
            self.lr_multiplier /= 1.5
        elif kl < cfg.kl_targ / 2 and self.lr_multiplier < 10:
            self.lr_multiplier *= 1.5
        self._version += 1
        self.evaluator.clear_cache()
        return UpdateResult(loss, entropy, kl, self.lr_multiplier, steps)

    # ------------------------------------------------------------- evaluate
    def evaluate(self) -> dict:
        """Net against pure MCTS; saves the current model and, if better, the best one."""
        cfg = self.config
        start = time.perf_counter()
        seed = int(self.rng.integers(2**31))
        pure = self.pure_playouts
        workers = len(self.pool) if self.pool is not None else 1
        parallel = max(1, -(-cfg.eval_games // workers))
        tasks = self._tasks(lambda n, first: EvalTask(
            (cfg.width, cfg.height, cfg.n_in_row), n, first, parallel, cfg.n_playout, pure,
            cfg.c_puct, seed + first), cfg.eval_games)
        wins = draws = losses = 0
        for task, (games, _) in zip(tasks, self._run_tasks(tasks)):
            for i, game in enumerate(games):
                if game.winner == 0:
                    draws += 1
                elif game.winner == task.net_colour(i):
                    wins += 1
                else:
                    losses += 1
        win_ratio = (wins + 0.5 * draws) / cfg.eval_games
        self.model.save(os.path.join(self.run_dir, "current_model.npz"))
        new_best = win_ratio > self.best_win_ratio
        if new_best:
            self.best_win_ratio = win_ratio
            self.model.save(os.path.join(self.run_dir, "best_model.npz"))
            if self.best_win_ratio == 1.0 and self.pure_playouts < cfg.pure_playout_max:
                self.pure_playouts = min(cfg.pure_playout_max, self.pure_playouts + cfg.pure_playout_step)
                self.best_win_ratio = 0.0
        return {"event": "evaluation", "iteration": self.iteration, "pure_playouts": pure,
                "wins": wins, "draws": draws, "losses": losses, "win_ratio": win_ratio,
                "new_best": new_best, "eval_s": round(time.perf_counter() - start, 1)}

    def _append_metrics(self, record: dict) -> None:
        with open(os.path.join(self.run_dir, METRICS), "a") as f:
            f.write(json.dumps(record) + "\n")


def _merge(results: list):
    """Joins the workers' ``(games, stats)``; the seconds are the slowest worker's, as they ran side by side."""
    games, total = [], RunStats()
    for records, stats in results:
        games.extend(records)
        total.add(stats)
    total.seconds = max(stats.seconds for _, stats in results)
    return games, total


def _format_iteration(r: dict) -> str:
    line = (f"iter {r['iteration']:>5}  games {r['games']:>6}  len {r['episode_len']:>5.1f}  "
            f"{'-' if r['playouts_per_s'] is None else r['playouts_per_s']:>6} playouts/s")
    if "loss" in r:
        line += (f"  loss {r['loss']:.3f}  entropy {r['entropy']:.3f}  kl {r['kl']:.4f}  "
                 f"lr x{r['lr_multiplier']:.3f}")
    else:
        line += f"  (filling the buffer: {r['buffer']})"
    return line + f"  [{r['wall_s']:.0f}s]"


def _format_eval(r: dict) -> str:
    best = "  new best" if r["new_best"] else ""
    return (f"  eval vs pure MCTS {r['pure_playouts']}: {r['wins']}W {r['draws']}D {r['losses']}L "
            f"win ratio {r['win_ratio']:.2f}{best}  ({r['eval_s']}s)")


def write_checkpoint(path: str, state: dict) -> None:
    """Pickles ``state`` behind a magic line and a SHA-256, atomically."""
    payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.sha256(payload).hexdigest().encode()

    def write(f):
        f.write(CHECKPOINT_MAGIC)
        f.write(digest + b"\n")
        f.write(payload)

    atomic_write(path, write)


def read_checkpoint(path: str) -> dict:
    """Reads a checkpoint, checking its magic line and digest first.

    Raises:
        CheckpointError: missing, truncated, corrupted, or not a checkpoint.
    """
    if not os.path.isfile(path):
        raise CheckpointError(f"no checkpoint at {path}: is this a run directory of train.py?")
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(CHECKPOINT_MAGIC):
        raise CheckpointError(f"{path} is not a Gomoku Zero checkpoint")
    rest = data[len(CHECKPOINT_MAGIC):]
    digest, _, payload = rest.partition(b"\n")
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        raise CheckpointError(f"{path} is corrupted or truncated (its checksum does not match)")
    try:
        return pickle.loads(payload)
    except Exception as exc:
        raise CheckpointError(f"{path} cannot be read ({exc})") from None
