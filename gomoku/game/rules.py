"""The rules a game can be played under (one ``Rule`` object each), and renju's forbidden points.

Every rule is declared once, in ``_DECLARED`` below; the board, the input planes, the threat
searches, the rollouts, the engine and the referee read what they need from it:

* ``freestyle`` (Gomocup ``INFO rule 0``): ``n_in_row`` *or more* stones in a line win, for
  both players.
* ``standard`` (``INFO rule 1``): *exactly* ``n_in_row`` stones win, for both players; a longer
  line (an overline) is no win and the game goes on.
* ``renju`` (``INFO rule 4``; ``n_in_row`` must be 5): Black is player 1 and moves first. Black
  wins only with exactly five and may not play a forbidden point; White wins with five or more
  and has no restriction.
* ``caro`` (``INFO rule 8``): ``n_in_row`` or more win, for both players, except a line of
  exactly ``n_in_row`` with an opponent's stone just beyond *both* ends: that five is blocked
  and does not win (the game goes on). The board's edge is no opponent's stone: a five that
  touches the edge wins when its other end is open or holds the player's own stone. An
  overline wins even between two opponent's stones. This is how the Gomocup manager
  (Piskvork) judges its caro rule, ``INFO rule 8``; its rule 9 (caro with exactly five) is not
  played here.

What a rule says (the attributes of ``Rule``):

* ``protocol``: its number in the Gomocup protocol's ``INFO rule`` bitmask;
* ``exact``: per player (index 0 unused), whether only exactly ``n_in_row`` wins;
* ``flanked_wins``: whether a line of exactly ``n_in_row`` between two opponent's stones wins
  (False only under caro);
* ``restricted``: the player with forbidden points (Black under renju), 0 for none;
* ``first_player``: the player who must move first (Black under renju), 0 when either may;
* ``n_in_row``: the only line length the rule is played with (5 under renju), 0 for any;
* ``openings``: the file in ``gomoku/data`` of its balanced openings for a board (``--openings
  balanced``), a pattern with ``{width}``, ``{height}`` and ``{n_in_row}``: the 26 standard
  renju openings under renju, the project's balanced openings under the others.

From these follow which lines still threaten: a window of ``n_in_row`` cells counts for a
player unless its completion could never win (``dead_lines``): for an exact player a stone of
its own just beyond an end (the line would be an overline), under caro the opponent's stones
just beyond both ends. ``line_wins`` is the same judgement for a finished line.

A ``Rule`` is a ``str`` equal to its name: it prints, compares, hashes, pickles and is written
to JSON as the name, so model files, checkpoints, game records and the ``--rule`` flags keep
the names, and ``rule_of(name)`` gives the object back (always the same one).

Black's forbidden points under renju (RIF rules), for a move that does *not* make exactly five
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

BLACK = 1  # under renju, player 1 is Black and moves first
WHITE = 2

_LENGTHS = {3: "three", 4: "four", 5: "five", 6: "six"}
CONTINUOUS_BIT = 2  # INFO rule's bit for a continuous game (play on after a line): not played here


class Rule(str):
    """One rule set: a ``str`` equal to its name, with what the rule says as attributes
    (see the module docstring). ``Rule(name)`` is ``rule_of(name)``: the declared object."""

    name: str
    protocol: int
    exact: tuple
    flanked_wins: bool
    restricted: int
    first_player: int
    n_in_row: int
    openings: str
    summary: str

    def __new__(cls, name: str) -> "Rule":
        return rule_of(name)

    def __reduce__(self):
        return Rule, (str(self),)  # unpickled as the declared object of that name

    def __repr__(self) -> str:
        return f"Rule({str(self)!r})"

    @property
    def ends_matter(self) -> bool:
        """Whether the cells just beyond a line's ends can change whether it wins (not freestyle)."""
        return any(self.exact) or not self.flanked_wins

    def check(self, n_in_row: int) -> "Rule":
        """Returns this rule if it can be played with ``n_in_row``, else raises ValueError."""
        if self.n_in_row and n_in_row != self.n_in_row:
            length = _LENGTHS.get(self.n_in_row, self.n_in_row)
            raise ValueError(f"{self} is played with {length} in a row, not n_in_row={n_in_row}")
        return self

    def line_wins(self, player: int, length: int, n_in_row: int, before: int, after: int) -> bool:
        """Whether a line of ``length`` of ``player``'s stones wins; ``before`` and ``after`` are
        the cells just beyond its ends (0 empty or off the board, else the player whose stone)."""
        if length < n_in_row:
            return False
        if length > n_in_row:
            return not self.exact[player]
        return self.flanked_wins or not before == after == 3 - player

    def dead_lines(self, owner, beyond: np.ndarray, exact: Optional[tuple] = None) -> np.ndarray:
        """Which windows of ``n_in_row`` cells can never become a winning line for their owner.

        Args:
            owner: the side (1 or 2) each window is counted for, an int or an array
                broadcasting against ``beyond[..., 0]``.
            beyond: ``(..., 2)``, the cells just beyond both ends of each window: 0 empty or
                off the board, else the side whose stone.
            exact: per side (index 0 unused), whether that side needs exactly ``n_in_row``;
                ``self.exact`` when the sides are the players (``sides`` gives it when the
                sides are the player to move and the opponent).
        """
        owner = np.asarray(owner)[..., None]
        dead = np.zeros(np.broadcast_shapes(owner.shape, beyond.shape)[:-1], dtype=bool)
        exact = np.asarray(self.exact if exact is None else exact, dtype=bool)
        if exact.any():
            dead |= exact[owner[..., 0]] & (beyond == owner).any(axis=-1)
        if not self.flanked_wins:
            dead |= (beyond == 3 - owner).all(axis=-1)
        return dead

    def sides(self, mover: int) -> tuple:
        """``exact`` relabelled by side, side 1 being ``mover`` and side 2 the other player."""
        return False, self.exact[mover], self.exact[3 - mover]

    def restricted_side(self, mover: int) -> int:
        """The side (1 ``mover``, 2 the other player) with forbidden points, 0 for none."""
        if not self.restricted:
            return 0
        return 1 if self.restricted == mover else 2


def _declare(name: str, protocol: int, summary: str, exact: tuple = (False, False, False),
             flanked_wins: bool = True, restricted: int = 0, first_player: int = 0, n_in_row: int = 0,
             openings: str = "balanced_{width}x{height}_{n_in_row}.txt") -> Rule:
    rule = str.__new__(Rule, name)
    rule.__dict__.update(name=name, protocol=protocol, exact=exact, flanked_wins=flanked_wins,
                         restricted=restricted, first_player=first_player, n_in_row=n_in_row,
                         openings=openings, summary=summary)
    return rule


# Every rule, once. A new rule is one more line here (and, if the compiled search core cannot
# play it, a test in gomoku.search.core.games.supported).
_DECLARED = (
    _declare("freestyle", 0, "n_in_row or more in a row win"),
    _declare("standard", 1, "exactly n_in_row in a row win", exact=(False, True, True)),
    _declare("renju", 4, "Black moves first, wins with exactly five and has forbidden points, "
             "White wins with five or more", exact=(False, True, False), restricted=BLACK,
             first_player=BLACK, n_in_row=5, openings="renju_26_{width}x{height}.txt"),
    _declare("caro", 8, "n_in_row or more in a row win, but not exactly n_in_row between two "
             "opponent's stones", flanked_wins=False),
)
_BY_NAME = {str(rule): rule for rule in _DECLARED}
_BY_PROTOCOL = {rule.protocol: rule for rule in _DECLARED}

FREESTYLE, STANDARD, RENJU, CARO = (_BY_NAME[name] for name in ("freestyle", "standard", "renju", "caro"))
RULES = tuple(str(rule) for rule in _DECLARED)
"""the rules' names, the values of every ``--rule`` flag"""


def rule_of(name: str) -> Rule:
    """The declared rule called ``name`` (a ``Rule`` is its own name); ValueError if there is none."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown rule {name!r}: the rules are {', '.join(RULES)}") from None


def rules_help() -> str:
    """Every rule's name and summary, for the help of a ``--rule`` flag."""
    return "; ".join(f"{rule}: {rule.summary}" for rule in _DECLARED)


def rule_from_protocol(number: int) -> Rule:
    """The rule of a Gomocup ``INFO rule`` number, the continuous-game bit left aside (the caller
    says it is not played). Renju's bit wins over the others, as a manager that sets it means
    renju. ValueError for a number no declared rule has (caro with exactly five, 9)."""
    number &= ~CONTINUOUS_BIT
    if number & RENJU.protocol:
        return RENJU
    if number not in _BY_PROTOCOL:
        raise ValueError(f"no rule is numbered {number}: the rules are "
                         + ", ".join(f"{rule} {rule.protocol}" for rule in _DECLARED))
    return _BY_PROTOCOL[number]


def check_rule(rule: str, n_in_row: int) -> Rule:
    """The rule called ``rule`` if it can be played with ``n_in_row``, else raises ValueError."""
    return rule_of(rule).check(n_in_row)


def exact_players(rule: str) -> tuple:
    """Indexed by player (index 0 unused): True where that player needs *exactly*
    ``n_in_row`` to win, False where ``n_in_row`` or more wins."""
    return rule_of(rule).exact


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
