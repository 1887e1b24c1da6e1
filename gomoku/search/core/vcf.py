"""The core's VCF search (victory by continuous fours) on a search's board, compiled.

One search serves both callers that ask for a VCF at new positions:

* the threat searches at a new leaf (``tree_threats.ThreatSolver.vcf``, ``gomoku.game.vcf.find_vcf``):
  the line found, its length to the end of the game, and the per-tree cache of results;
* the VCF planes of input version 2 (``features.has_vcf``): whether there is one.

It visits the same positions in the same order as the Python side's one VCF, which serves
the same two callers there (``gomoku.game.vcf``; notation: ``line_board``): at a node the
attacker wins with a five cell; two five cells of the defender, no depth left or the node
budget spent end the line; a position already failed with as much depth left fails again;
the attacker's four moves (under renju never Black's forbidden points; against one five cell
of the defender only the four that blocks it) are tried in increasing order after a four
with two five cells (the most five cells first, then the lowest cell) and, against Black
under renju, a four whose five cell Black may not take. The recursion runs on an explicit
stack of frames (numba's cache has failed on recursive functions), and positions are keyed
by a 64-bit Zobrist hash of the stones where the Python search keys them by the stones
themselves.

The search plays its moves on the search's own cells and takes them back; per window it
keeps the stones of each player and what closes the window for each (the opponent's stones,
and where a player needs exactly ``n_in_row`` its own stones just beyond the ends), as
``LineBoard`` does.
"""

from __future__ import annotations

import numpy as np

from gomoku.game.lines import line_cells, line_ends
from gomoku.search.core.boards import is_forbidden
from gomoku.search.core.jit import njit

LEAF_VCF_NODES = 60  # tree_threats.LEAF_VCF_NODES
LEAF_VCF_DEPTH = 12  # gomoku.game.vcf.VCF_DEPTH
CACHE_SIZE = 5_000  # tree_threats.CACHE_SIZE
MOST_NODES = 2000  # the largest budget of a compiled VCF (tree_threats.ROOT_VCF_NODES)
MOST_DEPTH = 12
TABLE = 4096  # entries of the failed positions' hash table: twice the largest budget at least


ZOBRIST_SEED = 20261126


def geometry(width: int, height: int, n: int) -> tuple:
    """``(windows, ends, through, beyond, zobrist)`` for the searches of this geometry: the
    windows (``line_cells``), the cells beyond their ends (-1 off the board), the windows
    through each cell and those each cell lies just beyond (rows padded with -1), and the
    Zobrist keys (``(size + 1, 3)``: cell ``c``'s stone of player ``p`` at ``[c, p]``, the
    attacker at ``[size, p]``)."""
    size = width * height
    windows = np.ascontiguousarray(line_cells(width, height, n), np.int64)
    ends = np.array(line_ends(width, height, n), np.int64)
    ends[ends == size] = -1
    through = [[] for _ in range(size)]
    beyond = [[] for _ in range(size)]
    for w in range(len(windows)):
        for c in windows[w]:
            through[c].append(w)
        for c in ends[w]:
            if c >= 0:
                beyond[c].append(w)

    def table(rows):
        out = np.full((size, max(1, max(len(r) for r in rows))), -1, np.int64)
        for c, r in enumerate(rows):
            out[c, :len(r)] = r
        return out

    zobrist = np.random.default_rng(ZOBRIST_SEED).integers(-2 ** 63, 2 ** 63 - 1, size=(size + 1, 3),
                                                           dtype=np.int64)
    zobrist[:, 0] = 0
    return windows, ends, table(through), table(beyond), zobrist


@njit
def workspace(size, windows):
    """The scratch arrays of ``search`` for boards of ``size`` cells and ``windows`` windows."""
    frames = MOST_DEPTH + 2
    return (np.zeros((3, windows), np.int64), np.zeros((3, windows), np.int64), np.zeros(size + windows, np.int64),
            np.zeros(windows, np.int64), np.zeros(2 * windows, np.int64), np.zeros((frames, size), np.int64),
            np.zeros((frames, size), np.int64), np.zeros(frames, np.int64), np.zeros(frames, np.int64),
            np.zeros(frames, np.int64), np.zeros(TABLE, np.int64), np.zeros(TABLE, np.int64),
            np.zeros(2 * MOST_DEPTH + 3, np.int64))


@njit
def window_counts(cells, s, windows, ends, n, exact, cnt, against):
    """Fills ``cnt[p, w]`` (stones of player ``p`` in window ``w``) and ``against[p, w]`` (what closes it for ``p``)."""
    for w in range(windows.shape[0]):
        c1 = 0
        c2 = 0
        for j in range(n):
            v = cells[s, windows[w, j]]
            if v == 1:
                c1 += 1
            elif v == 2:
                c2 += 1
        cnt[1, w] = c1
        cnt[2, w] = c2
        against[1, w] = c2
        against[2, w] = c1
        for p in range(1, 3):
            if exact[p]:
                for j in range(2):
                    e = ends[w, j]
                    if e >= 0 and cells[s, e] == p:
                        against[p, w] += 1


@njit
def put(cells, s, cell, p, step, exact, through, beyond, cnt, against):
    """Plays (``step`` 1) or takes back (-1) player ``p``'s stone on ``cell``, with the window counts."""
    cells[s, cell] = p if step > 0 else 0
    for k in range(through.shape[1]):
        w = through[cell, k]
        if w < 0:
            break
        cnt[p, w] += step
        against[3 - p, w] += step
    if exact[p]:
        for k in range(beyond.shape[1]):
            w = beyond[cell, k]
            if w < 0:
                break
            against[p, w] += step


@njit
def position_hash(cells, s, zobrist):
    h = np.int64(0)
    for c in range(cells.shape[1]):
        if cells[s, c] != 0:
            h ^= zobrist[c, cells[s, c]]
    return h


@njit
def table_reset(vals, entries):
    """Empties the first ``entries`` slots of a hash table (``vals`` -1: a free slot)."""
    for i in range(entries):
        vals[i] = -1


@njit
def table_slot(keys, vals, mask, key):
    """The slot of ``key`` in an open-addressing hash table of ``mask + 1`` slots, or the free slot
    where it goes."""
    i = key & mask
    while vals[i] >= 0 and keys[i] != key:
        i = (i + 1) & mask
    return i


@njit
def table_entries(budget, most):
    """A power of two at least twice ``budget + 2``, at most ``most``."""
    entries = 16
    while entries < 2 * (budget + 2) and entries < most:
        entries *= 2
    return entries


@njit
def sort_unique(buf, count):
    """Sorts ``buf[:count]`` and drops repeats in place; returns the new count."""
    for i in range(1, count):
        x = buf[i]
        j = i - 1
        while j >= 0 and buf[j] > x:
            buf[j + 1] = buf[j]
            j -= 1
        buf[j + 1] = x
    kept = 0
    for i in range(count):
        if kept == 0 or buf[i] != buf[kept - 1]:
            buf[kept] = buf[i]
            kept += 1
    return kept


@njit
def empty_cell(cells, s, windows, w, n, skip):
    """The first empty cell of window ``w`` other than ``skip``."""
    for j in range(n):
        c = windows[w, j]
        if cells[s, c] == 0 and c != skip:
            return c
    return -1


@njit
def is_five_cell(cells, s, p, cell, windows, n, through, cnt, against):
    """Whether ``cell`` is one of player ``p``'s five cells (``LineBoard.five_cells``)."""
    for k in range(through.shape[1]):
        w = through[cell, k]
        if w < 0:
            break
        if cnt[p, w] == n - 1 and against[p, w] == 0:
            return True
    return False


@njit
def five_count(n, windows, cnt, against, p):
    """How many windows are one stone short of ``p``'s five (0: ``p`` has no five cell)."""
    count = 0
    for w in range(windows.shape[0]):
        if against[p, w] == 0 and cnt[p, w] == n - 1:
            count += 1
    return count


@njit
def _fives(cells, s, a, n, size, windows, cnt, against, fd):
    """The node's five cells: ``(code, move)``, code 1 a five cell of ``a`` (``move``, the lowest),
    -1 two or more of the defender, 0 else (the defender's one five cell, if any, in ``fd[0]``,
    ``move`` then the count of them)."""
    d = 3 - a
    best = size
    nd = 0
    for w in range(windows.shape[0]):
        if against[a, w] == 0 and cnt[a, w] == n - 1:
            c = empty_cell(cells, s, windows, w, n, -1)
            if c < best:
                best = c
        if against[d, w] == 0 and cnt[d, w] == n - 1:
            fd[nd] = empty_cell(cells, s, windows, w, n, -1)
            nd += 1
    if best < size:
        return 1, best
    nd = sort_unique(fd, nd)
    if nd > 1:
        return -1, nd
    return 0, nd


@njit
def four_list(cells, s, a, n, width, height, renju, windows, cnt, against, pairs, moves, fives, counts):
    """``LineBoard.four_moves(a)``: each four move of ``a`` (increasing; under renju never one
    forbidden to Black) into ``moves``, with its lowest five cell in ``fives`` and its number of
    five cells in ``counts``; returns how many."""
    size = width * height
    npairs = 0
    if n >= 2:
        for w in range(windows.shape[0]):
            if against[a, w] == 0 and cnt[a, w] == n - 2:
                x = empty_cell(cells, s, windows, w, n, -1)
                y = empty_cell(cells, s, windows, w, n, x)
                pairs[npairs] = x * size + y
                pairs[npairs + 1] = y * size + x
                npairs += 2
    npairs = sort_unique(pairs, npairs)
    count = 0
    i = 0
    while i < npairs:
        m = pairs[i] // size
        j = i
        while j < npairs and pairs[j] // size == m:
            j += 1
        if not (renju and a == 1 and is_forbidden(cells, s, m, width, height)):
            moves[count] = m
            fives[count] = pairs[i] % size
            counts[count] = j - i
            count += 1
        i = j
    return count


@njit
def _fours(cells, s, a, level, n, width, height, renju, windows, cnt, against, nd, fd, pairs, counts, cand, reply,
           ncand):
    """The attacker's four moves at the node (see the module docstring) into ``cand[level]`` and
    ``reply[level]``: returns a move that wins at once (two five cells, or a five cell Black may
    not take), or -1."""
    count = four_list(cells, s, a, n, width, height, renju, windows, cnt, against, pairs, cand[level], reply[level],
                      counts)
    if nd == 1:
        kept = 0
        for k in range(count):
            if cand[level, k] == fd[0]:
                cand[level, kept] = cand[level, k]
                reply[level, kept] = reply[level, k]
                counts[kept] = counts[k]
                kept += 1
        count = kept
    ncand[level] = count
    best = -1
    for k in range(count):
        if counts[k] >= 2 and (best < 0 or counts[k] > counts[best]):
            best = k
    if best >= 0:
        return cand[level, best]
    if renju and a == 2:
        for k in range(count):
            m = cand[level, k]
            cells[s, m] = a
            blocked = is_forbidden(cells, s, reply[level, k], width, height)
            cells[s, m] = 0
            if blocked:
                return m
    return -1


@njit
def search(cells, s, a, depth, nodes, limit, n, exact, renju, width, height, windows, ends, through, beyond,
           zobrist, ws):
    """A VCF of player ``a`` (to move, as the attacker) on search ``s``'s board within ``depth``
    fours, counting its nodes on from ``nodes`` and stopping past ``limit``: returns the length of
    its line (in ``ws``'s last array; 0: none found) and the nodes counted. The board is left as
    it was."""
    cnt, against, fa, fd, pairs, cand, reply, ncand, pos, keys, fhash, fdepth, line = ws
    d = 3 - a
    window_counts(cells, s, windows, ends, n, exact, cnt, against)
    h = position_hash(cells, s, zobrist)
    mask = table_entries(limit - nodes, fhash.shape[0]) - 1
    table_reset(fdepth, mask + 1)
    level = 0
    entering = True
    while True:
        back = False
        if entering:
            nodes += 1
            rem = depth - level
            code, move = _fives(cells, s, a, n, width * height, windows, cnt, against, fd)
            if code == 0 and (rem <= 0 or nodes > limit):
                code = -1
            if code == 0 and fdepth[table_slot(fhash, fdepth, mask, h)] >= rem:
                code = -1
            if code == 0:
                move = _fours(cells, s, a, level, n, width, height, renju, windows, cnt, against, move, fd, pairs,
                              fa, cand, reply, ncand)
                if move >= 0:
                    code = 1
            if code == 1:
                length = 0
                for k in range(level):
                    line[length] = cand[k, pos[k] - 1]
                    line[length + 1] = reply[k, pos[k] - 1]
                    length += 2
                line[length] = move
                _unwind(cells, s, a, level, cand, reply, pos, exact, through, beyond, cnt, against)
                return length + 1, nodes
            back = code == -1
            if not back:
                pos[level] = 0
                keys[level] = h
        if not back:
            k = pos[level]
            if k < ncand[level]:
                pos[level] = k + 1
                m = cand[level, k]
                r = reply[level, k]
                put(cells, s, m, a, 1, exact, through, beyond, cnt, against)
                put(cells, s, r, d, 1, exact, through, beyond, cnt, against)
                h ^= zobrist[m, a] ^ zobrist[r, d]
                level += 1
                entering = True
                continue
            # every four failed: remember the position as failed with this much depth
            slot = table_slot(fhash, fdepth, mask, keys[level])
            fhash[slot] = keys[level]
            fdepth[slot] = depth - level
        # back to the parent frame
        if level == 0:
            return 0, nodes
        level -= 1
        m = cand[level, pos[level] - 1]
        r = reply[level, pos[level] - 1]
        put(cells, s, r, d, -1, exact, through, beyond, cnt, against)
        put(cells, s, m, a, -1, exact, through, beyond, cnt, against)
        h ^= zobrist[m, a] ^ zobrist[r, d]
        entering = False
        if nodes > limit:
            _unwind(cells, s, a, level, cand, reply, pos, exact, through, beyond, cnt, against)
            return 0, nodes


@njit
def _unwind(cells, s, a, level, cand, reply, pos, exact, through, beyond, cnt, against):
    for k in range(level - 1, -1, -1):
        put(cells, s, reply[k, pos[k] - 1], 3 - a, -1, exact, through, beyond, cnt, against)
        put(cells, s, cand[k, pos[k] - 1], a, -1, exact, through, beyond, cnt, against)
