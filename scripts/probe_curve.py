"""Training runs side by side on the probe: their nets' agreement with an engine's moves against CPU hours.

    python scripts/probe_curve.py runs/long-15x15 runs/race-g200 --since 87 --plot race.png

A run trained with ``--probe-games`` logs its net's scores on the probe after every iteration
(``probe_agree``, ``probe_top3``, ``probe_loss``, ``probe_value`` in its ``metrics.jsonl``, with
``cpu_s``, the CPU seconds of training so far). For each run this prints those scores against the
CPU hours, then one summary line a run: the least-squares slope of agreement (points a CPU hour)
and of the loss (the cross-entropy of the engine's move, nats a CPU hour) with their standard
errors. One iteration's probe moves by about half a point of agreement with nothing learnt, so
a run's rate of learning shows in the slope over many iterations, not in any one.

``--since N`` compares runs that went apart at iteration N (a run resumed from a copy of another's
checkpoint with another setting): only the later iterations count, and each run's CPU hours are
counted from its own ``cpu_s`` at iteration N. Without it the hours are the runs' own.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

FIELDS = ("probe_agree", "probe_top3", "probe_loss", "probe_value")


def read_run(path: str, since: int | None = None) -> list[dict]:
    """The probed iterations of a run (a run directory or its ``metrics.jsonl``, read with
    ``gomoku.train.plot.read_records``: a resumed run's later record of an iteration wins, and a
    line the trainer is still writing is passed over), each as ``{"iteration", "games",
    "games_since", "cpu_hours", "agree", "top3", "loss", "value"}``, the games and CPU hours since
    iteration ``since`` (its ``games`` and ``cpu_s``) when given, else the run's own.

    Raises:
        ValueError: no metrics file, no probed iteration (after ``since``), or ``since`` an
            iteration the run does not record with its CPU seconds.
    """
    from gomoku.train.plot import metrics_path, read_records

    records = read_records(path)
    iterations, metrics = records.iterations, metrics_path(path)
    start, start_games = 0.0, 0
    if since is not None:
        if "cpu_s" not in iterations.get(since, {}):
            raise ValueError(f"{metrics}: no iteration {since} with its CPU seconds (cpu_s) to count from")
        start, start_games = iterations[since]["cpu_s"], iterations[since]["games"]
    points = []
    for iteration in sorted(iterations):
        record = iterations[iteration]
        if (since is not None and iteration <= since) or "cpu_s" not in record or FIELDS[0] not in record:
            continue
        points.append({"iteration": iteration, "games": record["games"],
                       "games_since": record["games"] - start_games, "cpu_hours": (record["cpu_s"] - start) / 3600.0,
                       **{name[len("probe_"):]: record.get(name) for name in FIELDS}})
    if not points:
        bad = "".join(f"; line {n}: not JSON" for n in records.bad_lines[:3])
        raise ValueError(f"{metrics}: no probed iteration{'' if since is None else f' after {since}'} "
                         f"(train with --probe-games){bad}")
    return points


def slope(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """The least-squares slope of ``ys`` on ``xs`` and its standard error (nan where fewer than
    three points, or no spread in ``xs``, leave it undefined)."""
    n = len(xs)
    if n < 2:
        return math.nan, math.nan
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return math.nan, math.nan
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    if n < 3:
        return b, math.nan
    residual = sum((y - my - b * (x - mx)) ** 2 for x, y in zip(xs, ys))
    return b, math.sqrt(residual / (n - 2) / sxx)


def summary(points: list[dict]) -> dict:
    """A run's span and its slopes: agreement in points a CPU hour, loss in nats a CPU hour."""
    xs = [p["cpu_hours"] for p in points]
    agree = slope(xs, [100 * p["agree"] for p in points])
    losses = [p["loss"] for p in points]
    loss = slope(xs, losses) if None not in losses else (math.nan, math.nan)
    return {"iterations": len(points), "cpu_hours": max(xs) if xs else 0.0,
            "games": points[-1]["games_since"] if points else 0,
            "agree_slope": agree, "loss_slope": loss}


def _pm(pair: tuple[float, float], digits: int) -> str:
    value, error = pair
    if math.isnan(value):
        return "-"
    return f"{value:+.{digits}f}" + ("" if math.isnan(error) else f" ± {error:.{digits}f}")


def tables(runs: dict[str, list[dict]]) -> str:
    """The Markdown tables: every probed iteration of every run, then a line a run."""
    rows = ["| run | iteration | games | CPU hours | agree | top 3 | loss | value |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, points in runs.items():
        for p in points:
            cells = [f"{100 * p['agree']:.1f}%", f"{100 * p['top3']:.1f}%" if p["top3"] is not None else "-",
                     f"{p['loss']:.3f}" if p["loss"] is not None else "-",
                     f"{p['value']:.3f}" if p["value"] is not None else "-"]
            rows.append(f"| {name} | {p['iteration']} | {p['games']} | {p['cpu_hours']:.2f} | " + " | ".join(cells) + " |")
    rows += ["", "| run | probed iterations | CPU hours | games | agreement, points a CPU hour | "
                 "loss, nats a CPU hour |", "|---|---:|---:|---:|---|---|"]
    for name, points in runs.items():
        s = summary(points)
        rows.append(f"| {name} | {s['iterations']} | {s['cpu_hours']:.2f} | {s['games']} | "
                    f"{_pm(s['agree_slope'], 2)} | {_pm(s['loss_slope'], 3)} |")
    return "\n".join(rows)


def plot(runs: dict[str, list[dict]], path: str, since: int | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (agree_ax, loss_ax) = plt.subplots(1, 2, figsize=(10, 3.8))
    for name, points in runs.items():
        xs = [p["cpu_hours"] for p in points]
        agree_ax.plot(xs, [100 * p["agree"] for p in points], marker="o", ms=3, label=name)
        loss_ax.plot(xs, [p["loss"] for p in points], marker="o", ms=3, label=name)
    hours = f"CPU hours since iteration {since}" if since is not None else "CPU hours of training"
    agree_ax.set(xlabel=hours, ylabel="agreement (%)", title="the net's most likely move is the engine's")
    loss_ax.set(xlabel=hours, ylabel="nats", title="cross-entropy of the engine's move")
    agree_ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="[NAME=]RUN",
                        help="a run directory (or its metrics.jsonl), NAME= to name it in the tables")
    parser.add_argument("--since", type=int, metavar="N",
                        help="only the iterations after N, CPU hours counted from each run's iteration N")
    parser.add_argument("--plot", metavar="PNG", help="draw agreement and loss against CPU hours into this file")
    args = parser.parse_args(argv)
    runs = {}
    for spec in args.runs:
        name, _, path = spec.rpartition("=")
        name = name or os.path.basename(os.path.normpath(path))
        try:
            runs[name] = read_run(path, args.since)
        except ValueError as exc:
            print(f"probe_curve: {exc}", file=sys.stderr)
            return 2
    print(tables(runs))
    if args.plot:
        plot(runs, args.plot, args.since)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
