"""The core's boards: each search's cells and history in arrays, with the rules compiled.

Playing and taking back moves with the winner (the rule's exact fives; under renju the draw
when Black has no allowed move), the lines one stone short (``Board.completing_cells``),
the input planes of version 1, and renju's forbidden points (``rules.forbidden_reason``:
the line verdicts, and the recursion into the key points of a double three written as an
explicit stack of frames, since numba's cache has failed on recursive functions).
"""

from __future__ import annotations

import numpy as np

from gomoku.search.core.jit import njit
from gomoku.search.core.layout import NO_WINNER, S_CUR, S_HLEN, S_WINNER


@njit
def play(cells, hist, sint, s, move, width, height, n_in_row, exact, renju):
    """Plays ``move`` for the player to move on search ``s``'s board and sets its winner (under
    renju also a draw when Black, to move after White, has no allowed move)."""
    player = sint[s, S_CUR]
    cells[s, move] = player
    hist[s, sint[s, S_HLEN]] = move
    sint[s, S_HLEN] += 1
    row, col = move // width, move % width
    won = False
    for d in range(4):
        dr = 0 if d == 0 else 1
        dc = 1 if d == 0 else (0 if d == 1 else (1 if d == 2 else -1))
        count = 1
        r, c = row + dr, col + dc
        while 0 <= r < height and 0 <= c < width and cells[s, r * width + c] == player:
            count += 1
            r += dr
            c += dc
        r, c = row - dr, col - dc
        while 0 <= r < height and 0 <= c < width and cells[s, r * width + c] == player:
            count += 1
            r -= dr
            c -= dc
        if (count == n_in_row) if exact[player] else (count >= n_in_row):
            won = True
            break
    if won:
        sint[s, S_WINNER] = player
    elif sint[s, S_HLEN] == width * height:
        sint[s, S_WINNER] = 0
    elif renju and player == 2 and not black_has_allowed_move(cells, s, width, height):
        sint[s, S_WINNER] = 0
    sint[s, S_CUR] = 3 - player


@njit
def undo(cells, hist, sint, s):
    sint[s, S_HLEN] -= 1
    move = hist[s, sint[s, S_HLEN]]
    sint[s, S_CUR] = cells[s, move]
    cells[s, move] = 0
    sint[s, S_WINNER] = NO_WINNER


@njit
def _short_window(cells, s, w, player, windows, ends, n_in_row, exact):
    """The empty cell of window ``w`` if it holds ``n_in_row - 1`` stones of ``player`` and one
    empty cell (and, where ``player`` needs exactly ``n_in_row``, no stone of theirs just beyond
    either end); else -1."""
    empty = -1
    for j in range(n_in_row):
        stone = cells[s, windows[w, j]]
        if stone == 0:
            if empty >= 0:
                return -1
            empty = windows[w, j]
        elif stone != player:
            return -1
    if empty < 0:
        return -1
    if exact[player]:
        for j in range(2):
            e = ends[w, j]
            if e >= 0 and cells[s, e] == player:
                return -1
    return empty


@njit
def can_win_now(cells, sint, s, windows, ends, n_in_row, exact):
    """``Board.can_win_now``: some line is one stone short for the player to move."""
    if sint[s, S_WINNER] != NO_WINNER or sint[s, S_HLEN] < 2 * n_in_row - 3:
        return False
    player = sint[s, S_CUR]
    for w in range(windows.shape[0]):
        if _short_window(cells, s, w, player, windows, ends, n_in_row, exact) >= 0:
            return True
    return False


@njit
def completing_cells(cells, sint, s, windows, ends, n_in_row, exact, mark, mine, theirs):
    """``Board.completing_cells`` into ``mine`` and ``theirs`` (sorted); returns their lengths.
    ``mark`` is scratch of the board's size, left zeroed."""
    if sint[s, S_WINNER] != NO_WINNER or sint[s, S_HLEN] < 2 * n_in_row - 3:
        return 0, 0
    size = mark.shape[0]
    player = sint[s, S_CUR]
    for w in range(windows.shape[0]):
        c = _short_window(cells, s, w, player, windows, ends, n_in_row, exact)
        if c >= 0:
            mark[c] |= 1
        c = _short_window(cells, s, w, 3 - player, windows, ends, n_in_row, exact)
        if c >= 0:
            mark[c] |= 2
    a = 0
    b = 0
    for c in range(size):
        if mark[c]:
            if mark[c] & 1:
                mine[a] = c
                a += 1
            if mark[c] & 2:
                theirs[b] = c
                b += 1
            mark[c] = 0
    return a, b


@njit
def write_planes(cells, hist, sint, s, out, row):
    """Input version 1's four planes of search ``s``'s board into ``out[row]`` (``(4, size)``)."""
    size = out.shape[2]
    me = sint[s, S_CUR]
    opened = 1.0 if sint[s, S_HLEN] % 2 == 0 else 0.0
    for c in range(size):
        stone = cells[s, c]
        out[row, 0, c] = 1.0 if stone == me else 0.0
        out[row, 1, c] = 1.0 if (stone != 0 and stone != me) else 0.0
        out[row, 2, c] = 0.0
        out[row, 3, c] = opened
    if sint[s, S_HLEN] > 0:
        out[row, 2, hist[s, sint[s, S_HLEN] - 1]] = 1.0


# ---------------------------------------------------------------- renju

RENJU_REACH = 5  # cells looked at on each side of a move (``rules``)
_FIVE_LINE, _OVER_LINE = -1, -2
_DR = np.array([0, 1, 1, 1], np.int64)
_DC = np.array([1, 0, 1, -1], np.int64)


@njit
def _black_run(line, cell):
    """The ends ``(low, high)`` of the run of black stones through ``cell`` on the 11-cell ``line``
    (``cell`` itself counted as black)."""
    low = cell
    high = cell
    while low > 0 and line[low - 1] == 1:
        low -= 1
    while high < 10 and line[high + 1] == 1:
        high += 1
    return low, high


@njit
def _completions(line, found):
    """``rules._completions``: the empty cells of the 11-cell ``line`` where a black stone makes
    exactly five through the centre; returns how many (into ``found``)."""
    count = 0
    for cell in range(RENJU_REACH - 4, RENJU_REACH + 5):
        if line[cell] != 0:
            continue
        low, high = _black_run(line, cell)
        if high - low == 4 and low <= RENJU_REACH <= high:
            found[count] = cell
            count += 1
    return count


@njit
def _line_verdict(cells, s, move, d, width, height, line, found, points):
    """``rules._line_verdict`` for the black stone on ``move`` (already placed), direction ``d``:
    returns ``(kind, n_points)`` with the key points' offsets in ``points``."""
    row, col = move // width, move % width
    for k in range(11):
        offset = k - RENJU_REACH
        r, c = row + offset * _DR[d], col + offset * _DC[d]
        if 0 <= r < height and 0 <= c < width:
            line[k] = cells[s, r * width + c]  # 0 empty, 1 black, 2 white: white blocks as the edge does
        else:
            line[k] = 2
    low, high = _black_run(line, RENJU_REACH)
    run = high - low + 1
    if run == 5:
        return _FIVE_LINE, 0
    if run > 5:
        return _OVER_LINE, 0
    done = _completions(line, found)
    fours = done - (1 if done == 2 and found[1] - found[0] == 5 else 0)
    n_points = 0
    for cell in range(RENJU_REACH - 3, RENJU_REACH + 4):
        if line[cell] != 0:
            continue
        line[cell] = 1
        ends = _completions(line, found)
        if ends == 2 and found[1] - found[0] == 5 and found[0] < cell < found[1]:
            points[n_points] = cell - RENJU_REACH
            n_points += 1
        line[cell] = 0
    return fours, n_points


@njit
def _enter(cells, s, move, width, height, frame, threes, line, found, points):
    """Places a black stone on ``move`` and reads its four lines: returns 1 (forbidden: an
    overline or a double four), 0 (allowed: a five, or fewer than two threes), or -1 (two
    or more threes, whose key points ``threes[frame]`` lists as cells, -1 between threes)."""
    cells[s, move] = 1
    fours = 0
    over = False
    n = 0
    three_count = 0
    for d in range(4):
        kind, n_points = _line_verdict(cells, s, move, d, width, height, line, found, points)
        if kind == _FIVE_LINE:
            return 0
        if kind == _OVER_LINE:
            over = True
        else:
            fours += kind
            if n_points:
                step = _DR[d] * width + _DC[d]
                for p in range(n_points):
                    threes[frame, n] = move + points[p] * step
                    n += 1
                threes[frame, n] = -1
                n += 1
                three_count += 1
    if over or fours >= 2:
        return 1
    if three_count < 2:
        return 0
    threes[frame, n] = -2  # the end of the list
    return -1


@njit
def is_forbidden(cells, s, move, width, height):
    """``rules.forbidden_reason(...) is not None`` for Black on the empty ``move`` of search
    ``s``'s board (the board is left as it was). The recursion into the key points of a
    double three (is any of them allowed?) runs on an explicit stack of frames."""
    depth_max = 64
    moves = np.empty(depth_max, np.int64)
    cursor = np.zeros(depth_max, np.int64)  # the next entry of the frame's key-point list
    opened = np.zeros(depth_max, np.int64)  # open threes found so far
    this_open = np.zeros(depth_max, np.bool_)  # the current three is known open
    threes = np.empty((depth_max, 64), np.int64)
    line = np.empty(11, np.int64)
    found = np.empty(4, np.int64)
    points = np.empty(8, np.int64)
    top = 0
    moves[0] = move
    verdict = _enter(cells, s, move, width, height, 0, threes, line, found, points)
    result = 0
    pending = verdict >= 0  # a frame has its result in ``result``
    if pending:
        result = verdict
    else:
        cursor[0] = 0
        opened[0] = 0
        this_open[0] = False
    while True:
        if pending:
            cells[s, moves[top]] = 0
            if top == 0:
                return result == 1
            top -= 1
            # ``result`` is whether the key point just tested is forbidden
            if result == 0:
                this_open[top] = True
            pending = False
        # advance the frame at ``top``
        k = cursor[top]
        entry = threes[top, k]
        if entry == -2:
            result = 0
            pending = True
            continue
        if entry == -1:
            if this_open[top]:
                opened[top] += 1
                if opened[top] == 2:
                    result = 1
                    pending = True
                    continue
            this_open[top] = False
            cursor[top] = k + 1
            continue
        cursor[top] = k + 1
        if this_open[top]:
            continue  # this three is open already: skip its other key points
        if top + 1 >= depth_max:
            continue  # deeper than any real position: count the key point as forbidden
        top += 1
        moves[top] = entry
        verdict = _enter(cells, s, entry, width, height, top, threes, line, found, points)
        if verdict >= 0:
            result = verdict
            pending = True
        else:
            cursor[top] = 0
            opened[top] = 0
            this_open[top] = False


@njit
def drop_forbidden(cells, s, moves, count, width, height):
    """Keeps, in order at the front of ``moves[:count]``, the moves that are not forbidden to the
    player to move (renju's Black); returns how many are kept."""
    kept = 0
    for k in range(count):
        if not is_forbidden(cells, s, moves[k], width, height):
            moves[kept] = moves[k]
            kept += 1
    return kept


@njit
def black_has_allowed_move(cells, s, width, height):
    """``rules.black_has_allowed_move`` on search ``s``'s board."""
    size = width * height
    empty = 0
    black = 0
    for c in range(size):
        if cells[s, c] == 0:
            empty += 1
        elif cells[s, c] == 1:
            black += 1
    if empty > 8 * black:
        return True
    for c in range(size):
        if cells[s, c] == 0 and not is_forbidden(cells, s, c, width, height):
            return True
    return False
