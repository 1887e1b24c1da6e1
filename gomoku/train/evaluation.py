"""The run's evaluations, part of ``TrainPipeline``: every ``check_freq`` iterations the gate
against the run's best model (``gomoku.train.gate``), then a match against the evaluation
opponent, pure MCTS or the threat-aware heuristic on a ladder (once the best win ratio reaches
1.0 the opponent gets stronger: more playouts, or the next level, and the best win ratio starts
again from 0), or an outside engine (``engine:COMMAND``) at its settings.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

import numpy as np

from gomoku.game.openings import book_for_board, openings_for_games, paired_openings
from gomoku.net.modelfile import BEST_MODEL
from gomoku.progress import advance_to, progress_bar
from gomoku.search.heuristic import LEVELS
from gomoku.search.options import SearchOptions
from gomoku.search.player_specs import PlayerSpec, spec_text
from gomoku.train.config import size_order
from gomoku.train.gate import play_gate
from gomoku.actors import PUBLISHED, tally_by_colour


def score_progress(bar):
    """A match's progress callback that shows its games and score on ``bar`` (None when the bar is
    hidden: the actors then send nothing)."""
    if bar.disable:
        return None

    def on_progress(progress):
        bar.set_postfix_str(f"score {progress.points:g} of {progress.games}", refresh=False)
        advance_to(bar, progress.games)

    return on_progress


class Evaluations:
    """The evaluation half of ``TrainPipeline`` (it reads the pipeline's config, actors, learner,
    random source and ladder state)."""

    def eval_opponent(self) -> PlayerSpec:
        """The opponent of the next evaluation: pure MCTS or the heuristic at its rung of the ladder,
        else the player ``eval_opponent`` names, as written."""
        spec = self.config.eval_player()
        if self.config.eval_opponent == "heuristic":
            return replace(spec, level=self.heuristic_level)
        if self.config.eval_opponent == "pure":
            return replace(spec, playouts=self.pure_playouts)
        return spec

    def _climb_ladder(self) -> None:
        """A stronger evaluation opponent, if there is one; the best win ratio starts again."""
        cfg = self.config
        if cfg.eval_opponent == "heuristic":
            if self.heuristic_level < max(LEVELS):
                self.heuristic_level = min(level for level in LEVELS if level > self.heuristic_level)
                self.best_win_ratio = 0.0
        elif cfg.eval_opponent == "pure" and self.pure_playouts < cfg.pure_playout_max:  # the others: no ladder
            self.pure_playouts = min(cfg.pure_playout_max, self.pure_playouts + cfg.pure_playout_step)
            self.best_win_ratio = 0.0

    def evaluate(self) -> dict:
        """Net against the evaluation opponent; saves the best model when it beats the best so far."""
        cfg = self.config
        start = time.perf_counter()
        seed = int(self.rng.integers(2**31))
        opponent = self.eval_opponent()
        playouts = cfg.eval_playouts or cfg.n_playout  # the net's, per move
        geometry = (*self.largest_in_play(), cfg.n_in_row)
        # A plays Black in even games, so each opening is played with colours swapped.
        book = book_for_board(cfg.eval_openings, *geometry, cfg.rule) if cfg.eval_openings else []
        if book:
            openings = openings_for_games(book, cfg.eval_games, np.random.default_rng(seed))
        else:
            openings = paired_openings(cfg.eval_games, *geometry, cfg.eval_opening_stones, np.random.default_rng(seed))
        gate = self.gate(geometry) if cfg.gate_games else None
        self.actors.publish(self.learner.playing)
        with progress_bar(cfg.eval_games, f"evaluation against {opponent}",
                          stream=self.progress_stream) as bar:
            search = SearchOptions(win_check=cfg.win_check, threats=cfg.threats)
            games, _ = self.actors.match(
                PlayerSpec("az", PUBLISHED, playouts, search=search), opponent, geometry, openings, seed,
                parallel=cfg.eval_games, c_puct=cfg.c_puct, device=self.model.device,
                progress=score_progress(bar), precision=cfg.precision, rule=cfg.rule)
        as_black, as_white = tally_by_colour(games)
        total = as_black + as_white
        win_ratio = total.score
        new_best = win_ratio > self.best_win_ratio
        if new_best:
            self.best_win_ratio = win_ratio
            if gate is None:  # without a gate the best model is the one that did best here
                self.learner.playing.save(os.path.join(self.run_dir, BEST_MODEL))
            if self.best_win_ratio == 1.0:
                self._climb_ladder()
        record = {"event": "evaluation", "iteration": self.iteration, "opponent": spec_text(opponent),
                  "playouts": playouts}
        if book:
            record["openings"] = cfg.eval_openings
        elif cfg.eval_opening_stones:
            record["opening_stones"] = cfg.eval_opening_stones
        if cfg.eval_opponent == "pure":
            record["pure_playouts"] = opponent.playouts
        elif cfg.eval_opponent == "heuristic":
            record["heuristic_level"] = opponent.level
        if opponent.entry.info:
            record.update(engine_info=cfg.engine_info, engine_faults=[g.faults for g in games if g.faults])
        # White's results on their own: with Black-favoured openings they are what tells models apart.
        if gate is not None:
            record["gate"] = gate
        return {**record, "wins": total.wins, "draws": total.draws, "losses": total.losses, "win_ratio": win_ratio,
                "as_white": [as_white.wins, as_white.draws, as_white.losses],
                "new_best": new_best, "eval_s": round(time.perf_counter() - start, 1)}

    def gate(self, geometry: tuple) -> dict:
        """The model against the run's best model (``gomoku.train.gate``); the winner is the best model.
        The first gate of a run (no best model yet) makes the model the best without a match."""
        best = os.path.join(self.run_dir, BEST_MODEL)
        if not os.path.exists(best):
            self.learner.playing.save(best)
            return {"games": 0, "openings": "-", "playouts": self.config.eval_playouts or self.config.n_playout,
                    "score": 1.0, "as_black": [0, 0, 0], "as_white": [0, 0, 0], "passed": True, "gate_s": 0.0,
                    "first": True}
        self.actors.publish(self.learner.playing)
        with progress_bar(self.config.gate_games, "gate against the best model", stream=self.progress_stream) as bar:
            gate = play_gate(self.actors, self.config, best, geometry, int(self.rng.integers(2**31)),
                             self.model.device, score_progress(bar))
        if gate["passed"]:
            self.learner.playing.save(best)
        return gate

    def largest_in_play(self) -> tuple[int, int]:
        """The board evaluation plays on: the largest size the current iteration trains on."""
        return max(self.config.sizes_in_play(max(0, self.iteration - 1)), key=size_order)
