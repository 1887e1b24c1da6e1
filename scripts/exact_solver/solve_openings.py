"""Solve the openings of an arena run exactly: is each one a forced win for the side to move?

    gomoku-arena --a pure:5000 --b pure:5000 --size 6x6 --n-in-row 4 --out games.jsonl
    python scripts/exact_solver/solve_openings.py games.jsonl --plies 9
    python scripts/exact_solver/solve_openings.py --position "" --size 6x6 --n-in-row 4 --plies 11
    python scripts/exact_solver/solve_openings.py games.jsonl --missed-wins --plies 5

reads the openings from an arena games file (``--out``) and runs the exact solver
(``solver.c`` beside this script), a depth-limited negamax, on the position each opening
leaves. It answers, for the side to move, "wins within N plies", "loses within N plies" or
"not decided within the limit". A win or loss is a proof; "not decided" is not a draw
unless the limit reaches the end of the board. With ``--missed-wins`` it solves every
position of every game instead and lists the positions where the side to move could force
a win but did not win the game: the wins a player missed. Only boards of at most 64 cells
fit; 6x6 four in a row solves in seconds per opening, 8x8 five in a row does not (its
later positions, and short wins anywhere, do).

The exact solver is C for speed (a Python version searched about 130,000 positions a
second, the C one about 5 million): this script compiles it with the system's C compiler
(``cc``, or ``$CC``) into a temporary folder on each run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from gomoku.game.board import Board, IllegalMoveError
from gomoku.game.gamefile import COLOUR_NAMES, GameFileError, GameRecord
from gomoku.play.arena.report import read_games as read_arena_games
from gomoku.play.arena.settings import ArenaError
from gomoku.util import board_size_arg, positive_int_arg

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "solver.c")


class SolveError(RuntimeError):
    """No compiler, an exact solver that failed, or an unreadable games file."""


def build_solver(directory: str) -> str:
    """Compiles ``solver.c`` into ``directory``; returns the executable's path."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise SolveError("no C compiler found (install gcc, or set CC)")
    binary = os.path.join(directory, "solver")
    result = subprocess.run([compiler, "-O2", "-o", binary, SOURCE], capture_output=True, text=True)
    if result.returncode != 0:
        raise SolveError(f"compiling {SOURCE} failed:\n{result.stderr}")
    return binary


def solve(binary: str, width: int, height: int, n_in_row: int, moves: list[int], plies: int,
          seconds: float) -> tuple[int, int, int] | None:
    """``(value, plies, nodes)`` for the side to move after ``moves``; None past ``seconds``."""
    command = [binary, str(width), str(height), str(n_in_row), str(plies), ",".join(map(str, moves))]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        return None
    if result.returncode != 0:
        raise SolveError(f"the exact solver failed: {result.stderr.strip()}")
    value, depth, nodes = (int(x) for x in result.stdout.split())
    return value, depth, nodes


def read_games(path: str) -> tuple[tuple[int, int, int], list[dict]]:
    """The board and the games of an arena games file (``gomoku-arena --out``)."""
    try:
        games = read_arena_games(path)
        geometry = (games[-1]["width"], games[-1]["height"], games[-1]["n_in_row"])
    except ArenaError as exc:
        raise SolveError(str(exc)) from None
    except KeyError as exc:
        raise SolveError(f"{path} is not an arena games file (a game without {exc})") from None
    return geometry, games


def read_openings(path: str) -> tuple[tuple[int, int, int], list[list[str]]]:
    """The board and the distinct openings (in order) of an arena games file."""
    geometry, games = read_games(path)
    openings: list[list[str]] = []
    for game in games:
        if not isinstance(game.get("opening"), list):
            raise SolveError(f"{path} is not an arena games file (a game without its opening)")
        if game["opening"] not in openings:
            openings.append(game["opening"])
    return geometry, openings


def describe(outcome: tuple[int, int, int] | None, plies: int) -> str:
    if outcome is None:
        return "out of time"
    value, depth, _ = outcome
    if value > 0:
        return f"wins within {depth} plies"
    if value < 0:
        return f"loses within {depth} plies"
    return f"not decided within {plies} plies"


def missed_wins(binary: str, game: dict, plies: int,
                seconds: float) -> tuple[int, int, int, list[tuple[int, int, str]]]:
    """Solves every position of an arena game after its opening, for the side to move.

    Returns ``(positions, unfinished, wins, missed)``: the positions searched, those
    the solver did not finish in ``seconds`` (undecided), those where the side to move
    could force a win within ``plies`` plies, and of those the ones whose side did not
    win the game, as ``(move number, colour, move played)``.

    Raises:
        SolveError: the game is not a record ``GameRecord`` reads, or has no opening.
    """
    try:
        record = GameRecord.from_json(game)
    except GameFileError as exc:
        raise SolveError(f"game {game.get('game', '?') if isinstance(game, dict) else '?'} "
                         f"is not an arena game ({exc})") from None
    opening = game.get("opening")
    if not isinstance(opening, list) or len(opening) > len(record.moves):
        raise SolveError(f"game {game.get('game', '?')} is not an arena game (no opening that fits its moves)")
    if record.rule != "freestyle":
        raise SolveError(f"game {game.get('game', '?')} is played under {record.rule}: the solver "
                         f"knows freestyle only")
    board = Board(record.width, record.height, record.n_in_row, record.start_player)
    positions, unfinished, wins, missed = 0, 0, 0, []
    for ply, move in enumerate(record.moves):
        if ply >= len(opening):
            outcome = solve(binary, record.width, record.height, record.n_in_row, list(board.history),
                            plies, seconds)
            positions += 1
            unfinished += outcome is None
            if outcome is not None and outcome[0] > 0:
                wins += 1
                if record.result != board.current_player:
                    missed.append((ply + 1, board.current_player, board.move_to_label(move)))
        board.do_move(move)
    return positions, unfinished, wins, missed


def scan_games(binary: str, games: list[dict], plies: int, seconds: float) -> None:
    """Prints, for each game of an arena games file, the forced wins its players missed."""
    totals = {"positions": 0, "unfinished": 0, "wins": 0}
    missed_by: dict[str, int] = {}
    for game in games:
        positions, unfinished, wins, missed = missed_wins(binary, game, plies, seconds)
        totals["positions"] += positions
        totals["unfinished"] += unfinished
        totals["wins"] += wins
        players = game.get("players", {})
        result = {None: "unfinished", 0: "drawn"}.get(game["result"]) or f"{COLOUR_NAMES[game['result']]} won"
        print(f"game {game.get('game', '?')}: Black {players.get('1', '?')}, White {players.get('2', '?')}, "
              f"{result}, {positions} positions", flush=True)
        for number, colour, move in missed:
            player = players.get(str(colour), COLOUR_NAMES[colour])
            missed_by[player] = missed_by.get(player, 0) + 1
            print(f"  move {number}: {COLOUR_NAMES[colour]} ({player}) could force a win within {plies} plies "
                  f"and played {move}", flush=True)
    unfinished = f" ({totals['unfinished']} not finished in {seconds:g} s)" if totals["unfinished"] else ""
    print(f"{totals['positions']} positions in {len(games)} games{unfinished}; {totals['wins']} were forced wins within "
          f"{plies} plies for the side to move; missed (that side did not win the game): "
          + (", ".join(f"{count} by {player}" for player, count in sorted(missed_by.items())) or "none"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="?", help="an arena games file (gomoku-arena --out)")
    parser.add_argument("--position", metavar="MOVES",
                        help="solve one position instead: moves like 'c3,d4' from Black ('' for the empty board)")
    parser.add_argument("--size", type=board_size_arg, default=(6, 6), metavar="WxH",
                        help="board for --position (default: 6x6)")
    parser.add_argument("--n-in-row", type=positive_int_arg, default=4, help="for --position (default: 4)")
    parser.add_argument("--plies", type=positive_int_arg, default=9, help="search limit (default: 9)")
    parser.add_argument("--seconds", type=float, default=300.0, help="time limit per position (default: 300)")
    parser.add_argument("--missed-wins", action="store_true",
                        help="solve every position of every game in the file, not only the openings, and "
                             "list the forced wins within --plies that the side to move did not go on to win")
    args = parser.parse_args(argv)
    if (args.games is None) == (args.position is None):
        parser.error("give an arena games file or --position, not both")
    if args.missed_wins and not args.games:
        parser.error("--missed-wins needs an arena games file")
    try:
        if args.missed_wins:
            (width, height, n_in_row), games = read_games(args.games)
        elif args.games:
            (width, height, n_in_row), openings = read_openings(args.games)
        else:
            (width, height), n_in_row = args.size, args.n_in_row
            openings = [[s.strip() for s in args.position.split(",") if s.strip()]]
        if width * height > 64:
            raise SolveError(f"the board {width}x{height} has more than the solver's 64 cells")
        with tempfile.TemporaryDirectory(prefix="gomoku-solver-") as tmp:
            binary = build_solver(tmp)
            if args.missed_wins:
                scan_games(binary, games, args.plies, args.seconds)
                return 0
            wins = 0
            for opening in openings:
                board = Board(width, height, n_in_row)
                for label in opening:
                    board.do_move(board.parse_move(label))
                outcome = solve(binary, width, height, n_in_row, list(board.history), args.plies, args.seconds)
                wins += outcome is not None and outcome[0] > 0
                side = "Black" if board.current_player == 1 else "White"
                nodes = f"  ({outcome[2]:,} positions)" if outcome else ""
                print(f"{','.join(opening) or '(empty board)':<16} {side} to move {describe(outcome, args.plies)}{nodes}",
                      flush=True)
            if len(openings) > 1:
                print(f"{wins} of {len(openings)} openings are forced wins for the side to move")
    except (SolveError, IllegalMoveError, ValueError) as exc:
        print(f"solve_openings: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
