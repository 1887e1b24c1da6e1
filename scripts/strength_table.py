"""Measure a model against the whole yardstick: the rows of the README's strength table.

    python scripts/strength_table.py models/gomoku_15x15_5.npz --previous OLD.npz --json table.json

plays one arena match per row (paired openings, colours swapped), in this order:

- against the previous model (``--previous``), both at ``--playouts``;
- against each heuristic level of ``--levels``, the model at ``--playouts``;
- against the strongest of those levels with the model at ``--target-playouts`` (the issue's
  target: 800 playouts against level 4);
- against pure MCTS at ``--pure`` playouts.

``--fpu R``, ``--win-check`` and ``--solve`` give the model's searches the arena's options of the same names
(saved rows with other options are not reused). Each row prints as it ends, with the arena
command that reproduces it alone. With ``--json`` the
rows are saved after every match (atomically), and a second call with the same file skips the
rows it already holds (same players, same model files by content, same games), so an
interrupted table goes on where it stopped.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import warnings
from dataclasses import fields

warnings.filterwarnings("ignore")

from gomoku import interrupt  # noqa: E402
from gomoku.play.arena.run import run_arena  # noqa: E402
from gomoku.play.arena.settings import ArenaSettings, parse_player  # noqa: E402
from gomoku.search.heuristic import LEVELS, check_level  # noqa: E402
from gomoku.search.options import SearchOptions, add_search_flags  # noqa: E402
from gomoku.util import atomic_write, board_size_arg, positive_int_arg, usable_cpus  # noqa: E402

TABLE_FORMAT = "gomoku-strength-table/1"


def level_list(text: str) -> list[int]:
    """``"0,1,4"`` -> ``[0, 1, 4]``; every level must exist."""
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        levels = []
    if not levels:
        raise argparse.ArgumentTypeError(f"expected levels like 0,1,2, got {text!r}")
    for level in levels:
        try:
            check_level(level, "--levels")
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return levels


def plan_rows(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The (A spec, B spec) of every row, in the order they are played."""
    model = f"az:{args.model}:{args.playouts}"
    rows = []
    if args.previous:
        rows.append((model, f"az:{args.previous}:{args.playouts}"))
    rows += [(model, f"heuristic:{level}") for level in args.levels]
    if args.target_playouts:
        rows.append((f"az:{args.model}:{args.target_playouts}", f"heuristic:{max(args.levels)}"))
    if args.pure:
        rows.append((model, f"pure:{args.pure}"))
    return rows


def arena_command(a: str, b: str, args: argparse.Namespace) -> str:
    size = f" --size {args.size[0]}x{args.size[1]}" if args.size else ""
    return (f"gomoku-arena --a {a} --b {b}{size} --games {args.games} --seed {args.seed} "
            f"--workers {args.workers}{SearchOptions.from_args(args).flags()}")


def file_digest(spec: str) -> str:
    """The SHA-256 of an ``az:MODEL[:PLAYOUTS]`` spec's model file ('' for other players), so a
    saved row is not taken for a new model shipped under the same name."""
    player = parse_player(spec)
    if player.kind != "az":
        return ""
    try:
        with open(player.model, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return ""  # the arena reports the missing file


def row_key(row: dict) -> tuple:
    size = tuple(row["size"]) if row["size"] else None  # a list in the JSON file
    # every search option is part of the key; a row saved before an option existed was played without it
    options = tuple(row.get(option.name, option.default) for option in fields(SearchOptions))
    return (row["a_spec"], row["b_spec"], row["a_sha256"], row["b_sha256"], row["games"], row["seed"], size, options)


def load_table(path: str) -> dict:
    """The rows saved by an earlier call, or an empty table if there is no file yet."""
    if not os.path.exists(path):
        return {"format": TABLE_FORMAT, "rows": []}
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    if not isinstance(table, dict) or table.get("format") != TABLE_FORMAT:
        raise ValueError(f"{path} is not a strength table written by this script (format {TABLE_FORMAT})")
    return table


def save_table(path: str, table: dict) -> None:
    text = json.dumps(table, indent=2) + "\n"
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def format_row(row: dict) -> str:
    total = row["total"]
    return (f"{row['a']} vs {row['b']}: {total['wins']}-{total['draws']}-{total['losses']}, "
            f"{row['score']:.3f} ({row['score_low']:.3f}-{row['score_high']:.3f}), "
            f"{row['mean_moves']:.1f} moves a game, {row['seconds']:.1f} s")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="the model file to measure")
    parser.add_argument("--previous", metavar="MODEL", help="the model it replaces (one more row)")
    parser.add_argument("--size", type=board_size_arg, metavar="WxH",
                        help="board (default: the model's, or a size-free model's largest trained size)")
    parser.add_argument("--playouts", type=positive_int_arg, default=400,
                        help="the model's playouts a move (default: 400)")
    parser.add_argument("--target-playouts", type=int, default=800, metavar="N",
                        help="playouts of the extra row against the strongest level; 0: no such row "
                             "(default: 800)")
    parser.add_argument("--levels", type=level_list, default=list(LEVELS),
                        help=f"heuristic levels to play (default: {','.join(map(str, LEVELS))})")
    parser.add_argument("--pure", type=int, default=5000, metavar="PLAYOUTS",
                        help="pure MCTS opponent's playouts; 0: no such row (default: 5000)")
    parser.add_argument("--games", type=positive_int_arg, default=40, help="games a row (default: 40)")
    parser.add_argument("--seed", type=int, default=0, help="seeds openings and players (default: 0)")
    parser.add_argument("--workers", type=positive_int_arg, default=usable_cpus(),
                        help="arena processes (default: one per core)")
    add_search_flags(parser, "the model's searches")
    parser.add_argument("--json", metavar="PATH",
                        help="save the rows here after each match; rows already in it are not played again")
    args = parser.parse_args(argv)
    if args.target_playouts < 0 or args.pure < 0:
        parser.error("--target-playouts and --pure must be 0 or more")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        table = load_table(args.json) if args.json else {"format": TABLE_FORMAT, "rows": []}
    except ValueError as exc:
        print(f"strength_table: error: {exc}", file=sys.stderr)
        return 2
    table["model"] = args.model
    done = {row_key(row): row for row in table["rows"]}
    size = list(args.size) if args.size else None
    search = SearchOptions.from_args(args)
    try:
        with interrupt.deferred():  # Ctrl-C stops between moves; the rows saved so far stay
            for a, b in plan_rows(args):
                command = arena_command(a, b, args)
                planned = dict(a_spec=a, b_spec=b, a_sha256=file_digest(a), b_sha256=file_digest(b),
                               games=args.games, seed=args.seed, size=size, **search.kwargs(), command=command)
                key = row_key(planned)
                if key in done:
                    print(f"{format_row(done[key])}  (saved)\n  {command}", flush=True)
                    continue
                settings = ArenaSettings(a, b, args.games, args.size, None, seed=args.seed, workers=args.workers,
                                         search=search)
                result = run_arena(settings, progress_stream=io.StringIO())
                row = {**result.summary(), **planned}
                table["rows"].append(row)
                done[key] = row
                if args.json:
                    save_table(args.json, table)
                print(f"{format_row(row)}\n  {command}", flush=True)
    except ValueError as exc:  # ArenaError and ModelFileError: a bad model or spec
        print(f"strength_table: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted." + (f" The rows so far are in {args.json}." if args.json else ""), file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
