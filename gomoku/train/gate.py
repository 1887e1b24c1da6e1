"""The gate: at each evaluation the run's model plays the run's best model, and replaces it only
when it wins the match, so ``best_model.npz`` never gets weaker than the model it replaced.

Both play the same search at the evaluation's playouts, from balanced openings where the project
has them for the board and rule (else from random central stones), each opening twice with the
colours swapped; the result is reported by colour, since in freestyle Black wins most openings.
"""

from __future__ import annotations

import time

import numpy as np

from gomoku.game.openings import book_for_board, openings_for_games, paired_openings
from gomoku.search.options import SearchOptions
from gomoku.search.player_specs import PlayerSpec
from gomoku.train.config import TrainConfig
from gomoku.actors import PUBLISHED, tally_by_colour

# Random central stones of a gate's openings where no balanced openings fit the board.
GATE_OPENING_STONES = 2


def gate_openings(cfg: TrainConfig, geometry: tuple, seed: int) -> tuple[list, str]:
    """The openings of the gate's games and what they are (a book's name or 'N random stones')."""
    rng = np.random.default_rng(seed)
    name = cfg.eval_openings or "balanced"
    book = book_for_board(name, *geometry, cfg.rule)
    if book:
        return openings_for_games(book, cfg.gate_games, rng), name
    stones = min(cfg.eval_opening_stones or GATE_OPENING_STONES, max(0, geometry[0] * geometry[1] // 4))
    return paired_openings(cfg.gate_games, *geometry, stones, rng), f"{stones} random stones"


def play_gate(actors, cfg: TrainConfig, best_model: str, geometry: tuple, seed: int, device: str,
              progress=None) -> dict:
    """The published model (the run's current one) against ``best_model`` over ``cfg.gate_games``.

    Returns:
        the gate's record: its games, the candidate's score overall and by colour (wins, draws,
        losses), whether it passed, and its seconds.
    """
    start = time.perf_counter()
    playouts = cfg.eval_playouts or cfg.n_playout
    search = SearchOptions(win_check=cfg.win_check, threats=cfg.threats)
    openings, source = gate_openings(cfg, geometry, seed)
    candidate = PlayerSpec("az", PUBLISHED, playouts, search=search)
    best = PlayerSpec("az", best_model, playouts, search=search)
    games, _ = actors.match(candidate, best, geometry, openings, seed, parallel=len(openings), c_puct=cfg.c_puct,
                            device=device, progress=progress, precision=cfg.precision, rule=cfg.rule)
    as_black, as_white = tally_by_colour(games)
    total = as_black + as_white
    return {"games": len(games), "openings": source, "playouts": playouts, "score": round(total.score, 4),
            "as_black": [as_black.wins, as_black.draws, as_black.losses],
            "as_white": [as_white.wins, as_white.draws, as_white.losses],
            "passed": total.score > cfg.gate_score, "gate_s": round(time.perf_counter() - start, 1)}


def gate_line(gate: dict) -> str:
    """The log line of a gate record."""
    if gate.get("first"):
        return "  gate: the run's first best model (best_model.npz), without a match"
    verdict = "passed: the new best model" if gate["passed"] else "failed: the best model stays"
    return ("  gate vs best at {} playouts, {} games from {}: score {:.3f} (as Black {}W {}D {}L, as White {}W {}D {}L)"
            " {} ({}s)").format(gate["playouts"], gate["games"], gate["openings"], gate["score"], *gate["as_black"],
                                *gate["as_white"], verdict, gate["gate_s"])
