"""Stops the engine and play.py the ways managers and users do, at moments spread over their start
and their first moves, and checks that each stop is quiet and leaves no temporary folder.

* SIGTERM to ``pbrain-gomokuzero`` (``python -m gomoku.play.engine``) after ``START 15`` and a
  few moves at 1 s each: the signal lands before, during or after Paddle's import and the model's
  load, or during a search;
* SIGTERM to ``python play.py --text --size 15x15 --first ai`` with a few moves of the human;
* SIGKILL to the engine at the same moments, then one more start: the folders the killed ones
  left, and how many of them that start sweeps.

Each process runs with a temporary folder of its own (``TMPDIR``), so that other processes of
the machine neither add folders to the count nor lose theirs to the sweep. A SIGTERM passes when
the output has no "FatalError" and no "Traceback", the process has ended, and the folder holds
no ``gomoku-infer-*`` folder.

    python scripts/stop_check.py                     # 20 of each, 0.5 to 10 s after the start
    python scripts/stop_check.py --tries 5 --last 4
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INFER_PREFIX = "gomoku-infer-"
ENGINE = [sys.executable, "-m", "gomoku.play.engine"]
ENGINE_INPUT = ["START 15", "INFO timeout_turn 1000", "BEGIN"] + [f"TURN 0,{y}" for y in range(6)]
PLAY = [sys.executable, str(ROOT / "play.py"), "--text", "--size", "15x15", "--first", "ai", "--playouts", "200"]
PLAY_INPUT = [f"a{row}" for row in range(1, 7)]
EXIT_WAIT_S = 60.0
"""how long a signalled process may take to end before it counts as hung (and is killed)"""


@dataclass
class Stop:
    """One signalled process: when the signal went, how it ended, what it printed and left."""

    delay: float
    pid: int
    returncode: int
    exit_seconds: float
    """from the signal to the process's end"""
    output: str
    left: list[str]
    """the ``gomoku-infer-*`` folders in its temporary folder afterwards"""

    @property
    def loud(self) -> bool:
        return "FatalError" in self.output or "Traceback" in self.output

    @property
    def hung(self) -> bool:
        return self.exit_seconds >= EXIT_WAIT_S


def infer_folders(tmp: str) -> list[str]:
    return sorted(name for name in os.listdir(tmp) if name.startswith(INFER_PREFIX))


def start(command: list[str], lines: list[str], tmp: str) -> subprocess.Popen:
    """The command with ``tmp`` as its temporary folder and ``lines`` on its input (kept open)."""
    env = dict(os.environ, TMPDIR=tmp, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, cwd=ROOT, text=True)
    proc.stdin.write("".join(line + "\n" for line in lines))
    proc.stdin.flush()
    return proc


def stop_once(command: list[str], lines: list[str], delay: float, sig: int, tmp: str) -> Stop:
    """Starts ``command``, sends ``sig`` ``delay`` seconds later, waits for its end."""
    proc = start(command, lines, tmp)
    time.sleep(delay)
    proc.send_signal(sig)
    sent = time.monotonic()
    try:
        output, _ = proc.communicate(timeout=EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
    return Stop(delay, proc.pid, proc.returncode, time.monotonic() - sent, output, infer_folders(tmp))


def sweep_on_start(tmp: str) -> int:
    """Starts the engine up to its model's load in ``tmp`` and ends it; returns the
    ``gomoku-infer-*`` folders that were there before and are gone after."""
    before = set(infer_folders(tmp))
    proc = start(ENGINE, ["START 15", "END"], tmp)
    proc.communicate(timeout=EXIT_WAIT_S * 5)  # Paddle's import and two models' load: minutes when busy
    return len(before - set(infer_folders(tmp)))


def delays(tries: int, first: float, last: float) -> list[float]:
    return [first + (last - first) * i / max(1, tries - 1) for i in range(tries)]


def report(name: str, stops: list[Stop]) -> bool:
    loud = [s for s in stops if s.loud]
    hung = [s for s in stops if s.hung]
    leaving = [s for s in stops if s.left]
    print(f"{name}: {len(stops)} stops, {len(loud)} printed FatalError or a traceback, {len(hung)} hung, "
          f"{len(leaving)} left a gomoku-infer folder; slowest end {max(s.exit_seconds for s in stops):.2f} s "
          f"after the signal")
    for s in loud + hung + leaving:
        print(f"  at {s.delay:.2f} s: exit {s.returncode}, {s.exit_seconds:.2f} s, left {s.left}\n"
              f"  {s.output[-800:]}")
    return not (loud or hung or leaving)


def kill_check(moments: list[float]) -> bool:
    """SIGKILLs of the engine at ``moments``, one after another in one temporary folder: the folders
    each one left, those that the later starts swept, and those that one more start sweeps."""
    with tempfile.TemporaryDirectory(prefix="stop-check-") as tmp:
        left, swept, present = 0, 0, set()
        for d in moments:
            kill = stop_once(ENGINE, ENGINE_INPUT, d, signal.SIGKILL, tmp)
            now = set(kill.left)
            swept += len(present - now)  # removed by this start's sweep
            left += sum(f"-{kill.pid}-" in name for name in now)
            present = now
        swept_last = sweep_on_start(tmp)
        after = len(infer_folders(tmp))
        print(f"engine SIGKILL: {len(moments)} kills left {left} folders; the later kills' starts swept {swept}, "
              f"one more start swept the {swept_last} left, {after} remain")
        return after == 0 and swept + swept_last == left


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=20, help="signals of each kind (default: 20)")
    parser.add_argument("--first", type=float, default=0.5, help="the earliest signal, seconds after the start")
    parser.add_argument("--last", type=float, default=10.0, help="the latest signal, seconds after the start")
    parser.add_argument("--kinds", default="engine,play,kill",
                        help="which checks: engine (SIGTERM), play (SIGTERM to play.py), kill (SIGKILL to the engine)")
    args = parser.parse_args(argv)
    moments = delays(args.tries, args.first, args.last)
    kinds = args.kinds.split(",")
    good = True
    for kind, name, command, lines in (("engine", "engine SIGTERM", ENGINE, ENGINE_INPUT),
                                       ("play", "play.py SIGTERM", PLAY, PLAY_INPUT)):
        if kind in kinds:
            with tempfile.TemporaryDirectory(prefix="stop-check-") as tmp:
                good &= report(name, [stop_once(command, lines, d, signal.SIGTERM, tmp) for d in moments])
    if "kill" in kinds:
        good &= kill_check(moments)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
