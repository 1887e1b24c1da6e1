"""The run's live view: its metrics as TensorBoard scalars, in event files in the run directory.

``tensorboard --logdir runs/`` (``pip install tensorboard``) then shows every run's curves as
they grow: the loss terms, the policy's entropy, the update's KL and step, the replay window,
how often a position is trained on, the probe, the gates and the evaluations. The events are
written with tensorboardX, which needs neither TensorFlow nor PyTorch. ``metrics.jsonl`` stays
the run's record; these files are a view of it.

A resumed run purges the events past its checkpoint's iteration, so the curves of iterations a
stop threw away do not stay beside the ones played again.
"""

from __future__ import annotations

from typing import Optional

# metrics key -> TensorBoard tag, for iteration records
ITERATION_TAGS = {
    "loss": "loss/total", "value_loss": "loss/value", "policy_loss": "loss/policy",
    "entropy": "policy/entropy", "kl": "update/kl", "lr_multiplier": "update/kl_multiplier",
    "lr": "update/learning_rate", "lr_scale": "update/schedule_scale",
    "window": "data/window", "buffer": "data/buffer", "reuse": "data/trained_per_position",
    "positions": "data/new_positions", "episode_len": "selfplay/game_length",
    "playouts_per_s": "selfplay/playouts_per_s",
    "probe_agree": "probe/agreement", "probe_top3": "probe/top3", "probe_loss": "probe/cross_entropy",
    "probe_value": "probe/value_error",
}


class LiveView:
    """Writes a run's records as TensorBoard scalars; does nothing without tensorboardX.

    Args:
        run_dir: the run's directory (the event files go there).
        resume_at: a resumed run's iteration: events past it are purged.
    """

    def __init__(self, run_dir: str, resume_at: Optional[int] = None):
        try:
            from tensorboardX import SummaryWriter
        except ImportError:  # installed with the project; an old environment trains without the view
            self.writer = None
            return
        self.writer = SummaryWriter(logdir=run_dir, purge_step=resume_at, flush_secs=30)

    def iteration(self, record: dict) -> None:
        if self.writer is None:
            return
        step = record["iteration"]
        for key, tag in ITERATION_TAGS.items():
            if record.get(key) is not None:
                self.writer.add_scalar(tag, record[key], step)

    def evaluation(self, record: dict) -> None:
        """The gate's score (overall and by colour) and the evaluation opponent's."""
        if self.writer is None:
            return
        step = record["iteration"]
        gate = record.get("gate")
        if gate:
            self.writer.add_scalar("gate/score", gate["score"], step)
            for colour in ("as_black", "as_white"):
                wins, draws, losses = gate[colour]
                if wins + draws + losses:
                    self.writer.add_scalar(f"gate/score_{colour}", (wins + draws / 2) / (wins + draws + losses), step)
        if "win_ratio" in record:
            self.writer.add_scalar("evaluation/win_ratio", record["win_ratio"], step)
        self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
