"""The rule sets a game can be played under, and renju's forbidden points for Black.

* ``freestyle``: ``n_in_row`` *or more* stones in a line win, for both players.
* ``standard``: *exactly* ``n_in_row`` stones win, for both players; a longer line
  (an overline) is no win and the game goes on.
* ``renju`` (``n_in_row`` must be 5): Black is player 1 and moves first. Black wins
  only with exactly five and may not play a forbidden point; White wins with five
  or more and has no restriction.

Black's forbidden points (RIF rules), for a move that does *not* make exactly five
in some direction (exactly five wins whatever else the move makes):

* overline: six or more black stones in a row through the move;
* double four: the move makes two or more fours. A *four* is a set of four black
  stones on a line, the move among them, that one more black stone turns into
  exactly five. ``.XXXX.`` is one four (a straight four: the same stones complete on
  either side); ``X.XXX.X``, ``XX.XX.XX`` and ``XXX.X.XXX`` hold two fours on one line.
  A line whose only completing point would make six is no four.
* double three: the move makes two or more open threes. A *three* is a line where
  one more black stone (its key point) makes a straight four containing the move;
  the three is *open* when some key point is not itself forbidden for Black (tested
  recursively with the move on the board).

When Black must move and every empty cell is forbidden, the game is drawn (``Board.play``
checks after each White move), as it is when the board is full.

The analysis looks at each of the four lines through the move, five cells each side
(enough to see a straight four's completing points and whether they make exactly
five). Each line's verdict depends only on those ten cells, so it is cached by their
contents. White stones and the board's edge block Black alike.

This module imports nothing from the rest of the project (numpy only).
"""

from __future__ import annotations

from functools import lru_cache
from operator import itemgetter
from typing import NamedTuple, Optional

import numpy as np

FREESTYLE = "freestyle"
STANDARD = "standard"
RENJU = "renju"
RULES = (FREESTYLE, STANDARD, RENJU)

BLACK = 1  # under renju, player 1 is Black and moves first
WHITE = 2

OVERLINE = "overline"
DOUBLE_FOUR = "double four"
DOUBLE_THREE = "double three"

# Line directions as (d_row, d_col); the order does not matter here.
_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
_REACH = 5  # cells looked at on each side of the move
_CENTRE = _REACH  # index of the move in an analysed line of 2 * _REACH + 1 cells
_BLOCKED = 2  # a White stone or off the board: Black cannot use that cell

# What one line through the move makes (the first item of a line verdict).
_FIVE = -1
_OVER = -2


def check_rule(rule: str, n_in_row: int) -> str:
    """Returns ``rule`` if it can be played with ``n_in_row``, else raises ValueError."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}: the rules are {', '.join(RULES)}")
    if rule == RENJU and n_in_row != 5:
        raise ValueError(f"renju is played with five in a row, not n_in_row={n_in_row}")
    return rule


def exact_players(rule: str) -> tuple:
    """Indexed by player (index 0 unused): True where that player needs *exactly*
    ``n_in_row`` to win, False where ``n_in_row`` or more wins."""
    if rule == STANDARD:
        return (False, True, True)
    if rule == RENJU:
        return (False, True, False)
    return (False, False, False)


# ------------------------------------------------------------ one line
def _completions(line: list) -> list:
    """The empty cells of ``line`` where one more black stone makes exactly five
    containing the centre (the move), in increasing order (at most one each side)."""
    found = []
    last = len(line) - 1
    for cell in range(_CENTRE - 4, _CENTRE + 5):
        if line[cell] != 0:
            continue
        low = high = cell
        while low > 0 and line[low - 1] == BLACK:
            low -= 1
        while high < last and line[high + 1] == BLACK:
            high += 1
        if high - low == 4 and low <= _CENTRE <= high:
            found.append(cell)
    return found


def _line_verdict(key: tuple) -> tuple:
    """What a black stone at the centre makes on one line: ``(kind, key_points)``.

    ``key`` holds the ten cells around the centre (five each side, nearest last on the
    left, nearest first on the right), each 0 empty, 1 black or 2 blocked. ``kind`` is
    ``_FIVE``, ``_OVER`` or the number of fours (0, 1 or 2). ``key_points`` are the
    offsets from the centre of the empty cells that turn the line into a straight four
    containing the centre (a three), empty when the line has no three. No line holds
    both a four and a three through its centre (true of all 3 ** 10 lines), so the two
    never mix.
    """
    line = list(key[:_REACH]) + [BLACK] + list(key[_REACH:])
    low = high = _CENTRE
    while low > 0 and line[low - 1] == BLACK:
        low -= 1
    while high < len(line) - 1 and line[high + 1] == BLACK:
        high += 1
    run = high - low + 1
    if run == 5:
        return _FIVE, ()
    if run > 5:
        return _OVER, ()
    done = _completions(line)
    # Two completing points five apart close the same four stones: one straight four.
    fours = len(done) - (1 if len(done) == 2 and done[1] - done[0] == 5 else 0)
    key_points = []
    for cell in range(_CENTRE - 3, _CENTRE + 4):
        if line[cell] != 0:
            continue
        line[cell] = BLACK
        ends = _completions(line)
        # A straight four: two completing points with the same four stones between them,
        # and the new stone among those four.
        if len(ends) == 2 and ends[1] - ends[0] == 5 and ends[0] < cell < ends[1]:
            key_points.append(cell - _CENTRE)
        line[cell] = 0
    return fours, tuple(key_points)


# Line verdicts by the line's contents (at most 3 ** 10 of them), filled as lines are met.
_VERDICTS: dict = {}


# ------------------------------------------------------------ geometry
class RenjuGeometry(NamedTuple):
    """Tables for the forbidden-point test on one board size (see ``renju_geometry``)."""

    lines: tuple  # per cell, one getter per direction: the ten cells around it
    steps: tuple  # per direction, the step of the flat index along it
    crowd: np.ndarray  # (4 * size, size) float32: row d * size + c marks the cells within four of c on line d


@lru_cache(maxsize=None)
def renju_geometry(width: int, height: int) -> RenjuGeometry:
    """The tables for the forbidden-point test on a ``width`` x ``height`` board, cached.

    ``lines[cell][d]`` reads the ten cells around ``cell`` on direction ``d`` from the
    board's cells followed by one blocked sentinel (index ``width * height``, which
    stands for every cell off the board). ``crowd`` times a 0/1 vector of the black
    stones counts, per cell and direction, the black stones within four on that line:
    the quick filter of ``forbidden_points``.
    """
    size = width * height
    lines = []
    crowd = np.zeros((len(_DIRECTIONS), size, size), dtype=np.float32)
    for cell in range(size):
        row, col = divmod(cell, width)
        getters = []
        for d, (d_row, d_col) in enumerate(_DIRECTIONS):
            indices = []
            for offset in list(range(-_REACH, 0)) + list(range(1, _REACH + 1)):
                r, c = row + offset * d_row, col + offset * d_col
                on_board = 0 <= r < height and 0 <= c < width
                indices.append(r * width + c if on_board else size)
                if on_board and abs(offset) <= 4:
                    crowd[d, cell, r * width + c] = 1.0
            getters.append(itemgetter(*indices))
        lines.append(tuple(getters))
    steps = tuple(d_row * width + d_col for d_row, d_col in _DIRECTIONS)
    crowd = crowd.reshape(len(_DIRECTIONS) * size, size)
    crowd.setflags(write=False)
    return RenjuGeometry(tuple(lines), steps, crowd)


# ------------------------------------------------------------ forbidden points
def forbidden_reason(padded: list, move: int, geometry: RenjuGeometry) -> Optional[str]:
    """Why a black stone on the empty cell ``move`` is forbidden, or None when it is not.

    ``padded`` is the board's cells (0 empty, 1 Black, 2 White) followed by one
    blocked sentinel; it is changed during the test and restored before returning.
    ``geometry`` is ``renju_geometry(width, height)``.
    """
    padded[move] = BLACK
    try:
        fours = 0
        over = False
        threes = []
        for d, read in enumerate(geometry.lines[move]):
            key = read(padded)
            verdict = _VERDICTS.get(key)
            if verdict is None:
                verdict = _VERDICTS[key] = _line_verdict(key)
            kind, points = verdict
            if kind == _FIVE:
                return None  # exactly five wins, whatever else the move makes
            if kind == _OVER:
                over = True
            else:
                fours += kind
                if points:
                    threes.append((geometry.steps[d], points))
        if over:
            return OVERLINE
        if fours >= 2:
            return DOUBLE_FOUR
        if len(threes) < 2:
            return None
        # Two or more threes: each is open only if one of its key points is itself
        # allowed (with this stone on the board). The key points lie on the board: the
        # line saw them empty, and off-board cells read as blocked.
        open_threes = 0
        for step, points in threes:
            if any(forbidden_reason(padded, move + offset * step, geometry) is None for offset in points):
                open_threes += 1
                if open_threes == 2:
                    return DOUBLE_THREE
        return None
    finally:
        padded[move] = 0


def forbidden_points(cells: list, width: int, height: int) -> list:
    """Every empty cell where a black stone is forbidden, in increasing order.

    A quick filter first: a forbidden move needs four or more other black stones within
    four cells on its lines: two on each of two lines (double three, double four on two
    lines), or four on one line (an overline, two fours on one line). Only the cells
    that pass it get the full test.
    """
    geometry = renju_geometry(width, height)
    size = width * height
    stones = np.frombuffer(bytes(cells), dtype=np.uint8)
    counts = (geometry.crowd @ (stones == BLACK).astype(np.float32)).reshape(len(_DIRECTIONS), size)
    crowded = ((counts >= 2).sum(axis=0) >= 2) | (counts >= 4).any(axis=0)
    candidates = np.flatnonzero(crowded & (stones == 0))
    if not len(candidates):
        return []
    padded = cells + [_BLOCKED]
    return [move for move in candidates.tolist() if forbidden_reason(padded, move, geometry) is not None]


def black_has_allowed_move(cells: list, width: int, height: int) -> bool:
    """Whether some empty cell is not forbidden for Black (stops at the first one)."""
    # A forbidden cell has four or more black stones within four on its lines (see
    # forbidden_points), and a stone is within four of at most 32 cells: so at most
    # 8 cells per black stone are forbidden, and more empty cells than that settle it.
    stones = bytes(cells)  # counts faster than the list
    if stones.count(0) > 8 * stones.count(BLACK):
        return True
    geometry = renju_geometry(width, height)
    padded = cells + [_BLOCKED]
    # Usually the first empty cell is allowed, so this stops at once.
    for move, stone in enumerate(cells):
        if stone == 0 and forbidden_reason(padded, move, geometry) is None:
            return True
    return False
