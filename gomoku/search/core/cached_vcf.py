"""The core's VCF behind the quick test and the player's cache of results, at new leaves and for the root.

At a new leaf (``leaf_vcf``, compiled) the core asks what ``tree_threats.ThreatSolver.vcf`` answers
there: the player to move's VCF within ``LEAF_VCF_NODES`` nodes, and the moves to the end of
the game along it, through the same quick test and the same per-tree cache of results. The
cache is the player's, shared with the root's searches (once a move): ``VcfCache`` stands in
for the ``ThreatSolver``'s dict, so that a player moving between the core and the reference
trees keeps one table, filled in the same order and cleared at the same size. It keys a
position by a 64-bit Zobrist hash of its stones and the attacker, and keeps a line's first
move and length (what the searches read back), not the whole line.

The root's searches (``root_threats``) build on these and read the same cache.
"""

from __future__ import annotations

import numpy as np

from gomoku.search.core.jit import Dict, List, njit, types
from gomoku.search.core.vcf import (CACHE_SIZE, LEAF_VCF_DEPTH, LEAF_VCF_NODES, is_five_cell, position_hash, put,
                                    search)


@njit
def store(cache, key, found, plies, first, budget):
    if len(cache) >= CACHE_SIZE:
        cache.clear()
    cache[key] = (found, plies, first, budget)


@njit
def leaf_vcf(cells, s, a, cache, n, exact, renju, width, height, windows, ends, through, beyond, zobrist, ws):
    """``ThreatSolver.vcf`` of player ``a`` at a leaf: the moves to the end along its VCF, or 0."""
    return cached_vcf(cells, s, a, LEAF_VCF_NODES, cache, n, exact, renju, width, height, windows, ends, through,
                      beyond, zobrist, ws)[0]


@njit
def cached_vcf(cells, s, a, budget, cache, n, exact, renju, width, height, windows, ends, through, beyond, zobrist,
               ws):
    """``ThreatSolver._vcf``: player ``a``'s VCF within ``budget`` nodes through the quick test and
    the cache: ``(plies, first move)`` along it, or ``(0, -1)``."""
    cnt, against, line = ws[0], ws[1], ws[12]
    d = 3 - a
    if n < 2:
        return 0, -1
    open_line = False
    for w in range(windows.shape[0]):
        ca = 0
        cd = 0
        for j in range(n):
            v = cells[s, windows[w, j]]
            if v == a:
                ca += 1
            elif v == d:
                cd += 1
        if ca >= n - 2 and cd == 0:
            open_line = True
            break
    if not open_line:
        return 0, -1  # no four to make, no five to complete: no VCF
    size = width * height
    key = position_hash(cells, s, zobrist) ^ zobrist[size, a]
    if key in cache:
        found, plies, first, within = cache[key]
        if found or within >= budget:
            return (plies, first) if found else (0, -1)
    length = search(cells, s, a, LEAF_VCF_DEPTH, 0, budget, n, exact, renju, width, height, windows, ends, through,
                    beyond, zobrist, ws)[0]
    if length == 0:
        store(cache, key, 0, 0, -1, budget)
        return 0, -1
    plies = line_plies(cells, s, a, line, length, n, exact, windows, through, beyond, cnt, against)
    store(cache, key, 1, plies, line[0], 0)
    # every attacker-to-move position along the line is won, with the rest of the line
    h = key
    i = 0
    while i < length - 1:
        cells[s, line[i]] = a
        cells[s, line[i + 1]] = d
        h ^= zobrist[line[i], a] ^ zobrist[line[i + 1], d]
        store(cache, h, 1, plies - i - 2, line[i + 2], 0)
        i += 2
    i -= 2
    while i >= 0:
        cells[s, line[i]] = 0
        cells[s, line[i + 1]] = 0
        i -= 2
    return plies, line[0]


@njit
def line_plies(cells, s, a, line, length, n, exact, windows, through, beyond, cnt, against):
    """``tree_threats.vcf_plies``: the moves to the end along a VCF line of ``a``: its length, plus a
    block and the five when its last move makes two five cells."""
    for i in range(length - 1):
        put(cells, s, line[i], a if i % 2 == 0 else 3 - a, 1, exact, through, beyond, cnt, against)
    five = is_five_cell(cells, s, a, line[length - 1], windows, n, through, cnt, against)
    for i in range(length - 2, -1, -1):
        put(cells, s, line[i], a if i % 2 == 0 else 3 - a, -1, exact, through, beyond, cnt, against)
    return length if five else length + 2


_ENTRY = types.UniTuple(types.int64, 4) if types is not None else None


@njit
def new_cache():
    """An empty VCF cache table: a numba typed dict from a key to ``(found, plies, first move, budget)``."""
    return Dict.empty(key_type=types.int64, value_type=_ENTRY)


@njit
def _cache_get(cache, key):
    if key in cache:
        return cache[key]
    return (-1, 0, -1, 0)


@njit
def _cache_set(cache, key, found, plies, first, budget):
    cache[key] = (found, plies, first, budget)


@njit
def _cache_len(cache):
    return len(cache)


@njit
def _cache_clear(cache):
    cache.clear()


@njit
def cache_list(first, count):
    """A typed list of ``count`` references to the cache table ``first``."""
    out = List()
    for _ in range(count):
        out.append(first)
    return out


@njit
def cache_list_extend(caches, first, count):
    for _ in range(count):
        caches.append(first)


@njit
def cache_list_set(caches, index, cache):
    caches[index] = cache


class VcfCache:
    """``ThreatSolver.cache`` over the core's table: keys ``(stones, attacker)``, values
    ``(found, budget)`` with ``found`` None or ``(line, plies)`` (``line`` its first move only)."""

    def __init__(self, size: int, zobrist: np.ndarray):
        self.table = new_cache()
        self.zobrist = zobrist
        self.size = size

    def _key(self, key) -> int:
        stones, attacker = key
        cells = np.frombuffer(stones, dtype=np.int8).astype(np.int64)
        where = np.flatnonzero(cells)
        h = np.bitwise_xor.reduce(self.zobrist[where, cells[where]]) if len(where) else np.int64(0)
        return int(np.int64(h) ^ self.zobrist[self.size, attacker])

    def get(self, key):
        found, plies, first, budget = _cache_get(self.table, self._key(key))
        if found < 0:
            return None
        return (([int(first)], int(plies)) if found else None), int(budget)

    def __setitem__(self, key, value) -> None:
        found, budget = value
        if found:
            _cache_set(self.table, self._key(key), 1, int(found[1]), int(found[0][0]), int(budget))
        else:
            _cache_set(self.table, self._key(key), 0, 0, -1, int(budget))

    def __len__(self) -> int:
        return _cache_len(self.table)

    def clear(self) -> None:
        _cache_clear(self.table)


def install_cache(solver, board, zobrist: np.ndarray) -> VcfCache:
    """Gives the player's ``ThreatSolver`` a ``VcfCache`` (once; the entries it holds move over, in order)."""
    solver.sync(board)  # the line board of this geometry first: a new one clears the cache
    cache = solver.cache
    if isinstance(cache, VcfCache) and cache.size == board.size:
        return cache
    table = VcfCache(board.size, zobrist)
    for key, value in cache.items():
        table[key] = value
    solver.cache = table
    return table
