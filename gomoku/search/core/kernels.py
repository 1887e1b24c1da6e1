"""The compiled core's kernels: many search trees and their boards in flat arrays, one call a step.

Every function here is plain Python over NumPy arrays and scalars, compiled by numba
(``NUMBA_DISABLE_JIT=1`` runs them as they are). They follow the reference search
(``mcts.MCTS``, ``gumbel.GumbelTree``) step for step: the same selection, expansion,
win check, in-tree solver and backup, with the same floating-point operations in the
same order wherever PUCT reads them, so a seeded game is the same move for move.

Layout (``trees.CoreTrees`` owns the arrays and documents the columns):

* a *search* is one player's tree over one game: its root, its own board (cells,
  history, player to move, winner) and its playout state;
* nodes and edges live in shared pools; a node's children are the ``nchild`` edges
  from ``first_edge`` on, in the order of its moves; an edge's child node is
  created on its first visit;
* a descent keeps its path as (node, child index) pairs, so that pools can be
  compacted between steps.

Recursion is written as explicit stacks: numba's on-disk cache has failed on
recursive functions.
"""

from __future__ import annotations

import math

import numpy as np

from gomoku.search.core.jit import njit

# node float columns
N_VISITS, N_VALUE, N_WSUM, N_VISITED_P = 0, 1, 2, 3
NODE_FLOATS = 4
# node int columns
N_FIRST, N_NCHILD, N_PROVEN, N_WIN, N_PLIES, N_NLOST, N_GREEDY = 0, 1, 2, 3, 4, 5, 6
NODE_INTS = 7
# edge float columns
E_P, E_N, E_Q = 0, 1, 2
EDGE_FLOATS = 3
# edge int columns
E_MOVE, E_CHILD, E_LOST = 0, 1, 2
EDGE_INTS = 3
# search int columns
S_HLEN, S_CUR, S_WINNER, S_ROOT, S_STATE, S_DONE, S_BUDGET, S_KIND, S_ROW, S_PLEN, S_LEAF, S_QPOS, \
    S_QLEN, S_LEAF_NMOVES, S_PLAYOUTS, S_ROOT_EVAL = range(16)
SEARCH_INTS = 16
# search float columns
P_CPUCT, P_FPU, P_WIN_CHECK, P_SOLVE, P_FORCED_K, P_C_VISIT, P_C_SCALE = range(7)
SEARCH_FLOATS = 7
# search states
IDLE, RUN, PENDING, READY, NEED_QUEUE = 0, 1, 2, 3, 4
# search kinds
PUCT, GUMBEL = 0, 1
# pool counters
NEXT_NODE, NEXT_EDGE = 0, 1

NO_WINNER = -1
ALL_LEGAL = -1


@njit
def _block_sum(a, lo, n):
    """NumPy's pairwise summation of ``a[lo:lo + n]`` for ``n`` up to its block size (128):
    eight running sums, combined pairwise, then the remainder in order."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    m = n - n % 8
    while i < m:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit
def pairwise_sum(a, n):
    """``a[:n].sum()`` to the bit as NumPy computes it (halves rounded down to a multiple of 8,
    blocks of at most 128), with an explicit stack of ranges in place of recursion."""
    parts = np.empty(16, np.float64)  # a stack of finished partial sums
    count = 0
    stack_lo = np.empty(16, np.int64)
    stack_n = np.empty(16, np.int64)
    stack_state = np.zeros(16, np.int64)  # 0: not split yet, 1: left done, 2: both done
    stack_lo[0], stack_n[0], stack_state[0] = 0, n, 0
    top = 1
    while top > 0:
        k = top - 1
        lo, m = stack_lo[k], stack_n[k]
        if m <= 128:
            parts[count] = _block_sum(a, lo, m)
            count += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if stack_state[k] == 0:
            stack_state[k] = 1
            stack_lo[top], stack_n[top], stack_state[top] = lo, half, 0
            top += 1
        elif stack_state[k] == 1:
            stack_state[k] = 2
            stack_lo[top], stack_n[top], stack_state[top] = lo + half, m - half, 0
            top += 1
        else:
            # both halves are done: they are the last two partial sums
            parts[count - 2] = parts[count - 2] + parts[count - 1]
            count -= 1
            top -= 1
    return parts[0]


# ---------------------------------------------------------------- boards

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


# ---------------------------------------------------------------- trees

@njit
def new_node(nodef, nodei, pool):
    node = pool[NEXT_NODE]
    pool[NEXT_NODE] += 1
    for k in range(NODE_FLOATS):
        nodef[node, k] = 0.0
    nodei[node, N_FIRST] = -1
    nodei[node, N_NCHILD] = 0
    nodei[node, N_PROVEN] = 0
    nodei[node, N_WIN] = -1
    nodei[node, N_PLIES] = 0
    nodei[node, N_NLOST] = 0
    nodei[node, N_GREEDY] = -1
    return node


@njit
def _child(nodef, nodei, edgei, pool, node, index):
    e = nodei[node, N_FIRST] + index
    child = edgei[e, E_CHILD]
    if child < 0:
        child = new_node(nodef, nodei, pool)
        edgei[e, E_CHILD] = child
    return child


@njit
def _mark_lost(nodei, edgei, node, index):
    e = nodei[node, N_FIRST] + index
    if edgei[e, E_LOST] == 0:
        edgei[e, E_LOST] = 1
        nodei[node, N_NLOST] += 1


@njit
def _puct_index(nodef, nodei, edgef, edgei, node, c_puct, fpu, forced_k, at_root):
    """``MCTS.select_index`` for PUCT: forced playouts at the root, a known win, then
    ``argmax Q + U`` passing over children known to lose."""
    first = nodei[node, N_FIRST]
    nchild = nodei[node, N_NCHILD]
    total = 0.0
    unvisited = False
    for a in range(nchild):
        total += edgef[first + a, E_N]
        if edgef[first + a, E_N] == 0.0:
            unvisited = True
    fpu_q = 0.0
    use_fpu = fpu >= 0.0 and unvisited
    if use_fpu:
        mean = (nodef[node, N_VALUE] + nodef[node, N_WSUM]) / (1.0 + total)
        fpu_q = mean - fpu * math.sqrt(nodef[node, N_VISITED_P])
    scale = c_puct * math.sqrt(nodef[node, N_VISITS])
    if forced_k > 0.0 and at_root:
        best = -np.inf
        best_index = -1
        for a in range(nchild):
            e = first + a
            if edgef[e, E_N] < math.sqrt(forced_k * edgef[e, E_P] * total):
                q = fpu_q if (use_fpu and edgef[e, E_N] == 0.0) else edgef[e, E_Q]
                score = q + scale * edgef[e, E_P] / (1.0 + edgef[e, E_N])
                if best_index < 0 or score > best:
                    best = score
                    best_index = a
        if best_index >= 0:
            return best_index
    if nodei[node, N_WIN] >= 0:
        return nodei[node, N_WIN]
    skip_lost = 0 < nodei[node, N_NLOST] < nchild
    best = 0.0
    best_index = -1
    for a in range(nchild):
        e = first + a
        q = fpu_q if (use_fpu and edgef[e, E_N] == 0.0) else edgef[e, E_Q]
        score = q + scale * edgef[e, E_P] / (1.0 + edgef[e, E_N])
        if skip_lost and edgei[e, E_LOST]:
            score = -np.inf
        if best_index < 0 or score > best:
            best = score
            best_index = a
    return best_index


@njit
def _gumbel_index(nodef, nodei, edgef, node, c_visit, c_scale, scratch):
    """``GumbelTree.select_index`` below the root: ``argmax pi'(a) - N(a) / (1 + sum N)``."""
    first = nodei[node, N_FIRST]
    nchild = nodei[node, N_NCHILD]
    total = 0.0
    max_n = 0.0
    for a in range(nchild):
        n = edgef[first + a, E_N]
        total += n
        if n > max_n:
            max_n = n
    if total == 0.0:
        if nodei[node, N_GREEDY] < 0:
            best = 0.0
            best_index = -1
            for a in range(nchild):
                logp = math.log(max(edgef[first + a, E_P], 1e-30))
                if best_index < 0 or logp > best:
                    best = logp
                    best_index = a
            nodei[node, N_GREEDY] = best_index
        return nodei[node, N_GREEDY]
    v = nodef[node, N_VALUE]
    mass = 0.0
    pq = 0.0
    for a in range(nchild):
        e = first + a
        if edgef[e, E_N] > 0.0:
            mass += edgef[e, E_P]
            pq += edgef[e, E_P] * edgef[e, E_Q]
    v_mix = (v + total * (pq / mass)) / (1.0 + total) if mass > 0.0 else v
    low = v
    high = v
    for a in range(nchild):
        e = first + a
        q = edgef[e, E_Q] if edgef[e, E_N] > 0.0 else v_mix
        scratch[a] = q
        low = min(low, q)
        high = max(high, q)
    span = max(high - low, 1e-8)
    factor = (c_visit + max_n) * c_scale
    top = -np.inf
    for a in range(nchild):
        logit = math.log(max(edgef[first + a, E_P], 1e-30)) + factor * ((scratch[a] - low) / span)
        scratch[a] = logit
        top = max(top, logit)
    for a in range(nchild):
        scratch[a] = math.exp(scratch[a] - top)
    weight_sum = pairwise_sum(scratch, nchild)
    best = 0.0
    best_index = -1
    for a in range(nchild):
        score = scratch[a] / weight_sum - edgef[first + a, E_N] / (1.0 + total)
        if best_index < 0 or score > best:
            best = score
            best_index = a
    return best_index


@njit
def _expand(nodef, nodei, edgef, edgei, pool, node, moves, nmoves, priors, row, value, scratch):
    """``TreeNode.expand``: edges for ``moves`` with the priors renormalised over them."""
    first = pool[NEXT_EDGE]
    pool[NEXT_EDGE] += nmoves
    for a in range(nmoves):
        scratch[a] = np.float64(priors[row, moves[a]])
    total = pairwise_sum(scratch, nmoves)
    for a in range(nmoves):
        e = first + a
        edgef[e, E_P] = scratch[a] / total if total > 0 else 1.0 / nmoves
        edgef[e, E_N] = 0.0
        edgef[e, E_Q] = 0.0
        edgei[e, E_MOVE] = moves[a]
        edgei[e, E_CHILD] = -1
        edgei[e, E_LOST] = 0
    nodei[node, N_FIRST] = first
    nodei[node, N_NCHILD] = nmoves
    nodef[node, N_VALUE] = value


@njit
def _prove(nodef, nodei, edgei, path, s, plen, leaf, result, plies):
    """``MCTS.prove``: the result at the leaf and up its path as far as it is certain."""
    nodei[leaf, N_PROVEN] = result
    nodei[leaf, N_PLIES] = plies
    for k in range(plen - 1, -1, -1):
        parent = path[s, k, 0]
        index = path[s, k, 1]
        if result == -1:
            plies += 1
            if nodei[parent, N_WIN] < 0 or plies < nodei[parent, N_PLIES]:
                nodei[parent, N_WIN] = index
                nodei[parent, N_PLIES] = plies
            nodei[parent, N_PROVEN] = 1
            result = 1
        else:
            _mark_lost(nodei, edgei, parent, index)
            if nodei[parent, N_NLOST] < nodei[parent, N_NCHILD]:
                return
            longest = 0
            first = nodei[parent, N_FIRST]
            started = False
            for a in range(nodei[parent, N_NCHILD]):
                child = edgei[first + a, E_CHILD]
                if child >= 0 and (not started or nodei[child, N_PLIES] > longest):
                    longest = nodei[child, N_PLIES]
                    started = True
            plies = 1 + longest
            nodei[parent, N_PROVEN] = -1
            nodei[parent, N_PLIES] = plies
            result = -1


@njit
def _backup(nodef, nodei, edgef, edgei, cells, hist, sint, sflt, path, s, value, known, plies):
    """``MCTS.backup`` after the leaf was expanded (or not): proofs, visits, values; the board restored."""
    leaf = sint[s, S_LEAF]
    plen = sint[s, S_PLEN]
    if known:
        if sflt[s, P_SOLVE] > 0.0:
            if value != 0.0 and plen > 0:
                _prove(nodef, nodei, edgei, path, s, plen, leaf, int(value), plies)
        elif value == 1.0 and plen > 0:
            _mark_lost(nodei, edgei, path[s, plen - 1, 0], path[s, plen - 1, 1])
    nodef[leaf, N_VISITS] += 1.0
    value = -value
    for k in range(plen - 1, -1, -1):
        parent = path[s, k, 0]
        e = nodei[parent, N_FIRST] + path[s, k, 1]
        n = edgef[e, E_N] + 1.0
        edgef[e, E_N] = n
        edgef[e, E_Q] += (value - edgef[e, E_Q]) / n
        nodef[parent, N_VISITS] += 1.0
        nodef[parent, N_WSUM] += value
        if n == 1.0:
            nodef[parent, N_VISITED_P] += edgef[e, E_P]
        value = -value
    for k in range(plen):
        undo(cells, hist, sint, s)
    sint[s, S_PLEN] = 0


@njit
def _select_leaf(nodef, nodei, edgef, edgei, pool, cells, hist, sint, sflt, path, leafmoves, s, root_choice,
                 width, height, n_in_row, exact, renju, windows, ends, mark, mine, theirs, scratch):
    """``MCTS.select_leaf``: descends from the root playing the moves on the search's board.

    Returns ``(needs_eval, value, plies)``; the leaf, its path and the moves to expand it
    with (``S_LEAF_NMOVES``: -1 for every legal move) are left on the search's row.
    """
    node = sint[s, S_ROOT]
    plen = 0
    kind = sint[s, S_KIND]
    while True:
        sint[s, S_LEAF] = node
        sint[s, S_PLEN] = plen
        sint[s, S_LEAF_NMOVES] = ALL_LEGAL
        winner = sint[s, S_WINNER]
        if winner != NO_WINNER:
            return False, (0.0 if winner == 0 else -1.0), 0
        if nodei[node, N_PROVEN] != 0 and plen > 0:
            return False, float(nodei[node, N_PROVEN]), nodei[node, N_PLIES]
        if nodei[node, N_FIRST] < 0:
            if sflt[s, P_SOLVE] > 0.0:
                a, b = completing_cells(cells, sint, s, windows, ends, n_in_row, exact, mark, mine, theirs)
                if a > 0:
                    if plen > 0:
                        return False, 1.0, 1
                    for k in range(a):
                        leafmoves[s, k] = mine[k]
                    sint[s, S_LEAF_NMOVES] = a
                    return True, 0.0, 0
                if b > 1 and plen > 0:
                    return False, -1.0, 2
                if b > 0 and renju and sint[s, S_CUR] == 1:
                    kept = 0
                    for k in range(b):
                        if not is_forbidden(cells, s, theirs[k], width, height):
                            theirs[kept] = theirs[k]
                            kept += 1
                    b = kept
                    if b == 0:
                        # Black may not block on a forbidden point: lost (the root plays any legal move)
                        if plen > 0:
                            return False, -1.0, 2
                        return True, 0.0, 0
                if b > 0:
                    for k in range(b):
                        leafmoves[s, k] = theirs[k]
                    sint[s, S_LEAF_NMOVES] = b
                return True, 0.0, 0
            if sflt[s, P_WIN_CHECK] > 0.0 and plen > 0 and (
                    nodef[node, N_VISITS] > 0.0 or can_win_now(cells, sint, s, windows, ends, n_in_row, exact)):
                return False, 1.0, 1
            return True, 0.0, 0
        if plen == 0 and root_choice >= 0:
            index = root_choice
        elif kind == GUMBEL:
            index = _gumbel_index(nodef, nodei, edgef, node, sflt[s, P_C_VISIT], sflt[s, P_C_SCALE], scratch)
        else:
            index = _puct_index(nodef, nodei, edgef, edgei, node, sflt[s, P_CPUCT], sflt[s, P_FPU],
                                sflt[s, P_FORCED_K], plen == 0)
        play(cells, hist, sint, s, edgei[nodei[node, N_FIRST] + index, E_MOVE], width, height, n_in_row, exact,
             renju)
        path[s, plen, 0] = node
        path[s, plen, 1] = index
        plen += 1
        node = _child(nodef, nodei, edgei, pool, node, index)


@njit
def step(ids, nodef, nodei, edgef, edgei, pool, cells, hist, sint, sflt, path, leafmoves, queue,
         priors, values, out, first_row, width, height, n_in_row, exact, renju, windows, ends):
    """One lockstep step for the searches ``ids``: back up each pending leaf with its row of
    ``priors``/``values``, then run playouts until a leaf needs the net (its planes go to the
    next row of ``out``), the move's budget is spent (``READY``) or a Gumbel search needs its
    next root children (``NEED_QUEUE``). Returns the number of rows written from ``first_row``."""
    size = width * height
    mark = np.zeros(size, np.int64)
    mine = np.empty(size, np.int64)
    theirs = np.empty(size, np.int64)
    scratch = np.empty(size, np.float64)
    moves = np.empty(size, np.int64)
    row_out = first_row
    for i in range(ids.shape[0]):
        s = ids[i]
        kind = sint[s, S_KIND]
        if sint[s, S_STATE] == PENDING:
            leaf = sint[s, S_LEAF]
            value = np.float64(values[sint[s, S_ROW]])
            if nodei[leaf, N_FIRST] < 0:
                nmoves = sint[s, S_LEAF_NMOVES]
                if nmoves == ALL_LEGAL:
                    nmoves = 0
                    black = renju and sint[s, S_CUR] == 1
                    for c in range(size):
                        if cells[s, c] == 0 and not (black and is_forbidden(cells, s, c, width, height)):
                            moves[nmoves] = c
                            nmoves += 1
                else:
                    for k in range(nmoves):
                        moves[k] = leafmoves[s, k]
                _expand(nodef, nodei, edgef, edgei, pool, leaf, moves, nmoves, priors, sint[s, S_ROW], value,
                        scratch)
            root_eval = sint[s, S_PLEN] == 0 and kind == GUMBEL
            _backup(nodef, nodei, edgef, edgei, cells, hist, sint, sflt, path, s, value, False, 0)
            if not root_eval:
                sint[s, S_DONE] += 1
            sint[s, S_PLAYOUTS] += 1
            sint[s, S_STATE] = RUN
        if sint[s, S_STATE] != RUN:
            continue
        while True:
            if pool[NEXT_NODE] >= nodef.shape[0]:
                break  # the pool is full: the caller makes room and calls again (the search stays RUN)
            root = sint[s, S_ROOT]
            root_choice = -1
            if kind == GUMBEL and nodei[root, N_FIRST] < 0:
                pass  # the root's own evaluation comes first
            elif sint[s, S_DONE] >= sint[s, S_BUDGET]:
                sint[s, S_STATE] = READY
                break
            elif kind == GUMBEL:
                if sint[s, S_QPOS] >= sint[s, S_QLEN]:
                    sint[s, S_STATE] = NEED_QUEUE
                    break
                root_choice = queue[s, sint[s, S_QPOS]]
                sint[s, S_QPOS] += 1
            needs_eval, value, plies = _select_leaf(
                nodef, nodei, edgef, edgei, pool, cells, hist, sint, sflt, path, leafmoves, s, root_choice,
                width, height, n_in_row, exact, renju, windows, ends, mark, mine, theirs, scratch)
            if needs_eval:
                write_planes(cells, hist, sint, s, out, row_out)
                sint[s, S_ROW] = row_out
                row_out += 1
                sint[s, S_STATE] = PENDING
                break
            _backup(nodef, nodei, edgef, edgei, cells, hist, sint, sflt, path, s, value, True, plies)
            sint[s, S_DONE] += 1
            sint[s, S_PLAYOUTS] += 1
    return row_out - first_row


@njit
def compact(roots, nodef, nodei, edgef, edgei, new_nodef, new_nodei, new_edgef, new_edgei, node_map):
    """Copies the trees under ``roots`` (-1: none) into the new pools, children after their
    parents; ``node_map`` (old -> new, filled with -1 by the caller) says where each went.
    Returns ``(nodes, edges)`` used in the new pools."""
    next_node = 0
    next_edge = 0
    stack = np.empty(nodef.shape[0], np.int64)
    for r in range(roots.shape[0]):
        root = roots[r]
        if root < 0 or node_map[root] >= 0:
            continue
        node_map[root] = next_node
        next_node += 1
        top = 0
        stack[top] = root
        top += 1
        while top > 0:
            top -= 1
            old = stack[top]
            new = node_map[old]
            for k in range(NODE_FLOATS):
                new_nodef[new, k] = nodef[old, k]
            for k in range(NODE_INTS):
                new_nodei[new, k] = nodei[old, k]
            nchild = nodei[old, N_NCHILD]
            first = nodei[old, N_FIRST]
            if first < 0:
                continue
            new_nodei[new, N_FIRST] = next_edge
            for a in range(nchild):
                e = first + a
                ne = next_edge + a
                for k in range(EDGE_FLOATS):
                    new_edgef[ne, k] = edgef[e, k]
                for k in range(EDGE_INTS):
                    new_edgei[ne, k] = edgei[e, k]
                child = edgei[e, E_CHILD]
                if child >= 0:
                    node_map[child] = next_node
                    new_edgei[ne, E_CHILD] = next_node
                    next_node += 1
                    stack[top] = child
                    top += 1
            next_edge += nchild
    return next_node, next_edge


@njit
def child_of(nodei, edgei, node, move):
    """The child node of ``node`` reached by ``move`` if it was created, else -1."""
    first = nodei[node, N_FIRST]
    if first < 0:
        return -1
    for a in range(nodei[node, N_NCHILD]):
        if edgei[first + a, E_MOVE] == move:
            return edgei[first + a, E_CHILD]
    return -1


# ---------------------------------------------------------------- renju

RENJU_REACH = 5  # cells looked at on each side of a move (``rules``)
_FIVE_LINE, _OVER_LINE = -1, -2
_DR = np.array([0, 1, 1, 1], np.int64)
_DC = np.array([1, 0, 1, -1], np.int64)


@njit
def _completions(line, found):
    """``rules._completions``: the empty cells of the 11-cell ``line`` where a black stone makes
    exactly five through the centre; returns how many (into ``found``)."""
    count = 0
    for cell in range(RENJU_REACH - 4, RENJU_REACH + 5):
        if line[cell] != 0:
            continue
        low = cell
        high = cell
        while low > 0 and line[low - 1] == 1:
            low -= 1
        while high < 10 and line[high + 1] == 1:
            high += 1
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
            stone = cells[s, r * width + c]
            line[k] = 1 if stone == 1 else (2 if stone == 2 else 0)
        else:
            line[k] = 2
    low = RENJU_REACH
    high = RENJU_REACH
    while low > 0 and line[low - 1] == 1:
        low -= 1
    while high < 10 and line[high + 1] == 1:
        high += 1
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
