"""A training run's strength against its CPU hours, by colour, from arena games.

    python scripts/strength_curve.py docs/long_run_15x15.json --plot docs/long_run_15x15.png

The points file lists the run's models as it went, each with the CPU hours of training behind it
(``cpu_s`` in the run's metrics, ``training_cpu_hours`` in a shipped record) and the arena games it
played as player A (``gomoku-arena --out``), one file or more against each yardstick:

    {"title": "the long 15x15 run", "points": [
        {"model": "gomoku_15x15_5.npz (shipped)", "cpu_hours": 0,
         "games": {"Rapfi, 10,000 nodes": ["docs/ladder/freestyle/az800_r10000.jsonl"]}},
        {"model": "iteration 30", "cpu_hours": 1.6,
         "games": {"Rapfi, 10,000 nodes": ["games/it30_r10k.jsonl"],
                   "the shipped model": ["games/it30_shipped.jsonl"]}}]}

It prints a Markdown table (each model's wins, draws and losses as Black and as White against
each yardstick, and the score with its 95% interval) and draws the score by colour against the
CPU hours, one panel per yardstick. Paths in the file are relative to the current folder.

With a ``"ladder"`` object the points are also placed on an Elo ladder (``elo_ladder.py``) and
read off a budget scale as 50% points: the budget of one engine at which it would score even with
the point's model. The fit takes the ladder's games files (glob patterns) and every point's games:

    "ladder": {"games": ["docs/ladder/freestyle/*.jsonl", "docs/ladder/freestyle/*.sgf"],
               "aliases": {"r1k": "engine pbrain-rapfi, max_node 1000"}, "anchor": "heuristic:4",
               "scale": "engine pbrain-rapfi, max_node", "unit": "Rapfi's nodes"}

(``"prior"``: the fit's virtual draws per pair, ``elo_ladder.PRIOR`` if not given.) A point is
rated as player A of its first games file (``"ladder_player"`` names another label).
Players that no chain of games links to the anchor are left out, with a note. The 50% points get a
table and a panel (log scale), with a line at the first point's and one at four times it, and a
pace: the slope of a line through their logarithms, in doublings a CPU hour (``--pace-from HOURS``:
through the points from that many CPU hours on).

A point may also give ``"probe_agree"``, its net's agreement with an engine's moves
(``scripts/engine_agreement.py``, a fraction), with or without games; the file's ``"probe"`` names
what the probe agrees with ("Rapfi's moves"). The agreements get a table and a panel of their own.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import sys

import elo_ladder
from probe_curve import slope
from gomoku.play.arena.report import ArenaError, new_games, read_games, wilson_interval


def colour_record(paths: list[str]) -> dict:
    """``{"black": [w, d, l], "white": [w, d, l]}`` of player A over the games in ``paths``, a game
    that repeats an earlier one move for move counted once (``report.new_games``)."""
    record = {"black": [0, 0, 0], "white": [0, 0, 0]}
    seen: set = set()
    for path in paths:
        games = read_games(path)
        kept = new_games(games, seen)
        if len(kept) < len(games):
            print(f"strength_curve: {path}: {len(games) - len(kept)} game(s) repeat an earlier game move for "
                  f"move; each is counted once", file=sys.stderr)
        for game in kept:
            colour = game["colours"]["A"]
            outcome = 0 if game["winner"] == "A" else 2 if game["winner"] == "B" else 1
            record[colour][outcome] += 1
    return record


def score(wdl) -> tuple[float, int]:
    """The score (a draw is half a point) and the number of games of a W-D-L triple."""
    games = sum(wdl)
    return ((wdl[0] + 0.5 * wdl[1]) / games if games else float("nan")), games


def read_points(path: str) -> tuple[str, list[dict], str, str]:
    """The title, the points, the probe's name and the ladder's unit of a points file, each point
    with ``records`` (yardstick -> colour record), ``probe_agree`` and ``fifty`` (its 50% point on
    the ladder; each None where the file gives none).

    Raises:
        ValueError: the file is missing or malformed, or a games file cannot be read.
    """
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        points = []
        for point in data["points"]:
            records = {name: colour_record(files) for name, files in point.get("games", {}).items()}
            agree = point.get("probe_agree")
            points.append({"model": str(point["model"]), "cpu_hours": float(point["cpu_hours"]), "records": records,
                           "probe_agree": None if agree is None else float(agree), "fifty": None,
                           "files": [f for files in point.get("games", {}).values() for f in files],
                           "ladder_player": point.get("ladder_player")})
        unit = place_on_ladder(data["ladder"], points) if "ladder" in data else ""
    except (OSError, ValueError, KeyError, TypeError, ArenaError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    return (str(data.get("title", "strength against training")), sorted(points, key=lambda p: p["cpu_hours"]),
            str(data.get("probe", "")), unit)


def place_on_ladder(ladder: dict, points: list[dict]) -> str:
    """Sets each point's ``fifty`` (its row of ``elo_ladder.fifty_percent_points``) and returns the
    scale's unit. Points without games stay unplaced."""
    files = list(dict.fromkeys(f for pattern in ladder["games"] for f in sorted(glob.glob(pattern))))
    files += [f for point in points for f in point["files"] if f not in files]
    games, _ = elo_ladder.read_games(files, ladder.get("aliases", {}))
    anchor = str(ladder["anchor"])
    linked = elo_ladder.connected(games, anchor)
    apart = sorted({p for g in games for p in g[:2]} - linked)
    if apart:
        print(f"strength_curve: no chain of games links {', '.join(apart)} to {anchor}: left off the ladder",
              file=sys.stderr)
    games = [g for g in games if g[0] in linked and g[1] in linked]
    prior = float(ladder.get("prior", elo_ladder.PRIOR))
    rows = {row["player"]: row for row in elo_ladder.fifty_percent_points(games, anchor, prior, str(ladder["scale"]))}
    for point in points:
        if point["files"]:
            label = point["ladder_player"] or player_a(point["files"][0])
            point["fifty"] = rows.get(label)
            if point["fifty"] is None:
                print(f"strength_curve: {point['model']} ({label}) has no 50% point on the ladder", file=sys.stderr)
    return str(ladder.get("unit", ladder["scale"]))


def player_a(path: str) -> str:
    """The ladder's label of player A in an arena games file (its first game)."""
    game = read_games(path)[0]
    colour = "1" if game["colours"]["A"] == "black" else "2"
    black, white, _ = elo_ladder.rated_game(game, {})
    return black if colour == "1" else white


def fifty_table(points: list[dict], unit: str) -> str:
    """The points' Elo and 50% points on the ladder's scale ('' if no point was placed)."""
    rows = [f"| {p['model']} | {p['cpu_hours']:g} | {p['fifty']['player']} | {p['fifty']['rating']:+.0f} | "
            f"{elo_ladder.budget_text(p['fifty']['point'])} | {elo_ladder.range_text(p['fifty'])} |"
            for p in points if p["fifty"]]
    return "\n".join([f"| model | CPU hours | on the ladder as | Elo | 50% point ({unit}) | 95% range |",
                      "|---|---:|---|---:|---:|---:|", *rows]) if rows else ""


def pace(points: list[dict], unit: str, since: float = 0.0) -> str:
    """How fast the 50% points rise: a least-squares line (``probe_curve.slope``) through their
    base-2 logarithms against the CPU hours, each point weighing the same, from the points at
    ``since`` CPU hours or later; its slope in doublings a CPU hour with the slope's standard error,
    and where the line reaches four times the first of those points' budget ('' with fewer than
    three points inside the scale; a point beyond its ends is only a bound and stays out)."""
    placed = [p for p in points if p["fifty"] and p["fifty"]["point"][1] == 0 and p["cpu_hours"] >= since]
    if len(placed) < 3:
        return ""
    xs = [p["cpu_hours"] for p in placed]
    ys = [math.log2(p["fifty"]["point"][0]) for p in placed]
    rise, error = slope(xs, ys)
    if math.isnan(rise):  # all the points at one CPU hour
        return ""
    text = (f"pace: {rise:+.3f} ± {error:.3f} doublings of the 50% point a CPU hour "
            f"(a line through {len(xs)} points, {xs[0]:g} to {xs[-1]:g} CPU hours)")
    target = ys[0] + 2  # four times the first point's budget
    if rise > 0:
        hours = sum(xs) / len(xs) + (target - sum(ys) / len(ys)) / rise
        text += (f"; the line reaches four times the first point ({elo_ladder.budget_text((2 ** target, 0))} "
                 f"{unit}) at {hours:.0f} CPU hours")
    else:
        text += "; at that pace the line never reaches four times the first point"
    return text


def agreement_table(points: list[dict]) -> str:
    """The points' agreement with the probe engine's moves, where the file gives it ('' if nowhere)."""
    rows = [f"| {p['model']} | {p['cpu_hours']:g} | {100 * p['probe_agree']:.1f}% |"
            for p in points if p["probe_agree"] is not None]
    return "\n".join(["| model | CPU hours | agreement with the probe |", "|---|---:|---:|", *rows]) if rows else ""


def table(points: list[dict]) -> str:
    lines = ["| model | CPU hours | against | as Black (W-D-L) | as White (W-D-L) | score (95% interval) |",
             "|---|---:|---|---|---|---|"]
    for point in points:
        for name, record in point["records"].items():
            total = [b + w for b, w in zip(record["black"], record["white"])]
            value, games = score(total)
            low, high = wilson_interval(value, games)
            lines.append(f"| {point['model']} | {point['cpu_hours']:g} | {name} | "
                         f"{'-'.join(map(str, record['black']))} | {'-'.join(map(str, record['white']))} | "
                         f"{value:.3f} ({low:.2f}-{high:.2f}), {games} games |")
    return "\n".join(lines)


def plot(title: str, points: list[dict], path: str, probe: str = "", unit: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(name for point in points for name in point["records"]))
    agreed = [(p["cpu_hours"], 100 * p["probe_agree"]) for p in points if p["probe_agree"] is not None]
    placed = [p for p in points if p["fifty"]]
    panels = len(names) + bool(agreed) + bool(placed)
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 3.8), squeeze=False)
    if placed:
        ax = axes[0][len(names)]
        values = [p["fifty"]["point"][0] for p in placed]
        errors = [[v - p["fifty"]["low"][0] for v, p in zip(values, placed)],
                  [p["fifty"]["high"][0] - v for v, p in zip(values, placed)]]
        ax.errorbar([p["cpu_hours"] for p in placed], values, yerr=errors, marker="o", capsize=3, color="tab:green")
        ax.axhline(values[0], color="grey", lw=0.5, label=f"{placed[0]['model']}")
        ax.axhline(4 * values[0], color="grey", lw=0.8, ls="--", label="four times that")
        ax.set_yscale("log")
        ax.set_ylim(0.8 * min(p["fifty"]["low"][0] for p in placed),
                    1.3 * max(4 * values[0], max(p["fifty"]["high"][0] for p in placed)))
        ax.set_xlabel("CPU hours of training")
        ax.set_ylabel(f"50% point ({unit}, 95% range)")
        ax.set_title("on the Elo ladder: the even budget")
        ax.legend(loc="lower right", fontsize="small")
    if agreed:
        ax = axes[0][-1]
        ax.plot(*zip(*agreed), marker="D", color="tab:red")
        ax.set_xlabel("CPU hours of training")
        ax.set_ylabel("agreement (%)")
        ax.set_title(f"the net alone: agreement with {probe or 'the probe'}")
    for ax, name in zip(axes[0], names):
        for colour, marker in (("black", "o"), ("white", "s")):
            xs, ys, errors = [], [], [[], []]
            for point in points:
                if name in point["records"]:
                    value, games = score(point["records"][name][colour])
                    low, high = wilson_interval(value, games)
                    xs.append(point["cpu_hours"])
                    ys.append(value)
                    errors[0].append(value - low)
                    errors[1].append(high - value)
            ax.errorbar(xs, ys, yerr=errors, marker=marker, capsize=3, label=f"as {colour.capitalize()}",
                        color="black" if colour == "black" else "tab:orange")
        ax.set_ylim(-0.05, 1.05)
        ax.axhline(0.5, color="grey", lw=0.5)
        ax.set_xlabel("CPU hours of training")
        ax.set_ylabel("score (95% interval)")
        ax.set_title(f"against {name}")
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", help="the points file (see the module's docstring)")
    parser.add_argument("--plot", metavar="PNG", help="draw the curves into this file")
    parser.add_argument("--pace-from", type=float, default=0.0, metavar="HOURS",
                        help="the pace from the 50%% points at HOURS CPU hours or later (default: all)")
    args = parser.parse_args(argv)
    try:
        title, points, probe, unit = read_points(args.points)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(table(points))
    for extra in (fifty_table(points, unit), pace(points, unit, args.pace_from), agreement_table(points)):
        if extra:
            print("\n" + extra)
    if args.plot:
        plot(title, points, args.plot, probe, unit)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
