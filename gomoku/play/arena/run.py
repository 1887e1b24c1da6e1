"""The arena: two players, many games, and how much stronger one is than the other.

    gomoku-arena --a az:models/gomoku_6x6_4.npz:400 --b pure:5000 --games 40
    gomoku-arena --a pure:2000 --b pure:500 --size 6x6 --n-in-row 4 --games 20
    gomoku-arena --a heuristic:4 --b pure:5000 --size 15x15 --n-in-row 5 --games 40

``gomoku-arena`` is the installed command; ``python -m gomoku.play.arena`` runs the same.

Players are specs as ``player_specs.PlayerSpec`` reads them (``az:PATH[:PLAYOUTS]``,
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

Games are played by the actors (``gomoku.actors``) in ``workers`` processes; each plays a
contiguous share of the games in lockstep (``search.lockstep``), so the
AlphaZero leaves of its games go to the net in one call, and the rollouts of
all its pure MCTS players in one call too. Everything is seeded from ``seed``:
the same flags, worker count included, give the same games.

This module runs the match (``run_arena``) and the command line; ``arena_setup``
reads the players, the board and the rule, ``arena_report`` scores the games and
writes the report, the summary and the games file.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import warnings
from dataclasses import replace
from typing import IO, Callable, Optional

import numpy as np

from gomoku import interrupt
from gomoku.actors import MatchGame, make_actors
from gomoku.game.board import Board
from gomoku.game.gamefile import COLOUR_NAMES
from gomoku.game.openings import OpeningError, load_openings, openings_for_games, paired_openings
from gomoku.game.rules import FREESTYLE, RULES, rules_help
from gomoku.net.flags import PRECISIONS, add_device_flags
from gomoku.play.arena.report import ArenaResult, GamesFile, format_report, write_summary
from gomoku.play.arena.settings import ArenaError, ArenaSettings, parse_player, resolve_geometry, resolve_rule
from gomoku.play.engine_player import EngineError, parse_engine_info
from gomoku.progress import advance_to, progress_bar
from gomoku.search.options import SearchOptions, add_search_flags
from gomoku.search.player_registry import player_forms
from gomoku.search.player_specs import check_player, spec_text
from gomoku.util import board_size_arg, positive_int_arg, usable_cpus


class ArenaInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the arena; ``result`` holds the games that had ended."""

    def __init__(self, result: ArenaResult):
        super().__init__()
        self.result = result


def run_arena(settings: ArenaSettings, log: Optional[Callable[[str], None]] = None,
              progress_stream: Optional[IO] = None,
              on_game: Optional[Callable[[ArenaResult, MatchGame], None]] = None) -> ArenaResult:
    """Plays the games ``settings`` describe.

    Args:
        settings: the players, the number of games, openings, seeds and workers.
        log: called with a line before the games start, and with a line on each game as it ends
            when no progress bar is drawn (``progress_stream`` is not a terminal).
        progress_stream: where a progress bar (games done, A's running score) goes when it
            is a terminal; standard error by default.
        on_game: called as each game ends (in the order they end, which with several workers
            or games in lockstep is not the games' order) with the result so far and the game.

    Raises:
        ArenaError: bad player specs, models for different boards, bad openings.
        gomoku.net.ModelFileError: a model file is missing or unreadable.
        ArenaInterrupted: a stop was asked for; it holds the games that had ended.
    """
    if settings.games < 1:
        raise ArenaError(f"--games must be at least 1, got {settings.games}")
    if settings.workers < 1 or settings.parallel < 1:
        raise ArenaError("--workers and --parallel must be at least 1")
    try:
        infos = {seat: parse_engine_info(text) for seat, text in settings.seat_engine_info().items()}
    except EngineError as exc:
        raise ArenaError(str(exc)) from None
    spec_a, spec_b = (parse_player(text).with_search(settings.search).with_engine_info(infos[seat])
                      for seat, text in (("A", settings.a), ("B", settings.b)))
    if settings.precision_b is not None and settings.precision_b != settings.precision:
        # Each side then names its precision, so that one model file gives two evaluators.
        spec_a = replace(spec_a, precision=settings.precision)
        spec_b = replace(spec_b, precision=settings.precision_b)
    geometry = resolve_geometry([spec_a, spec_b], settings.size, settings.n_in_row)
    if spec_a.entry.model or spec_b.entry.model:
        import gomoku.net.backend  # noqa: F401  (without Paddle: one line here, not an error from every worker)
    rule = resolve_rule([spec_a, spec_b], settings.rule)
    try:
        Board(*geometry, rule=rule)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    for spec in {spec_text(spec): spec for spec in (spec_a, spec_b)}.values():
        try:  # a bad engine command or info fails here, in one line, before any game
            check_player(spec, geometry[0], geometry[1], rule)
        except ValueError as exc:
            raise ArenaError(str(exc)) from None
    rng = np.random.default_rng(settings.seed)
    try:
        if settings.openings:
            per_game = openings_for_games(load_openings(settings.openings, *geometry, rule), settings.games, rng)
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
    settings = replace(settings, rule=rule)
    ended: dict[int, MatchGame] = {}  # the games that have ended, by index

    def so_far(games: list, playouts: int = 0) -> ArenaResult:
        return ArenaResult(settings, spec_a, spec_b, geometry, games, time.perf_counter() - start, playouts, workers)

    def game_ended(game: MatchGame) -> None:
        if game.index in ended:
            return
        ended[game.index] = game
        if bar.disable and log is not None:
            log(_game_line(game, len(ended), sum(g.a_points for g in ended.values()), settings.games))
        if on_game is not None:
            on_game(so_far(list(ended.values())), game)

    with make_actors(workers) as actors, \
            progress_bar(settings.games, "arena", stream=progress_stream) as bar:
        def on_progress(progress):
            for game in progress.finished:
                game_ended(game)
            bar.set_postfix_str(f"{spec_text(spec_a)} scores {progress.points:g} of {progress.games}",
                                refresh=False)
            advance_to(bar, progress.games)

        try:
            games, stats = actors.match(spec_a, spec_b, geometry, per_game, settings.seed, settings.parallel,
                                        settings.c_puct, settings.device, progress=on_progress,
                                        precision=settings.precision, rule=rule)
        except KeyboardInterrupt:
            raise ArenaInterrupted(so_far(sorted(ended.values(), key=lambda g: g.index))) from None
        for game in games:  # a backend that reported no progress while it played: every game now
            game_ended(game)
    return so_far(games, stats.playouts)


def _game_line(game: MatchGame, done: int, points: float, games: int) -> str:
    """One line on a game that ended, for a log with no progress bar."""
    outcome = "drew" if game.winner == 0 else ("won" if game.a_points == 1.0 else "lost")
    return (f"game {game.index + 1}: A ({COLOUR_NAMES[game.a_colour]}) {outcome} in {len(game.moves)} moves; "
            f"A scores {points:g} of {done} ({games - done} to play)")


# --------------------------------------------------------------------- CLI
def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="gomoku-arena",
        description="Play two players against each other and measure the difference in strength.",
        epilog=f"Player specs: {player_forms(ai_only=True)}. The heuristic is the yardstick on big boards.")
    parser.add_argument("--a", required=True, metavar="PLAYER", help="player A, whose score is reported")
    parser.add_argument("--b", required=True, metavar="PLAYER", help="player B, the opponent")
    parser.add_argument("--games", type=positive_int_arg, default=40, metavar="N",
                        help="games in all; each opening is played twice, colours swapped (default: 40)")
    parser.add_argument("--opening-stones", type=int, default=2, metavar="K",
                        help="random stones in the centre before the players start, Black first (default: 2)")
    parser.add_argument("--openings", metavar="FILE",
                        help="draw the openings from this openings file instead of placing random stones; "
                             "'balanced' is the project's own balanced openings for the board, and a file of "
                             "gomoku/data may be named without its folder and .txt (renju_balanced_15x15)")
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
                        help=f"{rules_help()} (default: the models' rule, else freestyle)")
    parser.add_argument("--c-puct", type=float, default=5.0, help="exploration constant (default: 5)")
    add_search_flags(parser, "the az players' searches")
    add_device_flags(parser, "the models")
    parser.add_argument("--precision-b", choices=PRECISIONS,
                        help="B's inference arithmetic where it differs from --precision, e.g. to play a "
                             "model in bf16 against itself in fp32")
    parser.add_argument("--engine-info", default="", metavar="'KEY VALUE;...'",
                        help="INFO lines for the engine players, e.g. \"timeout_turn 1000;max_node 100000\" "
                             "(timeout_turn: ms a move, 5000 by default; rule: the game's, sent anyway)")
    parser.add_argument("--engine-info-b", metavar="'KEY VALUE;...'",
                        help="B's INFO lines where they differ from --engine-info, e.g. to play one engine "
                             "at two node budgets (default: --engine-info)")
    parser.add_argument("--out", metavar="PATH", help="write the games here, one JSON object a line")
    parser.add_argument("--json", metavar="PATH", help="write a machine-readable summary here")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", module="paddle")  # build-tool noise on import
    settings = ArenaSettings(args.a, args.b, args.games, args.size, args.n_in_row, args.opening_stones,
                             args.openings, args.seed, args.workers, args.parallel, args.c_puct, args.device,
                             SearchOptions.from_args(args), args.precision, args.precision_b, args.rule,
                             args.engine_info, args.engine_info_b)

    def log(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    games_file = GamesFile(args.out) if args.out else None
    try:
        with interrupt.deferred():  # Ctrl-C stops between moves, never inside a Paddle call
            result = run_arena(settings, log=log, progress_stream=io.StringIO() if args.quiet else None,
                               on_game=games_file.add if games_file else None)
    except ValueError as exc:  # ArenaError and ModelFileError
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2
    except ArenaInterrupted as stopped:
        result = stopped.result
        print(f"\nInterrupted after {len(result.games)} of {settings.games} games.", file=sys.stderr)
        if result.games:
            _report(result, args, games_file)
        return 130
    except KeyboardInterrupt:
        print("\nInterrupted.", file=sys.stderr)
        return 130
    _report(result, args, games_file)
    return 0


def _report(result: ArenaResult, args: argparse.Namespace, games_file: Optional[GamesFile]) -> None:
    print(format_report(result))
    if games_file is not None:
        games_file.finish(result)
    if args.json:
        write_summary(args.json, result)


if __name__ == "__main__":
    sys.exit(main())
