"""The golden self-play games: seeded games whose moves and policy targets are stored in the repository.

``python -m tests.golden`` writes ``tests/data/golden_selfplay.json`` anew (only when a change
of the search is meant to change its games); ``tests/test_golden.py`` plays the same games on
the reference trees and on the compiled core and compares them with the file.

The stand-in for the net is integer arithmetic over the planes, then a softmax in float64
with the standard library's ``exp``: the same numbers on any machine, unlike a BLAS product.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from gomoku.game.board import Board
from gomoku.search.evaluator import NetEvaluator
from gomoku.search.gumbel import GumbelPlayer
from gomoku.search.lockstep import run_games
from gomoku.search.mcts_player import MCTSPlayer

PATH = os.path.join(os.path.dirname(__file__), "data", "golden_selfplay.json")
RECIPES = {
    "puct": dict(kind="puct", width=6, n_in_row=4, playouts=60, games=2,
                 options=dict(fpu=0.25, solve=True, forced_k=2.0)),
    "gumbel": dict(kind="gumbel", width=6, n_in_row=4, playouts=24, games=2, options=dict(win_check=True)),
}


class IntegerNet:
    """Priors and values from integer weights over the stones: exact, the same on any machine."""

    input_version = 1
    version = 0

    def __init__(self, size: int, seed: int = 3):
        rng = np.random.default_rng(seed)
        self.w = rng.integers(-9, 10, size=(4 * size, size)).astype(np.int64)
        self.v = rng.integers(-3, 4, size=4 * size).astype(np.int64)

    def predict(self, planes):
        x = planes.reshape(len(planes), -1).astype(np.int64)
        log_p = np.empty((len(x), self.w.shape[1]), np.float32)
        values = np.empty(len(x), np.float32)
        for i, row in enumerate(x):
            logits = [int(z) / 10.0 for z in row @ self.w]
            top = max(logits)
            total = math.fsum(math.exp(z - top) for z in logits)
            log_p[i] = [z - top - math.log(total) for z in logits]
            values[i] = math.tanh(int(row @ self.v) / 20.0)
        return log_p, values


def play(recipe: dict, compiled: bool) -> list:
    """The recipe's games as ``[{"moves": [...], "pis": [[...], ...]}, ...]``."""
    size = recipe["width"] ** 2
    evaluator = NetEvaluator(IntegerNet(size), cache_size=0)

    def new_game(i):
        if recipe["kind"] == "gumbel":
            player = GumbelPlayer(evaluator, n_playout=recipe["playouts"], seed=100 + i, **recipe["options"])
        else:
            player = MCTSPlayer(evaluator, n_playout=recipe["playouts"], self_play=True, seed=100 + i,
                                **recipe["options"])
        return Board(recipe["width"], recipe["width"], recipe["n_in_row"], start_player=1 + i % 2), {1: player, 2: player}

    games, _ = run_games(recipe["games"], new_game, recipe["games"], record=True, compiled=compiled)
    return [{"moves": [int(m) for m in g.moves], "winner": int(g.winner),
             "pis": [[round(float(p), 7) for p in pi] for pi in g.pis]} for g in games]


if __name__ == "__main__":
    golden = {name: play(recipe, compiled=False) for name, recipe in RECIPES.items()}
    os.makedirs(os.path.dirname(PATH), exist_ok=True)
    with open(PATH, "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {PATH}: " + ", ".join(f"{name} {len(games)} games" for name, games in golden.items()))
