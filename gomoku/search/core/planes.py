"""Input version 2's threat planes of a search's board, compiled (``features.fill_threat_part``).

Planes 4-11 read every window of ``n_in_row`` and of ``n_in_row + 1`` cells as its base-3 code
and mark the cells ``features``' tables say, with the same tables and window lists (a window
dead for a side that needs exactly ``n_in_row`` marks nothing for it). Under renju Black's
forbidden points are then cleared from Black's four, open four and open three planes, after
the quick filter of ``rules.forbidden_points``. Planes 12 and 13 (a VCF of the player to move,
and of the opponent were it to move) follow the same shortcuts as the reference, then
``vcf.search`` with ``features``' budget and depth.
"""

from __future__ import annotations

import numpy as np

from gomoku.game.features import MAX_THREAT_N, VCF_DEPTH, VCF_NODES, code_tables, pattern_ends, pattern_geometry
from gomoku.search.core.boards import is_forbidden
from gomoku.search.core.jit import njit
from gomoku.search.core.vcf import search

FIRST, OWN_VCF, OPPONENT_VCF = 4, 12, 13
CORE_INPUTS = (1, 2)
"""the input versions whose planes the core writes (version 1's in ``boards.write_planes``, the threat
planes here): ``backend.choose`` leaves a net of any other version on the Python trees"""


def plane_tables(width: int, height: int, n: int) -> tuple:
    """``(cells, offsets, targets, ends, marks, any_marks)`` of ``features`` for this geometry,
    with the targets as plane and cell (``(windows, 4, n + 1, 2)``); tables of no window for lines
    longer than ``features.MAX_THREAT_N`` (no net takes threat planes there: they are never asked)."""
    if n > MAX_THREAT_N:
        return (np.zeros((0, 1), np.int64), np.zeros(0, np.int64), np.zeros((0, 4, 1, 2), np.int64),
                np.zeros((0, 2), np.int64), np.zeros((1, 4, 1), np.bool_), np.zeros(1, np.bool_))
    marks, any_marks = code_tables(n)
    cells, _, offsets, targets, _ = pattern_geometry(width, height, n)
    size = width * height
    where = np.stack([targets // size, targets % size], axis=-1).astype(np.int64)
    return (np.ascontiguousarray(cells, np.int64), np.ascontiguousarray(offsets, np.int64), where,
            np.ascontiguousarray(pattern_ends(width, height, n), np.int64), np.ascontiguousarray(marks),
            np.ascontiguousarray(any_marks))


@njit
def crowded(cells, s, cell, width, height):
    """``rules.forbidden_points``' quick filter: four or more black stones within four cells of
    ``cell`` on its lines, two on each of two lines or four on one."""
    row, col = cell // width, cell % width
    lines2 = 0
    for d in range(4):
        dr = 0 if d == 0 else 1
        dc = 1 if d == 0 else (0 if d == 1 else (1 if d == 2 else -1))
        count = 0
        for k in range(-4, 5):
            if k == 0:
                continue
            r, c = row + k * dr, col + k * dc
            if 0 <= r < height and 0 <= c < width and cells[s, r * width + c] == 1:
                count += 1
        if count >= 4:
            return True
        if count >= 2:
            lines2 += 1
    return lines2 >= 2


@njit
def write_threat_planes(cells, sint_cur, s, out, row, n, exact, renju, width, height, tables, vcf_args, ws):
    """Planes 4-13 of input version 2 for search ``s``'s board into ``out[row]``, the player to
    move being ``sint_cur``."""
    pcells, offsets, targets, pends, marks, any_marks = tables
    windows, ends, through, beyond, zobrist = vcf_args
    size = width * height
    me = sint_cur
    rel = np.zeros(size + 1, np.int64)
    for c in range(size):
        v = cells[s, c]
        rel[c] = 0 if v == 0 else (1 if v == me else 2)
    exact_rel = (False, exact[me], exact[3 - me])
    for p in range(FIRST, OPPONENT_VCF + 1):
        for c in range(size):
            out[row, p, c] = 0.0
    width_n = pcells.shape[1]
    for w in range(pcells.shape[0]):
        code = offsets[w]
        power = 1
        for j in range(width_n):
            code += rel[pcells[w, j]] * power
            power *= 3
        if not any_marks[code]:
            continue
        for p in range(4):
            side = 1 + p // 2
            if exact_rel[side] and (rel[pends[w, 0]] == side or rel[pends[w, 1]] == side):
                continue
            for j in range(width_n):
                if marks[code, p, j]:
                    out[row, targets[w, p, j, 0], targets[w, p, j, 1]] = 1.0
    if renju:
        first = FIRST if me == 1 else FIRST + 4
        for c in range(size):
            if cells[s, c] == 0 and crowded(cells, s, c, width, height) and is_forbidden(cells, s, c, width, height):
                for p in range(first + 1, first + 4):
                    out[row, p, c] = 0.0
    counts = np.zeros((2, 4), np.float64)
    for side in range(2):
        for p in range(4):
            total = 0.0
            for c in range(size):
                total += out[row, FIRST + 4 * side + p, c]
            counts[side, p] = total
    for side in range(2):
        plane = OWN_VCF + side
        fives, fours, open_fours = counts[side, 0], counts[side, 1], counts[side, 2]
        their_fives = counts[1 - side, 0]
        won = False
        if fives:
            won = True
        elif not fours or their_fives > 1:
            won = False
        elif open_fours and not their_fives:
            won = True
        else:
            attacker = me if side == 0 else 3 - me
            won = search(cells, s, attacker, VCF_DEPTH, 0, VCF_NODES, n, exact, renju, width, height, windows,
                         ends, through, beyond, zobrist, ws)[0] > 0
        if won:
            for c in range(size):
                out[row, plane, c] = 1.0
