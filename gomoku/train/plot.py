"""Training curves from a run's ``metrics.jsonl``, drawn as a PNG with pygame (no display needed).

    python -m gomoku.plot runs/6x6x4 --out docs/curves_6x6x4.png --title "6x6, 4 in a row"

The top panel shows the loss and the policy entropy of the ``iteration``
records against the iteration; the bottom one the win ratio of the
``evaluation`` records against pure MCTS or the heuristic, with the opponent's playouts or level marked
where they change (the trainer raises them once the net wins every game). With
many iterations the loss and entropy are drawn as a centred moving average over
the faint raw values.

The image is drawn at twice its size and scaled down smoothly: pygame's own
lines and circles have no anti-aliasing at a useful width.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep pygame's banner out of the output

METRICS = "metrics.jsonl"  # as pipeline.METRICS; not imported, so plotting needs no paddle
SCALE = 2  # supersampling factor

BACKGROUND = (255, 255, 255)
INK = (40, 40, 40)
MUTED = (110, 110, 110)
GRID = (228, 228, 228)
LOSS = (31, 119, 180)
ENTROPY = (230, 120, 20)
WIN_RATIO = (44, 150, 44)
PURE = (148, 103, 189)


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


def metrics_path(path: str) -> str:
    """``path`` itself, or the ``metrics.jsonl`` in it when it is a run directory."""
    return os.path.join(path, METRICS) if os.path.isdir(path) else path


def read_metrics(path: str) -> Metrics:
    """Reads a run directory's or a file's metrics.

    Raises:
        MetricsError: no such file, or no records with anything to plot.
    """
    file = metrics_path(path)
    if not os.path.isfile(file):
        raise MetricsError(f"no metrics file at {file}" + (
            "" if file.endswith(".jsonl") else f" (give a run directory or its {METRICS})"))
    by_event: dict[str, dict[int, dict]] = {"iteration": {}, "evaluation": {}}
    skipped = 0
    with open(file, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                skipped += 1
                continue
            if not isinstance(record, dict) or not isinstance(record.get("iteration"), int):
                skipped += 1
                continue
            if record.get("event") in by_event:
                by_event[record["event"]][record["iteration"]] = record
    metrics = Metrics([by_event["iteration"][k] for k in sorted(by_event["iteration"])],
                      [by_event["evaluation"][k] for k in sorted(by_event["evaluation"])], skipped)
    if not _series(metrics.iterations, "loss")[0] and not _series(metrics.evaluations, "win_ratio")[0]:
        raise MetricsError(f"{file} has nothing to plot yet: no iteration with a loss and no evaluation")
    return metrics


def _series(records: Sequence[dict], key: str) -> tuple[list[float], list[float]]:
    """``(iterations, values)`` of the records that have a number under ``key``."""
    xs, ys = [], []
    for record in records:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            xs.append(float(record["iteration"]))
            ys.append(float(value))
    return xs, ys


# ------------------------------------------------------------------- scales
def nice_step(span: float, max_ticks: int) -> float:
    """A tick step of 1, 2, 2.5 or 5 times a power of ten giving at most ``max_ticks`` intervals."""
    raw = max(span, 1e-12) / max_ticks
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if factor * power >= raw - 1e-12:
            return factor * power
    return 10.0 * power


def nice_range(low: float, high: float, max_ticks: int = 6, integer: bool = False):
    """An axis range that starts and ends on a tick, and its ticks.

    Returns:
        ``(low, high, ticks)``.
    """
    if high <= low:
        low, high = low - 0.5, high + 0.5
    step = nice_step(high - low, max_ticks)
    if integer:
        step = max(1.0, round(step))
    start = math.floor(low / step + 1e-9) * step
    stop = math.ceil(high / step - 1e-9) * step
    ticks = [start + i * step for i in range(int(round((stop - start) / step)) + 1)]
    return start, stop, ticks


def tick_label(value: float, step: float) -> str:
    """``value`` with as many decimals as the tick step needs (0.25 -> 2, 0.5 -> 1, 5 -> 0)."""
    decimals = 0
    while decimals < 6 and abs(step * 10 ** decimals - round(step * 10 ** decimals)) > 1e-6:
        decimals += 1
    return f"{value:.{decimals}f}"


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
class _Canvas:
    """A supersampled surface with drawing helpers in final-image pixels."""

    def __init__(self, pygame, size: tuple[int, int]):
        self.pg = pygame
        self.size = size
        self.surface = pygame.Surface((size[0] * SCALE, size[1] * SCALE))
        self.surface.fill(BACKGROUND)
        self._fonts: dict = {}

    def font(self, size: int, bold: bool = False):
        key = (size, bold)
        if key not in self._fonts:
            try:
                self._fonts[key] = self.pg.font.SysFont("dejavusans,freesans,arial,helvetica",
                                                        size * SCALE, bold=bold)
            except Exception:  # no font config on this system: pygame's bundled font
                self._fonts[key] = self.pg.font.Font(None, int(size * SCALE * 1.3))
        return self._fonts[key]

    def text(self, text: str, pos: tuple[float, float], size: int = 13, colour=INK, bold: bool = False,
             anchor: str = "topleft", angle: float = 0) -> "object":
        """Draws ``text`` with ``anchor`` (a pygame Rect attribute) at ``pos``; returns its rect."""
        image = self.font(size, bold).render(text, True, colour)
        if angle:
            image = self.pg.transform.rotate(image, angle)
        rect = image.get_rect(**{anchor: (round(pos[0] * SCALE), round(pos[1] * SCALE))})
        self.surface.blit(image, rect)
        return self.pg.Rect(rect.x / SCALE, rect.y / SCALE, rect.w / SCALE, rect.h / SCALE)

    def text_size(self, text: str, size: int = 13, bold: bool = False) -> tuple[float, float]:
        w, h = self.font(size, bold).size(text)
        return w / SCALE, h / SCALE

    def line(self, colour, start, end, width: float = 1.0) -> None:
        self.pg.draw.line(self.surface, colour, self._px(start), self._px(end), max(1, round(width * SCALE)))

    def dashed(self, colour, start, end, width: float = 1.0, dash: float = 5.0, gap: float = 4.0) -> None:
        (x0, y0), (x1, y1) = start, end
        length = math.hypot(x1 - x0, y1 - y0)
        pos = 0.0
        while pos < length:
            a, b = pos / length, min(pos + dash, length) / length
            self.line(colour, (x0 + (x1 - x0) * a, y0 + (y1 - y0) * a),
                      (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b), width)
            pos += dash + gap

    def polyline(self, colour, points: Sequence[tuple[float, float]], width: float = 2.0) -> None:
        if len(points) == 1:
            self.circle(colour, points[0], width)
        elif points:
            pixels = [self._px(p) for p in points]
            w = max(1, round(width * SCALE))
            self.pg.draw.lines(self.surface, colour, False, pixels, w)
            for p in pixels:  # round joints, so thick polylines do not show notches
                self.pg.draw.circle(self.surface, colour, p, w / 2)

    def circle(self, colour, centre, radius: float, width: float = 0) -> None:
        self.pg.draw.circle(self.surface, colour, self._px(centre), radius * SCALE,
                            round(width * SCALE) if width else 0)

    def rect(self, colour, rect: tuple[float, float, float, float], width: float = 0) -> None:
        x, y, w, h = rect
        self.pg.draw.rect(self.surface, colour, (x * SCALE, y * SCALE, w * SCALE, h * SCALE),
                          round(width * SCALE) if width else 0)

    def clip(self, rect: Optional[tuple[float, float, float, float]]) -> None:
        self.surface.set_clip(None if rect is None else
                              self.pg.Rect(*(round(v * SCALE) for v in rect)))

    def image(self):
        return self.pg.transform.smoothscale(self.surface, self.size)

    @staticmethod
    def _px(point) -> tuple[float, float]:
        return point[0] * SCALE, point[1] * SCALE


@dataclass
class _Axes:
    """A panel's plot area (``left, top, width, height`` in pixels) and its data ranges."""

    left: float
    top: float
    width: float
    height: float
    x_range: tuple[float, float]
    y_range: tuple[float, float]

    def to_px(self, x: float, y: float) -> tuple[float, float]:
        (x0, x1), (y0, y1) = self.x_range, self.y_range
        return (self.left + (x - x0) / (x1 - x0) * self.width,
                self.top + self.height - (y - y0) / (y1 - y0) * self.height)

    @property
    def box(self) -> tuple[float, float, float, float]:
        return self.left, self.top, self.width, self.height


def _fade(colour, amount: float = 0.65):
    return tuple(round(c + (255 - c) * amount) for c in colour)


def _draw_frame(canvas: _Canvas, axes: _Axes, x_ticks, y_ticks, y_step: float, title: str,
                y_label: str, x_labels: bool) -> None:
    left, top, width, height = axes.box
    x_step = x_ticks[1] - x_ticks[0] if len(x_ticks) > 1 else 1.0
    for y in y_ticks:
        _, py = axes.to_px(axes.x_range[0], y)
        canvas.line(GRID, (left, py), (left + width, py))
        canvas.line(INK, (left - 5, py), (left, py))
        canvas.text(tick_label(y, y_step), (left - 9, py), 12, MUTED, anchor="midright")
    for x in x_ticks:
        px, _ = axes.to_px(x, axes.y_range[0])
        canvas.line(GRID, (px, top), (px, top + height))
        canvas.line(INK, (px, top + height), (px, top + height + 5))
        if x_labels:
            canvas.text(tick_label(x, x_step), (px, top + height + 8), 12, MUTED, anchor="midtop")
    canvas.line(INK, (left, top), (left, top + height), 1.2)
    canvas.line(INK, (left, top + height), (left + width, top + height), 1.2)
    canvas.text(title, (left, top - 10), 14, INK, bold=True, anchor="bottomleft")
    canvas.text(y_label, (left - 52, top + height / 2), 13, INK, anchor="center", angle=90)


def _draw_legend(canvas: _Canvas, axes: _Axes, entries: list[tuple[str, tuple, bool]], note: str = "",
                 corner: str = "topright") -> None:
    """A boxed legend of ``(label, colour, dashed)`` entries in a corner of the panel."""
    size = 12
    widths = [canvas.text_size(label, size)[0] for label, _, _ in entries]
    row = 19
    note_w, _ = canvas.text_size(note, 11) if note else (0, 0)
    box_w = max([34 + w for w in widths] + [note_w]) + 20
    box_h = row * len(entries) + (row if note else 0) + 10
    x = axes.left + axes.width - box_w - 10 if corner.endswith("right") else axes.left + 10
    y = axes.top + 10 if corner.startswith("top") else axes.top + axes.height - box_h - 10
    canvas.rect(BACKGROUND, (x, y, box_w, box_h))
    canvas.rect(GRID, (x, y, box_w, box_h), 1)
    for i, (label, colour, dashed) in enumerate(entries):
        cy = y + 5 + row * i + row / 2
        if dashed:
            canvas.dashed(colour, (x + 10, cy), (x + 34, cy), 1.5, dash=5, gap=3.5)
        else:
            canvas.line(colour, (x + 10, cy), (x + 34, cy), 2.5)
        canvas.text(label, (x + 42, cy), size, INK, anchor="midleft")
    if note:
        canvas.text(note, (x + 10, y + 5 + row * len(entries) + row / 2), 11, MUTED, anchor="midleft")


def _empty_note(canvas: _Canvas, axes: _Axes, text: str) -> None:
    canvas.text(text, (axes.left + axes.width / 2, axes.top + axes.height / 2), 14, MUTED, anchor="center")


def render(metrics: Metrics, size: tuple[int, int] = (900, 600), title: Optional[str] = None):
    """Draws the two panels; returns a ``pygame.Surface`` of ``size``."""
    import pygame

    pygame.font.init()
    width, height = size
    canvas = _Canvas(pygame, size)

    loss_x, loss_y = _series(metrics.iterations, "loss")
    ent_x, ent_y = _series(metrics.iterations, "entropy")
    win_x, win_y = _series(metrics.evaluations, "win_ratio")

    # Header: the title, and what the run amounts to.
    canvas.text(title or "Gomoku Zero training", (width / 2, 14), 18, INK, bold=True, anchor="midtop")
    canvas.text(_subtitle(metrics), (width / 2, 40), 12, MUTED, anchor="midtop")

    left, right = 78, 24
    plot_w = width - left - right
    top1, gap, bottom = 86, 62, 52
    total_h = height - top1 - gap - bottom
    h1 = total_h * 0.58
    h2 = total_h - h1
    top2 = top1 + h1 + gap

    # The x axis ends just past the last iteration, not at the next round tick (up to 20% further).
    last = max(loss_x + ent_x + win_x + [1.0])
    _, _, x_ticks = nice_range(0.0, last, 8, integer=True)
    x_ticks = [x for x in x_ticks if x <= last]
    x_low, x_high = 0.0, last * 1.02 + 0.2

    # Panel 1: loss and entropy.
    values = loss_y + ent_y
    if values:
        y_low, y_high, y_ticks = nice_range(min(values), max(values), 5)
    else:
        y_low, y_high, y_ticks = 0.0, 1.0, [0.0, 0.5, 1.0]
    axes1 = _Axes(left, top1, plot_w, h1, (x_low, x_high), (y_low, y_high))
    y_step = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else 1.0
    _draw_frame(canvas, axes1, x_ticks, y_ticks, y_step, "Loss and policy entropy", "nats", False)
    window = max(1, len(loss_x) // 25) if len(loss_x) > 60 else 1
    canvas.clip(axes1.box)
    for xs, ys, colour in ((ent_x, ent_y, ENTROPY), (loss_x, loss_y, LOSS)):
        if window > 1:
            canvas.polyline(_fade(colour), [axes1.to_px(x, y) for x, y in zip(xs, ys)], 1.0)
            ys = moving_average(ys, window)
        canvas.polyline(colour, [axes1.to_px(x, y) for x, y in zip(xs, ys)], 2.2)
    canvas.clip(None)
    if values:
        note = f"moving average of {window} (faint: raw)" if window > 1 else ""
        _draw_legend(canvas, axes1, [("loss", LOSS, False), ("entropy", ENTROPY, False)], note)
    else:
        _empty_note(canvas, axes1, "no training updates yet")

    # Panel 2: win ratio against the evaluation opponent (pure MCTS or the heuristic).
    axes2 = _Axes(left, top2, plot_w, h2, (x_low, x_high), (-0.04, 1.04))
    ratio_ticks = [0.0, 0.25, 0.5, 0.75, 1.0]
    opponent = _opponent_name(metrics.evaluations)
    _draw_frame(canvas, axes2, x_ticks, ratio_ticks, 0.25, f"Evaluation against {opponent}", "win ratio", True)
    canvas.text("iteration", (left + plot_w / 2, height - 14), 13, INK, anchor="midbottom")
    if win_x:
        _draw_pure_marks(canvas, axes2, metrics.evaluations)
        points = [axes2.to_px(x, y) for x, y in zip(win_x, win_y)]
        canvas.polyline(WIN_RATIO, points, 2.0)
        for point in points:
            canvas.circle(BACKGROUND, point, 4.2)
            canvas.circle(WIN_RATIO, point, 4.2, 1.8)
        _draw_legend(canvas, axes2, [("win ratio (draw = 1/2)", WIN_RATIO, False),
                                     (f"{_rung_name(opponent)} from here", PURE, True)],
                     corner="bottomright")
    else:
        _empty_note(canvas, axes2, "no evaluation yet")
    return canvas.image()


def _draw_pure_marks(canvas: _Canvas, axes: _Axes, evaluations: Sequence[dict]) -> None:
    """A dashed line and a label where the evaluation opponent's rung (playouts, level) changes."""
    previous = None
    label_ends: list[float] = []  # right edge of the last label in each row
    for record in evaluations:
        playouts = _rung(record)
        if playouts is None or playouts == previous:
            continue
        previous = playouts
        x, _ = axes.to_px(record["iteration"], 0)
        canvas.dashed(PURE, (x, axes.top), (x, axes.top + axes.height), 1.2)
        label = f"{playouts}"
        w, h = canvas.text_size(label, 11, bold=True)
        # Right of the line, or left of it where the panel ends; a row lower if it would overlap.
        start = x + 4 if x + 4 + w <= axes.left + axes.width else x - 4 - w
        row = next((i for i, end in enumerate(label_ends) if end < start), len(label_ends))
        if row == len(label_ends):
            label_ends.append(0.0)
        label_ends[row] = start + w + 6
        canvas.text(label, (start, axes.top + 3 + row * (h + 1)), 11, PURE, bold=True)


def _rung(record: dict):
    """The evaluation opponent's strength in a record: pure MCTS playouts or the heuristic's level."""
    return record.get("pure_playouts", record.get("heuristic_level"))


def _opponent_name(evaluations: Sequence[dict]) -> str:
    if evaluations and "heuristic_level" in evaluations[-1]:
        return "the heuristic"
    return "pure MCTS"


def _rung_name(opponent: str) -> str:
    return "heuristic level" if opponent == "the heuristic" else "pure MCTS playouts"


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
        best = max(metrics.evaluations, key=lambda r: (_rung(r) or 0, r.get("win_ratio") or 0))
        count = len(metrics.evaluations)
        opponent = "heuristic" if "heuristic_level" in best else "pure MCTS"
        parts.append(f"{count} evaluation{'s' if count > 1 else ''}, best {best.get('win_ratio', 0):.2f} "
                     f"against {opponent} {_rung(best)}")
    return ",  ".join(parts)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s of training"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min of training"
    return f"{seconds / 3600:.1f} h of training"


def save_plot(source: str, out: str, title: Optional[str] = None, size: tuple[int, int] = (900, 600)) -> Metrics:
    """Reads ``source`` (a run directory or a metrics file) and writes the curves to ``out`` (PNG).

    Returns:
        The metrics that were drawn.

    Raises:
        MetricsError: nothing to plot.
    """
    import pygame

    metrics = read_metrics(source)
    image = render(metrics, size, title)
    directory = os.path.dirname(os.path.abspath(out))
    os.makedirs(directory, exist_ok=True)
    tmp = out + ".tmp.png"  # pygame picks the format from the name; rename for an atomic write
    try:
        pygame.image.save(image, tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
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
    parser = argparse.ArgumentParser(prog="python -m gomoku.plot",
                                     description="Draw a run's training curves as a PNG.")
    parser.add_argument("source", metavar="RUN_DIR_OR_METRICS_FILE",
                        help=f"a run directory (its {METRICS} is read) or a metrics file")
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
