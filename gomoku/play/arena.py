"""The arena: two players, many games, and how much stronger one is than the other.

    gomoku-arena --a az:models/gomoku_6x6_4.npz:400 --b pure:5000 --games 40
    gomoku-arena --a pure:2000 --b pure:500 --size 6x6 --n-in-row 4 --games 20
    gomoku-arena --a heuristic:4 --b pure:5000 --size 15x15 --n-in-row 5 --games 40

``gomoku-arena`` is the installed command; ``python -m gomoku.play.arena`` runs the same.

Players are specs as ``players.PlayerSpec`` reads them (``az:PATH[:PLAYOUTS]``,
``pure[:PLAYOUTS]``, ``policy:PATH``, ``heuristic[:LEVEL]``). The board is the one the models were
made for; a size-free model (``arch='sizefree'``) plays the board ``--size``
chooses (by default the largest it was trained on); with no model on either
side the board comes from ``--size`` and ``--n-in-row``.

Notation: player ``1`` is Black and opens the game, player ``2`` is White
(as in ``gamefile``). Both searches play their most visited move and start
every move from an empty tree, so a game is decided by its opening (and, for
pure MCTS, its rollouts). To make games differ, each *opening* places
``opening_stones`` stones at random in the centre of the board, Black first,
before the players take over; then

* games ``2k`` and ``2k + 1`` share opening ``k``; A plays Black (player 1) in
  the even game and White in the odd one, so neither side profits from a lucky
  opening;
* openings are distinct up to the board's symmetries while there are enough of
  them to draw from.

A game scores 1 for a win, 0.5 for a draw and 0 for a loss. The score of A is
the mean over all games; its 95% interval is the Wilson score interval, which
stays inside [0, 1] and keeps a width at 0% or 100% (where the normal
approximation collapses to a point). It treats every game as a win or a loss, so
with draws it is a little wider than it needs to be. The Elo difference is
``-400 * log10(1 / score - 1)``, and the interval's ends map the same way
(infinite at a score of 0 or 1).

Games are played by ``train.actors`` in ``workers`` processes; each plays a
contiguous share of the games in lockstep (``search.lockstep``), so the
AlphaZero leaves of its games go to the net in one call, and the rollouts of
all its pure MCTS players in one call too. Everything is seeded from ``seed``:
the same flags, worker count included, give the same games.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import IO, Callable, Optional, Sequence

import numpy as np

from gomoku import interrupt
from gomoku.progress import advance_to, progress_bar
from gomoku.game.board import Board
from gomoku.game.gamefile import COLOUR_NAMES, GameRecord
from gomoku.game.rules import FREESTYLE, RULES
from gomoku.game.openings import OpeningError, load_openings, openings_for_games, paired_openings
from gomoku.search.options import SearchOptions, add_search_flags
from gomoku.search.players import PlayerSpec, spec_text
from gomoku.train.actors import MatchGame, Tally, make_actors, tally_by_colour
from gomoku.util import atomic_write, board_size_arg, positive_int_arg, usable_cpus

SUMMARY_FORMAT = "gomoku-zero-arena/1"
Z_95 = 1.959963984540054  # the two-sided 95% quantile of the normal distribution


class ArenaError(ValueError):
    """Arena settings that cannot work: a bad player spec, models for different boards, ..."""


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


# ----------------------------------------------------------------- openings
# -------------------------------------------------------------------- setup
def parse_player(text: str) -> PlayerSpec:
    """Reads a player spec for the arena (any AI player; a model player needs its path).

    Raises:
        ArenaError: an unknown kind, a human, or a model player without a model.
    """
    try:
        spec = PlayerSpec.parse(text)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    if spec.kind == "human":
        raise ArenaError("the arena plays AI players only: use az:PATH[:N], pure[:N], policy:PATH "
                         "or heuristic[:LEVEL]")
    if spec.kind in ("az", "policy") and not spec.model:
        raise ArenaError(f"the {spec.kind} player needs a model file: {spec.kind}:PATH"
                         + ("[:PLAYOUTS]" if spec.kind == "az" else ""))
    return spec


def resolve_geometry(specs: Sequence[PlayerSpec], size: Optional[tuple[int, int]] = None,
                     n_in_row: Optional[int] = None) -> tuple[int, int, int]:
    """The board ``(width, height, n_in_row)``: the models', else the flags' (default: 8x8, 5).

    A fixed-size model sets the board. A size-free model sets only ``n_in_row``:
    ``size`` chooses the board, by default the largest it was trained on.

    Raises:
        ArenaError: models that cannot play one board, flags that contradict the
            models, a board that cannot hold ``n_in_row``.
        gomoku.net.ModelFileError: a model file is missing or unreadable.
    """
    from gomoku.net.modelfile import read_model_file

    found = {}  # model path -> NetSpec
    for spec in specs:
        if spec.kind in ("az", "policy") and spec.model not in found:
            found[spec.model] = read_model_file(spec.model)[0]
    fixed = {path: s for path, s in found.items() if not s.size_free}
    free = {path: s for path, s in found.items() if s.size_free}
    boards = {(s.width, s.height, s.n_in_row) for s in fixed.values()}
    if len(boards) > 1 or len({s.n_in_row for s in found.values()}) > 1:
        described = ", ".join(f"{path} is for {s.board_name()}" for path, s in found.items())
        raise ArenaError(f"the two models are for different boards: {described}")
    if found:
        # a fixed-size model sets the board; a size-free one only n_in_row
        path, net = next(iter(fixed.items())) if fixed else next(iter(free.items()))
        try:
            geometry = net.board_for(size, n_in_row)
        except ValueError as exc:
            raise ArenaError(f"{path}: {exc}") from None
    else:
        width, height = size or (8, 8)
        geometry = (width, height, n_in_row or min(5, width, height))
    try:
        Board(*geometry)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    return geometry


def resolve_rule(specs: Sequence[PlayerSpec], rule: Optional[str] = None) -> str:
    """The rule of the games: ``rule``, else the models', else freestyle.

    Raises:
        ArenaError: an unknown rule, models trained for different rules, or a model
            trained for another rule than ``rule`` (the message names both).
        gomoku.net.ModelFileError: a model file is missing or unreadable.
    """
    from gomoku.net.modelfile import read_model_file

    if rule is not None and rule not in RULES:
        raise ArenaError(f"unknown rule {rule!r}: the rules are {', '.join(RULES)}")
    nets = {spec.model: read_model_file(spec.model)[0] for spec in specs if spec.kind in ("az", "policy")}
    trained = {net.rule for net in nets.values()}
    if rule is None:
        if len(trained) > 1:
            described = ", ".join(f"{path} for {net.rule}" for path, net in nets.items())
            raise ArenaError(f"the two models were trained for different rules: {described}")
        return trained.pop() if trained else FREESTYLE
    for path, net in nets.items():
        problem = net.rule_mismatch(rule)
        if problem:
            raise ArenaError(f"{path}: {problem} (--rule {rule})")
    return rule


def _board_name(geometry: Sequence[int]) -> str:
    return f"{geometry[0]}x{geometry[1]}, {geometry[2]} in a row"


@dataclass
class ArenaSettings:
    """What an arena run plays."""

    a: str
    """player A's spec, e.g. 'az:models/gomoku_6x6_4.npz:400'"""
    b: str
    """player B's spec, e.g. 'pure:5000'"""
    games: int = 40
    """games in all; each opening is played twice, colours swapped"""
    size: Optional[tuple[int, int]] = None
    """(width, height) when no fixed-size model sets the board"""
    n_in_row: Optional[int] = None
    """stones in a row that win, when no model sets the board"""
    opening_stones: int = 2
    """random stones placed before the players start, Black first"""
    openings: Optional[str] = None
    """an openings file (or 'balanced': the shipped ones) to draw the openings from instead"""
    seed: int = 0
    """seeds the openings and the players"""
    workers: int = 1
    """processes; 1 plays in this process"""
    parallel: int = 16
    """games in lockstep per worker"""
    c_puct: float = 5.0
    """exploration constant of the searches"""
    device: str = "auto"
    """where models run: cpu, gpu or auto"""
    search: SearchOptions = SearchOptions()
    """how the az players search (default: the reference search)"""
    precision: str = "auto"
    """the models' inference arithmetic: auto, fp32 or bf16"""
    precision_b: Optional[str] = None
    """B's, where it differs (to play one model against itself in two precisions); None: ``precision``"""
    rule: Optional[str] = None
    """freestyle, standard or renju; None: the models' rule, else freestyle"""


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
            "fpu": self.settings.search.fpu,
            "win_check": self.settings.search.win_check,
            "solve": self.settings.search.solve,
            "threats": self.settings.search.threats,
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
        }

    def game_lines(self) -> list[dict]:
        """One JSON object per game (``--out``): a ``gamefile`` record plus the arena's fields.

        The record part (format, board, ``moves`` as labels, ``players`` by
        colour, ``result``) is what ``play.py --load`` reads, once a line is
        saved as a file of its own.
        """
        specs = {"A": spec_text(self.spec_a), "B": spec_text(self.spec_b)}
        width, height, n_in_row = self.geometry
        labeller = Board(width, height, n_in_row)
        lines = []
        for game in self.games:
            players = {game.a_colour: specs["A"], 3 - game.a_colour: specs["B"]}
            line = GameRecord(width, height, n_in_row, game.moves, 1, players, game.winner,
                              self.settings.rule or FREESTYLE).to_json()
            line.update(
                game=game.index,
                opening=[labeller.move_to_label(m) for m in game.opening],
                colours={"A": COLOUR_NAMES[game.a_colour].lower(),
                         "B": COLOUR_NAMES[3 - game.a_colour].lower()},
                winner="draw" if game.winner == 0 else ("A" if game.a_points == 1.0 else "B"),
            )
            lines.append(line)
        return lines


def _json_elo(value: float):
    return format_elo(value) if math.isinf(value) else round(value, 1) + 0.0  # no -0.0


def run_arena(settings: ArenaSettings, log: Optional[Callable[[str], None]] = None,
              progress_stream: Optional[IO] = None) -> ArenaResult:
    """Plays the games ``settings`` describe.

    Args:
        settings: the players, the number of games, openings, seeds and workers.
        log: called with a line before the games start.
        progress_stream: where a progress bar (games done, A's running score) goes when it
            is a terminal; standard error by default.

    Raises:
        ArenaError: bad player specs, models for different boards, bad openings.
        gomoku.net.ModelFileError: a model file is missing or unreadable.
    """
    if settings.games < 1:
        raise ArenaError(f"--games must be at least 1, got {settings.games}")
    if settings.workers < 1 or settings.parallel < 1:
        raise ArenaError("--workers and --parallel must be at least 1")
    spec_a, spec_b = (parse_player(text).with_search(settings.search)
                      for text in (settings.a, settings.b))
    if settings.precision_b is not None and settings.precision_b != settings.precision:
        # Each side then names its precision, so that one model file gives two evaluators.
        spec_a = replace(spec_a, precision=settings.precision)
        spec_b = replace(spec_b, precision=settings.precision_b)
    geometry = resolve_geometry([spec_a, spec_b], settings.size, settings.n_in_row)
    rule = resolve_rule([spec_a, spec_b], settings.rule)
    try:
        Board(*geometry, rule=rule)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    rng = np.random.default_rng(settings.seed)
    try:
        if settings.openings:
            per_game = openings_for_games(load_openings(settings.openings, *geometry), settings.games, rng)
        else:
            per_game = paired_openings(settings.games, *geometry, settings.opening_stones, rng)
    except OpeningError as exc:
        raise ArenaError(str(exc)) from None

    workers = min(settings.workers, settings.games)
    if log is not None:
        width, height, n_in_row = geometry
        inference = "" if spec_a.precision is None else f" ({spec_a.precision} against {spec_b.precision})"
        ruled = "" if rule == FREESTYLE else f" ({rule})"
        log(f"{settings.games} games on {width}x{height}, {n_in_row} in a row{ruled}: {spec_text(spec_a)} "
            f"against {spec_text(spec_b)}{inference}, {workers} worker(s)")
    start = time.perf_counter()
    with make_actors(workers) as actors, \
            progress_bar(settings.games, "arena", stream=progress_stream) as bar:
        def on_progress(progress):
            bar.set_postfix_str(f"{spec_text(spec_a)} scores {progress.points:g} of {progress.games}",
                                refresh=False)
            advance_to(bar, progress.games)

        games, stats = actors.match(spec_a, spec_b, geometry, per_game, settings.seed, settings.parallel,
                                    settings.c_puct, settings.device,
                                    progress=on_progress if not bar.disable else None,
                                    precision=settings.precision, rule=rule)
    return ArenaResult(replace(settings, rule=rule), spec_a, spec_b, geometry, games,
                       time.perf_counter() - start, stats.playouts, workers)


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


def read_games(path: str) -> list[dict]:
    """The games of a file ``write_games`` wrote, one dict a game, in order.

    Raises:
        ArenaError: the file is missing, a line is not a JSON object, or it holds no games.
    """
    games = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    games.append(json.loads(line))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArenaError(f"{path} is not an arena games file ({exc.__class__.__name__}: {exc})") from None
    if not all(isinstance(game, dict) for game in games):
        raise ArenaError(f"{path} is not an arena games file (a line that is not a JSON object)")
    if not games:
        raise ArenaError(f"{path} holds no games")
    return games


def write_summary(path: str, result: ArenaResult) -> None:
    text = json.dumps(result.summary(), indent=2) + "\n"
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


# --------------------------------------------------------------------- CLI
def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="gomoku-arena",
        description="Play two players against each other and measure the difference in strength.",
        epilog="Player specs: az:MODEL[:PLAYOUTS] (AlphaZero, 400 playouts by default), "
               "pure[:PLAYOUTS] (pure MCTS), policy:MODEL (the policy net alone, no search), "
               "heuristic[:LEVEL] (threat scoring with forced-win searches; levels 0 to 4, 4 by default; "
               "the yardstick on big boards).")
    parser.add_argument("--a", required=True, metavar="PLAYER", help="player A, whose score is reported")
    parser.add_argument("--b", required=True, metavar="PLAYER", help="player B, the opponent")
    parser.add_argument("--games", type=positive_int_arg, default=40, metavar="N",
                        help="games in all; each opening is played twice, colours swapped (default: 40)")
    parser.add_argument("--opening-stones", type=int, default=2, metavar="K",
                        help="random stones in the centre before the players start, Black first (default: 2)")
    parser.add_argument("--openings", metavar="FILE",
                        help="draw the openings from this openings file instead of placing random stones; "
                             "'balanced' is the project's own balanced openings for the board")
    parser.add_argument("--seed", type=int, default=0, help="seeds openings and players (default: 0)")
    parser.add_argument("--workers", type=positive_int_arg, default=usable_cpus(), metavar="N",
                        help="processes playing games side by side (default: one per core)")
    parser.add_argument("--parallel", type=positive_int_arg, default=16, metavar="N",
                        help="games in lockstep per worker (default: 16)")
    parser.add_argument("--size", type=board_size_arg, metavar="WxH", help="board size when no fixed-size model plays (default: 8x8, or a "
                        "size-free model's largest trained size)")
    parser.add_argument("--n-in-row", type=positive_int_arg, metavar="N",
                        help="stones in a row that win, when no model plays (default: 5)")
    parser.add_argument("--rule", choices=RULES,
                        help="freestyle, standard (exactly five) or renju (default: the models' rule, else freestyle)")
    parser.add_argument("--c-puct", type=float, default=5.0, help="exploration constant (default: 5)")
    add_search_flags(parser, "the az players' searches")
    parser.add_argument("--device", choices=("cpu", "gpu", "auto"), default="auto",
                        help="where models run (default: the GPU if Paddle has one)")
    parser.add_argument("--precision", choices=("auto", "fp32", "bf16"), default="auto",
                        help="the models' inference arithmetic (default: auto, bf16 on a CPU that does it "
                             "natively, else fp32)")
    parser.add_argument("--precision-b", choices=("auto", "fp32", "bf16"),
                        help="B's inference arithmetic where it differs from --precision, e.g. to play a "
                             "model in bf16 against itself in fp32")
    parser.add_argument("--out", metavar="PATH", help="write the games here, one JSON object a line")
    parser.add_argument("--json", metavar="PATH", help="write a machine-readable summary here")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", module="paddle")  # build-tool noise on import
    settings = ArenaSettings(args.a, args.b, args.games, args.size, args.n_in_row, args.opening_stones,
                             args.openings, args.seed, args.workers, args.parallel, args.c_puct, args.device,
                             SearchOptions.from_args(args), args.precision, args.precision_b, args.rule)

    def log(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    try:
        with interrupt.deferred():  # Ctrl-C stops between moves, never inside a Paddle call
            result = run_arena(settings, log=log, progress_stream=io.StringIO() if args.quiet else None)
    except ValueError as exc:  # ArenaError and ModelFileError
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted.", file=sys.stderr)
        return 130
    print(format_report(result))
    if args.out:
        write_games(args.out, result)
    if args.json:
        write_summary(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
