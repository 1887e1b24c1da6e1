"""``CoreTrees``: the arrays of many searches over one board geometry, and their Python handle.

A *search* is one player's tree over one game (``kernels``): a self-play game with one
player on both sides has one search, a match between two tree players has two, each
with its own board that follows the game. The pools of nodes and edges are shared by
all searches; a tree dropped or cut down by tree reuse leaves its nodes behind until
``make_room`` compacts the pools (the live trees copied into fresh arrays), which it
does before a step that might not fit, growing them when the live trees fill half.

Python reads a tree only once a move: ``root_view`` copies the root's statistics into a
``TreeNode`` (``GumbelNode`` for Gumbel), with its created children as small nodes that
carry their proven results, so the reference code decides the move, the policy target
and the root value exactly as it does over its own tree.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from gomoku.game import rules
from gomoku.game.board import Board
from gomoku.game.line_board import line_weights
from gomoku.search.core import boards, descent, kernels
from gomoku.search.core import layout as k
from gomoku.search.core.cached_vcf import cache_list, cache_list_extend, cache_list_set, install_cache, new_cache
from gomoku.search.core.planes import plane_tables
from gomoku.search.core.vcf import geometry, workspace
from gomoku.search.core.vct import vct_workspace
from gomoku.search.tree import GumbelNode, TreeNode

UNLIMITED = 1 << 40
"""a Gumbel search's budget until its player has drawn it (after the root's evaluation)"""


class CoreTrees:
    """Searches over boards of one geometry and rule, in flat arrays.

    Args:
        width, height, n_in_row, rule: the boards'.
        searches: searches to make room for at first (more are added as needed).
        nodes, edges: the pools' first sizes (0: enough for a few playouts of each search); they grow as needed.
    """

    def __init__(self, width: int, height: int, n_in_row: int, rule: str, searches: int = 16,
                 nodes: int = 0, edges: int = 0):
        self.width, self.height, self.n_in_row, self.rule = width, height, n_in_row, rule
        self.size = size = width * height
        self.exact = np.array(rules.exact_players(rule), dtype=np.bool_)
        self.renju = rule == rules.RENJU
        # windows, the cells beyond their ends, the windows through and beyond each cell, Zobrist keys
        self.vcf_args = geometry(width, height, n_in_row)
        self.zobrist = self.vcf_args[4]
        self.tables = plane_tables(width, height, n_in_row)
        self.pool = np.zeros(2, np.int64)
        self._alloc_pools(nodes or searches * 64, edges or searches * 64 * size)
        self.cells = np.zeros((0, size), np.int8)
        self.hist = np.zeros((0, size), np.int64)
        self.sint = np.zeros((0, k.SEARCH_INTS), np.int64)
        self.sflt = np.zeros((0, k.SEARCH_FLOATS), np.float64)
        self.path = np.zeros((0, size + 1, 2), np.int64)
        self.leafmoves = np.zeros((0, size), np.int64)
        self.queue = np.zeros((0, 1), np.int64)
        self.rootmoves = np.zeros((0, size), np.int64)  # a new root's moves from the threat searches
        # the root's threat searches' scratch (``root_threats.analyse_root``)
        self.weights = line_weights(n_in_row)
        self.ws, self.vs = workspace(size, len(self.vcf_args[0])), vct_workspace(size)
        self.keep, self.line = np.zeros(size, np.bool_), np.zeros(2 * size + 2, np.int64)
        self.mark, self.mine, self.theirs = np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size, np.int64)
        self._no_cache = new_cache()
        self.caches = cache_list(self._no_cache, 0)  # each search's VCF cache (its player's, ``cached_vcf.VcfCache``)
        self._free: list[int] = []
        self._grow_searches(searches)

    # -- storage
    def _alloc_pools(self, nodes: int, edges: int) -> None:
        self.nodef = np.zeros((nodes, k.NODE_FLOATS), np.float64)
        self.nodei = np.zeros((nodes, k.NODE_INTS), np.int64)
        self.edgef = np.zeros((edges, k.EDGE_FLOATS), np.float64)
        self.edgei = np.zeros((edges, k.EDGE_INTS), np.int64)

    def _grow_searches(self, count: int) -> None:
        old = self.sint.shape[0]
        new = old + count

        def grown(array, fill=0):
            out = np.full((new,) + array.shape[1:], fill, array.dtype)
            out[:old] = array
            return out

        self.cells = grown(self.cells)
        self.hist = grown(self.hist)
        self.sint = grown(self.sint)
        self.sint[old:, k.S_ROOT] = -1
        self.sflt = grown(self.sflt)
        self.path = grown(self.path)
        self.leafmoves = grown(self.leafmoves)
        self.queue = grown(self.queue)
        self.rootmoves = grown(self.rootmoves)
        cache_list_extend(self.caches, self._no_cache, count)
        self._free.extend(range(new - 1, old - 1, -1))

    def _ensure_queue(self, length: int) -> None:
        if self.queue.shape[1] < length:
            wider = np.zeros((self.queue.shape[0], max(length, 2 * self.queue.shape[1])), np.int64)
            wider[:, :self.queue.shape[1]] = self.queue
            self.queue = wider

    def make_room(self, searches: int) -> None:
        """Before a step of ``searches`` searches: room for each to expand one node of the whole
        board and to create a few nodes more; compacts or grows the pools. (A step that runs out
        of nodes all the same leaves its searches running, for another call after more room.)"""
        need_nodes, need_edges = searches * (self.size + 2), searches * self.size
        if (self.pool[k.NEXT_NODE] + need_nodes <= len(self.nodef)
                and self.pool[k.NEXT_EDGE] + need_edges <= len(self.edgef)):
            return
        used_nodes, used_edges = self._compact()
        nodes = len(self.nodef)
        edges = len(self.edgef)
        if used_nodes + need_nodes > nodes // 2:
            nodes = 2 * (used_nodes + need_nodes)
        if used_edges + need_edges > edges // 2:
            edges = 2 * (used_edges + need_edges)
        if nodes != len(self.nodef) or edges != len(self.edgef):
            nodef, nodei, edgef, edgei = self.nodef, self.nodei, self.edgef, self.edgei
            self._alloc_pools(nodes, edges)
            self.nodef[:used_nodes], self.nodei[:used_nodes] = nodef[:used_nodes], nodei[:used_nodes]
            self.edgef[:used_edges], self.edgei[:used_edges] = edgef[:used_edges], edgei[:used_edges]

    def _compact(self) -> tuple[int, int]:
        """Copies the live trees to the front of fresh pools; remaps roots, paths and leaves."""
        node_map = np.full(len(self.nodef), -1, np.int64)
        new_nodef, new_nodei = np.empty_like(self.nodef), np.empty_like(self.nodei)
        new_edgef, new_edgei = np.empty_like(self.edgef), np.empty_like(self.edgei)
        roots = np.ascontiguousarray(self.sint[:, k.S_ROOT])
        nodes, edges = kernels.compact(roots, self.nodef, self.nodei, self.edgef, self.edgei,
                                 new_nodef, new_nodei, new_edgef, new_edgei, node_map)
        self.nodef, self.nodei, self.edgef, self.edgei = new_nodef, new_nodei, new_edgef, new_edgei
        live = roots >= 0
        self.sint[live, k.S_ROOT] = node_map[roots[live]]
        pending = self.sint[:, k.S_STATE] == k.PENDING
        self.sint[pending, k.S_LEAF] = node_map[self.sint[pending, k.S_LEAF]]
        for s in np.flatnonzero(pending):
            plen = self.sint[s, k.S_PLEN]
            self.path[s, :plen, 0] = node_map[self.path[s, :plen, 0]]
        self.pool[:] = (nodes, edges)
        return nodes, edges

    # -- searches
    def add(self, board: Board, gumbel: bool, c_puct: float = 5.0, fpu: Optional[float] = None,
            win_check: bool = False, solve: bool = False, c_visit: float = 0.0, c_scale: float = 0.0,
            threats: bool = False, inputs: int = 1, cache=None) -> int:
        """A new search on ``board`` (copied); returns its id. With ``threats``, ``cache`` is the
        player's VCF cache (``cached_vcf.VcfCache``); ``inputs`` is the net's input version."""
        if not self._free:
            self._grow_searches(max(16, self.sint.shape[0]))
        s = self._free.pop()
        self.sint[s] = 0
        self.sint[s, k.S_KIND] = k.GUMBEL if gumbel else k.PUCT
        self.sflt[s] = 0.0
        self.sflt[s, k.P_CPUCT] = c_puct
        self.sflt[s, k.P_FPU] = -1.0 if fpu is None else fpu
        self.sflt[s, k.P_WIN_CHECK] = float(win_check or solve or threats)
        self.sflt[s, k.P_SOLVE] = float(solve or threats)
        self.sflt[s, k.P_THREATS] = float(threats)
        self.sint[s, k.S_INPUTS] = inputs
        self.sint[s, k.S_ROOT_NMOVES] = self.sint[s, k.S_HINT] = -1
        cache_list_set(self.caches, s, cache.table if cache is not None else self._no_cache)
        self.sflt[s, k.P_C_VISIT] = c_visit
        self.sflt[s, k.P_C_SCALE] = c_scale
        self.cells[s] = board.cells
        self.hist[s, :len(board.history)] = board.history
        self.sint[s, k.S_HLEN] = len(board.history)
        self.sint[s, k.S_CUR] = board.current_player
        self.sint[s, k.S_WINNER] = k.NO_WINNER if board.winner is None else board.winner
        self.reset(s)
        return s

    def add_tree(self, board: Board, tree, inputs: int = 1) -> int:
        """``add`` with the options of the reference tree ``tree`` (an ``mcts.MCTS`` or ``gumbel.GumbelTree``):
        Gumbel's constants or PUCT's c_puct and first-play urgency, the solver, and the threat searches with
        the VCF cache of the tree's threat solver. The lockstep games and the searches of play time open
        their searches here, so that an option of the trees reaches both through this one method."""
        cache = install_cache(tree.threat_solver, board, self.zobrist) if tree.threats else None
        options = dict(win_check=tree.win_check, solve=tree.solve, threats=tree.threats, inputs=inputs, cache=cache)
        if tree.kind == "gumbel":
            return self.add(board, True, c_visit=tree.c_visit, c_scale=tree.c_scale, **options)
        return self.add(board, False, tree.c_puct, tree.fpu, **options)

    def drop_pending(self, s: int) -> None:
        """Forgets search ``s``'s leaf waiting for the net, taking its path's moves back."""
        if self.sint[s, k.S_STATE] == k.PENDING:
            for _ in range(self.sint[s, k.S_PLEN]):
                boards.undo(self.cells, self.hist, self.sint, s)
            self.sint[s, k.S_PLEN] = 0
            self.sint[s, k.S_STATE] = k.IDLE

    def remove(self, s: int) -> None:
        self.drop_pending(s)
        self.sint[s, k.S_ROOT] = -1
        self.sint[s, k.S_STATE] = k.IDLE
        self._free.append(s)

    def reset(self, s: int) -> None:
        """Drops search ``s``'s tree: a fresh root."""
        if self.pool[k.NEXT_NODE] >= len(self.nodef):
            self.make_room(1)
        self.sint[s, k.S_ROOT] = kernels.new_node(self.nodef, self.nodei, self.pool)
        self.sint[s, k.S_STATE] = k.IDLE

    def start_move(self, s: int, budget: int, forced_k: float = 0.0) -> None:
        """Search ``s`` searches its position next, ``budget`` playouts (Gumbel: until its player
        draws the budget, at its first queue)."""
        self.sint[s, k.S_DONE] = 0
        self.sint[s, k.S_BUDGET] = budget
        self.sint[s, k.S_QPOS] = self.sint[s, k.S_QLEN] = 0
        self.sflt[s, k.P_FORCED_K] = forced_k
        self.sint[s, k.S_STATE] = k.RUN

    def set_queue(self, s: int, children: list, budget: int) -> None:
        """A Gumbel search's next root children, one simulation each, and its budget."""
        self._ensure_queue(len(children))
        self.queue[s, :len(children)] = children
        self.sint[s, k.S_QPOS] = 0
        self.sint[s, k.S_QLEN] = len(children)
        self.sint[s, k.S_BUDGET] = budget
        self.sint[s, k.S_STATE] = k.RUN

    def open_lanes(self, s: int, children) -> np.ndarray:
        """Searches that stand on search ``s``'s root and board, one a root child of ``children`` (a
        Gumbel round: one simulation each, their subtrees disjoint); ``close_lanes`` frees them."""
        lanes = np.empty(len(children), np.int64)
        for i, child in enumerate(children):
            if not self._free:
                self._grow_searches(max(16, self.sint.shape[0]))
            t = lanes[i] = self._free.pop()
            self.sint[t], self.sflt[t] = self.sint[s], self.sflt[s]
            self.cells[t], self.hist[t] = self.cells[s], self.hist[s]
            cache_list_set(self.caches, t, self.caches[s])
            self.queue[t, 0] = child
            self.sint[t, [k.S_DONE, k.S_QPOS, k.S_PLAYOUTS]] = 0
            self.sint[t, [k.S_BUDGET, k.S_QLEN]] = 1
            self.sint[t, k.S_STATE] = k.RUN
        return lanes

    def close_lanes(self, lanes: np.ndarray) -> None:
        for t in lanes.tolist():
            self.drop_pending(t)
            self.sint[t, k.S_ROOT] = -1
            self.sint[t, k.S_STATE] = k.IDLE
            cache_list_set(self.caches, t, self._no_cache)
            self._free.append(t)

    def play(self, s: int, move: int, keep_subtree: bool) -> None:
        """Plays ``move`` on search ``s``'s board; keeps the subtree under it as the root
        (tree reuse) if asked and it exists, else starts a fresh tree."""
        root = self.sint[s, k.S_ROOT]
        child = kernels.child_of(self.nodei, self.edgei, root, move) if keep_subtree and root >= 0 else -1
        boards.play(self.cells, self.hist, self.sint, s, move, self.width, self.height, self.n_in_row, self.exact,
               self.renju)
        if child >= 0:
            self.sint[s, k.S_ROOT] = child
            self.sint[s, k.S_STATE] = k.IDLE
        else:
            self.reset(s)

    def state(self, s: int) -> int:
        return int(self.sint[s, k.S_STATE])

    def playouts(self, s: int) -> int:
        return int(self.sint[s, k.S_PLAYOUTS])

    def done(self, s: int) -> int:
        return int(self.sint[s, k.S_DONE])

    def step(self, ids: np.ndarray, priors: np.ndarray, values: np.ndarray, out: np.ndarray, first_row: int) -> int:
        """``descent.step`` over the searches ``ids``; returns the rows of ``out`` it wrote."""
        return int(descent.step(ids, self.nodef, self.nodei, self.edgef, self.edgei, self.pool, self.cells, self.hist,
                          self.sint, self.sflt, self.path, self.leafmoves, self.queue, priors, values, out,
                          first_row, self.width, self.height, self.n_in_row, self.exact, self.renju, self.vcf_args,
                          self.tables, self.rootmoves, self.caches))

    def cache_key(self, s: int) -> tuple:
        """``NetEvaluator``'s cache key of search ``s``'s position (its leaf, while it waits for the net)."""
        hlen = self.sint[s, k.S_HLEN]
        last = int(self.hist[s, hlen - 1]) if hlen else -1
        return self.cells[s].tobytes(), last, int(self.sint[s, k.S_CUR]), self.rule

    def root_view(self, s: int, children: bool = True) -> TreeNode:
        """A copy of search ``s``'s root as the reference tree's node, its created children
        standing for themselves with their proven results (without ``children``: the root's own
        statistics alone, all that sequential halving's next phase reads)."""
        gumbel = self.sint[s, k.S_KIND] == k.GUMBEL
        view = _node(self, self.sint[s, k.S_ROOT], gumbel)
        first, nchild = self.nodei[self.sint[s, k.S_ROOT], [k.N_FIRST, k.N_NCHILD]]
        if children and first >= 0:
            for index in range(nchild):
                child = self.edgei[first + index, k.E_CHILD]
                if child >= 0:
                    view.children[index] = _node(self, child, gumbel, statistics=False)
        return view


def _node(trees: CoreTrees, node: int, gumbel: bool, statistics: bool = True) -> TreeNode:
    view = GumbelNode() if gumbel else TreeNode()
    ints = trees.nodei[node]
    view.N = int(trees.nodef[node, k.N_VISITS])
    view.value = float(trees.nodef[node, k.N_VALUE])
    view.W = float(trees.nodef[node, k.N_WSUM])
    view.visited_P = float(trees.nodef[node, k.N_VISITED_P])
    view.proven, view.win, view.plies = int(ints[k.N_PROVEN]), int(ints[k.N_WIN]), int(ints[k.N_PLIES])
    if gumbel:
        view.v = view.value
    first, nchild = int(ints[k.N_FIRST]), int(ints[k.N_NCHILD])
    if statistics and first >= 0:
        edges = slice(first, first + nchild)
        view.moves = trees.edgei[edges, k.E_MOVE].copy()
        view.child_P = trees.edgef[edges, k.E_P].copy()
        view.child_N = trees.edgef[edges, k.E_N].copy()
        view.child_Q = trees.edgef[edges, k.E_Q].copy()
        if ints[k.N_NLOST]:
            view.lost = trees.edgei[edges, k.E_LOST].astype(bool)
    return view
