"""The engine's playouts per move, on the compiled core and on the Python trees, and each path's CPU cost.

Two measurements on the same positions (the project's balanced 15x15 openings, 3 to 6 central
stones and no forced win for either side within the threat searches' budgets, so that no search
ends early on a proven root; ``--extra N``: each followed by N moves of the heuristic, a middle
game, where a search may prove its root and stop early):

* ``engine``: ``pbrain-gomokuzero`` processes (``python -m gomoku.play.engine``) with
  ``GOMOKU_CORE`` off and on, threats off and on, get each position as a ``BOARD`` (no tree
  kept) under ``INFO timeout_turn``; their ``MESSAGE`` lines give the playouts of each move;
* ``cpu``: the same search in this process, a fixed number of playouts from each position, the
  two paths in turn: the process's CPU time per playout on each path, the part of it spent in
  the net's calls (the rest is the search's own), the net's calls per playout, and the net's
  CPU time per position at batch 1.

The CPU figures do not depend on what else the machine runs as wall-clock ones do.

    python -m oneoffs.engine_playouts --model models/gomoku_15x15_5.npz --turn-ms 1000
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

from gomoku.game.board import Board
from gomoku.game.openings import load_openings
from gomoku.search.heuristic import HeuristicPlayer

PLAYOUTS_RE = re.compile(r"(\d+) playouts in ([\d.]+) s")


def positions(size: int, first: int, count: int, extra: int = 0) -> list[list[int]]:
    """``count`` balanced openings from the ``first``, each followed by ``extra`` moves of the
    heuristic at level 3 (a middle game; a position whose game ended is left out)."""
    out = []
    for i, moves in enumerate(load_openings("balanced", size, size, 5)[first:first + count]):
        board = Board(size, size, 5)
        for move in moves:
            board.play(move)
        player = HeuristicPlayer(3, i)
        for _ in range(extra):
            if board.game_over:
                break
            board.play(player.get_action(board))
        if not board.game_over and not board.winning_moves():
            out.append(list(board.history))
    return out


def board_lines(moves: list[int], size: int) -> list[str]:
    """A ``BOARD`` block of ``moves`` with the engine to move: its stones 1, the opponent's 2."""
    own_parity = len(moves) % 2
    lines = ["BOARD"]
    for i, move in enumerate(moves):
        y, x = divmod(move, size)
        lines.append(f"{x},{y},{1 if i % 2 == own_parity else 2}")
    return lines + ["DONE"]


PATHS = {"off": ("off", "puct"), "on": ("on", "puct"), "gumbel": ("on", "gumbel")}
"""``--paths``: each name's ``GOMOKU_CORE`` and ``--root-search`` (Gumbel runs on the Python tree either way)"""


def engine_run(model: str, games: list[list[int]], size: int, turn_ms: int, core: str, root: str,
               threats: bool) -> list[tuple]:
    """One engine process over the positions; returns (playouts, seconds) of each move."""
    env = dict(os.environ, GOMOKU_CORE=core)
    command = [sys.executable, "-m", "gomoku.play.engine", "--model", model, "--turn-ms", str(turn_ms),
               "--root-search", root]
    if threats:
        command.append("--threats")
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, bufsize=1)

    def send(*lines: str) -> None:
        proc.stdin.write("".join(line + "\n" for line in lines))
        proc.stdin.flush()

    def reply() -> list[str]:
        lines = []
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the engine ended: {lines}")
            lines.append(line.strip())
            if not line.startswith(("MESSAGE", "DEBUG")):
                return lines

    try:
        send(f"START {size}")
        assert reply()[-1] == "OK"
        send(f"INFO timeout_turn {turn_ms}")
        found = []
        for moves in games:
            send(*board_lines(moves, size))
            for line in reply():
                match = PLAYOUTS_RE.search(line)
                if match:
                    found.append((int(match.group(1)), float(match.group(2))))
        send("END")
        proc.wait(30)
        return found
    finally:
        if proc.poll() is None:
            proc.kill()


class TimedNet:
    """A net whose calls' CPU time is summed (``seconds``), so that the search's own share can be told apart."""

    def __init__(self, net):
        self.net, self.seconds = net, 0.0
        self.input_version = getattr(net, "input_version", 1)
        self.version = getattr(net, "version", 0)

    def predict(self, planes):
        start = time.process_time()
        try:
            return self.net.predict(planes)
        finally:
            self.seconds += time.process_time() - start


def cpu_run(model: str, games: list[list[int]], size: int, playouts: int, threats: bool, rounds: int) -> dict:
    """CPU milliseconds per playout on each path, the net's share of them, and the net's calls per
    playout, over the positions; the two paths take turns, position by position, ``rounds`` times."""
    from gomoku.game.features import input_channels
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.search.core.single import CoreSearch, core_ready
    from gomoku.search.evaluator import NetEvaluator
    from gomoku.search.mcts import MCTS, search

    options = dict(fpu=0.25, solve=True, threats=threats)
    core_ready()
    net = TimedNet(PolicyValueModel.load(model, device="cpu", threads=1))
    net.predict(np.zeros((1, input_channels(net.input_version), size, size), np.float32))  # builds the predictor
    totals = {"python": np.zeros(3), "core": np.zeros(3)}  # CPU seconds, of which the net's, net positions
    for round_ in range(rounds):
        for i, moves in enumerate(games):
            for path in (("python", "core") if (round_ + i) % 2 == 0 else ("core", "python")):
                evaluator = NetEvaluator(net)  # a cache of its own for each search: the paths alike
                board = Board(size, size, 5)
                for move in moves:
                    board.play(move)
                tree = MCTS(**options)
                net_before, start = net.seconds, time.process_time()
                if path == "core":
                    CoreSearch(tree).search(board, evaluator, lambda done: done >= playouts)
                else:
                    search(tree, board, evaluator, lambda done: done >= playouts)
                totals[path] += (time.process_time() - start, net.seconds - net_before, evaluator.positions)
    n = playouts * len(games) * rounds
    return {path: (1000 * cpu / n, 1000 * in_net / n, positions / n)
            for path, (cpu, in_net, positions) in totals.items()}


def net_cost(model: str, size: int, repeats: int) -> float:
    """The net's CPU milliseconds per position at batch 1 (one thread)."""
    from gomoku.game.features import planes
    from gomoku.net.policy_value import PolicyValueModel

    net = PolicyValueModel.load(model, device="cpu", threads=1)
    board = Board(size, size, 5)
    for move in (112, 113, 97):
        board.play(move)
    x = planes(board, getattr(net, "input_version", 1))[None]
    net.predict(x)
    start = time.process_time()
    for _ in range(repeats):
        net.predict(x)
    return 1000 * (time.process_time() - start) / repeats


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="models/gomoku_15x15_5.npz")
    parser.add_argument("--size", type=int, default=15)
    parser.add_argument("--turn-ms", type=int, default=1000)
    parser.add_argument("--positions", type=int, default=8, help="balanced openings to search")
    parser.add_argument("--first", type=int, default=0, help="the first opening's index")
    parser.add_argument("--extra", type=int, default=0, help="heuristic moves played after each opening")
    parser.add_argument("--playouts", type=int, default=200, help="playouts from each position in the CPU measurement")
    parser.add_argument("--repeat", type=int, default=1, help="engine runs of each setting, in turn")
    parser.add_argument("--rounds", type=int, default=2, help="searches of each position on each path (CPU part)")
    parser.add_argument("--parts", default="engine,cpu", help="engine, cpu or both")
    parser.add_argument("--paths", default="off,on",
                        help="the engine's searches, in turn: off (PUCT, Python trees), on (PUCT, the core), "
                             "gumbel (Gumbel's sequential halving, a round of candidates a net call)")
    args = parser.parse_args(argv)
    paths = args.paths.split(",")
    if not set(paths) <= set(PATHS):
        parser.error(f"--paths: choose from {', '.join(PATHS)}, got {args.paths!r}")
    games = positions(args.size, args.first, args.positions, args.extra)
    print(f"{len(games)} positions of {len(games[0])} to {len(games[-1])} stones")
    if "engine" in args.parts:
        per_second: dict = {}
        for round_ in range(args.repeat):  # the settings in turn, so that a change of load hits them alike
            for threats in (False, True):
                for core in paths:
                    found = engine_run(args.model, games, args.size, args.turn_ms, *PATHS[core], threats=threats)
                    counts = np.array([p for p, _ in found])
                    seconds = np.array([s for _, s in found])
                    rate = counts.sum() / seconds.sum()
                    per_second.setdefault((threats, core), []).append((counts.mean(), rate))
                    print(f"engine, threats {'on' if threats else 'off'}, core {core}: {counts.mean():.0f} playouts a "
                          f"move ({rate:.0f} a second of search) over {len(found)} moves: {' '.join(map(str, counts))}",
                          flush=True)
        if args.repeat > 1:
            for (threats, core), runs in per_second.items():
                print(f"median of {args.repeat}, threats {'on' if threats else 'off'}, core {core}: "
                      f"{np.median([m for m, _ in runs]):.0f} playouts a move, "
                      f"{np.median([r for _, r in runs]):.0f} a second of search")
    if "cpu" in args.parts:
        print(f"net at batch 1: {net_cost(args.model, args.size, 300):.2f} ms CPU a position")
        for threats in (False, True):
            for path, (cpu, in_net, calls) in cpu_run(args.model, games, args.size, args.playouts, threats,
                                                      args.rounds).items():
                print(f"cpu, threats {'on' if threats else 'off'}, {path}: {cpu:.2f} ms CPU a playout, of which "
                      f"the net {in_net:.2f} ms ({calls:.2f} net positions a playout) and the search "
                      f"{cpu - in_net:.2f} ms")


if __name__ == "__main__":
    main()
