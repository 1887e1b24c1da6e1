"""The compiled search core: many games' trees and boards in arrays, one numba call a step.

``games.CoreGames`` plays the games of a ``lockstep.Lockstep`` whose players it supports
(``games.supported``); ``single.CoreSearch`` runs one game's search of play time (the
engine's timed search, ``MCTSPlayer.get_action``) one playout at a time; ``trees.CoreTrees``
holds the arrays (their columns: ``layout``);
``descent`` is the compiled step (descents, leaves, backups), ``kernels`` the tree functions,
``boards`` the rules, ``vcf`` the VCF search, ``cached_vcf`` that search behind the quick test
and the player's cache of results (at new leaves, and for the root), ``root_threats`` the root's
threat searches (compiled, driven once a move from Python), ``planes`` input version 2's threat
planes, ``sums`` NumPy's summation order, and ``cache`` numba's cache of the kernels and the lock
that lets one process of the machine compile them. The Python search (``mcts``, ``gumbel``)
stays the reference: a seeded game is the same move for move on both (tests/test_core.py,
tests/test_core_threats.py).

``GOMOKU_CORE=off`` in the environment turns the core off (every game and every search of
play time on the reference trees), as does a missing numba.
"""

from __future__ import annotations

import os

from gomoku.search.core.jit import available


def core_enabled() -> bool:
    """Whether the searches use the compiled core: numba is there and ``GOMOKU_CORE`` is not ``off``."""
    return available and os.environ.get("GOMOKU_CORE", "on").strip().lower() not in ("off", "0", "no")
