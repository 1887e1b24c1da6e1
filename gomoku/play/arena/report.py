"""The arena's results: A's score, its Wilson interval and Elo difference, the report and the files.

``ArenaResult`` holds the games of a run (``arena.run_arena`` makes it); ``format_report``
is the table ``gomoku-arena`` prints, ``write_summary`` the ``--json`` summary, and
``write_games`` / ``read_games`` the ``--out`` games file, one JSON object a game (``GamesFile``
writes it as the games end).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import IO, Optional, Sequence

import numpy as np

from gomoku.actors import MatchGame, Tally, tally_by_colour
from gomoku.game.board import Board
from gomoku.game.gamefile import COLOUR_NAMES, GameFileError, GameRecord, read_game_lines
from gomoku.game.rules import FREESTYLE
from gomoku.play.arena.settings import ArenaError, ArenaSettings
from gomoku.search.player_specs import PlayerSpec, info_text, spec_text
from gomoku.util import atomic_write

SUMMARY_FORMAT = "gomoku-zero-arena/1"
Z_95 = 1.959963984540054  # the two-sided 95% quantile of the normal distribution


# ------------------------------------------------------------------ scoring
def wilson_interval(score: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a mean game score (wins 1, draws 0.5, losses 0).

    Args:
        score: the mean score over the games, in [0, 1].
        n: the number of games.
        z: the normal quantile of the confidence level (1.96 for 95%).

    Returns:
        ``(low, high)`` inside [0, 1]; ``(0, 1)`` when there are no games.
    """
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (score + z2 / (2 * n)) / denominator
    half = z * math.sqrt(score * (1.0 - score) / n + z2 / (4 * n * n)) / denominator
    # At a score of exactly 0 or 1 one end is exactly 0 or 1; rounding must not move it.
    low = 0.0 if score <= 0.0 else max(0.0, centre - half)
    high = 1.0 if score >= 1.0 else min(1.0, centre + half)
    return low, high


def elo_difference(score: float) -> float:
    """The Elo difference that an expected score implies: ``-400 * log10(1 / score - 1)``.

    Returns:
        ``+inf`` at a score of 1 and ``-inf`` at 0.
    """
    if score >= 1.0:
        return math.inf
    if score <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def format_elo(value: float) -> str:
    """``+168``, ``-35``, ``+0``, or ``+inf`` / ``-inf``."""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{int(round(value)):+d}"  # via int, so that -0.4 reads +0, not -0


def _board_name(geometry: Sequence[int]) -> str:
    return f"{geometry[0]}x{geometry[1]}, {geometry[2]} in a row"


@dataclass
class ArenaResult:
    """Games of an arena run and what they say about A against B."""

    settings: ArenaSettings
    spec_a: PlayerSpec
    spec_b: PlayerSpec
    geometry: tuple
    games: list[MatchGame]
    seconds: float
    playouts: int
    """search playouts of both sides over all games"""
    workers: int
    as_black: Tally = field(init=False, default_factory=Tally)
    as_white: Tally = field(init=False, default_factory=Tally)

    def __post_init__(self):
        self.as_black, self.as_white = tally_by_colour(self.games)

    @property
    def total(self) -> Tally:
        return self.as_black + self.as_white

    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of A's score."""
        total = self.total
        return wilson_interval(total.score, total.games)

    def summary(self) -> dict:
        """The machine-readable summary (``--json``); infinite Elo values are "+inf" / "-inf"."""
        total = self.total
        low, high = self.interval()
        elo = [elo_difference(s) for s in (total.score, low, high)]
        width, height, n_in_row = self.geometry
        colours = {c: sum(1 for g in self.games if g.winner == c) for c in (0, 1, 2)}
        return {
            "format": SUMMARY_FORMAT,
            "a": spec_text(self.spec_a),
            "b": spec_text(self.spec_b),
            "board": {"width": width, "height": height, "n_in_row": n_in_row},
            "rule": self.settings.rule or FREESTYLE,
            "games": total.games,
            "opening_stones": self.settings.opening_stones,
            "openings": self.settings.openings,
            **asdict(self.settings.search),  # every search option by its name: fpu, win_check, ...
            "precision": self.settings.precision,
            "precision_b": self.settings.precision_b or self.settings.precision,
            "seed": self.settings.seed,
            "workers": self.workers,
            "a_as_black": self.as_black.to_json(),
            "a_as_white": self.as_white.to_json(),
            "total": total.to_json(),
            "score": round(total.score, 4),
            "score_low": round(low, 4),
            "score_high": round(high, 4),
            "confidence": 0.95,
            "interval": "wilson",
            "elo": _json_elo(elo[0]),
            "elo_low": _json_elo(elo[1]),
            "elo_high": _json_elo(elo[2]),
            "black_wins": colours[1],
            "white_wins": colours[2],
            "draws": colours[0],
            "mean_moves": round(float(np.mean([len(g.moves) for g in self.games])), 2),
            "playouts": self.playouts,
            "seconds": round(self.seconds, 1),
            "faults": self.faults(),
            "engine_info": self.settings.engine_info,
            **({"engine_info_b": self.settings.engine_info_b} if self.settings.engine_info_b is not None else {}),
        }

    def faults(self) -> dict:
        """The engine players' faults over all games, ``{"A": {fault: count}, "B": {...}}``."""
        totals: dict = {"A": {}, "B": {}}
        for game in self.games:
            for colour, counts in game.faults.items():
                side = totals["A" if colour == game.a_colour else "B"]
                for kind, count in counts.items():
                    side[kind] = side.get(kind, 0) + count
        return totals

    def game_lines(self) -> list[dict]:
        """One JSON object per game (``--out``), in the games' order: see ``game_line``."""
        return [game_line(game, self.spec_a, self.spec_b, self.geometry, self.settings.rule) for game in self.games]


def game_line(game: MatchGame, spec_a: PlayerSpec, spec_b: PlayerSpec, geometry: Sequence[int],
              rule: Optional[str]) -> dict:
    """One game as a JSON object (a line of ``--out``): a ``gamefile`` record plus the arena's fields.

    The record part (format, board, ``moves`` as labels, ``players`` by colour,
    ``result``) is what ``play.py --load`` reads, once a line is saved as a file
    of its own. An engine seat's INFO lines (its spec's) are part of who played: the line names
    them once when the engine seats share them, else by seat, ``{"A": ..., "B": ...}``
    (``engine_info_of`` reads both).
    """
    width, height, n_in_row = geometry
    labeller = Board(width, height, n_in_row)
    players = {game.a_colour: spec_text(spec_a), 3 - game.a_colour: spec_text(spec_b)}
    line = GameRecord(width, height, n_in_row, game.moves, 1, players, game.winner, rule or FREESTYLE).to_json()
    line.update(
        game=game.index,
        opening=[labeller.move_to_label(m) for m in game.opening],
        colours={"A": COLOUR_NAMES[game.a_colour].lower(), "B": COLOUR_NAMES[3 - game.a_colour].lower()},
        winner="draw" if game.winner == 0 else ("A" if game.a_points == 1.0 else "B"),
    )
    seats = {seat: info_text(spec.engine_info) for seat, spec in (("A", spec_a), ("B", spec_b)) if spec.engine_info}
    if len(set(seats.values())) == 1:
        line["engine_info"] = next(iter(seats.values()))
    elif seats:
        line["engine_info"] = seats
    if game.faults:
        line["faults"] = {("A" if c == game.a_colour else "B"): counts for c, counts in game.faults.items()}
        line["fault_notes"] = list(game.fault_notes)
    return line


def engine_info_of(line: dict, colour: str) -> str:
    """The INFO text the player of ``colour`` ("1" Black, "2" White) of a game line played with."""
    info = line.get("engine_info", "")
    if not isinstance(info, dict):
        return info
    seat = "A" if line["colours"]["A"] == ("black" if colour == "1" else "white") else "B"
    return info.get(seat, "")


def _json_elo(value: float):
    return format_elo(value) if math.isinf(value) else round(value, 1) + 0.0  # no -0.0


# ----------------------------------------------------------------- report
def format_report(result: ArenaResult) -> str:
    """The human-readable result table, score, interval and Elo difference."""
    settings = result.settings
    spec_a, spec_b = result.spec_a, result.spec_b
    total = result.total
    low, high = result.interval()
    n_openings = (total.games + 1) // 2
    lines = [
        f"A: {spec_a} ({spec_text(spec_a)})   B: {spec_b} ({spec_text(spec_b)})",
        f"{_board_name(result.geometry)} ({settings.rule or FREESTYLE}); "
        f"{total.games} game{'s' if total.games > 1 else ''} from "
        f"{n_openings} opening{'s' if n_openings > 1 else ''} "
        f"{'from ' + settings.openings if settings.openings else f'of {settings.opening_stones} stones'}, "
        f"each played with colours swapped; seed {settings.seed}",
        "",
        f"{'':<12}{'games':>6}{'wins':>6}{'draws':>7}{'losses':>8}{'score':>7}",
    ]
    for label, tally in (("A as Black", result.as_black), ("A as White", result.as_white), ("total", total)):
        score = "" if math.isnan(tally.score) else f"{tally.score:.3f}"
        lines.append(f"{label:<12}{tally.games:>6}{tally.wins:>6}{tally.draws:>7}{tally.losses:>8}{score:>7}")
    lines.append("")
    lines.append(f"score of A: {total.score:.3f}  (95% CI {low:.3f} to {high:.3f})")
    lines.append(f"Elo of A - B: {_elo_text(total.score, low, high)}")
    colours = {c: sum(1 for g in result.games if g.winner == c) for c in (0, 1, 2)}
    moves = np.mean([len(g.moves) for g in result.games])
    lines.append(f"Black won {colours[1]}, White won {colours[2]}, {colours[0]} drawn; "
                 f"{moves:.1f} moves a game; {result.seconds:.1f} s on {result.workers} worker(s)")
    for side, counts in result.faults().items():
        if counts:
            listed = ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items()))
            lines.append(f"faults of {side}: {listed} (see --out for each game's)")
    return "\n".join(lines)


def _elo_text(score: float, low: float, high: float) -> str:
    elo, elo_low, elo_high = elo_difference(score), elo_difference(low), elo_difference(high)
    if score >= 1.0:
        return f"> {format_elo(elo_low)}  (95% lower bound; A won every game)"
    if score <= 0.0:
        return f"< {format_elo(elo_high)}  (95% upper bound; B won every game)"
    return f"{format_elo(elo)}  (95% CI {format_elo(elo_low)} to {format_elo(elo_high)})"


def write_games(path: str, result: ArenaResult) -> None:
    """Writes one JSON line per game (see ``ArenaResult.game_lines``), atomically."""
    text = "".join(json.dumps(line) + "\n" for line in result.game_lines())
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


class GamesFile:
    """The ``--out`` games file of a run: each game is appended to ``PATH.partial`` as it ends,
    so that a run that is killed keeps its games there; ``finish`` writes ``PATH`` atomically, in
    the games' order, and removes the partial file."""

    def __init__(self, path: str):
        self.path = path
        self.partial = path + ".partial"
        self._file: Optional[IO] = None

    def add(self, result: ArenaResult, game: MatchGame) -> None:
        if self._file is None:
            self._file = open(self.partial, "w", encoding="utf-8")
        line = game_line(game, result.spec_a, result.spec_b, result.geometry, result.settings.rule)
        self._file.write(json.dumps(line) + "\n")
        self._file.flush()

    def finish(self, result: ArenaResult) -> None:
        write_games(self.path, result)
        if self._file is not None:
            self._file.close()
            self._file = None
            os.remove(self.partial)


def read_games(path: str) -> list[dict]:
    """The games of a file ``write_games`` wrote, one dict a game, in order (``read_game_lines``).

    Raises:
        ArenaError: the file is missing, a line is not a JSON object, or it holds no games.
    """
    try:
        return read_game_lines(path)
    except GameFileError as exc:
        raise ArenaError(str(exc).replace("is not a games file", "is not an arena games file")) from None


def new_games(games: list[dict], seen: set) -> list[dict]:
    """The games of ``games`` that repeat none before them or in ``seen`` (which collects them).

    Two deterministic players replay a game move for move from the same opening and seed; the
    replay is no new evidence of their strength. A game is the same when its players by colour,
    their engines' settings and its moves are."""
    kept = []
    for game in games:
        key = (json.dumps(game.get("players"), sort_keys=True), json.dumps(game.get("engine_info"), sort_keys=True),
               tuple(game.get("moves") or ()))
        if key[2] and key in seen:
            continue
        seen.add(key)
        kept.append(game)
    return kept


def write_summary(path: str, result: ArenaResult) -> None:
    text = json.dumps(result.summary(), indent=2) + "\n"
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))
