"""Gumbel root search with sequential halving (Danihelka et al., ICLR 2022, "Policy improvement
by planning with Gumbel").

Notation as in ``mcts``: a node's children have visits ``N(a)``, mean values
``Q(a)`` from the viewpoint of the player to move at the node, priors ``P(a)``;
the prior logits are ``l(a) = log P(a)`` (renormalised over the legal moves, so
``softmax(l) = P``). A node also keeps ``v``, the net's value of its own
position for the player to move there.

At the root, with ``n`` simulations:

* draw ``g(a) ~ Gumbel(0, 1)`` for each legal move and keep the
  ``m = min(n, gumbel_m, legal moves)`` moves with the largest ``g(a) + l(a)``;
* sequential halving: ``ceil(log2 m)`` phases; in a phase every remaining move
  gets ``max(1, floor(n / (ceil(log2 m) * remaining)))`` more simulations, one
  after the other, then the better half (rounded up, at least two) stays, by
  ``g(a) + l(a) + sigma(q(a))``. Budget left after the last phase goes on in
  phases over the last two moves; the search stops at exactly ``n``;
* the move played is the remaining one with the largest ``g + l + sigma(q)``:
  the Gumbel draw is the exploration, so there is no Dirichlet noise.

``sigma(q) = (c_visit + max_b N(b)) * c_scale * q``, with ``q`` the completed
value rescaled to [0, 1] by the minimum and maximum over the node's completed
values and its own ``v`` (as DeepMind's mctx does). The completed value of a
move is ``Q(a)`` once visited, else
``v_mix = (v + (sum N / sum_{N(b)>0} P(b)) * sum_{N(b)>0} P(b) Q(b)) / (1 + sum N)``.
The training target is ``pi' = softmax(l + sigma(completed q))`` over all legal
moves, not the visit counts. Below the root a simulation takes
``argmax_a (pi'(a) - N(a) / (1 + sum N))``, ``pi'`` computed at that node: a
deterministic selection that makes the visits track the improved policy.

Each move searches a fresh tree (no reuse): sequential halving plans its budget
from zero visits. The root's own evaluation is one net call more than the ``n``
simulations (counted in ``playouts_run``, not in the simulations).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from gomoku import interrupt
from gomoku.game.board import Board
from gomoku.search.backend import open_search
from gomoku.search.mcts import MCTS, Evaluator, SearchStopped
from gomoku.search.player_protocol import SearchResult
from gomoku.search.playout_cap import N_FAST, check_playout_cap
from gomoku.search.tree import GumbelNode, Leaf, TreeNode
from gomoku.search.tree_threats import VctBudgets, set_root_vct

GUMBEL_M = 16
"""at most this many root moves are sampled (paper: 16)"""
GUMBEL_C_VISIT = 50.0
"""c_visit of sigma (paper and mctx: 50)"""
GUMBEL_C_SCALE = 0.1
"""c_scale of sigma (paper: 1.0; DeepMind's mctx: 0.1)"""


def check_gumbel(gumbel_m: int, gumbel_c_visit: float, gumbel_c_scale: float) -> None:
    """Raises ValueError unless at least one move is sampled, ``c_visit >= 0`` and ``c_scale > 0``."""
    if gumbel_m < 1:
        raise ValueError(f"gumbel_m must be at least 1, got {gumbel_m}")
    if gumbel_c_visit < 0 or gumbel_c_scale <= 0:
        raise ValueError(f"gumbel_c_visit must not be negative and gumbel_c_scale must be positive, "
                         f"got {gumbel_c_visit} and {gumbel_c_scale}")


# The reductions the rule runs at every node it passes, called as ufuncs: the same sums and
# extremes as ``ndarray.sum``/``max``/``min``, without their Python wrappers.
_sum, _max, _min = np.add.reduce, np.maximum.reduce, np.minimum.reduce


def prior_logits(node: TreeNode) -> np.ndarray:
    """``log P`` of the node's children (finite even where the net's prior is exactly 0)."""
    if isinstance(node, GumbelNode):
        if node.logp is None:
            node.logp = np.log(np.maximum(node.child_P, 1e-30))
        return node.logp
    return np.log(np.maximum(node.child_P, 1e-30))


def completed_values(node: GumbelNode, total: Optional[float] = None) -> np.ndarray:
    """``Q(a)`` for visited children, ``v_mix`` for the others (``total``: ``sum N``, if at hand)."""
    visits = node.child_N
    visited = visits > 0
    if total is None:
        total = _sum(visits)
    priors = node.child_P[visited]
    mass = _sum(priors)
    if total > 0 and mass > 0:
        mean_q = priors @ node.child_Q[visited] / mass
        v_mix = (node.v + total * mean_q) / (1.0 + total)
    else:
        v_mix = node.v
    return np.where(visited, node.child_Q, v_mix)


def sigma(node: GumbelNode, c_visit: float, c_scale: float, total: Optional[float] = None) -> np.ndarray:
    """``sigma`` of each child's completed value, rescaled to [0, 1] over the node."""
    q = completed_values(node, total)
    low, high = min(_min(q), node.v), max(_max(q), node.v)
    q = (q - low) / max(high - low, 1e-8)
    return (c_visit + _max(node.child_N)) * c_scale * q


def improved_policy(node: GumbelNode, c_visit: float, c_scale: float, total: Optional[float] = None) -> np.ndarray:
    """``pi' = softmax(l + sigma(completed q))`` over the node's children."""
    logits = prior_logits(node) + sigma(node, c_visit, c_scale, total)
    logits -= _max(logits)
    weights = np.exp(logits)
    return weights / _sum(weights)


class GumbelTree(MCTS):
    """The search tree: the root child of each simulation is given; below it, the deterministic rule.

    Args:
        c_visit, c_scale: the constants of ``sigma``.
        win_check, solve, threats: see ``mcts.MCTS``; proven results steer the descent below
            the root only through their backed-up values (the deterministic rule has no
            notion of a proven child), while the root's moves are cut to the blocks, the
            own VCF or the defences as in ``MCTS``.
    """

    kind = "gumbel"

    def __init__(self, c_visit: float = GUMBEL_C_VISIT, c_scale: float = GUMBEL_C_SCALE, win_check: bool = False,
                 solve: bool = False, threats: bool = False):
        super().__init__(win_check=win_check, solve=solve, threats=threats)
        self.c_visit = float(c_visit)
        self.c_scale = float(c_scale)
        self.root_choice: Optional[int] = None  # the root child the next descent takes
        self.root = GumbelNode()

    def select_index(self, node: TreeNode) -> int:
        if node is self.root and self.root_choice is not None:
            return self.root_choice
        total = _sum(node.child_N)
        if total == 0 and isinstance(node, GumbelNode):
            # No child visited: sigma is 0 everywhere and the rule takes argmax pi' = softmax(l),
            # the same child each time until one has a visit.
            if node.first < 0:
                node.first = int(improved_policy(node, self.c_visit, self.c_scale, total).argmax())
            return node.first
        pi = improved_policy(node, self.c_visit, self.c_scale, total)
        return int((pi - node.child_N / (1.0 + total)).argmax())

    def backup(self, leaf: Leaf, board: Board, priors: Optional[np.ndarray], value: float) -> None:
        if priors is not None and not leaf.node.expanded:
            leaf.node.v = float(value)
        super().backup(leaf, board, priors, value)

    def advance(self, move: int) -> None:
        """Starts the next move from a fresh root: its sequential halving plans the whole
        budget of simulations over its own sampled moves, so the old subtree is not kept."""
        self.reset()

    def reset(self) -> None:
        self.root = GumbelNode()


class GumbelPlayer:
    """Self-play player with Gumbel root search and sequential halving (see the module docstring).

    It follows ``mcts_player.MCTSPlayer``'s protocol (``next_leaf`` / ``receive`` /
    ``choose`` / ``notify_move`` / ``reset``, ``get_action``), so the lockstep
    runner batches its leaves like any other player's; alone (``get_action``, the engine) it
    searches through a backend of the search protocol, a round of simulations a net call. ``choose`` returns the
    improved policy ``pi'`` as the training target.

    Playout cap randomisation works as for ``MCTSPlayer``: with ``p_full < 1`` a
    move gets ``n_fast`` simulations instead of ``n_playout`` with probability
    ``1 - p_full``, and is then not recorded.

    Args:
        evaluator: gives priors and values for leaf positions.
        n_playout: simulations per move (not counting the root's evaluation).
        gumbel_m: at most this many root moves are sampled (paper: 16).
        gumbel_c_visit, gumbel_c_scale: the constants ``c_visit`` and ``c_scale`` of ``sigma``
            (paper: 50 and 1; mctx: 50 and 0.1).
        p_full, n_fast: playout cap randomisation (``playout_cap``).
        win_check: a new node whose player to move can complete a line is a known win (see ``mcts.MCTS``).
        solve, threats: the in-tree solver and the threat searches (see ``mcts.MCTS`` and ``GumbelTree``).
        full_vct: with ``threats``, the root VCT searches' depth and budgets in full searches (fast
            searches keep the defaults); None or the defaults: ``VctBudgets()`` in every search.
        seed: seeds the Gumbel draws.
        name: shown in logs.
    """

    def __init__(self, evaluator: Evaluator, n_playout: int = 16, gumbel_m: int = GUMBEL_M,
                 gumbel_c_visit: float = GUMBEL_C_VISIT, gumbel_c_scale: float = GUMBEL_C_SCALE,
                 p_full: float = 1.0, n_fast: int = N_FAST, win_check: bool = False, solve: bool = False,
                 threats: bool = False, seed: Optional[int] = None, name: str = "Gumbel",
                 full_vct: Optional[VctBudgets] = None):
        check_playout_cap(n_playout, p_full, n_fast)
        check_gumbel(gumbel_m, gumbel_c_visit, gumbel_c_scale)
        self.evaluator = evaluator
        self.n_playout = int(n_playout)
        self.n_fast = int(n_fast)
        self.gumbel_m = int(gumbel_m)
        self.p_full = float(p_full)
        self.full_vct = None if full_vct == VctBudgets() else full_vct
        self.tree = GumbelTree(gumbel_c_visit, gumbel_c_scale, win_check, solve, threats)
        self.rng = np.random.default_rng(seed)
        self.name = name
        self.playouts_run = 0
        self.backend = None  # the search protocol's backend of ``get_action`` (``backend.open_search``)
        self._end_move()

    def _end_move(self) -> None:
        self.done = 0  # simulations done for the current move
        self._full: Optional[bool] = None
        self._scores: Optional[np.ndarray] = None  # g + l of each root child
        self._remaining: list[int] = []
        self._queue: list[int] = []  # root children still to simulate in this phase
        self._phases = 1

    def budget(self) -> int:
        if self._full is None:
            self._full = self.p_full >= 1.0 or bool(self.rng.random() < self.p_full)
            set_root_vct(self.tree.threat_solver, self.full_vct, self._full)
        return self.n_playout if self._full else self.n_fast

    def prepare_root(self) -> None:
        """Called before the root's threat searches: with ``full_vct`` their budgets depend on the
        move's full or fast search, so it is drawn now (without, it is drawn after the root's
        evaluation, after the Gumbel noise, as it always was)."""
        if self.full_vct is not None:
            self.budget()

    @property
    def progress(self) -> float:
        return self.done / self.budget()

    # -- sequential halving at the root
    def _score(self, indices) -> np.ndarray:
        root = self.tree.root
        return self._scores[indices] + sigma(root, self.tree.c_visit, self.tree.c_scale)[indices]

    def _start_halving(self) -> None:
        root = self.tree.root
        self._scores = self.rng.gumbel(size=len(root.moves)) + prior_logits(root)
        m = min(self.budget(), self.gumbel_m, len(root.moves))
        self._remaining = [int(i) for i in np.argsort(-self._scores, kind="stable")[:m]]
        self._phases = max(1, math.ceil(math.log2(m)))

    def _next_root_child(self) -> int:
        if not self._queue:
            self._queue = self.next_phase()
        return self._queue.pop(0)

    def next_phase(self) -> list[int]:
        """The root children of the next phase of sequential halving, one entry a simulation:
        the better half of the remaining moves stays (after the first phase), each ``per`` times."""
        if self.done > 0 and len(self._remaining) > 2:
            keep = max(2, (len(self._remaining) + 1) // 2)
            order = np.argsort(-self._score(self._remaining), kind="stable")
            self._remaining = [self._remaining[i] for i in order[:keep]]
        per = max(1, self.budget() // (self._phases * len(self._remaining)))
        return self._remaining * per

    # -- the two halves, for lockstep runners
    def next_leaf(self, board: Board) -> Optional[Leaf]:
        """The next leaf to evaluate (the root first, if not expanded), or None when done."""
        tree = self.tree
        if not tree.root.expanded:
            self.prepare_root()
            tree.root_choice = None
            return tree.select_leaf(board)
        if self._scores is None:
            self._start_halving()
        budget = self.budget()
        while self.done < budget:
            tree.root_choice = self._next_root_child()
            leaf = tree.select_leaf(board)
            if leaf.value is None:
                return leaf
            tree.backup(leaf, board, None, leaf.value)
            self.done += 1
            self.playouts_run += 1
        return None

    def receive(self, leaf: Leaf, board: Board, priors: np.ndarray, value: float) -> None:
        if leaf.path:
            self.done += 1
        self.tree.backup(leaf, board, priors, value)
        self.playouts_run += 1

    def choose(self, board: Board) -> SearchResult:
        """The best remaining move by ``g + l + sigma(q)``, and the target ``pi'``."""
        root = self.tree.root
        scores = self._score(self._remaining)
        move = int(root.moves[self._remaining[int(np.argmax(scores))]])
        pi = np.zeros(board.size)
        pi[root.moves] = improved_policy(root, self.tree.c_visit, self.tree.c_scale)
        result = SearchResult(move, pi, self.tree.root_value(), self._full is not False)
        self._end_move()
        return result

    def notify_move(self, move: int) -> None:
        self._end_move()
        self.tree.reset()
        if self.backend is not None:
            self.backend.advance(move)  # the board follows the game; the next move starts from a fresh root

    def reset(self) -> None:
        self._end_move()
        self.tree.reset()
        if self.backend is not None:
            self.backend.reset()

    # -- the search protocol's hooks for the lockstep core (``protocol``)
    root_search = "gumbel"
    keeps_tree = False
    forced_k = 0.0

    @property
    def search_tree(self) -> GumbelTree:
        return self.tree

    def live_root(self) -> GumbelNode:
        """The root of the search running now (or of the last one): a copy of the core's while the
        search runs there (the analysis view reads it between rounds), else the tree's own."""
        return self.tree.root if self.backend is None else self.backend.root()

    def take_root(self, root: GumbelNode, done: int) -> None:
        self.tree.root = root
        self.done = done

    def next_phase_on(self, root: GumbelNode, done: int) -> tuple[list[int], int]:
        """The next phase's root children from ``root``'s statistics (the first phase draws the
        Gumbel noise and the playout cap, as ``next_leaf`` does) and the move's budget."""
        self.take_root(root, done)
        if self._scores is None:
            self._start_halving()
        self._queue = []
        return self.next_phase(), self.budget()

    # -- the search alone, through a backend of the search protocol
    def begin(self, board: Board) -> None:
        """Starts a move's search of ``board`` on the backend ``backend.open_search`` picks, from a fresh root."""
        self.prepare_root()
        self.backend = open_search(self.tree, board, self.evaluator, self.backend)
        self.backend.reset()
        self.backend.start_move(board, self.evaluator)

    def search_round(self) -> int:
        """One round of the move begun with ``begin``, in one net call: the root's evaluation first,
        then simulations into different root children until the phase would visit a child again or
        ends (the next phase is planned from the round's results). Returns the simulations run
        (1 for the root's round), 0 once the budget is spent; the tree's root is then the backend's."""
        backend = self.backend
        if not backend.root_state()[0]:
            backend.expand_root()
            self.playouts_run += 1
            return 1
        budget = self.budget()
        children: list[int] = []
        while self.done + len(children) < budget:
            if not self._queue:
                if children:
                    break
                self.tree.root = backend.root(children=False)
                if self._scores is None:
                    self._start_halving()
                self._queue = self.next_phase()
            if self._queue[0] in children:
                break
            children.append(self._queue.pop(0))
        if not children:
            self.tree.root = backend.root()
            return 0
        backend.simulate(children)
        self.done += len(children)
        self.playouts_run += len(children)
        return len(children)

    def get_action(self, board: Board, return_probs: bool = False, stop=None):
        """Searches ``board`` alone, a round of ``search_round`` (up to ``gumbel_m`` leaves) per net call.

        Args:
            stop: asked between rounds; once it returns true the search ends.

        Raises:
            SearchStopped: ``stop`` ended the search before the budget was spent (the half-done
                search is forgotten: sequential halving needs its whole budget).
        """
        if board.game_over:
            raise ValueError("the game is over: there is no move to choose")
        self.begin(board)
        while True:
            interrupt.check()  # under interrupt.deferred(), Ctrl-C stops here, between rounds
            if stop is not None and stop():
                self.reset()
                raise SearchStopped()
            if not self.search_round():
                break
        result = self.choose(board)
        return (result.move, result.pi) if return_probs else result.move

    def __str__(self) -> str:
        return f"{self.name} ({self.n_playout} simulations)"
