"""The compiled core's tree kernels: nodes and edges of many search trees in flat arrays.

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

from gomoku.search.core.boards import undo
from gomoku.search.core.jit import njit
from gomoku.search.core.layout import (EDGE_FLOATS, EDGE_INTS, E_CHILD, E_LOST, E_MOVE, E_N, E_P, E_Q, NEXT_EDGE,
                                       NEXT_NODE, NODE_FLOATS, NODE_INTS, N_FIRST, N_GREEDY, N_NCHILD, N_NLOST,
                                       N_PLIES, N_PROVEN, N_VALUE, N_VISITED_P, N_VISITS, N_WIN, N_WSUM, P_SOLVE,
                                       S_LEAF, S_PLEN)
from gomoku.search.core.sums import pairwise_sum
from gomoku.search.tree import HINT_PRIOR


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
def child_node(nodef, nodei, edgei, pool, node, index):
    e = nodei[node, N_FIRST] + index
    child = edgei[e, E_CHILD]
    if child < 0:
        child = new_node(nodef, nodei, pool)
        edgei[e, E_CHILD] = child
    return child


@njit
def mark_lost(nodei, edgei, node, index):
    e = nodei[node, N_FIRST] + index
    if edgei[e, E_LOST] == 0:
        edgei[e, E_LOST] = 1
        nodei[node, N_NLOST] += 1


@njit
def puct_index(nodef, nodei, edgef, edgei, node, c_puct, fpu, forced_k, at_root):
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
def gumbel_index(nodef, nodei, edgef, node, c_visit, c_scale, scratch):
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
def expand(nodef, nodei, edgef, edgei, pool, node, moves, nmoves, priors, row, value, scratch):
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
def favour(nodei, edgef, edgei, node, move):
    """``tree.favour``: raises the prior of the child for ``move`` to at least ``HINT_PRIOR``,
    scaling the others to keep the sum 1."""
    first = nodei[node, N_FIRST]
    nchild = nodei[node, N_NCHILD]
    index = -1
    for a in range(nchild):
        if edgei[first + a, E_MOVE] == move:
            index = a
            break
    if index < 0 or nchild < 2:
        return
    p = edgef[first + index, E_P]
    if p >= HINT_PRIOR:
        return
    rest = 1.0 - p
    factor = (1.0 - HINT_PRIOR) / rest if rest > 0 else 0.0
    for a in range(nchild):
        edgef[first + a, E_P] *= factor
    edgef[first + index, E_P] = HINT_PRIOR


@njit
def prove(nodef, nodei, edgei, path, s, plen, leaf, result, plies):
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
            mark_lost(nodei, edgei, parent, index)
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
def backup(nodef, nodei, edgef, edgei, cells, hist, sint, sflt, path, s, value, known, plies):
    """``MCTS.backup`` after the leaf was expanded (or not): proofs, visits, values; the board restored."""
    leaf = sint[s, S_LEAF]
    plen = sint[s, S_PLEN]
    if known:
        if sflt[s, P_SOLVE] > 0.0:
            if value != 0.0 and plen > 0:
                prove(nodef, nodei, edgei, path, s, plen, leaf, int(value), plies)
        elif value == 1.0 and plen > 0:
            mark_lost(nodei, edgei, path[s, plen - 1, 0], path[s, plen - 1, 1])
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
