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

from gomoku.search.core.boards import can_win_now, completing_cells, is_forbidden, play, undo, write_planes
from gomoku.search.core.jit import njit
from gomoku.search.core.layout import (ALL_LEGAL, EDGE_FLOATS, EDGE_INTS, E_CHILD, E_LOST, E_MOVE, E_N, E_P, E_Q,
                                        GUMBEL, NEED_QUEUE, NEXT_EDGE, NEXT_NODE, NODE_FLOATS, NODE_INTS, NO_WINNER,
                                        N_FIRST, N_GREEDY, N_NCHILD, N_NLOST, N_PLIES, N_PROVEN, N_VALUE,
                                        N_VISITED_P, N_VISITS, N_WIN, N_WSUM, PENDING, P_CPUCT, P_C_SCALE,
                                        P_C_VISIT, P_FORCED_K, P_FPU, P_SOLVE, P_WIN_CHECK, READY, RUN, S_BUDGET,
                                        S_CUR, S_DONE, S_KIND, S_LEAF, S_LEAF_NMOVES, S_PLAYOUTS, S_PLEN, S_QLEN,
                                        S_QPOS, S_ROOT, S_ROW, S_STATE, S_WINNER)
from gomoku.search.core.sums import pairwise_sum


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
