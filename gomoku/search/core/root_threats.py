"""The root's threat searches, compiled: ``tree_threats.ThreatSolver.root`` on a search's board.

In the reference's order (``gomoku.search.tree_threats``): the player's own VCF (through the quick
test and the tree's cache); else the opponent's VCF as if the player passed, and the moves
after which it no longer wins (a move after which the line still replays loses by force and is
cached as such; the others get a VCF search), of which those that also leave no VCT are kept
when there are any; else the player's own VCT, whose first move is
the hint; else the opponent's VCT, and the moves near its lines (and the player's fours) after
which the opponent has neither a VCF nor a VCT. The budgets are the reference's.

``analyse_root`` runs them for a search about to start its move, as the reference does on its
first descent: on a new root it leaves the moves to expand the root with (the own VCF's first
move, or the moves that defend) and the move to favour; on a root kept from the last move it
proves the own VCF or marks the moves that do not defend as lost.
"""

from __future__ import annotations

import numpy as np

from gomoku.search.core import kernels
from gomoku.search.core import layout as k
from gomoku.search.core.boards import completing_cells, is_forbidden
from gomoku.search.core.cached_vcf import store, cached_vcf, line_plies
from gomoku.search.core.jit import njit
from gomoku.search.core.planes import crowded
from gomoku.search.core.vcf import (MOST_DEPTH, sort_unique, five_count, four_list, is_five_cell, position_hash,
                                    put, search, window_counts)
from gomoku.search.core.vct import find_vct

ROOT_VCF_NODES = 2000  # tree_threats.ROOT_VCF_NODES
DEFENCE_VCF_NODES = 200  # tree_threats.DEFENCE_VCF_NODES
NONE, WIN, KEEP, HINT = 0, 1, 2, 3


@njit
def _four_fives(cells, s, a, move, n, width, height, renju, through, windows, cnt, against):
    """``four_moves(a).get(move)``: how many five cells the four move ``move`` makes, and the lowest."""
    if renju and a == 1 and is_forbidden(cells, s, move, width, height):
        return 0, -1
    found = np.empty(through.shape[1], np.int64)
    count = 0
    for t in range(through.shape[1]):
        w = through[move, t]
        if w < 0:
            break
        if against[a, w] == 0 and cnt[a, w] == n - 2:
            for j in range(n):
                c = windows[w, j]
                if c != move and cells[s, c] == 0:
                    found[count] = c
                    count += 1
    count = sort_unique(found, count)
    return count, (found[0] if count else -1)


@njit
def _unblockable(cells, s, a, move, five, width, height, renju):
    if not (renju and a == 2):
        return False
    cells[s, move] = a
    blocked = is_forbidden(cells, s, five, width, height)
    cells[s, move] = 0
    return blocked


@njit
def replays(cells, s, a, line, length, n, exact, renju, width, height, windows, through, beyond, cnt, against):
    """``tree_threats.replays``: whether the VCF ``line`` of ``a`` still wins on the board as it stands."""
    d = 3 - a
    ok = True
    played = 0
    for i in range(0, length, 2):
        move = line[i]
        if cells[s, move] != 0 or five_count(n, windows, cnt, against, d) > 0:
            ok = False
            break
        if i == length - 1:
            if is_five_cell(cells, s, a, move, windows, n, through, cnt, against):
                ok = True
            else:
                count, five = _four_fives(cells, s, a, move, n, width, height, renju, through, windows, cnt, against)
                ok = count >= 2 or (count == 1 and _unblockable(cells, s, a, move, five, width, height, renju))
            break
        reply = line[i + 1]
        count, five = _four_fives(cells, s, a, move, n, width, height, renju, through, windows, cnt, against)
        if count != 1 or five != reply or five_count(n, windows, cnt, against, a) > 0:
            ok = False
            break
        if _unblockable(cells, s, a, move, reply, width, height, renju):
            break
        put(cells, s, move, a, 1, exact, through, beyond, cnt, against)
        put(cells, s, reply, d, 1, exact, through, beyond, cnt, against)
        played += 1
    for p in range(played - 1, -1, -1):
        put(cells, s, line[2 * p + 1], d, -1, exact, through, beyond, cnt, against)
        put(cells, s, line[2 * p], a, -1, exact, through, beyond, cnt, against)
    return ok


@njit
def defences(cells, s, me, line, length, plies, vcf_nodes, vct_nodes, vct_depth, cache, n, exact, renju, width,
             height, windows, ends, through, beyond, zobrist, weights, ws, vs, keep):
    """``ThreatSolver._defences`` into ``keep``: returns whether any move defends."""
    cnt, against, pairs = ws[0], ws[1], ws[4]
    moves, fives, counts = vs[6], vs[7], vs[8]
    them = 3 - me
    size = width * height
    window_counts(cells, s, windows, ends, n, exact, cnt, against)
    tried = np.zeros(size, np.bool_)
    if vct_nodes and not length:
        for w in range(windows.shape[0]):
            if cnt[them, w] >= max(n - 3, 1) and cnt[me, w] == 0:
                for j in range(n):
                    tried[windows[w, j]] = True
        count = four_list(cells, s, me, n, width, height, renju, windows, cnt, against, pairs, moves, fives, counts)
        for m in range(count):
            tried[moves[m]] = True
    else:
        tried[:] = True
    defended = False
    for cell in range(size):
        keep[cell] = False
        if not tried[cell] or cells[s, cell] != 0:
            continue
        if renju and me == 1 and crowded(cells, s, cell, width, height) and is_forbidden(cells, s, cell, width,
                                                                                          height):
            continue
        put(cells, s, cell, me, 1, exact, through, beyond, cnt, against)
        if length and replays(cells, s, them, line, length, n, exact, renju, width, height, windows, through, beyond,
                              cnt, against):
            loses = True
            store(cache, position_hash(cells, s, zobrist) ^ zobrist[size, them], 1, plies, line[0], 0)
        else:
            loses = cached_vcf(cells, s, them, vcf_nodes, cache, n, exact, renju, width, height, windows, ends,
                               through, beyond, zobrist, ws)[0] > 0
            if not loses and vct_nodes and not length:
                loses = find_vct(cells, s, them, vct_nodes, vct_depth, n, exact, renju, width, height, windows, ends,
                                 through, beyond, zobrist, weights, ws, vs)[0] >= 0
        put(cells, s, cell, me, -1, exact, through, beyond, cnt, against)
        keep[cell] = not loses
        defended = defended or not loses
    if length and vct_nodes and defended:
        safe = np.zeros(size, np.bool_)
        any_safe = False
        for cell in range(size):
            if keep[cell]:
                put(cells, s, cell, me, 1, exact, through, beyond, cnt, against)
                safe[cell] = find_vct(cells, s, them, vct_nodes, vct_depth, n, exact, renju, width, height, windows,
                                      ends, through, beyond, zobrist, weights, ws, vs)[0] < 0
                put(cells, s, cell, me, -1, exact, through, beyond, cnt, against)
                any_safe = any_safe or safe[cell]
        if any_safe:
            keep[:] = safe
    return defended


@njit
def root(cells, s, me, vct_nodes, defence_vct_nodes, vct_depth, cache, n, exact, renju, width, height, windows, ends,
         through, beyond, zobrist, weights, ws, vs, keep, line):
    """``ThreatSolver.root`` for player ``me`` to move: ``(kind, move, plies)``, kind ``WIN`` (the
    own VCF's first move and its plies), ``KEEP`` (the moves that defend, in ``keep``), ``HINT``
    (the own VCT's first move) or ``NONE``."""
    them = 3 - me
    plies, first = cached_vcf(cells, s, me, ROOT_VCF_NODES, cache, n, exact, renju, width, height, windows, ends,
                              through, beyond, zobrist, ws)
    if plies > 0:
        return WIN, first, plies
    length = search(cells, s, them, MOST_DEPTH, 0, ROOT_VCF_NODES, n, exact, renju, width, height, windows, ends,
                    through, beyond, zobrist, ws)[0]
    if length:
        line[:length] = ws[12][:length]
        plies = line_plies(cells, s, them, line, length, n, exact, windows, through, beyond, ws[0], ws[1])
        if defences(cells, s, me, line, length, plies, ROOT_VCF_NODES, defence_vct_nodes, vct_depth, cache, n, exact,
                    renju, width, height, windows, ends, through, beyond, zobrist, weights, ws, vs, keep):
            return KEEP, -1, 0
        return NONE, -1, 0
    hint = find_vct(cells, s, me, vct_nodes, vct_depth, n, exact, renju, width, height, windows, ends, through,
                    beyond, zobrist, weights, ws, vs)[0]
    if hint >= 0:
        return HINT, hint, 0
    threat, used = find_vct(cells, s, them, vct_nodes, vct_depth, n, exact, renju, width, height, windows, ends,
                            through, beyond, zobrist, weights, ws, vs)
    if threat >= 0:
        budget = min(vct_nodes, max(defence_vct_nodes, 2 * used))
        if defences(cells, s, me, line, 0, 0, DEFENCE_VCF_NODES, budget, vct_depth, cache, n, exact, renju, width,
                    height, windows, ends, through, beyond, zobrist, weights, ws, vs, keep):
            return KEEP, -1, 0
    return NONE, -1, 0


def analyse_root(trees, s: int, solver) -> None:
    """The root's threat searches for search ``s`` before its move (see the module docstring),
    with the budgets of the player's ``ThreatSolver``."""
    sint = trees.sint
    sint[s, k.S_ROOT_NMOVES] = -1
    sint[s, k.S_HINT] = -1
    node = sint[s, k.S_ROOT]
    expanded = trees.nodei[node, k.N_FIRST] >= 0
    if expanded and trees.nodei[node, k.N_PROVEN]:
        return
    mine, theirs = completing_cells(trees.cells, trees.sint, s, trees.vcf_args[0], trees.vcf_args[1], trees.n_in_row,
                                    trees.exact, trees.mark, trees.mine, trees.theirs)
    if mine or theirs:
        return  # the in-tree solver's own rules answer these
    kind, move, plies = root(trees.cells, s, sint[s, k.S_CUR], solver.vct_nodes, solver.defence_vct_nodes,
                             solver.vct_depth, solver.cache.table, trees.n_in_row, trees.exact, trees.renju,
                             trees.width, trees.height, *trees.vcf_args, trees.weights, trees.ws, trees.vs,
                             trees.keep, trees.line)
    keep = trees.keep if kind == KEEP else None
    if not expanded:
        if kind == WIN:
            trees.rootmoves[s, 0] = move
            sint[s, k.S_ROOT_NMOVES] = 1
        elif keep is not None:
            moves = np.flatnonzero(keep)
            trees.rootmoves[s, :len(moves)] = moves
            sint[s, k.S_ROOT_NMOVES] = len(moves)
        elif kind == HINT:
            sint[s, k.S_HINT] = move
        return
    first, nchild = trees.nodei[node, k.N_FIRST], trees.nodei[node, k.N_NCHILD]
    moves = trees.edgei[first:first + nchild, k.E_MOVE]
    if kind == WIN:
        where = np.flatnonzero(moves == move)
        if len(where):
            trees.make_room(1)
            node = sint[s, k.S_ROOT]
            index = int(where[0])
            child = kernels.child_node(trees.nodef, trees.nodei, trees.edgei, trees.pool, node, index)
            path = np.array([[[node, index]]], np.int64)
            kernels.prove(trees.nodef, trees.nodei, trees.edgei, path, 0, 1, child, -1, plies - 1)
    elif keep is not None:
        bad = ~keep[moves]
        if bad.any() and not bad.all():
            for index in np.flatnonzero(bad):
                kernels.mark_lost(trees.nodei, trees.edgei, node, int(index))
