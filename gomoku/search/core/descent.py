"""The core's descent: one lockstep step of many searches, each to its next leaf, in one call.

``step`` backs up each search's pending leaf with the net's output, then runs its playouts
until a leaf needs the net, its planes written into the net's input: ``select_leaf`` follows
``MCTS.select_leaf`` (the win check, the in-tree solver, and with the threat searches on the
VCF at new leaves and the root's moves and hint that ``root_threats.analyse_root`` left), the tree
kernels (``kernels``) do the rest. Input version 2's threat planes come from ``planes``.
"""

from __future__ import annotations

import numpy as np

from gomoku.search.core.boards import (can_win_now, completing_cells, drop_forbidden, is_forbidden, play,
                                       write_planes)
from gomoku.search.core.cached_vcf import leaf_vcf
from gomoku.search.core.jit import njit
from gomoku.search.core.kernels import backup, child_node, expand, favour, gumbel_index, puct_index
from gomoku.search.core.layout import (ALL_LEGAL, E_MOVE, GUMBEL, NEXT_NODE, NO_WINNER, N_FIRST, N_PLIES, N_PROVEN,
                                       N_VISITS, NEED_QUEUE, PENDING, P_CPUCT, P_C_SCALE, P_C_VISIT, P_FORCED_K,
                                       P_FPU, P_SOLVE, P_THREATS, P_WIN_CHECK, READY, RUN, S_BUDGET, S_CUR, S_DONE,
                                       S_HINT, S_INPUTS, S_KIND, S_LEAF, S_LEAF_NMOVES, S_PLAYOUTS, S_PLEN, S_QLEN,
                                       S_QPOS, S_ROOT, S_ROOT_NMOVES, S_ROW, S_STATE, S_WINNER)
from gomoku.search.core.planes import write_threat_planes
from gomoku.search.core.vcf import workspace


@njit
def select_leaf(nodef, nodei, edgef, edgei, pool, cells, hist, sint, sflt, path, leafmoves, s, root_choice,
                width, height, n_in_row, exact, renju, vcf_args, mark, mine, theirs, scratch, rootmoves, caches, ws):
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
                a, b = completing_cells(cells, sint, s, vcf_args[0], vcf_args[1], n_in_row, exact, mark, mine,
                                        theirs)
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
                    b = drop_forbidden(cells, s, theirs, b, width, height)
                    if b == 0:
                        # Black may not block on a forbidden point: lost (the root plays any legal move)
                        if plen > 0:
                            return False, -1.0, 2
                        return True, 0.0, 0
                if sflt[s, P_THREATS] > 0.0:
                    if plen > 0:
                        plies = leaf_vcf(cells, s, sint[s, S_CUR], caches[s], n_in_row, exact, renju, width, height,
                                         vcf_args[0], vcf_args[1], vcf_args[2], vcf_args[3], vcf_args[4], ws)
                        if plies > 0:
                            return False, 1.0, plies
                    elif b == 0 and sint[s, S_ROOT_NMOVES] >= 0:
                        for k in range(sint[s, S_ROOT_NMOVES]):
                            leafmoves[s, k] = rootmoves[s, k]
                        sint[s, S_LEAF_NMOVES] = sint[s, S_ROOT_NMOVES]
                        return True, 0.0, 0
                if b > 0:
                    for k in range(b):
                        leafmoves[s, k] = theirs[k]
                    sint[s, S_LEAF_NMOVES] = b
                return True, 0.0, 0
            if sflt[s, P_WIN_CHECK] > 0.0 and plen > 0 and (nodef[node, N_VISITS] > 0.0 or can_win_now(
                    cells, sint, s, vcf_args[0], vcf_args[1], n_in_row, exact)):
                return False, 1.0, 1
            return True, 0.0, 0
        if plen == 0 and root_choice >= 0:
            index = root_choice
        elif kind == GUMBEL:
            index = gumbel_index(nodef, nodei, edgef, node, sflt[s, P_C_VISIT], sflt[s, P_C_SCALE], scratch)
        else:
            index = puct_index(nodef, nodei, edgef, edgei, node, sflt[s, P_CPUCT], sflt[s, P_FPU],
                               sflt[s, P_FORCED_K], plen == 0)
        play(cells, hist, sint, s, edgei[nodei[node, N_FIRST] + index, E_MOVE], width, height, n_in_row, exact,
             renju)
        path[s, plen, 0] = node
        path[s, plen, 1] = index
        plen += 1
        node = child_node(nodef, nodei, edgei, pool, node, index)


@njit
def step(ids, nodef, nodei, edgef, edgei, pool, cells, hist, sint, sflt, path, leafmoves, queue,
         priors, values, out, first_row, width, height, n_in_row, exact, renju, vcf_args, tables, rootmoves, caches):
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
    ws = workspace(size, vcf_args[0].shape[0])
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
                expand(nodef, nodei, edgef, edgei, pool, leaf, moves, nmoves, priors, sint[s, S_ROW], value,
                       scratch)
                if sint[s, S_PLEN] == 0 and sint[s, S_HINT] >= 0:
                    favour(nodei, edgef, edgei, leaf, sint[s, S_HINT])
            root_eval = sint[s, S_PLEN] == 0 and kind == GUMBEL
            backup(nodef, nodei, edgef, edgei, cells, hist, sint, sflt, path, s, value, False, 0)
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
            needs_eval, value, plies = select_leaf(
                nodef, nodei, edgef, edgei, pool, cells, hist, sint, sflt, path, leafmoves, s, root_choice,
                width, height, n_in_row, exact, renju, vcf_args, mark, mine, theirs, scratch, rootmoves, caches, ws)
            if needs_eval:
                write_planes(cells, hist, sint, s, out, row_out)
                if sint[s, S_INPUTS] == 2:
                    write_threat_planes(cells, sint[s, S_CUR], s, out, row_out, n_in_row, exact, renju, width,
                                        height, tables, vcf_args, ws)
                sint[s, S_ROW] = row_out
                row_out += 1
                sint[s, S_STATE] = PENDING
                break
            backup(nodef, nodei, edgef, edgei, cells, hist, sint, sflt, path, s, value, True, plies)
            sint[s, S_DONE] += 1
            sint[s, S_PLAYOUTS] += 1
    return row_out - first_row
