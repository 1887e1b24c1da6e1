"""A run's metrics: ``metrics.jsonl`` in its directory, one JSON object a line, and the log line
of each iteration and evaluation record. Light to import (no Paddle), so the plots read the
same file name the trainer writes."""

from __future__ import annotations

import json
import os
import time

METRICS = "metrics.jsonl"


def append_metrics(run_dir: str, record: dict) -> None:
    """Adds ``record`` to the run's metrics file."""
    with open(os.path.join(run_dir, METRICS), "a") as f:
        f.write(json.dumps(record) + "\n")


def utc_now() -> str:
    """The time of a start or stop record, in UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def iteration_line(r: dict) -> str:
    """The log line of an iteration record."""
    if r["playouts_per_s"] is not None:
        rate = f"{r['playouts_per_s']:>6} playouts/s"
    elif r.get("positions"):  # games handed over with no playout since the last hand-over: the actors
        # had finished them ahead, in earlier iterations (their rate was in those lines), or before a stop
        rate = "no new playouts (its games were played ahead, earlier)"
    else:
        rate = "no games (every actor failed)"
    line = f"iter {r['iteration']:>5}  games {r['games']:>6}  len {r['episode_len']:>5.1f}  {rate}"
    if "loss" in r:
        value = f" (value {r['value_loss']:.3f})" if "value_loss" in r else ""
        line += (f"  loss {r['loss']:.3f}{value}  entropy {r['entropy']:.3f}  kl {r['kl']:.4f}  "
                 f"lr x{r['lr_multiplier']:.3f}")
        if r.get("lr_scale", 1.0) != 1.0:
            line += f" x{r['lr_scale']:.3g}"
        if "window" in r:  # the positions updates draw from, and how often each new one is trained on
            line += f"  window {r['window']}  reuse {r['reuse']:.1f}"
    else:
        line += f"  (filling the buffer: {r['buffer']})"
    if "probe_agree" in r:  # the net's agreement with an engine's moves (gomoku.train.probe)
        line += f"  agree {100 * r['probe_agree']:.1f}%"
    return line + f"  [{r['wall_s']:.0f}s]"


def evaluation_line(r: dict) -> str:
    """The log line of an evaluation record."""
    best = "  new best" if r["new_best"] else ""
    if "heuristic_level" in r:
        opponent = f"heuristic {r['heuristic_level']}"
    else:
        opponent = f"pure MCTS {r['pure_playouts']}"
    white = "as White {}W {}D {}L".format(*r["as_white"])
    return (f"  eval vs {opponent} at {r['playouts']} playouts: {r['wins']}W {r['draws']}D {r['losses']}L ({white}) "
            f"win ratio {r['win_ratio']:.2f}{best}  ({r['eval_s']}s)")
