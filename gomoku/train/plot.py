"""Training curves from a run's ``metrics.jsonl``, drawn as a PNG with matplotlib (no display needed).

    python -m gomoku.train.plot runs/8x8x5 --out curves.png
    python -m gomoku.train.plot models/gomoku_8x8_5.json --out models/gomoku_8x8_5.png

The top panel shows the loss and the policy entropy of the ``iteration``
records against the iteration, each on its own axis; the bottom one the win
ratio of the ``evaluation`` records against pure MCTS or the heuristic, with the
opponent's playouts or level written at every point and a dashed line where they change (the
trainer raises them once the net wins every game). With many iterations the
loss and entropy are drawn as a centred moving average over the faint raw
values. The legends sit outside the panels, so they hide no curve. A shipped
model's record (``models/NAME.json``, written by ``scripts/ship_model.py``)
holds its evaluations but not the losses: plotting one draws the win ratio only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from gomoku.train.metrics import METRICS
from gomoku.util import atomic_write

DPI = 100

LOSS = "#1f77b4"
ENTROPY = "#e6781a"
WIN_RATIO = "#2c962c"
PURE = "#946bbd"
AGREE = "#c23b3b"
GATE = "#555555"


class MetricsError(ValueError):
    """A metrics file that is missing, or holds nothing to plot."""


@dataclass
class Metrics:
    """The records of one run, one per iteration (the last one wins if a resume repeated it)."""

    iterations: list[dict]
    """'iteration' records, by iteration"""
    evaluations: list[dict]
    """'evaluation' records, by iteration"""
    skipped: int = 0
    """lines that were not JSON objects (a line cut short when the trainer was killed)"""
    board: str = ""
    """the board, e.g. '8x8, 5 in a row', when the records say"""
    sessions: list[dict] = field(default_factory=list)
    """'start' and 'stop' records in the order written: every start and restart of the run"""


def metrics_path(path: str) -> str:
    """``path`` itself, or the ``metrics.jsonl`` in it when it is a run directory."""
    return os.path.join(path, METRICS) if os.path.isdir(path) else path


@dataclass
class Records:
    """A metrics file's records as written, each iteration's and evaluation's last record by number."""

    iterations: dict[int, dict]
    evaluations: dict[int, dict]
    sessions: list[dict]
    """'start' and 'stop' records in the order written"""
    bad_lines: list[int]
    """the numbers of the lines that were not records (a line cut short when the trainer was killed)"""


def read_records(path: str) -> Records:
    """The records of a run directory's or a file's metrics, read as the trainer may still be
    writing them: a line that is not a record is passed over and its number kept.

    Raises:
        MetricsError: no such file.
    """
    file = metrics_path(path)
    if not os.path.isfile(file):
        raise MetricsError(f"no metrics file at {file}" + (
            "" if file.endswith(".jsonl") else f" (give a run directory or its {METRICS})"))
    records = Records({}, {}, [], [])
    by_event = {"iteration": records.iterations, "evaluation": records.evaluations}
    with open(file, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if not isinstance(record, dict) or not isinstance(record.get("iteration"), int):
                records.bad_lines.append(number)
            elif record.get("event") in by_event:
                by_event[record["event"]][record["iteration"]] = record
            elif record.get("event") in ("start", "stop"):
                records.sessions.append(record)
    return records


def read_metrics(path: str) -> Metrics:
    """Reads a run directory's or a file's metrics.

    Raises:
        MetricsError: no such file, or no records with anything to plot.
    """
    file = metrics_path(path)
    if file.endswith(".json") and os.path.isfile(file):
        return read_model_record(file)
    records = read_records(file)
    metrics = Metrics([records.iterations[k] for k in sorted(records.iterations)],
                      [records.evaluations[k] for k in sorted(records.evaluations)],
                      len(records.bad_lines), _run_board(os.path.dirname(file)), records.sessions)
    if not _series(metrics.iterations, "loss")[0] and not _series(metrics.evaluations, "win_ratio")[0]:
        raise MetricsError(f"{file} has nothing to plot yet: no iteration with a loss and no evaluation")
    return metrics


def _run_board(run_dir: str) -> str:
    """The board of the run in ``run_dir``, from the header of one of its model files ('' if none)."""
    from gomoku.net.modelfile import RUN_MODELS, ModelFileError, read_model_spec

    for name in RUN_MODELS:
        path = os.path.join(run_dir, name)
        if os.path.isfile(path):
            try:
                spec = read_model_spec(path)
            except ModelFileError:
                continue
            return f"{spec.width}x{spec.height}, {spec.n_in_row} in a row"
    return ""


def _series(records: Sequence[dict], key: str) -> tuple[list[float], list[float]]:
    """``(iterations, values)`` of the records that have a number under ``key``."""
    xs, ys = [], []
    for record in records:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            xs.append(float(record["iteration"]))
            ys.append(float(value))
    return xs, ys


def read_model_record(path: str) -> Metrics:
    """The evaluations of a shipped model's record (``models/NAME.json``), and of the model it
    was continued from, as metrics; it holds no losses.

    Raises:
        MetricsError: not a model record, or one without evaluations.
    """
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        raise MetricsError(f"{path} is not a readable model record ({exc})") from None
    evaluations = record.get("evaluations") if isinstance(record, dict) else None
    if not evaluations:
        raise MetricsError(f"{path} has nothing to plot: no evaluations (a model record from "
                           f"scripts/ship_model.py lists them)")
    evaluations = [dict(e, event="evaluation") for e in evaluations
                   if isinstance(e, dict) and isinstance(e.get("iteration"), int)]
    iterations = [{"event": "iteration", "iteration": record["iterations"],
                   "games": record.get("selfplay_games"),
                   "wall_s": 3600 * record["training_hours"] if record.get("training_hours") else None}]
    return Metrics(iterations, evaluations, board=str(record.get("board", "")))


# ------------------------------------------------------------------- scales
def moving_average(values: Sequence[float], window: int) -> np.ndarray:
    """A centred moving average; near the ends the window shrinks to what is there."""
    values = np.asarray(values, dtype=np.float64)
    if window <= 1 or len(values) < 3:
        return values
    half = window // 2
    sums = np.concatenate([[0.0], np.cumsum(values)])
    idx = np.arange(len(values))
    lo = np.maximum(0, idx - half)
    hi = np.minimum(len(values), idx + half + 1)
    return (sums[hi] - sums[lo]) / (hi - lo)


# ------------------------------------------------------------------ drawing
def render(metrics: Metrics, size: tuple[int, int] = (900, 600), title: Optional[str] = None):
    """Draws the curves; returns the matplotlib ``Figure`` (Agg, never a window)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    losses = _series(metrics.iterations, "loss")
    entropies = _series(metrics.iterations, "entropy")
    ratios = _series(metrics.evaluations, "win_ratio")
    fig = Figure(figsize=(size[0] / DPI, size[1] / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)  # Agg draws into memory: no display, no pyplot state
    heading = title or "Gomoku Zero training" + (f": {metrics.board}" if metrics.board else "")
    fig.suptitle(heading, fontsize=13, fontweight="bold")
    subtitle = _subtitle(metrics)
    if losses[0]:
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
        _draw_losses(top, losses, entropies)
    else:
        bottom = fig.subplots(1, 1)
        if metrics.iterations:
            subtitle += ",  no losses in this record"
    if subtitle:
        fig.supxlabel(subtitle, fontsize=9, color="#555555")  # constrained layout keeps it clear
    agreement = _series(metrics.iterations, "probe_agree")
    _draw_win_ratio(bottom, metrics.evaluations, ratios, quiet=bool(agreement[0]))
    if agreement[0]:
        _draw_agreement(bottom, agreement)
    bottom.set_xlabel("iteration")
    last = max([x for x in losses[0] + ratios[0]] or [1])
    bottom.set_xlim(0, last * 1.02 + 1)
    return fig


def _draw_losses(ax, losses, entropies) -> None:
    xs, ys = losses
    window = max(1, len(xs) // 40)
    handles = []
    if window > 1:
        ax.plot(xs, ys, color=LOSS, alpha=0.25, linewidth=0.8)
    handles += ax.plot(xs, moving_average(ys, window), color=LOSS, linewidth=1.8,
                       label="loss" + (f" (moving average of {window})" if window > 1 else ""))
    ax.set_ylabel("loss", color=LOSS)
    ax.grid(True, color="#e4e4e4")
    if entropies[0]:
        right = ax.twinx()
        ex, ey = entropies
        if window > 1:
            right.plot(ex, ey, color=ENTROPY, alpha=0.25, linewidth=0.8)
        handles += right.plot(ex, moving_average(ey, window), color=ENTROPY, linewidth=1.8,
                              label="policy entropy")
        right.set_ylabel("policy entropy", color=ENTROPY)
    # Above the panel, outside it: a legend inside would cover the newest iterations.
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, frameon=False,
              fontsize=9)


def _draw_agreement(ax, agreement) -> None:
    """The probe's agreement with the engine's moves (``gomoku.train.probe``), on the right of ``ax``."""
    right = ax.twinx()
    xs, ys = agreement
    handles = right.plot(xs, [100 * y for y in ys], color=AGREE, linewidth=1.5, marker="." if len(xs) < 80 else None,
                         label="agreement with the probe engine's moves")
    right.set_ylabel("agreement (%)", color=AGREE)
    right.legend(handles=handles, loc="lower right", bbox_to_anchor=(1, 1.0), frameon=False, fontsize=9)


def _draw_win_ratio(ax, evaluations: Sequence[dict], ratios, quiet: bool = False) -> None:
    """The evaluations' win ratios; ``quiet``: no note when there are none (another curve shares the panel)."""
    ax.set_ylim(-0.05, 1.12)
    ax.set_ylabel("win ratio")
    ax.grid(True, color="#e4e4e4")
    xs, ys = ratios
    if not xs:
        if not quiet:
            ax.text(0.5, 0.5, "no evaluation yet", transform=ax.transAxes, ha="center", color="#777777")
        return
    mixed = len({_kind(r) for r in evaluations}) > 1  # a run that changed its yardstick
    # Where the net's own playouts changed during the run, each point also names them.
    searches = len({r.get("playouts") for r in evaluations}) > 1
    if mixed:
        what, notes = "win ratio", ["above each point: pure MCTS playouts, or H and the heuristic's level"]
    else:
        opponent = _opponent_name(evaluations)
        rung = "its level" if opponent == "the heuristic" else "its playouts"
        what, notes = f"win ratio against {opponent}", [f"{rung} above each point"]
    if searches:
        notes.append("@ the net's playouts")
    label = f"{what} ({'; '.join(notes)})"
    handles = ax.plot(xs, ys, color=WIN_RATIO, marker="o", linewidth=1.8, markersize=5, label=label)
    previous = None
    for record in evaluations:
        rung = _rung(record)
        if not isinstance(record.get("win_ratio"), (int, float)) or rung is None:
            continue
        if previous is not None and _yardstick(record) + (rung,) != previous:
            ax.axvline(record["iteration"], color=PURE, linestyle="--", linewidth=1)
        previous = _yardstick(record) + (rung,)
        text = f"H{rung}" if mixed and _kind(record) == "heuristic" else f"{rung}"
        if searches and record.get("playouts"):
            text += f" @{record['playouts']}"
        ax.annotate(text, (record["iteration"], record["win_ratio"]), textcoords="offset points",
                    xytext=(0, 6), ha="center", fontsize=7, color=PURE)
    # the gates' scores against the best model: filled where the model passed and became the best
    gates = [(r["iteration"], r["gate"]) for r in evaluations if r.get("gate") and r["gate"].get("games")]
    if gates:
        handles += ax.plot([i for i, _ in gates], [g["score"] for _, g in gates], color=GATE, linestyle=":",
                           linewidth=1, marker="s", markersize=4, fillstyle="none", label="gate score against the best")
        passed = [(i, g["score"]) for i, g in gates if g["passed"]]
        if passed:
            ax.plot(*zip(*passed), color=GATE, linestyle="none", marker="s", markersize=4)
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False, fontsize=9)


def _rung(record: dict):
    """The evaluation opponent's strength in a record: pure MCTS playouts or the heuristic's level."""
    return record.get("pure_playouts", record.get("heuristic_level"))


def _kind(record: dict) -> str:
    """Which yardstick an evaluation record used: 'heuristic' or 'pure'."""
    return "heuristic" if "heuristic_level" in record else "pure"


def _yardstick(record: dict) -> tuple:
    """The opponent's kind, the evaluation's opening stones and the net's playouts (absent from
    records written before they were kept): scores compare only within one."""
    return _kind(record), record.get("opening_stones", 0), record.get("playouts")


def _opponent_name(evaluations: Sequence[dict]) -> str:
    if evaluations and _kind(evaluations[-1]) == "heuristic":
        return "the heuristic"
    return "pure MCTS"


def _subtitle(metrics: Metrics) -> str:
    parts = []
    if metrics.iterations:
        last = metrics.iterations[-1]
        parts.append(f"{last['iteration']} iterations")
        if isinstance(last.get("games"), int):
            parts.append(f"{last['games']:,} self-play games")
        if isinstance(last.get("wall_s"), (int, float)):
            parts.append(_duration(last["wall_s"]))
    if metrics.evaluations:
        # the best on the yardstick the run uses now (opponent and openings): others do not compare
        current = [r for r in metrics.evaluations if _yardstick(r) == _yardstick(metrics.evaluations[-1])]
        best = max(current, key=lambda r: (_rung(r) or 0, r.get("win_ratio") or 0))
        count = len(metrics.evaluations)
        opponent = "heuristic" if _kind(best) == "heuristic" else "pure MCTS"
        parts.append(f"{count} evaluation{'s' if count > 1 else ''}, best {best.get('win_ratio', 0):.2f} "
                     f"against {opponent} {_rung(best)}")
    return ",  ".join(parts)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s of training"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min of training"
    return f"{seconds / 3600:.1f} h of training"


def save_plot(source: "str | Metrics", out: str, title: Optional[str] = None,
              size: tuple[int, int] = (900, 600)) -> Metrics:
    """Reads ``source`` (a run directory, a metrics file or a model record; or ``Metrics``
    already read) and writes the curves to ``out`` (PNG), atomically.

    Returns:
        The metrics that were drawn.

    Raises:
        MetricsError: nothing to plot.
    """
    metrics = source if isinstance(source, Metrics) else read_metrics(source)
    figure = render(metrics, size, title)
    directory = os.path.dirname(os.path.abspath(out))
    os.makedirs(directory, exist_ok=True)
    atomic_write(out, lambda f: figure.savefig(f, format="png", dpi=DPI))
    return metrics


def _size(text: str) -> tuple[int, int]:
    parts = text.lower().split("x")
    try:
        width, height = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an image size like 900x600") from None
    if width < 300 or height < 240:
        raise argparse.ArgumentTypeError(f"{text!r} is too small: at least 300x240")
    return width, height


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gomoku.train.plot",
                                     description="Draw a run's training curves as a PNG.")
    parser.add_argument("source", metavar="RUN_DIR_OR_METRICS_FILE",
                        help=f"a run directory (its {METRICS} is read), a metrics file, or a shipped "
                             "model's record (models/NAME.json: evaluations only)")
    parser.add_argument("--out", required=True, metavar="PNG", help="the image to write")
    parser.add_argument("--title", help="the image's title (default: 'Gomoku Zero training')")
    parser.add_argument("--size", type=_size, default=(900, 600), metavar="WxH",
                        help="image size in pixels (default: 900x600)")
    args = parser.parse_args(argv)
    if not args.out.lower().endswith(".png"):
        parser.error(f"--out must name a .png file, got {args.out!r}")
    try:
        metrics = save_plot(args.source, args.out, args.title, args.size)
    except MetricsError as exc:
        print(f"plot: error: {exc}", file=sys.stderr)
        return 2
    if metrics.skipped:
        print(f"plot: skipped {metrics.skipped} line(s) that were not records", file=sys.stderr)
    print(f"wrote {args.out}: {len(metrics.iterations)} iterations, {len(metrics.evaluations)} evaluations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
