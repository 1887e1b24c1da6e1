"""Time to strength: race training recipes side by side from scratch and compare their curves.

Each recipe is a string of ``train.py`` flags. All recipes start together, from
random weights or from the model their flags give with ``--init-model``, and train for the same wall-clock budget on the same machine:
the cores this script may use are dealt out in turn (recipe i is pinned to core
i mod C), each run plays its games in its own process with one math thread, so
every recipe gets the same share of the machine and the same machine conditions.
Each run's CPU time is read from /proc as it trains, so the table also gives
the CPU-hours behind every point.

A run rewrites ``current_model.npz`` after every iteration; at regular
wall-clock intervals the newest one is kept as a snapshot, stamped with the time
since launch at which the run wrote it. Snapshots are scored while the races go
on, one arena match at a time in a child process (``python -m gomoku.play.arena``:
the same openings and seeds for every snapshot, colours alternating) against one
fixed opponent, with the same search (``az:SNAPSHOT:PLAYOUTS``, PUCT) whatever
search the recipe trained with, so that the nets, not the searches, are
compared. With ``--openings`` the games start from an openings file (such as the
balanced ones), and the score as White is kept and drawn beside the total. The arena takes the same share from every recipe; what is left to
score once the budget is spent is scored then, as many matches at once as the
cores hold (``--arena-workers`` each).

The in-run evaluation is switched off (``--check-freq`` very large) unless a
recipe sets it, so the budget goes to learning alone.

Writes to ``--out``: ``time_to_strength.png`` (score against wall-clock hours
and against CPU-hours, 95% Wilson intervals, one curve per recipe),
``time_to_strength.json`` and ``time_to_strength.md`` (every snapshot's score,
and the hours each recipe took to first reach each ``--targets`` score), and
per recipe its run directory, training log and snapshot model files.

``--merge A.json B.json ...`` races nothing: it puts the recipes of earlier races
that were scored alike (board, opponent, openings, games, playouts, seed) in one
table and plot, so that a new option can be raced against recipes raced before
on the CPU-hours axis, without running them again.

Example (two hours, 9x9, five in a row)::

    python scripts/time_to_strength.py --hours 2 --snapshots 6 \\
        --recipe "default=" --recipe "pcr=--p-full 0.25 --n-playout 600 --n-fast 100" \\
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

from gomoku.net.modelfile import CURRENT_MODEL  # noqa: E402
from gomoku.train.metrics import METRICS  # noqa: E402
from gomoku.util import DefaultsHelpFormatter, atomic_write, usable_cpus  # noqa: E402
from race_report import machine, merge, with_hours_to_reach, write_report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""the checkout: its train.py trains the runs"""

NO_EVALUATION = 10**9  # --check-freq that keeps the in-run evaluation from ever running
STOP_WAIT_S = 120.0  # how long a stopped run may take to save its checkpoint and exit


@dataclass
class Recipe:
    name: str
    flags: list[str]


@dataclass
class Snapshot:
    """A recipe's weights at one moment of its run, and later their arena result.

    ``hours`` is wall-clock time since launch, ``cpu_hours`` the run's CPU time then.
    """

    hours: float
    iteration: int
    games: int
    path: str
    cpu_hours: float = float("nan")
    score: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    white: float = float("nan")
    """the score in the games the snapshot played as White"""
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


def cpu_seconds(session: int) -> float:
    """User plus system CPU seconds of the live processes of a session (a run and its workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        # after the name: state ppid pgrp session ... utime (14th field of the line) stime cutime cstime
        if int(fields[3]) == session:
            total += sum(int(v) for v in fields[11:15])
    return total / tick


class Race:
    """One recipe's run: its process, its clocks and its snapshots."""

    def __init__(self, recipe: Recipe, board: tuple, out: str, core: int | None, log):
        self.recipe, self.log = recipe, log
        base = os.path.join(out, recipe.name)
        self.run_dir = os.path.join(base, "run")
        self.snap_dir = os.path.join(base, "snapshots")
        if os.path.exists(self.run_dir):
            raise SystemExit(f"error: {self.run_dir} exists: give another --out, or remove it")
        os.makedirs(self.snap_dir)
        self.command = train_command(recipe, board, self.run_dir)
        self.core = core
        self.log_path = os.path.join(base, "train.log")
        self.snapshots: list[Snapshot] = []
        self.cpu_s = 0.0
        self.process = None

    def start(self) -> None:
        where = "any core" if self.core is None else f"core {self.core}"
        self.log(f"[{self.recipe.name}] on {where}: {shlex.join(self.command)}")
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        core = self.core

        def pin():
            if core is not None:
                os.sched_setaffinity(0, {core})

        with open(self.log_path, "w") as train_log:
            self.launched = time.time()
            # its own session: a Ctrl-C here reaches the run only through stop(), after our own cleanup
            self.process = subprocess.Popen(self.command, cwd=ROOT, stdout=train_log, stderr=subprocess.STDOUT,
                                            start_new_session=True, env=env, preexec_fn=pin)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def sample_cpu(self) -> None:
        """Reads the run's CPU time so far (while it runs: a stopped run's processes are gone)."""
        if self.running():
            self.cpu_s = cpu_seconds(self.process.pid)

    def take_snapshot(self):
        """Keeps the run's newest model as a snapshot; None if there is none or nothing new."""
        try:
            # replaced atomically by the run after each iteration: one whole file, and its time
            with open(os.path.join(self.run_dir, CURRENT_MODEL), "rb") as f:
                written = os.fstat(f.fileno()).st_mtime
                data = f.read()
        except FileNotFoundError:
            return None
        # read after the model: the run appends an iteration's record after saving its model
        records = last_iteration(os.path.join(self.run_dir, METRICS))
        if records is None or (self.snapshots and self.snapshots[-1].iteration == records[0]):
            return None
        iteration, games = records
        path = os.path.join(self.snap_dir, f"iter{iteration:06d}.npz")
        atomic_write(path, lambda f: f.write(data))
        self.sample_cpu()
        snapshot = Snapshot(max(0.0, written - self.launched) / 3600.0, iteration, games, path,
                            cpu_hours=self.cpu_s / 3600.0)
        self.snapshots.append(snapshot)
        self.log(f"[{self.recipe.name}] snapshot at {snapshot.hours * 3600:.0f}s "
                 f"({self.cpu_s:.0f} CPU-s): iteration {iteration}, {games} games")
        return snapshot

    def stop(self) -> None:
        """Asks the run to stop (it saves its checkpoint), then insists."""
        process = self.process
        if process is None or process.poll() is not None:
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

    def check(self) -> None:
        """Fails loudly when the run died before it kept any snapshot."""
        code = self.process.returncode
        if code not in (0, None, 130, 143) and not self.snapshots:  # 130, 143: stopped by our SIGINT or SIGTERM
            with open(self.log_path) as f:
                tail = f.read()[-2000:]
            raise SystemExit(f"error: the {self.recipe.name} run failed (exit {code}):\n{tail}")
        if not self.snapshots:
            self.log(f"[{self.recipe.name}] no iteration finished within the budget: no snapshot")


def last_iteration(metrics: str):
    """(iteration, games) of the last iteration a run's metrics record, or None."""
    last = None
    try:
        with open(metrics) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:  # a line being written
                    continue
                if record.get("event") == "iteration":
                    last = (int(record["iteration"]), int(record["games"]))
    except FileNotFoundError:
        return None
    return last


class Scorer:
    """Scores snapshots in arena child processes: one match at a time while the races go on (they
    take the same share from every recipe), as many as the cores hold once the races are over."""

    def __init__(self, args, log):
        self.args, self.log = args, log
        self.queue: list[tuple[str, Snapshot]] = []
        self.running: list[tuple] = []  # (name, snapshot, process, summary path, start time)
        self.at_once = 1

    def add(self, name: str, snapshot: Snapshot) -> None:
        self.queue.append((name, snapshot))

    def busy(self) -> bool:
        return bool(self.queue) or bool(self.running)

    def poll(self) -> None:
        """Collects finished matches and starts the next ones."""
        for match in list(self.running):
            if match[2].poll() is not None:
                self.running.remove(match)
                self._collect(*match)
        while self.queue and len(self.running) < self.at_once:
            self._start(*self.queue.pop(0))

    def _collect(self, name, snapshot, process, summary, started) -> None:
        if process.returncode != 0:
            error = process.stderr.read()[-2000:]
            self.stop_all()
            raise SystemExit(f"error: the arena failed on {snapshot.path} (exit {process.returncode}): {error}")
        process.stderr.close()
        with open(summary) as f:
            snapshot.summary = json.load(f)
        snapshot.score = snapshot.summary["score"]
        snapshot.low, snapshot.high = snapshot.summary["score_low"], snapshot.summary["score_high"]
        snapshot.white = snapshot.summary["a_as_white"]["score"]
        self.log(f"[{name}] {snapshot.hours:.3f} h (iteration {snapshot.iteration}): score "
                 f"{snapshot.score:.3f} [{snapshot.low:.3f}, {snapshot.high:.3f}], as White "
                 f"{snapshot.white:.3f}, over {self.args.games} games "
                 f"({time.time() - started:.0f}s)")

    def _start(self, name: str, snapshot: Snapshot) -> None:
        summary = snapshot.path[:-len(".npz")] + ".arena.json"
        width, height, _ = self.args.board
        command = [sys.executable, "-m", "gomoku.play.arena",
                   "--a", f"az:{snapshot.path}:{self.args.playouts}",
                   "--b", self.args.opponent, "--games", str(self.args.games), "--seed", str(self.args.seed),
                   "--workers", str(self.args.arena_workers), "--size", f"{width}x{height}",
                   "--device", "cpu", "--json", summary, "--quiet"]
        if self.args.openings:
            command += ["--openings", self.args.openings]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
        self.running.append((name, snapshot, process, summary, time.time()))

    def finish(self) -> None:
        """Scores what is left, now that the races no longer need the cores."""
        self.at_once = max(1, usable_cpus() // self.args.arena_workers)
        while self.busy():
            self.poll()
            time.sleep(0.5)

    def stop_all(self) -> None:
        for _, _, process, _, _ in self.running:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        self.running = []


def race(recipes: list[Recipe], args, log) -> dict[str, list[Snapshot]]:
    """Trains every recipe at once for the budget, scoring snapshots as they come; returns them."""
    pin = hasattr(os, "sched_setaffinity") and usable_cpus() > 1 and not args.no_pin
    cores = sorted(os.sched_getaffinity(0)) if pin else []
    races = [Race(r, args.board, args.out, cores[i % len(cores)] if pin else None, log)
             for i, r in enumerate(recipes)]
    scorer = Scorer(args, log)
    try:
        for r in races:
            r.start()
        launched = min(r.launched for r in races)
        for k in range(1, args.snapshots + 1):
            due = launched + args.budget_s * k / args.snapshots
            while time.time() < due and any(r.running() for r in races):
                scorer.poll()
                time.sleep(min(1.0, max(0.0, due - time.time())))
            for r in races:
                snapshot = r.take_snapshot()
                if snapshot is not None:
                    scorer.add(r.recipe.name, snapshot)
            if not any(r.running() for r in races):
                break
    finally:
        for r in races:
            r.sample_cpu()
            r.stop()
    for r in races:
        r.check()
    try:
        scorer.finish()
    finally:
        scorer.stop_all()
    return {r.recipe.name: r.snapshots for r in races}


def report(recipes: list[Recipe], results: dict, args) -> dict:
    width, height, n_in_row = args.board
    return {
        "board": {"width": width, "height": height, "n_in_row": n_in_row},
        "budget_hours": args.budget_s / 3600.0,
        "side_by_side": len(recipes),
        "cores": usable_cpus(),
        "machine": machine(),
        "opponent": args.opponent,
        "games_per_snapshot": args.games,
        "openings": args.openings,
        "snapshot_playouts": args.playouts,
        "seed": args.seed,
        "targets": args.targets,
        "recipes": [with_hours_to_reach({
            "name": r.name,
            "flags": shlex.join(r.flags),
            "snapshots": [{"hours": round(s.hours, 4), "cpu_hours": round(s.cpu_hours, 4),
                           "iteration": s.iteration, "games": s.games,
                           "model": os.path.relpath(s.path, args.out), "score": s.score,
                           "score_low": s.low, "score_high": s.high, "as_white": s.white,
                           "wins": s.summary.get("total", {}).get("wins"),
                           "draws": s.summary.get("total", {}).get("draws"),
                           "losses": s.summary.get("total", {}).get("losses")}
                          for s in results[r.name]],
        }, args.targets) for r in recipes],
    }


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--recipe", type=parse_recipe, action="append",
                        help="NAME=FLAGS: a recipe as train.py flags (repeat it, two or more to compare; "
                             "'default=', with no flags, trains with the defaults)")
    parser.add_argument("--merge", nargs="+", metavar="JSON",
                        help="instead of racing: put earlier races' time_to_strength.json files (same board, "
                             "opponent, openings, games, playouts and seed) in one table and plot, for "
                             "--out; their CPU-hours axis compares them")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--hours", type=float, help="wall-clock training budget of each recipe")
    budget.add_argument("--seconds", type=float, help="the same budget in seconds (for quick checks)")
    parser.add_argument("--snapshots", type=int, default=8, help="snapshots per recipe, at equal intervals")
    parser.add_argument("--board", type=parse_board, default=(9, 9, 5), help="WIDTHxHEIGHTxN_IN_ROW")
    parser.add_argument("--opponent", default="pure:1000",
                        help="the fixed opponent, an arena player spec (e.g. pure:1000, or az:MODEL:400)")
    parser.add_argument("--games", type=int, default=40, help="arena games per snapshot")
    parser.add_argument("--openings", metavar="FILE",
                        help="the arena's openings file ('balanced': the project's own for the board); "
                             "default: two random central stones")
    parser.add_argument("--playouts", type=int, default=400, help="MCTS playouts of each snapshot in the arena")
    parser.add_argument("--targets", type=parse_targets, default=[0.5, 0.75, 0.9],
                        help="scores whose hours to first reach are tabled, separated by commas")
    parser.add_argument("--arena-workers", type=int, default=usable_cpus(), help="arena processes")
    parser.add_argument("--no-pin", action="store_true",
                        help="let the runs share all cores instead of pinning recipe i to core i mod C")
    parser.add_argument("--seed", type=int, default=0, help="seed of the arena's openings and players")
    parser.add_argument("--out", default=os.path.join("runs", f"time-to-strength-{time.strftime('%Y%m%d-%H%M%S')}"),
                        help="directory for the runs, snapshots, plot and tables")
    args = parser.parse_args(argv)
    if args.merge:
        if args.recipe:
            parser.error("--merge reads earlier races: give no --recipe with it")
        return args
    if not args.recipe or (args.hours is None and args.seconds is None):
        parser.error("a race needs --recipe (two or more) and a budget, --hours or --seconds "
                     "(or --merge to combine earlier races)")
    args.budget_s = args.hours * 3600.0 if args.hours is not None else args.seconds
    names = [r.name for r in args.recipe]
    if len(set(names)) != len(names):
        parser.error(f"recipe names must differ, got {', '.join(names)}")
    if args.budget_s <= 0 or args.snapshots < 1 or args.games < 1 or args.playouts < 1 or args.arena_workers < 1:
        parser.error("the budget, --snapshots, --games, --playouts and --arena-workers must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.merge:
        os.makedirs(args.out, exist_ok=True)
        return write_report(merge(args.merge, args.out, args.targets), args.out, print)

    def log(line: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {line}" if not line.startswith("#") else line, flush=True)

    os.makedirs(args.out, exist_ok=True)
    results = race(args.recipe, args, log)
    return write_report(report(args.recipe, results, args), args.out, log)


if __name__ == "__main__":
    sys.exit(main())
