"""Balanced openings: random central openings that neither side wins by force, and that the
heuristic's level 4 wins about as often with Black as with White.

In freestyle Gomoku Black wins from the empty board, and two random central stones leave
most positions won for Black as well, so a player's score as Black says little. A match
from balanced openings lets White's games tell players apart. An opening is kept when:

1. it has 3 to 6 stones (``--stones``), placed like a human opening: the first one near
   the centre, each next one within ``SPREAD`` cells (king steps) of a stone already
   there and within ``RADIUS`` of the centre; no symmetric image of a kept one;
2. the threat searches find no forced win in it: neither a VCF nor a VCT for the side
   to move, nor for the other side were it to move, within the heuristic's node budgets;
3. level 4 against level 4 from it ends near even: ``--games`` games, each varied by
   its own random first replies (``VARIED_PLIES`` plies at level 0, which picks among the
   heuristic's five best-scored moves), then played out at level 4 by both sides; Black's
   score in them lies between ``--low`` and ``1 - --low``.

    python -m gomoku.play.arena.balanced --size 15x15 --count 200 --out openings.txt

writes an openings file (``gomoku.game.openings.read_openings`` reads it) with Black's
score of each opening as a comment. Candidates are drawn and tested in order from the
seed, so the file is the same whatever ``--workers``. ``--rule`` judges the candidates under
another rule (under renju the searches and the games keep Black off its forbidden points); the
file does not name the rule, so a file made for one rule reads under any other.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from itertools import islice
from typing import Iterator, Optional

import numpy as np

from gomoku.game.board import Board
from gomoku.game.line_board import LineBoard
from gomoku.game.openings import format_openings
from gomoku.game.rules import FREESTYLE, RULES, check_rule, rules_help
from gomoku.game.symmetry import symmetries
from gomoku.game.vcf import find_vcf
from gomoku.search.heuristic import choose_move
from gomoku.search.vct import find_vct
from gomoku.util import DefaultsHelpFormatter, atomic_write, board_size_arg, positive_int_arg

SPREAD = 2  # each stone lies within this many king steps of an earlier one
RADIUS = 3  # and within this many of the centre
VARIED_PLIES = 2  # random first replies (level 0) that vary each balance game
BALANCE_LEVEL = 4  # the level that plays the balance games out


@dataclass
class Candidate:
    index: int
    moves: list
    verdict: str  # "kept", "forced win" or "lopsided"
    black_score: float = float("nan")
    games: int = 0


def draw_opening(width: int, height: int, stones: int, rng: np.random.Generator) -> list[int]:
    """``stones`` moves, Black's first and alternating: a cluster around the centre."""
    centre_row, centre_col = (height - 1) / 2, (width - 1) / 2

    def near_centre(row: int, col: int, radius: float) -> bool:
        return abs(row - centre_row) <= radius and abs(col - centre_col) <= radius

    moves: list[int] = []
    while len(moves) < stones:
        if not moves:
            choices = [(r, c) for r in range(height) for c in range(width) if near_centre(r, c, 1)]
        else:
            placed = [divmod(m, width) for m in moves]
            choices = sorted({(r + dr, c + dc) for r, c in placed
                              for dr in range(-SPREAD, SPREAD + 1) for dc in range(-SPREAD, SPREAD + 1)
                              if 0 <= r + dr < height and 0 <= c + dc < width
                              and near_centre(r + dr, c + dc, RADIUS)
                              and (r + dr) * width + c + dc not in moves})
        row, col = choices[int(rng.integers(len(choices)))]
        moves.append(row * width + col)
    return moves


def has_forced_win(board: Board) -> bool:
    """Whether the threat searches find a VCF or VCT on ``board`` for either side (for the
    side not to move, as if it were to move), within the heuristic's node budgets."""
    tb = LineBoard(board)
    return any(find_vcf(tb, side) is not None or find_vct(tb, side) is not None
               for side in (board.current_player, board.opponent))


def balance_game(board: Board, rng: np.random.Generator) -> int:
    """The winner (0 for a draw) of a game from ``board``: ``VARIED_PLIES`` level-0 replies,
    then level 4 for both sides."""
    board = board.copy()
    varied_until = len(board.history) + VARIED_PLIES
    while not board.game_over:
        level = 0 if len(board.history) < varied_until else BALANCE_LEVEL
        board.play(choose_move(board, level, rng))
    return board.winner


def test_candidate(args: tuple) -> Candidate:
    """Draws candidate ``index`` of the seed and judges it (run in a worker process)."""
    index, seed, width, height, n_in_row, stones_range, games, low, rule = args
    rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
    stones = int(rng.integers(stones_range[0], stones_range[1] + 1))
    moves = draw_opening(width, height, stones, rng)
    # Under renju the drawn moves are always legal: main allows at most four black stones, and
    # the smallest forbidden shape, a double three, needs four black stones besides the new one.
    board = Board.from_moves(width, height, n_in_row, moves, rule=rule)
    if board.game_over or has_forced_win(board):
        return Candidate(index, moves, "forced win")
    black = 0.0
    for played in range(1, games + 1):
        winner = balance_game(board, rng)
        black += 1.0 if winner == 1 else 0.5 if winner == 0 else 0.0
        # Stop early once the score cannot come back inside the band.
        left = games - played
        if black + left < low * games or black > (1 - low) * games:
            return Candidate(index, moves, "lopsided", black / played, played)
    share = black / games
    verdict = "kept" if low <= share <= 1 - low else "lopsided"
    return Candidate(index, moves, verdict, share, games)


def judge_in_actor(args: tuple, evaluator) -> Candidate:
    """``test_candidate`` as an actors' call (the evaluator is not needed)."""
    return test_candidate(args)


def judged(jobs: Iterator[tuple], actors=None) -> Iterator[Candidate]:
    """The candidates of ``jobs`` judged in order: here, or a batch of one per actor at a time."""
    if actors is None:
        yield from map(test_candidate, jobs)
        return
    while batch := list(islice(jobs, actors.slots)):
        yield from actors.map(judge_in_actor, batch)


def canonical(moves: list[int], perms: list[np.ndarray]) -> tuple:
    """The opening's Black and White stones, smallest over the board's symmetries."""
    moves = np.asarray(moves)
    return min((tuple(sorted(p[moves[0::2]])), tuple(sorted(p[moves[1::2]]))) for p in perms)


def generate(width: int, height: int, n_in_row: int, count: int, stones: tuple[int, int] = (3, 6),
             games: int = 12, low: float = 0.3, seed: int = 0, workers: int = 1,
             progress=None, rule: str = FREESTYLE) -> tuple[list[Candidate], dict]:
    """The first ``count`` balanced openings of the seed's candidates under ``rule``, and a
    tally of verdicts.

    ``progress(kept, tried)`` is called after each candidate.
    """
    perms = [s.move_permutation(width, height) for s in symmetries(width, height)]
    kept: list[Candidate] = []
    seen: set = set()
    tally = {"kept": 0, "forced win": 0, "lopsided": 0, "repeat": 0}
    jobs = ((i, seed, width, height, n_in_row, stones, games, low, rule) for i in range(10**9))
    actors = None
    if workers > 1:  # worker processes start in one module, the actors' (actors/workers.py)
        from gomoku.actors import ProcessActors

        actors = ProcessActors(workers)
    try:
        for tried, cand in enumerate(judged(jobs, actors), 1):
            verdict = cand.verdict
            if verdict == "kept":
                key = canonical(cand.moves, perms)
                if key in seen:
                    verdict = "repeat"
                else:
                    seen.add(key)
                    kept.append(cand)
            tally[verdict] += 1
            if progress is not None:
                progress(len(kept), tried)
            if len(kept) >= count:
                break
    finally:
        if actors is not None:
            actors.close()
    return kept, tally


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gomoku.play.arena.balanced", formatter_class=DefaultsHelpFormatter,
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=board_size_arg, default=(15, 15), metavar="WxH", help="board size")
    parser.add_argument("--n-in-row", type=positive_int_arg, default=5, metavar="N", help="stones in a row that win")
    parser.add_argument("--rule", choices=RULES, default=FREESTYLE, help=rules_help())
    parser.add_argument("--count", type=positive_int_arg, default=200, metavar="N", help="openings to keep")
    parser.add_argument("--stones", type=int, nargs=2, default=(3, 6), metavar=("MIN", "MAX"),
                        help="stones of an opening, drawn uniformly between these")
    parser.add_argument("--games", type=positive_int_arg, default=12, metavar="N",
                        help="level-4 games that judge each opening's balance")
    parser.add_argument("--low", type=float, default=0.3,
                        help="Black's score in those games must lie between LOW and 1 - LOW")
    parser.add_argument("--seed", type=int, default=0, help="draws the candidates and varies the games")
    parser.add_argument("--workers", type=positive_int_arg, default=1, metavar="N", help="processes")
    parser.add_argument("--out", required=True, metavar="PATH", help="the openings file to write")
    args = parser.parse_args(argv)
    width, height = args.size
    lo, hi = args.stones
    if not 1 <= lo <= hi or (hi + 1) // 2 >= args.n_in_row:
        parser.error(f"--stones {lo} {hi}: give 1 <= MIN <= MAX, with MAX stones unable to make a line")
    if not 0.0 <= args.low <= 0.5:
        parser.error(f"--low must lie between 0 and 0.5, got {args.low}")
    try:
        check_rule(args.rule, args.n_in_row)
    except ValueError as error:
        parser.error(str(error))
    start = time.time()

    def progress(kept: int, tried: int) -> None:
        print(f"\r{kept}/{args.count} kept of {tried} tried, {time.time() - start:.0f} s", end="", file=sys.stderr)

    kept, tally = generate(width, height, args.n_in_row, args.count, (lo, hi), args.games, args.low,
                           args.seed, args.workers, progress, args.rule)
    print(file=sys.stderr)
    rule_flag = "" if args.rule == FREESTYLE else f" --rule {args.rule}"
    header = [f"{len(kept)} balanced openings for {width}x{height}, {args.n_in_row} in a row ({args.rule}),",
              f"written by: python -m gomoku.play.arena.balanced --size {width}x{height} --n-in-row {args.n_in_row}"
              f"{rule_flag} --count {args.count} --stones {lo} {hi} --games {args.games} --low {args.low} "
              f"--seed {args.seed}",
              f"of {sum(tally.values())} candidates: " + ", ".join(f"{v} {k}" for k, v in tally.items()),
              "each: its moves in order, Black first; after it, Black's score in level 4's balance games"]
    notes = [f"Black {c.black_score:.3f} of {c.games}" for c in kept]
    text = format_openings([c.moves for c in kept], width, height, args.n_in_row, header, notes)
    atomic_write(args.out, lambda f: f.write(text.encode()))
    print(f"wrote {len(kept)} openings to {args.out} ({header[2]}; {time.time() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
