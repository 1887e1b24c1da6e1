"""How often a model's net picks a strong engine's move, and how well its value foresees the games.

    python scripts/engine_agreement.py docs/probe/rapfi_15x15.jsonl \\
        shipped=models/gomoku_15x15_5.npz next=models/next/gomoku_15x15_5.npz

A match against an engine costs tens of minutes for an interval of about +-0.15; this costs
seconds. The games file holds engine-against-engine games (``gomoku-arena --out`` with two
``engine:`` seats; docs/engines.md says how the ones in docs/probe/ were made). Every position
after each game's opening is a test position: the engine's move there is the policy's target and
the game's result (for the player to move: 1, 0 or -1) the value's. A position reached twice (the
same stones, the same player to move) is scored once, with its first move. For each model, with the
net alone (no search), it prints:

- **agree**: the share of positions where the net's most likely move is the engine's, overall and
  with Black and with White to move;
- **top 3**: the share where the engine's move is among the net's three most likely;
- **loss**: the mean cross-entropy of the engine's move under the net's policy (nats);
- **value**: the mean squared error of the net's value against the result.

Each later model is also compared with the first, position by position: the difference in
agreement with its 95% interval, games as the unit of sampling (the positions of one game are not
independent). Agreement with an engine is not strength, but a model that learns to play better
moves than its parent should agree more, and a falling share is an early sign of trouble.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from gomoku.game.board import Board
from gomoku.game.gamefile import GameFileError, GameRecord
from gomoku.game.rules import BLACK
from gomoku.play.arena.report import ArenaError, read_games


@dataclass
class Positions:
    """The test positions of a games file, in the games' order."""

    boards: list = field(default_factory=list)
    moves: list = field(default_factory=list)  # the engine's move at each board
    results: list = field(default_factory=list)  # +1 the player to move won, -1 lost, 0 a draw
    games: list = field(default_factory=list)  # the index of each position's game
    geometry: tuple = ()
    rule: str = ""


def read_positions(path: str) -> Positions:
    """The test positions of an arena games file, each distinct position once.

    Raises:
        ValueError: the file is missing or malformed, its games are for several boards or rules,
            or a game cannot be replayed.
    """
    found = Positions()
    seen = set()
    for number, line in enumerate(read_games(path)):
        try:
            record = GameRecord.from_json(line)
            record.replay()
        except GameFileError as exc:
            raise ValueError(f"{path}: game {number + 1}: {exc}") from None
        geometry = (record.width, record.height, record.n_in_row)
        if found.geometry and (geometry, record.rule) != (found.geometry, found.rule):
            raise ValueError(f"{path}: game {number + 1} is for another board or rule than the first game")
        found.geometry, found.rule = geometry, record.rule
        board = Board(record.width, record.height, record.n_in_row, record.start_player, record.rule)
        opening = len(line.get("opening", []))
        for ply, move in enumerate(record.moves):
            if ply >= opening:
                key = (bytes(board.cells), board.current_player)
                if key not in seen:
                    seen.add(key)
                    found.boards.append(board.copy())
                    found.moves.append(move)
                    found.results.append(0 if record.result == 0 else 1 if record.result == board.current_player
                                         else -1)
                    found.games.append(number)
            board.do_move(move)
    if not found.boards:
        raise ValueError(f"{path}: no position after an opening to score")
    return found


@dataclass
class Scores:
    """Per position: whether the net's first choice is the engine's move, whether the engine's
    move is among its first three, the cross-entropy of the engine's move, the value's squared error."""

    top1: np.ndarray
    top3: np.ndarray
    loss: np.ndarray
    value_error: np.ndarray


def score(positions: Positions, evaluate, batch: int = 256) -> Scores:
    """Scores ``evaluate(boards) -> (priors (B, size), values (B,))`` on the positions.

    The priors are renormalized over each board's legal moves.
    """
    n = len(positions.boards)
    top1, top3 = np.zeros(n, bool), np.zeros(n, bool)
    loss, value_error = np.zeros(n), np.zeros(n)
    for start in range(0, n, batch):
        boards = positions.boards[start:start + batch]
        priors, values = evaluate(boards)
        for row, board in enumerate(boards):
            i = start + row
            legal = np.zeros(board.size, bool)
            legal[board.legal_moves()] = True
            p = np.where(legal, np.asarray(priors[row], dtype=np.float64), 0.0)
            p = p / p.sum() if p.sum() > 0 else legal / legal.sum()
            move = positions.moves[i]
            rank = int((p > p[move]).sum())
            top1[i], top3[i] = rank == 0, rank < 3
            loss[i] = -math.log(max(p[move], 1e-12))
            value_error[i] = (float(values[row]) - positions.results[i]) ** 2
    return Scores(top1, top3, loss, value_error)


def paired_difference(first: np.ndarray, later: np.ndarray, games: np.ndarray) -> tuple[float, float]:
    """The mean of ``later - first`` over the positions and its 95% half-width, each game's
    positions one sample (the cluster-robust standard error of a mean)."""
    diff = later.astype(float) - first.astype(float)
    n = len(diff)
    mean = diff.mean()
    per_game = np.array([(diff[games == g] - mean).sum() for g in np.unique(games)])
    k = len(per_game)
    if k < 2:
        return mean, float("nan")
    se = math.sqrt(k / (k - 1) * (per_game ** 2).sum()) / n
    return mean, 1.96 * se


def model_evaluator(path: str, positions: Positions):
    """An ``evaluate`` function for the net of the model file at ``path``.

    Raises:
        ValueError: the file cannot be read, or its net is for another board or rule.
    """
    from gomoku.net.modelfile import ModelFileError, read_model_spec
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.search.evaluator import NetEvaluator

    try:
        spec = read_model_spec(path)
    except ModelFileError as exc:
        raise ValueError(str(exc)) from None
    problem = spec.board_mismatch(*positions.geometry) or spec.rule_mismatch(positions.rule)
    if problem:
        raise ValueError(f"{path} is {problem}")
    return NetEvaluator(PolicyValueModel.load(path, device="cpu"), cache_size=0).evaluate


def table(names: list[str], scores: list[Scores], positions: Positions) -> str:
    """The Markdown table of the scores, the first model the reference of the differences."""
    mover = np.array([board.current_player for board in positions.boards])
    games = np.array(positions.games)
    rows = ["| model | agree | with Black to move | with White to move | top 3 | loss | value | agree - first |",
            "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, s in zip(names, scores):
        if s is scores[0]:
            versus = "-"
        else:
            mean, half = paired_difference(scores[0].top1, s.top1, games)
            versus = f"{100 * mean:+.1f} ({100 * (mean - half):+.1f} to {100 * (mean + half):+.1f})"
        rows.append(f"| {name} | {100 * s.top1.mean():.1f}% | {100 * s.top1[mover == BLACK].mean():.1f}% | "
                    f"{100 * s.top1[mover != BLACK].mean():.1f}% | {100 * s.top3.mean():.1f}% | "
                    f"{s.loss.mean():.3f} | {s.value_error.mean():.3f} | {versus} |")
    return "\n".join(rows)


def parse_models(items: list[str]) -> list[tuple[str, str]]:
    """``NAME=PATH`` or ``PATH`` (named by its file name) -> ``[(name, path)]``."""
    models = []
    for item in items:
        name, sep, path = item.partition("=")
        models.append((name, path) if sep and name and path else (os.path.basename(item), item))
    return models


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", help="an arena games file of engine-against-engine games")
    parser.add_argument("models", nargs="+", help="model files, each PATH or NAME=PATH; the first is the reference")
    parser.add_argument("--json", help="also write the scores to this file")
    args = parser.parse_args(argv)
    try:
        positions = read_positions(args.games)
        models = parse_models(args.models)
        evaluators = [model_evaluator(path, positions) for _, path in models]
    except (ValueError, ArenaError) as exc:
        print(f"engine_agreement: {exc}", file=sys.stderr)
        return 2
    scores = [score(positions, evaluate) for evaluate in evaluators]
    n_games = len(set(positions.games))
    print(f"{len(positions.boards)} positions from {n_games} games in {args.games}")
    print(table([name for name, _ in models], scores, positions))
    if args.json:
        rows = [{"model": name, "path": path, "positions": len(positions.boards), "agree": float(s.top1.mean()),
                 "top3": float(s.top3.mean()), "loss": float(s.loss.mean()), "value": float(s.value_error.mean())}
                for (name, path), s in zip(models, scores)]
        with open(args.json, "w") as out:
            json.dump({"games": args.games, "scores": rows}, out, indent=1)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
