"""Time to strength: train recipes from scratch for the same wall-clock budget and compare their curves.

Each recipe is a string of ``train.py`` flags. The recipes train one after the
other, each alone on the machine (so none steals cores from another and each
curve's clock means what it says), for the same budget from the same start:
a fresh run with random weights. While a run trains, its checkpoint (rewritten
after every iteration) is read at regular wall-clock intervals and its weights
are kept as a snapshot, stamped with the wall-clock time since the run was
launched at which that checkpoint was written. Once every recipe has trained,
each snapshot plays the same arena match (``gomoku.play.arena.run_arena``:
the same openings and seeds, colours alternating) against one fixed opponent,
with the same search (``az:SNAPSHOT:PLAYOUTS``, PUCT) whatever search the recipe
trained with, so that the nets, not the searches, are compared.

The in-run evaluation against pure MCTS is switched off (``--check-freq`` very
large) unless a recipe sets it, so the budget goes to learning alone.

Writes to ``--out``: ``time_to_strength.png`` (score against hours, 95% Wilson
intervals, one curve per recipe), ``time_to_strength.json`` and
``time_to_strength.md`` (every snapshot's score, and the hours each recipe took
to first reach each ``--targets`` score), and per recipe its run directory,
training log and snapshot model files.

Example (two hours per recipe on 9x9, five in a row)::

    python scripts/time_to_strength.py --hours 2 --snapshots 8 \\
        --recipe "reference=" --recipe "pcr=--p-full 0.25 --n-playout 600 --n-fast 100" \\
        --opponent pure:1000 --games 40 --out runs/tts-9x9
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field

warnings.filterwarnings("ignore", message=".*ccache.*")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)  # an entry script run by path, like train.py

from gomoku.util import DefaultsHelpFormatter  # noqa: E402

NO_EVALUATION = 10**9  # --check-freq that keeps the in-run evaluation from ever running
STOP_WAIT_S = 120.0  # how long a stopped run may take to save its checkpoint and exit


@dataclass
class Recipe:
    name: str
    flags: list[str]


@dataclass
class Snapshot:
    """A recipe's weights at one moment of its run, and later their arena result."""

    hours: float
    iteration: int
    games: int
    path: str
    score: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    summary: dict = field(default_factory=dict)


def parse_recipe(text: str) -> Recipe:
    """Reads ``NAME=FLAGS`` (FLAGS may be empty: the defaults).

    Raises:
        argparse.ArgumentTypeError: no name, or a name that is not a plain word.
    """
    name, sep, flags = text.partition("=")
    name = name.strip()
    if not sep or not name or not all(c.isalnum() or c in "-_." for c in name):
        raise argparse.ArgumentTypeError(f"a recipe is NAME=FLAGS with a plain NAME, got {text!r}")
    return Recipe(name, shlex.split(flags))


def parse_board(text: str) -> tuple[int, int, int]:
    """Reads ``WxHxN`` (width, height, stones in a row)."""
    try:
        width, height, n_in_row = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a board is WIDTHxHEIGHTxN_IN_ROW like 9x9x5, got {text!r}") from None
    if min(width, height) < n_in_row or n_in_row < 2:
        raise argparse.ArgumentTypeError(f"a {width}x{height} board cannot hold {n_in_row} in a row")
    return width, height, n_in_row


def parse_targets(text: str) -> list[float]:
    try:
        targets = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        targets = []
    if not targets or not all(0 < t <= 1 for t in targets):
        raise argparse.ArgumentTypeError(f"targets are scores in (0, 1] separated by commas, got {text!r}")
    return targets


def train_command(recipe: Recipe, board: tuple, run_dir: str) -> list[str]:
    width, height, n_in_row = board
    return [sys.executable, os.path.join(ROOT, "train.py"), "--width", str(width), "--height", str(height),
            "--n-in-row", str(n_in_row), "--check-freq", str(NO_EVALUATION),
            "--game-batch-num", str(NO_EVALUATION), "--run-dir", run_dir, *recipe.flags]


def take_snapshot(run_dir: str, launched: float, directory: str, taken: list[Snapshot]):
    """Keeps the run's newest checkpoint as a model file; None if there is none or nothing new."""
    from gomoku.net.modelfile import save_model_file
    from gomoku.net.spec import NetSpec
    from gomoku.train.checkpoint import CHECKPOINT, read_checkpoint
    from gomoku.train.config import TrainConfig

    path = os.path.join(run_dir, CHECKPOINT)
    if not os.path.exists(path):
        return None
    written = os.path.getmtime(path)
    state = read_checkpoint(path)
    if taken and taken[-1].iteration == state["iteration"]:
        return None
    spec = NetSpec.for_config(TrainConfig.from_dict(state["config"]))
    hours = max(0.0, written - launched) / 3600.0
    model = os.path.join(directory, f"iter{state['iteration']:06d}.npz")
    save_model_file(model, spec, state["weights"])
    return Snapshot(hours, int(state["iteration"]), int(state["games"]), model)


def stop(process: subprocess.Popen) -> None:
    """Asks the run to stop (it saves its checkpoint), then insists."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(STOP_WAIT_S)
        return
    except subprocess.TimeoutExpired:
        process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def train_recipe(recipe: Recipe, board: tuple, budget_s: float, snapshots: int, out: str,
                 log) -> list[Snapshot]:
    """Trains one recipe from scratch for ``budget_s`` seconds; returns its snapshots."""
    base = os.path.join(out, recipe.name)
    run_dir = os.path.join(base, "run")
    snap_dir = os.path.join(base, "snapshots")
    if os.path.exists(run_dir):
        raise SystemExit(f"error: {run_dir} exists: give another --out, or remove it")
    os.makedirs(snap_dir)
    command = train_command(recipe, board, run_dir)
    log(f"[{recipe.name}] {shlex.join(command)}")
    taken: list[Snapshot] = []
    with open(os.path.join(base, "train.log"), "w") as train_log:
        launched = time.time()
        # its own session: a Ctrl-C here reaches the run only through stop(), after our own cleanup
        process = subprocess.Popen(command, cwd=ROOT, stdout=train_log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            for k in range(1, snapshots + 1):
                due = launched + budget_s * k / snapshots
                while time.time() < due and process.poll() is None:
                    time.sleep(min(1.0, max(0.0, due - time.time())))
                if process.poll() is not None:
                    break
                snapshot = take_snapshot(run_dir, launched, snap_dir, taken)
                if snapshot is not None:
                    taken.append(snapshot)
                    log(f"[{recipe.name}] snapshot at {snapshot.hours * 3600:.0f}s: "
                        f"iteration {snapshot.iteration}, {snapshot.games} games")
        finally:
            stop(process)
    if process.returncode not in (0, None) and not taken:
        with open(os.path.join(base, "train.log")) as f:
            tail = f.read()[-2000:]
        raise SystemExit(f"error: the {recipe.name} run failed (exit {process.returncode}):\n{tail}")
    if not taken:
        log(f"[{recipe.name}] no iteration finished within the budget: no snapshot")
    return taken


def measure(recipe: Recipe, snapshots: list[Snapshot], args, log) -> None:
    """Plays every snapshot against the opponent (the same games for all) and stores the scores."""
    from gomoku.play.arena import ArenaSettings, run_arena

    for snapshot in snapshots:
        settings = ArenaSettings(a=f"az:{snapshot.path}:{args.playouts}", b=args.opponent, games=args.games,
                                 seed=args.seed, workers=args.arena_workers, device="cpu")
        result = run_arena(settings)
        summary = result.summary()
        snapshot.score, snapshot.low, snapshot.high = summary["score"], summary["score_low"], summary["score_high"]
        snapshot.summary = summary
        log(f"[{recipe.name}] {snapshot.hours:.3f} h (iteration {snapshot.iteration}): score "
            f"{snapshot.score:.3f} [{snapshot.low:.3f}, {snapshot.high:.3f}] over {args.games} games "
            f"({result.seconds:.0f}s)")


def hours_to_reach(snapshots: list[Snapshot], target: float):
    """Hours of the first snapshot scoring at least ``target`` (None if none did)."""
    for s in snapshots:
        if s.score >= target:
            return round(s.hours, 4)
    return None


def report(recipes: list[Recipe], results: dict, args) -> dict:
    width, height, n_in_row = args.board
    return {
        "board": {"width": width, "height": height, "n_in_row": n_in_row},
        "budget_hours": args.budget_s / 3600.0,
        "opponent": args.opponent,
        "games_per_snapshot": args.games,
        "snapshot_playouts": args.playouts,
        "seed": args.seed,
        "targets": args.targets,
        "recipes": [{
            "name": r.name,
            "flags": shlex.join(r.flags),
            "hours_to_reach": {str(t): hours_to_reach(results[r.name], t) for t in args.targets},
            "snapshots": [{"hours": round(s.hours, 4), "iteration": s.iteration, "games": s.games,
                           "model": os.path.relpath(s.path, args.out), "score": s.score,
                           "score_low": s.low, "score_high": s.high,
                           "wins": s.summary.get("total", {}).get("wins"),
                           "draws": s.summary.get("total", {}).get("draws"),
                           "losses": s.summary.get("total", {}).get("losses")}
                          for s in results[r.name]],
        } for r in recipes],
    }


def markdown(data: dict) -> str:
    board = data["board"]
    lines = [f"# Time to strength: {board['width']}x{board['height']}, {board['n_in_row']} in a row",
             "",
             f"{data['budget_hours']:.3g} h per recipe; each snapshot plays {data['games_per_snapshot']} games "
             f"against `{data['opponent']}` with {data['snapshot_playouts']} playouts (seed {data['seed']}).",
             "", "## Hours to first reach a score", "",
             "| recipe | flags | " + " | ".join(f"score {t:g}" for t in data["targets"]) + " |",
             "|---|---|" + "---|" * len(data["targets"])]
    for r in data["recipes"]:
        cells = ["not reached" if h is None else f"{h:.3f}" for h in r["hours_to_reach"].values()]
        lines.append(f"| {r['name']} | `{r['flags'] or '(defaults)'}` | " + " | ".join(cells) + " |")
    lines += ["", "## Snapshots", "", "| recipe | hours | iteration | games | score | 95% interval |",
              "|---|---|---|---|---|---|"]
    for r in data["recipes"]:
        for s in r["snapshots"]:
            lines.append(f"| {r['name']} | {s['hours']:.3f} | {s['iteration']} | {s['games']} | "
                         f"{s['score']:.3f} | {s['score_low']:.3f} to {s['score_high']:.3f} |")
    return "\n".join(lines) + "\n"


def plot(data: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gomoku.util import atomic_write

    fig, ax = plt.subplots(figsize=(8, 5))
    for r in data["recipes"]:
        hours = [s["hours"] for s in r["snapshots"]]
        score = [s["score"] for s in r["snapshots"]]
        below = [s["score"] - s["score_low"] for s in r["snapshots"]]
        above = [s["score_high"] - s["score"] for s in r["snapshots"]]
        ax.errorbar(hours, score, yerr=[below, above], marker="o", capsize=3, label=r["name"])
    for t in data["targets"]:
        ax.axhline(t, color="grey", linewidth=0.6, linestyle="--")
    board = data["board"]
    ax.set(xlabel="wall-clock hours of training", ylabel=f"score against {data['opponent']}",
           ylim=(-0.02, 1.02), xlim=(0, None),
           title=f"{board['width']}x{board['height']}, {board['n_in_row']} in a row: "
                 f"{data['games_per_snapshot']} games per point, 95% Wilson intervals")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=120))
    plt.close(fig)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--recipe", type=parse_recipe, action="append", required=True,
                        help="NAME=FLAGS: a recipe as train.py flags (repeat it, two or more to compare; "
                             "'reference=' is the defaults)")
    budget = parser.add_mutually_exclusive_group(required=True)
    budget.add_argument("--hours", type=float, help="wall-clock training budget of each recipe")
    budget.add_argument("--seconds", type=float, help="the same budget in seconds (for quick checks)")
    parser.add_argument("--snapshots", type=int, default=8, help="snapshots per recipe, at equal intervals")
    parser.add_argument("--board", type=parse_board, default=(9, 9, 5), help="WIDTHxHEIGHTxN_IN_ROW")
    parser.add_argument("--opponent", default="pure:1000",
                        help="the fixed opponent, an arena player spec (e.g. pure:1000, or az:MODEL:400)")
    parser.add_argument("--games", type=int, default=40, help="arena games per snapshot")
    parser.add_argument("--playouts", type=int, default=400, help="MCTS playouts of each snapshot in the arena")
    parser.add_argument("--targets", type=parse_targets, default=[0.5, 0.75, 0.9],
                        help="scores whose hours to first reach are tabled, separated by commas")
    parser.add_argument("--arena-workers", type=int, default=os.cpu_count() or 1, help="arena processes")
    parser.add_argument("--seed", type=int, default=0, help="seed of the arena's openings and players")
    parser.add_argument("--out", default=os.path.join("runs", f"time-to-strength-{time.strftime('%Y%m%d-%H%M%S')}"),
                        help="directory for the runs, snapshots, plot and tables")
    args = parser.parse_args(argv)
    args.budget_s = args.hours * 3600.0 if args.hours is not None else args.seconds
    names = [r.name for r in args.recipe]
    if len(set(names)) != len(names):
        parser.error(f"recipe names must differ, got {', '.join(names)}")
    if args.budget_s <= 0 or args.snapshots < 1 or args.games < 1 or args.playouts < 1 or args.arena_workers < 1:
        parser.error("the budget, --snapshots, --games, --playouts and --arena-workers must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)

    def log(line: str) -> None:
        print(line, flush=True)

    os.makedirs(args.out, exist_ok=True)
    results = {}
    for recipe in args.recipe:
        results[recipe.name] = train_recipe(recipe, args.board, args.budget_s, args.snapshots, args.out, log)
    for recipe in args.recipe:
        measure(recipe, results[recipe.name], args, log)
    from gomoku.util import atomic_write

    data = report(args.recipe, results, args)
    text = json.dumps(data, indent=2) + "\n"
    atomic_write(os.path.join(args.out, "time_to_strength.json"), lambda f: f.write(text.encode()))
    table = markdown(data)
    atomic_write(os.path.join(args.out, "time_to_strength.md"), lambda f: f.write(table.encode()))
    plot(data, os.path.join(args.out, "time_to_strength.png"))
    log(table)
    log(f"wrote {args.out}/time_to_strength.png, .json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
