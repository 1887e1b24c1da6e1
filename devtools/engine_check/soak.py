"""The engine soak: many refereed games between engine processes, to find the faults a tournament would.

    python -m devtools.engine_check.soak --games 200 --model models/gomoku_15x15_5.npz --seed 0 --out soak.jsonl
    python -m devtools.engine_check.soak --games 6 --model models/gomoku_15x15_5.npz --size 9 --timeouts 3000,3000

A Gomocup tournament loses an engine's game for one late, illegal, missing or
garbled answer, so the engine (``gomoku.play.engine``) has to survive hundreds
of games under conditions it does not choose. The soak plays them: each game is
``referee.run_match`` between two engine processes, and every game draws its
conditions from one seeded generator (``draw_settings``):

* the board, from ``--boards`` (by default 15x15 and 20x20 in equal shares:
  the shipped model is size-free, and 20x20 is the board it was not trained on);
* the pairing: the model engine as Black against the heuristic engine
  (``model-heuristic``), the same with colours swapped (``heuristic-model``),
  and the model against itself (``model-model``);
* an opening of 0, 2 or 4 central stones placed by the referee (``openings``);
* ``timeout_turn``, from ``--timeouts`` (1 to 5 s by default);
* in a share of games a match clock (``timeout_match`` with ``time_left``
  counting down before every move), short enough that the time left, not the
  turn limit, sets the engine's deadline on many moves;
* in a share of games every move request as a whole ``BOARD`` block;
* the model engine's ``--max-playouts``, left off in ``--uncapped-share`` of the
  games: a capped search usually answers long before its deadline, so only
  uncapped games test the engine's clock.

Board and pairing go round in blocks (every block of boards x pairings games
holds each combination once, in a shuffled order), so that a short run covers
them all and the model plays Black as often as White against the heuristic
(exactly so over whole blocks); the rest is drawn game by game, each game from
its own stream, so that the first games of a long run are those of a short one
with the same seed.

Every game becomes one JSON line (``--out``): its settings, its engines'
command lines and the ``MatchResult`` (winner, reason, moves, faults, every
answer's latency and limit), plus the whole transcript when the game had a
fault. The table at the end counts games by board and pairing, faults by kind,
the slowest answers by engine and results by colour. The command exits 1 if any
game had a fault or did not finish, so that a script can run it.

``--workers K`` plays K games at once, one thread each (a game is two engine
processes; the referee only waits on pipes). Games at once share the cores, so
every engine searches slower, but each one measures its own deadline, which is
the point. Engines' stderr goes to a file per game (``game-0007.stderr``) in a
temporary folder, kept and named at the end only if some game went wrong.

Ctrl-C stops the soak: no new game starts, the engines of the games under way
are killed (their games are left out of the table and the file), every engine
is reaped through the referee's own cleanup, and the table of the finished
games is printed.

This module is the command line; ``soak_run`` draws the games' settings and plays
them, ``soak_report`` makes the table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Optional

from gomoku.net.flags import add_device_flags
from devtools.engine_check.soak_report import format_table, read_records
from devtools.engine_check.soak_run import PAIRINGS, Engines, SoakError, SoakRun, draw_settings, run_soak, went_wrong
from gomoku.util import DefaultsHelpFormatter, board_size_arg, positive_int_arg

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


# ---------------------------------------------------------------------- CLI
def _range_arg(text: str) -> tuple[int, int]:
    """Flag parser: ``MIN,MAX`` (or one number for both) -> ``(MIN, MAX)``, in milliseconds."""
    try:
        numbers = [int(part) for part in text.split(",")]
    except ValueError:
        numbers = []
    if len(numbers) == 1:
        numbers *= 2
    if len(numbers) != 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not MIN,MAX in milliseconds")
    return numbers[0], numbers[1]


def _list_arg(parse: Callable) -> Callable[[str], list]:
    def parse_list(text: str) -> list:
        return [parse(part) for part in text.split(",") if part]
    return parse_list


def _share_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.engine_check.soak",
        description="Play many refereed games between engine processes (the model against the heuristic "
                    "and against itself) under drawn boards, openings and clocks; print the faults "
                    "and answer times. Exits 1 if any game had a fault.",
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--games", type=positive_int_arg, default=200, metavar="N", help="games to play")
    parser.add_argument("--model", metavar="PATH", help="the model engine's model file (a size-free one plays every board)")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seeds every game's settings")
    parser.add_argument("--out", metavar="FILE.jsonl", help="write one JSON line per game, as each ends")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--boards", type=_list_arg(board_size_arg), default="15x15,20x20",
                       metavar="WxH,...", help="boards to play, in equal shares (a size repeated plays more)")
    where.add_argument("--size", type=board_size_arg, metavar="WxH", help="play only this board")
    parser.add_argument("--pairings", type=_list_arg(str), default=",".join(PAIRINGS), metavar="NAME,...",
                        help=f"pairings to play, in equal shares: {', '.join(PAIRINGS)} (Black first)")
    parser.add_argument("--openings", type=_list_arg(int), default="0,2,4", metavar="K,...",
                        help="opening stone counts drawn from (even)")
    parser.add_argument("--timeouts", type=_range_arg, default="1000,5000", metavar="MIN,MAX",
                        help="timeout_turn is drawn from this range of milliseconds")
    parser.add_argument("--match-times", type=_range_arg, default="20000,60000", metavar="MIN,MAX",
                        help="timeout_match of a timed game is drawn from this range of milliseconds")
    parser.add_argument("--timed-share", type=_share_arg, default=0.3, metavar="F",
                        help="share of games with a match clock (time_left before every move)")
    parser.add_argument("--board-share", type=_share_arg, default=0.3, metavar="F",
                        help="share of games that send every move request as a BOARD block")
    parser.add_argument("--max-playouts", type=positive_int_arg, default=200, metavar="N",
                        help="the model engines' playout cap")
    parser.add_argument("--uncapped-share", type=_share_arg, default=0.2, metavar="F",
                        help="share of games whose model engines have no playout cap (they search to the deadline)")
    parser.add_argument("--heuristic", type=int, default=4, metavar="LEVEL", help="the heuristic engine's level")
    add_device_flags(parser, device=None, precision=False, device_help="the model engine's --device")
    parser.add_argument("--margin-ms", type=int, metavar="MS", help="the model engine's --margin-ms")
    parser.add_argument("--workers", type=positive_int_arg, default=1, metavar="K", help="games played at once")
    parser.add_argument("--stderr-dir", metavar="DIR",
                        help="keep every engine's stderr here, a file per game (default: a temporary "
                             "folder, kept only if a game went wrong)")
    parser.add_argument("--table", metavar="FILE.jsonl", help="print the table of an earlier run's --out file "
                                                               "and play nothing")
    parser.add_argument("--quiet", action="store_true", help="no line per game while the soak runs")
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.table:
        records = read_records(args.table)
        print(format_table(SoakRun(records, seconds=sum(r["seconds"] for r in records))))
        return 1 if any(went_wrong(r) for r in records) else 0
    if not args.model:
        parser.error("--model is required")
    if not os.path.isfile(args.model):
        parser.error(f"--model {args.model}: no such file")
    boards = [args.size] if args.size else args.boards
    try:
        games = draw_settings(args.games, args.seed, boards, args.pairings, args.openings, args.timeouts,
                              args.match_times, args.timed_share, args.board_share, args.uncapped_share,
                              args.max_playouts)
    except SoakError as exc:
        parser.error(str(exc))
    engines = Engines(os.path.abspath(args.model), args.heuristic, args.device, args.margin_ms)
    # The engines run as `python -m gomoku.play.engine`: they must find this package from any folder.
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + path if path else "")

    stderr_dir = args.stderr_dir or tempfile.mkdtemp(prefix="gomoku-soak-")
    os.makedirs(stderr_dir, exist_ok=True)

    def log(line: str) -> None:
        if not args.quiet:
            print(line, flush=True)

    out = open(args.out, "w", encoding="utf-8") if args.out else None
    try:
        run = run_soak(games, engines, args.workers, out, stderr_dir, log)
    finally:
        if out is not None:
            out.close()
    print()
    print(format_table(run))
    wrong = any(went_wrong(r) for r in run.records)
    if args.stderr_dir is None:
        if wrong:
            print(f"\nthe engines' stderr is kept in {stderr_dir}")
        else:
            shutil.rmtree(stderr_dir, ignore_errors=True)
    if run.interrupted:
        return 130
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
