"""The core's VCT search (victory by continuous threats), compiled: ``search.vct.find_vct``.

The same search as the reference, node for node (notation: ``line_board``): an attacker's
node wins with a five cell, fails against a five cell of the defender or past the budget,
reads its result from the memo of positions (by stones, attacker and threes left), tries a VCF
(at most 200 nodes more), then its three moves, best-scored first (at most ``VCT_THREES``,
each counted as a node when tried); a defender's node answers with the attacker's single five
cell, else every cell of the attacker's lines of ``n - 2`` and every four move of its own
(under renju never Black's forbidden points), and a four made by the answer is blocked first.
The two kinds of node call each other: here they are frames of one explicit stack.
"""

from __future__ import annotations

import math

import numpy as np

from gomoku.search.core.boards import drop_forbidden, is_forbidden
from gomoku.search.core.jit import njit
from gomoku.search.core.vcf import (MOST_DEPTH, empty_cell, sort_unique, four_list, position_hash, put, search,
                                    table_entries, table_reset, table_slot, window_counts)

VCT_THREES = 8  # search.vct.VCT_THREES
VCT_VCF_NODES = 200  # the VCF tried at each attacker's node, at most
FRAMES = 128
MEMO = 4096
_ATTACK, _DEFEND = 0, 1


def vct_workspace(size: int) -> tuple:
    """The VCT's own scratch: its frames and its memo."""
    return (np.zeros((FRAMES, 8), np.int64), np.zeros((FRAMES, size), np.int64), np.zeros(MEMO, np.int64),
            np.zeros(MEMO, np.int64), np.zeros(size, np.int64), np.zeros(size, np.float64), np.zeros(size, np.int64),
            np.zeros(size, np.int64), np.zeros(size, np.int64))


@njit
def five_list(cells, s, p, n, windows, cnt, against, out):
    """``LineBoard.five_cells(p)`` into ``out`` (increasing); returns how many."""
    count = 0
    for w in range(windows.shape[0]):
        if against[p, w] == 0 and cnt[p, w] == n - 1:
            out[count] = empty_cell(cells, s, windows, w, n, -1)
            count += 1
    return sort_unique(out, count)


@njit
def _near(cells, s, cell, width, height):
    """Whether ``cell`` lies within two king steps of a stone (``LineBoard.near_mask``)."""
    row, col = cell // width, cell % width
    for r in range(max(0, row - 2), min(height, row + 3)):
        for c in range(max(0, col - 2), min(width, col + 3)):
            if cells[s, r * width + c] != 0:
                return True
    return False


@njit
def _three_moves(cells, s, a, n, width, height, renju, exact, windows, through, beyond, cnt, against, weights, out,
                 score, pairs, moves, fives, counts, nodes):
    """``search.vct._three_moves``: into ``out``; returns ``(count, nodes)``."""
    if n < 3:
        return 0, nodes
    d = 3 - a
    k = 0
    for w in range(windows.shape[0]):
        if against[a, w] == 0 and cnt[a, w] == n - 3:
            for j in range(n):
                c = windows[w, j]
                if cells[s, c] == 0:
                    out[k] = c
                    k += 1
    k = sort_unique(out, k)
    attack, defend = weights[0], weights[1]
    for i in range(k):
        c = out[i]
        if _near(cells, s, c, width, height):
            total = 0.0
            for t in range(through.shape[1]):
                w = through[c, t]
                if w < 0:
                    break
                value = 0.0
                if against[a, w] == 0:
                    value += attack[cnt[a, w]]
                if against[d, w] == 0:
                    value += defend[cnt[d, w]]
                total += value
            score[i] = total
        else:
            score[i] = -math.inf
    # best score first, then the lowest cell (an insertion sort of the few candidates)
    for i in range(1, k):
        c, v = out[i], score[i]
        j = i - 1
        while j >= 0 and (score[j] < v or (score[j] == v and out[j] > c)):
            out[j + 1], score[j + 1] = out[j], score[j]
            j -= 1
        out[j + 1], score[j + 1] = c, v
    found = 0
    for i in range(k):
        c = out[i]
        if renju and a == 1 and is_forbidden(cells, s, c, width, height):
            continue
        nodes += 1
        put(cells, s, c, a, 1, exact, through, beyond, cnt, against)
        count = four_list(cells, s, a, n, width, height, renju, windows, cnt, against, pairs, moves, fives, counts)
        put(cells, s, c, a, -1, exact, through, beyond, cnt, against)
        threat = False
        for m in range(count):
            if counts[m] >= 2:
                threat = True
                break
        if threat:
            out[found] = c
            found += 1
            if found >= VCT_THREES:
                break
    return found, nodes


@njit
def find_vct(cells, s, a, budget, depth, n, exact, renju, width, height, windows, ends, through, beyond, zobrist,
             weights, ws, vs):
    """``search.vct.find_vct``: the first move of a VCT for ``a`` to move, or -1; and the
    nodes it counted. The board is left as it was."""
    cnt, against, pairs, line = ws[0], ws[1], ws[4], ws[12]
    frame, lists, mkeys, mvals, buf, score, moves, fives, counts = vs
    size = width * height
    d = 3 - a
    limit = budget
    window_counts(cells, s, windows, ends, n, exact, cnt, against)
    mask = table_entries(budget, MEMO) - 1
    table_reset(mvals, mask + 1)
    nodes = 0
    top = 0
    # a frame's columns: kind, threes left, first (the root's attack), memo key, next entry of its
    # list, entries; an attack's 6: 1 once it tries its threes (its result is then memoized);
    # a defence's 6 and 7: the answer and the block it played
    frame[0, 0], frame[0, 1], frame[0, 2] = _ATTACK, depth, 1
    entering = True
    result = False
    move_found = -1
    while True:
        f = top
        kind = frame[f, 0]
        done = False  # the frame has its result in ``result``
        if entering:
            nodes += 1
            frame[f, 6] = 0
            if kind == _ATTACK:
                if five_list(cells, s, a, n, windows, cnt, against, buf) > 0:
                    result, done = True, True
                    if frame[f, 2]:
                        move_found = buf[0]
                elif five_list(cells, s, d, n, windows, cnt, against, buf) > 0 or nodes > limit:
                    result, done = False, True
                else:
                    # the memo's key: the stones, the attacker and the threes left (in the high bits)
                    key = position_hash(cells, s, zobrist) ^ zobrist[size, a] ^ ((frame[f, 1] + 1) << 56)
                    frame[f, 3] = key
                    slot = table_slot(mkeys, mvals, mask, key)
                    if mvals[slot] >= 0 and not frame[f, 2]:
                        result, done = mvals[slot] == 1, True
                    else:
                        saved = nodes
                        length, nodes = search(cells, s, a, MOST_DEPTH, nodes, min(limit, nodes + VCT_VCF_NODES), n,
                                               exact, renju, width, height, windows, ends, through, beyond, zobrist,
                                               ws)
                        nodes = max(saved, nodes)
                        if length:
                            result, done = True, True
                            if frame[f, 2]:
                                move_found = line[0]
                        else:
                            count = 0
                            if frame[f, 1] > 0:
                                count, nodes = _three_moves(cells, s, a, n, width, height, renju, exact, windows,
                                                            through, beyond, cnt, against, weights, lists[f], score,
                                                            pairs, moves, fives, counts, nodes)
                            frame[f, 4], frame[f, 5], frame[f, 6] = 0, count, 1
            else:
                if five_list(cells, s, d, n, windows, cnt, against, buf) > 0 or nodes > limit:
                    result, done = False, True
                else:
                    nfive = five_list(cells, s, a, n, windows, cnt, against, buf)
                    if nfive > 1:
                        result, done = True, True
                    else:
                        row = lists[f]
                        count = 0
                        if nfive == 1:
                            row[0] = buf[0]
                            count = 1
                        else:
                            for w in range(windows.shape[0]):
                                if n >= 2 and against[a, w] == 0 and cnt[a, w] == n - 2:
                                    for j in range(n):
                                        c = windows[w, j]
                                        if cells[s, c] == 0:
                                            row[count] = c
                                            count += 1
                            nfour = four_list(cells, s, d, n, width, height, renju, windows, cnt, against, pairs,
                                              moves, fives, counts)
                            for m in range(nfour):
                                row[count] = moves[m]
                                count += 1
                            count = sort_unique(row, count)
                        if renju and d == 1:
                            count = drop_forbidden(cells, s, row, count, width, height)
                        frame[f, 4], frame[f, 5] = 0, count
        else:
            # a child frame returned ``result``: take back what this frame played for it
            if kind == _ATTACK:
                put(cells, s, lists[f, frame[f, 4] - 1], a, -1, exact, through, beyond, cnt, against)
                if result:
                    done = True
                    if frame[f, 2]:
                        move_found = lists[f, frame[f, 4] - 1]
                elif nodes > limit:
                    frame[f, 4] = frame[f, 5]  # out of nodes: no further three
            else:
                if frame[f, 7] >= 0:
                    put(cells, s, frame[f, 7], a, -1, exact, through, beyond, cnt, against)
                put(cells, s, frame[f, 6], d, -1, exact, through, beyond, cnt, against)
                if not result:
                    done = True
        if not done:
            nxt = frame[f, 4]
            if kind == _ATTACK:
                if nxt < frame[f, 5] and top + 1 < FRAMES:
                    frame[f, 4] = nxt + 1
                    put(cells, s, lists[f, nxt], a, 1, exact, through, beyond, cnt, against)
                    top += 1
                    frame[top, 0], frame[top, 1], frame[top, 2] = _DEFEND, frame[f, 1] - 1, 0
                    entering = True
                    continue
                result, done = False, True
            else:
                if nxt < frame[f, 5]:
                    frame[f, 4] = nxt + 1
                    answer = lists[f, nxt]
                    put(cells, s, answer, d, 1, exact, through, beyond, cnt, against)
                    frame[f, 6], frame[f, 7] = answer, -1
                    nblock = five_list(cells, s, d, n, windows, cnt, against, buf)
                    if nblock > 1 or (nblock == 1 and renju and a == 1 and is_forbidden(cells, s, buf[0], width,
                                                                                         height)):
                        put(cells, s, answer, d, -1, exact, through, beyond, cnt, against)
                        result, done = False, True
                    elif top + 1 < FRAMES:
                        top += 1
                        if nblock == 1:
                            frame[f, 7] = buf[0]
                            put(cells, s, buf[0], a, 1, exact, through, beyond, cnt, against)
                            frame[top, 0], frame[top, 1], frame[top, 2] = _DEFEND, frame[f, 1], 0
                        else:
                            frame[top, 0], frame[top, 1], frame[top, 2] = _ATTACK, frame[f, 1], 0
                        entering = True
                        continue
                    else:
                        put(cells, s, answer, d, -1, exact, through, beyond, cnt, against)
                        result, done = False, True
                else:
                    result, done = True, True
        # the frame is done with ``result``
        if kind == _ATTACK and frame[f, 6] == 1:
            slot = table_slot(mkeys, mvals, mask, frame[f, 3])
            mkeys[slot] = frame[f, 3]
            mvals[slot] = 1 if result else 0
        if top == 0:
            return (move_found if result else -1), nodes
        top -= 1
        entering = False

