"""The search protocol: what a player asks of a search backend, and what the lockstep core asks of a player.

A *backend* holds one game's search tree and runs playouts in it. Two implement this protocol:
``tree_search.TreeSearch`` over the Python reference trees (``mcts.MCTS``, ``gumbel.GumbelTree``)
and ``core.single.CoreSearch`` on the compiled core. ``backend.open_search`` picks one for a board,
a rule and an evaluator, and says why when it falls back to the Python trees.

A backend, for the tree it was made for (its options: c_puct, fpu, the solver, the threat searches):

* ``start_move(board, evaluator)``: stands on ``board`` (keeping the tree if it stands on this
  position), its leaves to be evaluated by ``evaluator``;
* ``run(stop)``: PUCT playouts one at a time until ``stop(playouts_done)``; returns the playouts run;
* ``expand_root()``: evaluates the root if it is not expanded (Gumbel's first net call);
* ``simulate(children)``: one round of simulations, one into each of the root children
  ``children`` (indices into the root's moves, all different), their leaves evaluated in one
  call: sequential halving asks for its rounds this way and never reads a backend's arrays;
* ``root(children=True)``: a copy of the root as a ``tree.TreeNode`` (``moves``, ``child_N``
  visits, ``child_Q`` values, ``child_P`` priors, ``proven``), which the reference code reads to
  decide the move; ``root_state()``: its ``(expanded, proven, N)`` without the copy;
* ``advance(move)``: keeps the subtree under ``move`` (tree reuse); ``reset()``: drops the tree.

A tree player (``mcts_player.MCTSPlayer``, ``gumbel.GumbelPlayer``) searches alone through a
backend. In lockstep (``lockstep.Lockstep``) the core (``core.games.CoreGames``) runs many
players' searches at once and asks each player, by these public names only:

* ``root_search``: ``"puct"`` or ``"gumbel"``; ``search_tree``: its reference tree, for the
  options; ``evaluator``; ``keeps_tree``: whether the tree is kept after a move;
* ``budget()``: the move's playouts (drawing full or fast on its first call), ``forced_k`` of the move;
* ``prepare_root()``: called before the root's threat searches, which may take their budgets from
  the move's full or fast search (``tree_threats.set_root_vct``);
* ``take_root(root, done)``: the search is done, ``root`` is a copy of its root and ``done`` the
  playouts run; ``choose`` follows;
* ``next_phase_on(root, done)``: Gumbel only: the root children of sequential halving's next phase
  (one entry a simulation) and the move's budget, from the root's statistics as they stand.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

from gomoku.game.board import Board
from gomoku.search.tree import TreeNode


class SearchBackend(Protocol):
    """One game's search (see the module docstring)."""

    def start_move(self, board: Board, evaluator) -> None: ...

    def run(self, stop: Callable[[int], bool]) -> int: ...

    def expand_root(self) -> None: ...

    def simulate(self, children: Sequence[int]) -> int: ...

    def root(self, children: bool = True) -> TreeNode: ...

    def root_state(self) -> tuple[bool, int, int]: ...

    def advance(self, move: int) -> None: ...

    def reset(self) -> None: ...
