"""TrainPipeline: self-play -> 8-fold augmentation -> replay buffer -> KL-adaptive Adam -> evaluation.

One iteration plays ``games_per_iter`` self-play games (in lockstep, over the worker processes)
and runs ``updates_per_iter`` updates, then adds the games' positions under every board symmetry to
a FIFO replay buffer. With worker processes the two overlap: the workers play with the weights as
they were when the iteration began while the learner updates them, so no core waits for the other
half. The updates therefore sample the buffer as the previous iteration left it; in one process the
games are played first and the updates follow, in the same order of data. The updates are the
learner's (``gomoku.train.learner``): KL-adaptive Adam steps on mini-batches from the window of the
newest positions, a step schedule, and the average of the weights that plays and is saved. Every
``check_freq`` iterations the run evaluates itself (``gomoku.train.evaluation``): a gate against
its best model, then a match against its evaluation opponent. Each iteration's figures go to
``metrics.jsonl``, the log line and the live view (``gomoku.train.live``, TensorBoard).

A size-free net may train on several board sizes (``sizes``): each iteration's self-play is on one
size, chosen by ``size_schedule`` (the sizes in turn, or a curriculum from the smallest up); every
size has its own FIFO, and each mini-batch comes from one size in play (``TrainConfig.sizes_in_play``).
Evaluation is on the largest size in play; when that size changes (a new stage of a curriculum) the
best win ratio starts again from 0, as the old one was measured on another board.

A run lives in one directory: its files are listed in ``checkpoint``, which writes and
locks it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import replace
from typing import Callable, Optional

import numpy as np

from gomoku import interrupt
from gomoku.progress import advance_to, progress_bar
from gomoku.game.features import input_channels
from gomoku.game.rules import FREESTYLE
from gomoku.game.symmetry import augment
from gomoku.net.device import device_report, precision_report
from gomoku.net.modelfile import CURRENT_MODEL, find_model
from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.spec import NET_SETTINGS, NetSpec
from gomoku.actors import (WORKER_NICE, Actors, InlineActors, SavedStreams, SelfPlaySettings, make_actors,
                           training_arrays)
from gomoku.train.checkpoint import (CHECKPOINT, discard_unstarted_run, lock_run_dir, read_checkpoint,
                                     write_checkpoint)
from gomoku.train.config import TrainConfig
from gomoku.train.evaluation import Evaluations
from gomoku.train.gate import gate_line
from gomoku.train.learner import Learner, UpdateResult
from gomoku.train.live import LiveView
from gomoku.train.metrics import METRICS, append_metrics, evaluation_line, iteration_line, utc_now
from gomoku.train.probe import load_probe
from gomoku.train.replay import SizedReplayBuffer, replay_window
from gomoku.train.warm_start import first_update_at, load_initial_model, record_of, starting_lr_multiplier
from gomoku.util import cpu_seconds, usable_cpus

__all__ = ["TrainPipeline", "UpdateResult"]


def _commands() -> tuple[str, str]:
    """How the user runs the trainer and the window, for the lines that say what to do next: the
    installed commands when the trainer was started as one, else the checkout's scripts."""
    if os.path.basename(sys.argv[0]) == "gomoku-train":
        return "gomoku-train", "gomoku-play"
    return "python train.py", "python play.py"


class TrainPipeline(Evaluations):
    """Wires self-play, the buffer, updates, evaluation and checkpoints for one run.

    Args:
        config: the run's settings.
        run_dir: where checkpoints, models and metrics go.
        log: where progress lines go (print by default).
        init_model: a model file to start from instead of random weights; the run goes on at
            the step the model's run had reached and waits for a share of its buffer before
            its first update (``gomoku.train.warm_start``).
        grow: grow the size-free ``init_model`` to the config's ``sizefree_blocks`` and
            ``sizefree_filters`` first (``gomoku.net.grow``: it plays as before until
            training uses the new blocks and channels). Without it the run's net is the
            model's own, whatever those settings say, but a later input version
            (``config.inputs``) carries it over (``gomoku.net.grow.carry_inputs``).
    """

    def __init__(self, config: TrainConfig, run_dir: str, log: Callable[[str], None] = print,
                 init_model: Optional[str] = None, grow: bool = False):
        config = config.validate()
        if grow and init_model is None:
            raise ValueError("growing a net needs a model to grow: give --init-model with --grow")
        self.run_dir = run_dir
        self.log = log
        self.spec = NetSpec.for_config(config)
        import paddle

        paddle.seed(config.seed)
        threads = 1 if config.n_workers() > 1 else usable_cpus()
        # How this process began the run, written to the metrics when run() starts: the model
        # record lists every start, so restarts and changed settings stay on record.
        start: dict = {"how": "new"}
        if init_model is not None:
            self.model, about = load_initial_model(config, init_model, grow, threads, log)
            start.update(about)
            self.spec = self.model.spec
            config = config.with_net(self.spec)  # what the checkpoint says must rebuild this net
        else:
            self.model = PolicyValueModel(self.spec, device=config.device,
                                          weight_decay=config.weight_decay, threads=threads,
                                          precision=config.precision)
        # the step a new run starts at, and the positions a board's buffer holds before the first
        # update on it: a trained net is not treated as random weights (gomoku.train.warm_start)
        # The initial model's record (None without one) stays in the checkpoint: the record of where
        # the run started, which scripts/ship_model.py puts under a shipped model's started_from.
        self.init_record = record_of(init_model) if init_model is not None else None
        lr_multiplier, source = starting_lr_multiplier(config, self.init_record)
        self.first_update_at = first_update_at(config, init_model is not None)
        if init_model is not None:
            start["lr_multiplier"] = lr_multiplier
            log(f"the adaptive step starts at x{lr_multiplier:.3g} ({source}); the first update "
                f"waits until the buffer holds {self.first_update_at} positions")
        # the boards an initial size-free model was trained on, still named in the files it becomes
        self.earlier_sizes = self.spec.trained_sizes if init_model is not None else ()
        """the boards the initial size-free model had trained on (its file names them too)"""
        self.start_record = start
        """how this process began the run (new, from a model, resumed with what changed): the start record"""
        self.config = config
        # the engine games the net is scored on after each iteration (gomoku.train.probe), if any
        self.probe = load_probe(config, self.spec) if config.probe_games else None
        self.buffer = SizedReplayBuffer(config.buffer_size, config.board_sizes(), input_channels(config.inputs))
        self.rng = np.random.default_rng(config.seed)
        # the updates, the step schedule and the average of the weights that plays (gomoku.train.learner)
        self.learner = Learner(self.model, config, self.rng, lr_multiplier)
        self.rows_made = 0  # positions added to the buffer over the run, symmetries included: the window grows with it
        self.live: Optional[LiveView] = None
        self._live_from: Optional[int] = None  # the iteration a resumed run's live view purges from
        self.iteration = 0
        self.best_win_ratio = 0.0
        self.pure_playouts = config.pure_playout_start
        self.eval_board: Optional[tuple] = None  # (width, height) of the last evaluation
        self.heuristic_level = config.heuristic_level_start
        self.games = 0
        self.positions = 0
        self.elapsed = self.cpu_elapsed = 0.0  # seconds of training across sessions: wall and CPU (workers too)
        self.actors: Actors = InlineActors()  # run() starts the worker processes
        self.streams = SavedStreams()  # the actors' self-play games in progress, for the checkpoint
        self.progress_stream = None
        """where progress bars go (standard error by default); they show only on a terminal"""

    @property
    def lr_multiplier(self) -> float:
        """The KL rule's learning-rate multiplier (the learner keeps it)."""
        return self.learner.lr_multiplier

    @lr_multiplier.setter
    def lr_multiplier(self, value: float) -> None:
        self.learner.lr_multiplier = value

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
        fixed = ("width", "height", "n_in_row", *NET_SETTINGS, "inputs", "sizes", "size_schedule", "stage_iters",
                 "rule")
        changed = {}
        for key, value in overrides.items():
            if value == getattr(config, key):
                continue
            if key in fixed:
                raise ValueError(f"cannot change {key} of an existing run ({getattr(config, key)} -> {value})")
            changed[key] = [getattr(config, key), value]
            setattr(config, key, value)
        pipeline = cls(config, run_dir, log)
        pipeline.start_record = {"how": "resume", "changed": changed}
        pipeline.model.set_weights(state["weights"])
        pipeline.model.set_optimizer_state(state["optimizer"])
        pipeline.buffer.load_state(state["buffer"])
        pipeline.rng.bit_generator.state = state["rng"]
        for key in ("iteration", "lr_multiplier", "best_win_ratio", "pure_playouts", "games",
                    "positions", "elapsed"):
            setattr(pipeline, key, state[key])
        pipeline.first_update_at = state.get("first_update_at", config.batch_size)  # absent: from before warm starts
        pipeline.init_record = state.get("init_record")  # absent: from before the run kept it
        pipeline.cpu_elapsed = state.get("cpu_elapsed", 0.0)  # 0 from a checkpoint that predates it
        pipeline.eval_board = state.get("eval_board")
        pipeline.streams.load_state(state.get("streams"))  # None from a checkpoint that predates them
        pipeline.learner.load_state(state.get("learner"))  # None: the schedule starts afresh
        # 8 symmetries a position where a checkpoint predates the count
        pipeline.rows_made = state.get("rows_made", 8 * pipeline.positions)
        pipeline.earlier_sizes = state.get("earlier_sizes", ())
        # Checkpoints from before the heuristic ladder lack its level.
        pipeline.heuristic_level = state.get("heuristic_level", config.heuristic_level_start)
        if changed.keys() & {"eval_opponent", "heuristic_level_start", "pure_playout_start", "engine_info"}:
            # A new yardstick: its ladder starts where the flags say, and no score is yet the best on it.
            pipeline.heuristic_level = config.heuristic_level_start
            pipeline.pure_playouts = config.pure_playout_start
            pipeline.best_win_ratio = 0.0
        if changed.keys() & {"eval_opening_stones", "eval_openings"}:
            pipeline.best_win_ratio = 0.0  # the same rung, measured from other openings
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
            "first_update_at": self.first_update_at,
            "init_record": self.init_record,
            "best_win_ratio": self.best_win_ratio,
            "pure_playouts": self.pure_playouts,
            "heuristic_level": self.heuristic_level,
            "games": self.games, "positions": self.positions, "elapsed": self.elapsed, "cpu_elapsed": self.cpu_elapsed,
            "eval_board": self.eval_board,
            "earlier_sizes": self.earlier_sizes,
            "streams": self.streams.state(),
            "learner": self.learner.state(),
            "rows_made": self.rows_made,
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
        if self.start_record["how"] == "resume":  # a kill between the two writes left the model a step behind
            self.learner.playing.save(os.path.join(self.run_dir, CURRENT_MODEL))
        end = cfg.game_batch_num if iterations is None else min(cfg.game_batch_num, self.iteration + iterations)
        # Ctrl-C and `kill` both stop cleanly, at the next safe point (see gomoku/interrupt.py),
        # also when a shell started us with SIGINT ignored.
        stop = None  # why the run stopped, once its start is on record
        self.stopped_by = None  # the signal that stopped the run, for the command's exit code
        with interrupt.deferred():
            try:
                workers = "Ray actors" if cfg.actors == "ray" else f"{cfg.n_workers()} worker(s)"
                boards = ", ".join(f"{w}x{h}" for w, h in cfg.board_sizes())
                schedule = f" ({cfg.size_schedule})" if len(cfg.board_sizes()) > 1 else ""
                self.log(f"run {self.run_dir}: {boards}{schedule}, {cfg.n_in_row} in a row"
                         f"{'' if cfg.rule == FREESTYLE else ', ' + cfg.rule}, {cfg.n_playout} playouts, {workers} x "
                         f"{cfg.games_in_lockstep(self.model.device)} games in lockstep, "
                         f"device {self.model.device}; iteration {self.iteration} of {cfg.game_batch_num}")
                self.log(f"  {device_report(cfg.device)}; {precision_report(cfg.precision, self.model.device)}")
                self.actors = make_actors(cfg.workers if cfg.actors == "ray" else cfg.n_workers(),
                                          self.model.device, nice=WORKER_NICE, backend=cfg.actors,
                                          address=cfg.ray_address or None, log=self.log,
                                          precision=cfg.precision)
                if cfg.actors == "ray":
                    self.log(f"  {self.actors.slots} Ray actor(s) on the cluster")
                self._append_metrics({"event": "start", "iteration": self.iteration, "games": self.games,
                                      "time": utc_now(), **self.start_record})
                self.live = None  # made at the first iteration's end: a stop before it leaves no events file
                self._live_from = self.iteration if self.start_record["how"] == "resume" else None
                stop = "failed"
                while self.iteration < end:
                    interrupt.check()
                    self.run_iteration()
                stop = "finished"
                self.log(self.closing_line())
            except KeyboardInterrupt:
                stop = stop and "interrupted"
                self.stopped_by = interrupt.stop_signal() or signal.SIGINT
                if os.path.exists(os.path.join(self.run_dir, CHECKPOINT)):
                    self.log(f"interrupted: the checkpoint holds iteration {self.iteration}; "
                             f"resume with: {_commands()[0]} --resume {self.run_dir}")
                else:
                    self.log("interrupted before the first iteration finished: there is no "
                             "checkpoint to resume (the run's folder is removed), so start the run afresh")
            finally:
                if stop is not None:
                    self._append_metrics({"event": "stop", "iteration": self.iteration, "time": utc_now(),
                                          "why": stop})
                self.actors.close()
                self.actors = InlineActors()
                if self.live is not None:
                    self.live.close()
                discard_unstarted_run(self.run_dir, (METRICS,))
                lock.close()

    def closing_line(self) -> str:
        """What a run that reached its end left behind, and how to go on."""
        model = find_model(self.run_dir)
        line = (f"done: iteration {self.iteration} of {self.config.game_batch_num}; "
                f"play it with: {_commands()[1]} --model {self.run_dir} ({os.path.basename(model)})")
        if self.iteration < self.config.game_batch_num:
            line += f"; go on with: {_commands()[0]} --resume {self.run_dir}"
        return line

    def run_iteration(self) -> dict:
        """One iteration: self-play alongside the updates, buffer, maybe an evaluation, checkpoint."""
        cfg = self.config
        start, cpu_start = time.perf_counter(), cpu_seconds()
        self._record_sizes_played()
        board = cfg.size_of_iteration(self.iteration)
        updating = self.buffer.can_sample(self.first_update_at, cfg.sizes_in_play(self.iteration))
        what = "self-play and updates" if updating else "self-play (filling the buffer)"
        with progress_bar(cfg.games_per_iter, f"iteration {self.iteration + 1}: {what}",
                          stream=self.progress_stream) as bar:
            def on_progress(progress):
                bar.set_postfix_str(f"{progress.moves} moves", refresh=False)
                advance_to(bar, progress.games)

            finish_self_play = self.start_self_play(on_progress if not bar.disable else None)
            update_start = time.perf_counter()
            update, trained = None, 0
            if updating:
                for k in range(cfg.updates_per_iter):
                    interrupt.check()
                    bar.set_postfix_str(f"update {k + 1} of {cfg.updates_per_iter}")
                    update = self.update()
                    trained += update.rows
                self.learner.refresh_playing(self.buffer, cfg.sizes_in_play(self.iteration), self.window())
            update_s = time.perf_counter() - update_start
            games, stats = finish_self_play()
        planes, pis, zs = training_arrays(games, cfg.value_mix)
        if len(planes):
            augmented = augment(planes, pis, zs)
            self.buffer.extend(*augmented)
            self.rows_made += len(augmented[0])
        self.games += len(games)
        self.positions += len(planes)

        self.iteration += 1
        record = {
            "event": "iteration", "iteration": self.iteration, "games": self.games,
            # An iteration whose every actor crashed has no games.
            "episode_len": round(sum(len(g.moves) for g in games) / max(1, len(games)), 2),
            "positions": len(planes),  # recorded ones: fewer than the moves with playout cap randomisation
            "buffer": len(self.buffer),
            # the playouts since the last iteration's games were handed over, over the slowest
            # worker's seconds of play (None when nobody played)
            "playouts_per_s": round(stats.playouts / stats.seconds) if stats.playouts else None,
            "selfplay_s": round(stats.seconds, 2), "update_s": round(update_s, 2),
        }
        if len(cfg.board_sizes()) > 1:
            record["board"] = f"{board[0]}x{board[1]}"
        if update is not None:
            record.update(loss=round(update.loss, 4), value_loss=round(update.value_loss, 4),
                          policy_loss=round(update.policy_loss, 4), entropy=round(update.entropy, 4),
                          kl=round(update.kl, 5), lr_multiplier=round(update.lr_multiplier, 4),
                          lr=float(f"{update.lr:.4g}"), lr_scale=self.learner.schedule.lr_scale,
                          window=self.window(),
                          # the positions the updates trained on, for each new position (its symmetries aside)
                          reuse=round(trained / max(1, len(planes)), 3))
        if self.probe is not None:
            record.update(self.probe.measure(self.learner.playing))
        if self.iteration % cfg.check_freq == 0:
            eval_board = self.largest_in_play()
            if self.eval_board is not None and tuple(self.eval_board) != eval_board:
                self.best_win_ratio = 0.0  # measured on another board
            self.eval_board = eval_board
            record_eval = self.evaluate()
        else:
            record_eval = None
        gate = record_eval.get("gate") if record_eval else None
        cut = self.learner.after_iteration(record.get("probe_loss"), None if gate is None else gate["passed"])
        self.elapsed += time.perf_counter() - start
        self.cpu_elapsed += cpu_seconds() - cpu_start
        record.update(wall_s=round(self.elapsed, 1), cpu_s=round(self.cpu_elapsed, 1))
        self.save_checkpoint()
        self.learner.playing.save(os.path.join(self.run_dir, CURRENT_MODEL))
        self._append_metrics(record)
        self.log(iteration_line(record))
        if self.live is None:
            self.live = LiveView(self.run_dir, self._live_from)
        self.live.iteration(record)
        if record_eval is not None:
            self._append_metrics(record_eval)
            if gate is not None:
                self.log(gate_line(gate))
            self.log(evaluation_line(record_eval))
            self.live.evaluation(record_eval)
        if cut is not None:
            self._append_metrics({"event": "schedule", "iteration": self.iteration,
                                  "lr_scale": self.learner.schedule.lr_scale})
            self.log(cut)
        return record

    def window(self) -> int:
        """How many of the newest positions of each board's buffer the updates draw from."""
        cfg = self.config
        return replay_window(self.rows_made, cfg.buffer_size, cfg.window_floor)

    # ------------------------------------------------------------ self-play
    def start_self_play(self, progress=None):
        """Starts ``games_per_iter`` self-play games with the current weights; returns the
        function that waits for ``(games, stats)``. ``progress`` gets their ``tasks.Progress``.
        The actors' streams come back with the games, for the checkpoint (``stream_state``)."""
        cfg = self.config
        seed = int(self.rng.integers(2**31))
        shape = (*cfg.size_of_iteration(self.iteration), cfg.n_in_row)
        settings = SelfPlaySettings.from_config(cfg, shape, cfg.games_in_lockstep(self.model.device))
        self.actors.publish(self.learner.playing)
        resume = self.streams.hand_out(shape, settings, self.actors.slots, self.log)
        pending = self.actors.start_self_play(cfg.games_per_iter, settings, seed, progress, resume, snapshots=True)
        return lambda: self.streams.keep(shape, settings, *pending.result())

    # --------------------------------------------------------------- update
    def update(self) -> UpdateResult:
        """One KL-adaptive update from the replay window (docs/algorithm.md, section 6, step 4)."""
        return self.learner.update(self.buffer, self.config.sizes_in_play(self.iteration), self.window())

    def _record_sizes_played(self) -> None:
        """A size-free model's spec names the boards it has trained on so far, the largest its default."""
        if not self.model.spec.size_free:
            return
        played = self.config.model_spec(self.iteration, self.earlier_sizes)
        self.model.spec = self.spec = replace(self.model.spec, width=played.width, height=played.height,
                                              trained_sizes=played.trained_sizes)
        self.learner.playing.spec = self.spec

    def _append_metrics(self, record: dict) -> None:
        append_metrics(self.run_dir, record)

