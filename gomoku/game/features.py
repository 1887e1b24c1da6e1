"""The network's input planes, by input version.

A net takes the planes of one *input version*, recorded in its ``NetSpec``
(``inputs``) and model file; everything that builds planes for a net asks its
version (``input_channels``, ``planes``, ``fill_planes``).

* Version 1, 4 planes: ``Board.planes`` (own stones, opponent's stones, the last
  move, all ones when the player to move opened the game).
* Version 2, 14 planes: version 1's four, then threat planes for each side, the
  player to move's first (planes 4-7) and the opponent's next (8-11):

  - *five*: the empty cells where a stone of that side makes ``n_in_row`` in a
    line (freestyle: an overline wins too);
  - *four*: the empty cells where a stone of that side leaves a window of
    ``n_in_row`` cells holding ``n_in_row - 1`` of its stones and one empty cell;
  - *open four*: the empty cells where a stone of that side makes a straight
    ``n_in_row - 1`` with an empty cell at both ends (two ways to make five);
  - *open three*: the empty cells where a stone of that side makes a three that
    one more stone turns into an open four: a window of ``n_in_row + 1`` cells,
    both ends empty, whose middle then holds ``n_in_row - 2`` of its stones and
    one empty cell (``.XXX..`` and the broken ``.X.XX.`` alike);

  and two constant planes: all ones when the player to move has a VCF (a win by
  continuous fours, an immediate five included), and when the opponent would
  have one if it were to move (``has_vcf``: the game layer's one VCF search,
  ``vcf.find_vcf``, which the threat searches use too, with a smaller budget).

  The threat planes follow the board's rule (``Board.rule``): a window of
  ``n_in_row`` cells that can never win for a side (the rule's ``dead_lines``)
  marks nothing for it in the five and four planes, nor counts in the VCF search.
  Where a side needs exactly ``n_in_row`` (both under standard, Black under
  renju), that is a window whose cell just beyond either end holds that side's
  stone (it could only make an overline): a five is then a cell that makes exactly
  ``n_in_row``, and an open four's two completions both make exactly five. Under
  caro it is a window with the other side's stones just beyond both ends (the five
  would be blocked); an open four's or open three's window has both ends empty, so
  those planes are as under freestyle. Under renju Black's forbidden points are
  none of Black's four, open four and open three cells (an exact five is never
  forbidden), and the VCF search knows that Black cannot block on a forbidden
  point. Freestyle planes are unchanged.

The spatial planes are found per line window, so they work on any board size:
every window of ``n_in_row`` and of ``n_in_row + 1`` cells is read as a base-3
code (empty 0, the mover's stone 1, the opponent's 2) and a table per code says
which of its cells each plane marks. The tables and window lists are cached per
geometry, so a position costs a few vectorised NumPy operations over all
windows at once. For the open fours and threes the board's edge counts as a
closed end, like an opponent's stone; for the rule's dead windows it counts as
an empty cell (under caro a five at the edge wins). Board symmetries map windows onto windows, so the spatial planes turn
with the stones. The VCF search stops at a node budget; a position whose search
runs out of budget reads as no VCF, and only then can the answer depend on the
board's orientation.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from gomoku.game import rules
from gomoku.game.board import Board, fill_base_planes
from gomoku.game.rules import FREESTYLE, Rule
from gomoku.game.line_board import LineBoard
from gomoku.game.lines import line_cells, line_ends
from gomoku.game.vcf import find_vcf

INPUT_CHANNELS = {1: 4, 2: 14}
"""the planes of each input version"""
INPUT_VERSIONS = tuple(INPUT_CHANNELS)
PLANE_NAMES = {
    1: ("own stones", "opponent's stones", "last move", "player to move opened"),
    2: ("own stones", "opponent's stones", "last move", "player to move opened",
        "own five", "own four", "own open four", "own open three",
        "opponent's five", "opponent's four", "opponent's open four", "opponent's open three",
        "own VCF", "opponent's VCF"),
}
FIRST_THREAT_PLANE = 4
OWN_VCF, OPPONENT_VCF = 12, 13
MAX_THREAT_N = 8
"""the longest line the threat planes support (their tables hold 3 ** (n_in_row + 1) codes)"""

VCF_NODES = 64
"""positions a VCF search visits at most (per side and position)"""
VCF_DEPTH = 10
"""attacker fours in one VCF line at most"""

_RELABEL = (np.array([0, 1, 2], dtype=np.uint8), np.array([0, 2, 1], dtype=np.uint8))
"""stones -> (empty 0, player to move 1, opponent 2), for player 1 and player 2 to move"""


def check_input_version(version) -> int:
    """``version`` as an int, or ValueError naming the versions there are."""
    if isinstance(version, bool) or version not in INPUT_CHANNELS:
        raise ValueError(f"input version must be one of {', '.join(map(str, INPUT_VERSIONS))}, got {version!r}")
    return int(version)


def input_channels(version: int) -> int:
    """The number of planes a net of input ``version`` takes."""
    return INPUT_CHANNELS[check_input_version(version)]


def planes(board: Board, version: int = 1) -> np.ndarray:
    """The planes of input ``version`` for the player to move: ``(C, height, width)`` float32."""
    channels = input_channels(version)
    out = np.zeros((channels, board.size), dtype=np.float32)
    fill_planes(board, out, version)
    return out.reshape(channels, board.height, board.width)


def fill_planes(board: Board, out: np.ndarray, version: int = 1) -> None:
    """Writes the planes of input ``version`` into a zeroed, C-contiguous ``(C, size)`` float32 array."""
    board.fill_planes(out[:4])
    if check_input_version(version) > 1:
        fill_threat_part(board, out)


def fill_planes_batch(boards, cells: bytes, out: np.ndarray, version: int = 1) -> None:
    """``fill_planes`` for many boards of one size at once into a zeroed ``(B, C, size)`` array.

    ``cells``: the boards' cells one after another (``b"".join(bytes(b.cells) ...)``),
    which the caller often has at hand already. Version 1's four planes are set for
    all boards in a few array operations; later versions add their planes board by board.
    """
    fill_base_planes(boards, cells, out)
    if check_input_version(version) > 1:
        for row, board in enumerate(boards):
            fill_threat_part(board, out[row])


def fill_threat_part(board: Board, out: np.ndarray) -> None:
    """Version 2's planes after the first four (see the module docstring), into a zeroed ``(14, size)`` array."""
    stones = _RELABEL[board.current_player - 1][board.stones()]
    rule, mover = board.rule, board.current_player
    codes = fill_threat_planes(stones, board.width, board.height, board.n_in_row, out, rule, mover)
    size = board.size
    black = rule.restricted_side(mover)  # the side with forbidden points (Black under renju), 0 for none
    if black:
        forbidden = rules.forbidden_points(board.cells, board.width, board.height)
        if forbidden:
            first = FIRST_THREAT_PLANE + 4 * (black - 1)
            out[first + 1:first + 4, forbidden] = 0.0
    counts = out[FIRST_THREAT_PLANE:FIRST_THREAT_PLANE + 8].reshape(2, 4, size).sum(axis=2)  # (side, plane)
    line_board = None  # built once, for the searches of both sides
    for plane, side in ((OWN_VCF, 0), (OPPONENT_VCF, 1)):
        fives, fours, open_fours, _ = counts[side]
        their_fives = counts[1 - side, 0]
        # Settled by the planes: a five wins at once; without a four there is no VCF; against
        # two fives of the other side a four is too slow; an open four wins unless the other
        # side has a five to make first.
        if fives:
            out[plane] = 1.0
        elif not fours or their_fives > 1:
            continue
        elif open_fours and not their_fives:
            out[plane] = 1.0
        else:
            if line_board is None:
                line_board = LineBoard.of_stones(stones, board.width, board.height, board.n_in_row, rule, mover, codes)
            if find_vcf(line_board, mover if side == 0 else 3 - mover, VCF_NODES, VCF_DEPTH) is not None:
                out[plane] = 1.0


# ------------------------------------------------------------------ patterns
@lru_cache(maxsize=None)
def code_tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    """What each window code marks: ``(marks, any_marks)``.

    Codes below ``3 ** (n + 1)`` are windows of ``n`` cells: ``marks[code]`` is
    ``(4, n + 1)``, the cells it marks in the mover's five and four planes and
    the opponent's five and four planes (its last column, no cell of the window,
    stays False). ``3 ** (n + 1)`` plus a code is a window of ``n + 1`` cells: the
    cells it marks in the mover's open four and open three planes and the
    opponent's. A digit of a code is a cell's content (empty 0, mover 1,
    opponent 2), the window's first cell the lowest digit. ``any_marks[code]``
    says whether the code marks anything.
    """
    if n > MAX_THREAT_N:
        raise ValueError(f"the threat planes support up to {MAX_THREAT_N} in a row, not {n}")
    count = 3 ** (n + 1)
    marks = np.zeros((2 * count, 4, n + 1), dtype=bool)
    for length, first_code in ((n, 0), (n + 1, count)):
        codes = np.arange(3 ** length)
        digits = (codes[:, None] // 3 ** np.arange(length)) % 3  # (codes, length)
        empty = digits == 0
        part = marks[first_code:first_code + len(codes), :, :length]
        for side in (1, 2):
            own = (digits == side).sum(axis=1)
            other = (digits == 3 - side).sum(axis=1)
            first = 2 * (side - 1)
            if length == n:
                part[:, first] = ((own == n - 1) & (other == 0))[:, None] & empty
                part[:, first + 1] = ((own == n - 2) & (other == 0))[:, None] & empty
            else:
                ends = empty[:, 0] & empty[:, -1]
                middle = digits[:, 1:-1]
                mid_own = (middle == side).sum(axis=1)
                mid_clear = (middle != 3 - side).all(axis=1)
                inner = empty.copy()
                inner[:, [0, -1]] = False
                part[:, first] = (ends & mid_clear & (mid_own == n - 2))[:, None] & inner
                part[:, first + 1] = (ends & mid_clear & (mid_own == n - 3))[:, None] & inner
    any_marks = marks.any(axis=(1, 2))
    marks.setflags(write=False)
    any_marks.setflags(write=False)
    return marks, any_marks


@lru_cache(maxsize=None)
def pattern_geometry(width: int, height: int, n: int) -> tuple:
    """Per board geometry, every window of ``n`` cells (first, in ``line_cells`` order) and of
    ``n + 1`` cells, as one table: ``(cells, powers, offsets, targets, short)``.

    ``cells`` is ``(windows, n + 1)``; a window of ``n`` cells ends with the cell
    index ``size``, which reads as empty (the stones get one empty cell
    appended). ``cells @ powers + offsets`` is each window's code in
    ``code_tables``; ``targets[w, p, k]`` is where the mark of window ``w``, plane
    ``p`` of its four, cell ``k`` lands in a flattened ``(C, size)`` plane array.
    ``short`` counts the windows of ``n`` cells.
    """
    size = width * height
    short = line_cells(width, height, n)
    long = line_cells(width, height, n + 1)  # none of n + 1 cells on an n x n board
    cells = np.vstack([np.hstack([short, np.full((len(short), 1), size)]), long])
    offsets = np.repeat(np.array([0, 3 ** (n + 1)], dtype=np.intp), (len(short), len(long)))
    planes = np.repeat(np.array([[4, 5, 8, 9], [6, 7, 10, 11]]), (len(short), len(long)), axis=0)
    targets = planes[:, :, None] * size + np.minimum(cells, size - 1)[:, None, :]  # (windows, 4, n + 1)
    powers = (3 ** np.arange(n + 1)).astype(np.float32)  # exact: codes stay below 2 ** 24
    for table in (cells, offsets, targets):
        table.setflags(write=False)
    return cells, powers, offsets, targets, len(short)


@lru_cache(maxsize=None)
def pattern_ends(width: int, height: int, n: int) -> np.ndarray:
    """The cells just beyond both ends of every window of ``pattern_geometry``'s table, as
    ``(windows, 2)`` (``width * height`` off the board, which reads as empty)."""
    ends = np.vstack([line_ends(width, height, n), line_ends(width, height, n + 1).reshape(-1, 2)])
    ends.setflags(write=False)
    return ends


def fill_threat_planes(stones: np.ndarray, width: int, height: int, n: int, out: np.ndarray,
                       rule: Rule = FREESTYLE, mover: int = 1) -> np.ndarray:
    """Marks planes 4-11 of ``out`` (a zeroed, C-contiguous ``(C, size)`` array, C >= 12).

    Args:
        stones: ``(size,)`` uint8, 0 empty, 1 the player to move, 2 the opponent.
        rule: the game's rule; its dead windows for a side mark nothing for that side.
        mover: the player (1 or 2) that side 1 of ``stones`` is, for the rule's per-player parts.

    Returns:
        the code of every window of ``n`` cells (``line_cells`` order), for ``has_vcf``.
    """
    if not out.flags.c_contiguous:
        raise ValueError("the plane array must be C-contiguous")
    flat = out.reshape(-1)
    marks, any_marks = code_tables(n)
    cells, powers, offsets, targets, short = pattern_geometry(width, height, n)
    padded = np.zeros(len(stones) + 1, dtype=np.float32)
    padded[:-1] = stones
    codes = (padded[cells] @ powers).astype(np.intp) + offsets
    hit = any_marks[codes].nonzero()[0]
    if len(hit):
        chosen = marks[codes[hit]]
        if rule.ends_matter:
            beyond = padded[pattern_ends(width, height, n)[hit]]  # (hits, 2)
            chosen = chosen.copy()
            exact = rule.sides(mover)
            for side in (1, 2):
                chosen[rule.dead_lines(side, beyond, exact), 2 * (side - 1):2 * side] = False
        flat[targets[hit][chosen]] = 1.0
    return codes[:short]


# ------------------------------------------------------------------ VCF
def has_vcf(stones: np.ndarray, attacker: int, width: int, height: int, n: int,
            codes: Optional[np.ndarray] = None, budget: int = VCF_NODES, depth: int = VCF_DEPTH,
            rule: Rule = FREESTYLE, mover: int = 1) -> bool:
    """Whether ``attacker`` (1 or 2 of ``stones``), were it to move, wins by continuous fours.

    The game layer's VCF (``vcf.find_vcf``): an immediate five counts, and so does a
    four that leaves two five cells (an open four, or two fours at once). The
    defender must block every four, unless it has a five of its own, which ends the
    line. The search visits at most ``budget`` positions and ``depth`` attacker fours;
    beyond them it answers False.

    Args:
        stones: ``(size,)`` uint8 with 0 empty, 1 and 2 the two sides.
        codes: the code of every window of ``n`` cells (``fill_threat_planes``), if at hand.
        rule: the game's rule (which windows are dead, who has forbidden points).
        mover: the player that side 1 of ``stones`` is, for the rule's per-player parts.
    """
    board = LineBoard.of_stones(stones, width, height, n, rule, mover, codes)
    return find_vcf(board, mover if attacker == 1 else 3 - mover, budget, depth) is not None
