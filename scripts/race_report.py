"""The report of a race (``time_to_strength.py``): hours to each target, the markdown table, the
plot, the JSON, and ``--merge``'s one report from several races scored alike."""

from __future__ import annotations

import json
import os
import platform

from gomoku.util import atomic_write


def with_hours_to_reach(recipe: dict, targets: list[float]) -> dict:
    """``recipe`` (its report entry) with the wall-clock and CPU hours of its first snapshot that
    scored at least each target (None where none did)."""
    def first(target: float, key: str):
        return next((round(s[key], 4) for s in recipe["snapshots"] if s["score"] >= target), None)

    return dict(recipe, hours_to_reach={str(t): first(t, "hours") for t in targets},
                cpu_hours_to_reach={str(t): first(t, "cpu_hours") for t in targets})


def machine() -> str:
    """The CPU's model name, for the record."""
    name = ""
    try:
        with open("/proc/cpuinfo") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return name or platform.processor() or platform.machine()


def _cores(n: int) -> str:
    return f"{n} core" if n == 1 else f"{n} cores"


def _label(recipe: dict) -> str:
    return f"{recipe['name']} (race {recipe['race']})" if "race" in recipe else recipe["name"]


def markdown(data: dict) -> str:
    board = data["board"]
    scoring = (f"each snapshot plays {data['games_per_snapshot']} games against `{data['opponent']}` with "
               f"{data['snapshot_playouts']} playouts (seed {data['seed']}), from "
               f"{('the openings `' + data['openings'] + '`') if data.get('openings') else 'two random central stones'}.")
    lines = [f"# Time to strength: {board['width']}x{board['height']}, {board['n_in_row']} in a row", ""]
    if "races" in data:  # merged races: only the CPU-hours compare across them
        count = len(data["races"])
        lines.append(f"{count} race{'s' if count != 1 else ''} merged; {scoring} Wall-clock hours are each race's own; "
                     "CPU-hours compare across races.")
        lines += [""] + [f"- race {i}: `{race['file']}`, {race['side_by_side']} recipes side by side for "
                         f"{race['budget_hours']:.3g} h on {_cores(race['cores'])} of {race['machine']}"
                         for i, race in enumerate(data["races"], 1)]
    else:
        lines.append(f"{data['side_by_side']} recipes side by side for {data['budget_hours']:.3g} h of wall-clock "
                     f"on {_cores(data['cores'])} of {data['machine']}; {scoring}")
    lines += ["", "## Hours to first reach a score (wall-clock / CPU)", "",
              "| recipe | flags | " + " | ".join(f"score {t:g}" for t in data["targets"]) + " |",
              "|---|---|" + "---|" * len(data["targets"])]
    for r in data["recipes"]:
        cells = ["not reached" if h is None else f"{h:.2f} / {c:.2f}"
                 for h, c in zip(r["hours_to_reach"].values(), r["cpu_hours_to_reach"].values())]
        lines.append(f"| {_label(r)} | `{r['flags'] or '(defaults)'}` | " + " | ".join(cells) + " |")
    lines += ["", "## Snapshots", "",
              "| recipe | hours | CPU-hours | iteration | games | score | 95% interval | as White |",
              "|---|---|---|---|---|---|---|---|"]
    for r in data["recipes"]:
        for s in r["snapshots"]:
            white = s.get("as_white", float("nan"))
            lines.append(f"| {_label(r)} | {s['hours']:.2f} | {s['cpu_hours']:.2f} | {s['iteration']} | "
                         f"{s['games']} | {s['score']:.3f} | {s['score_low']:.3f} to {s['score_high']:.3f} | "
                         f"{white:.3f} |")
    return "\n".join(lines) + "\n"


def plot(data: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    for axis, key, label in ((axes[0], "hours", "wall-clock hours of training"),
                             (axes[1], "cpu_hours", "CPU-hours of training")):
        for r in data["recipes"]:
            x = [s[key] for s in r["snapshots"]]
            score = [s["score"] for s in r["snapshots"]]
            below = [s["score"] - s["score_low"] for s in r["snapshots"]]
            above = [s["score_high"] - s["score"] for s in r["snapshots"]]
            line = axis.errorbar(x, score, yerr=[below, above], marker="o", capsize=3, label=_label(r))
            white = [s.get("as_white", float("nan")) for s in r["snapshots"]]
            if any(w == w for w in white):  # NaN-free: the run recorded White's games
                axis.plot(x, white, linestyle="--", marker="v", color=line[0].get_color(),
                          label=f"{_label(r)}, as White")
        for t in data["targets"]:
            axis.axhline(t, color="grey", linewidth=0.6, linestyle="--")
        axis.set(xlabel=label, ylim=(-0.02, 1.02), xlim=(0, None))
        axis.grid(alpha=0.3)
    axes[0].set_ylabel(f"score against {data['opponent']} (dashed: as White)")
    axes[1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5))
    board = data["board"]
    if "races" in data:
        how = f"{len(data['recipes'])} recipes from {len(data['races'])} races (compare CPU-hours)"
    else:
        how = f"{data['side_by_side']} recipes side by side on {_cores(data['cores'])}"
    fig.suptitle(f"{board['width']}x{board['height']}, {board['n_in_row']} in a row: {how}, "
                 f"{data['games_per_snapshot']} games per point, 95% Wilson intervals")
    fig.tight_layout()
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=110, bbox_inches="tight"))
    plt.close(fig)


# What races must share to be merged: their points are then scores of the same kind.
SAME_YARDSTICK = ("board", "opponent", "games_per_snapshot", "openings", "snapshot_playouts", "seed")


def merge(paths: list[str], out: str, targets: list[float]) -> dict:
    """One report from several races' reports: every recipe of each, with its race noted.

    Raises:
        SystemExit: a file that cannot be read, races scored differently, or a recipe name twice.
    """
    races = []
    for path in paths:
        try:
            with open(path) as f:
                races.append(json.load(f))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"error: cannot read the race {path}: {exc}")
    first = races[0]
    for path, data in zip(paths[1:], races[1:]):
        for key in SAME_YARDSTICK:
            if data.get(key) != first.get(key):
                raise SystemExit(f"error: {path} was scored with {key} {data.get(key)!r}, {paths[0]} with "
                                 f"{first.get(key)!r}: its points cannot share one plot")
    merged = {key: first.get(key) for key in SAME_YARDSTICK}
    merged.update(targets=targets, races=[], recipes=[])
    names = set()
    for index, (path, data) in enumerate(zip(paths, races), 1):
        merged["races"].append({"file": os.path.basename(path), **{key: data.get(key) for key in
                                ("budget_hours", "side_by_side", "cores", "machine")}})
        for recipe in data["recipes"]:
            if recipe["name"] in names:
                raise SystemExit(f"error: the recipe {recipe['name']} is in two races: rename one in its json")
            names.add(recipe["name"])
            folder = os.path.dirname(os.path.abspath(path))
            snapshots = [dict(s, model=os.path.relpath(os.path.join(folder, s["model"]), out))
                         for s in recipe["snapshots"]]
            merged["recipes"].append(with_hours_to_reach(dict(recipe, race=index, snapshots=snapshots), targets))
    return merged


def write_report(data: dict, out: str, log) -> int:
    text = json.dumps(data, indent=2) + "\n"
    atomic_write(os.path.join(out, "time_to_strength.json"), lambda f: f.write(text.encode()))
    table = markdown(data)
    atomic_write(os.path.join(out, "time_to_strength.md"), lambda f: f.write(table.encode()))
    plot(data, os.path.join(out, "time_to_strength.png"))
    print(table, flush=True)
    log(f"wrote {out}/time_to_strength.png, .json and .md")
    return 0
