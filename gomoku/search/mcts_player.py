"""The player that searches with MCTS: AlphaZero with a net's evaluator, pure MCTS with rollouts.

``MCTSPlayer`` owns one ``mcts.MCTS`` tree and decides how much to search each
move and which move to play from the search; the tree decides where a playout goes.
Its own search (``get_action``, the window's and the terminal's) runs on the backend of the
search protocol (``protocol``) that ``backend.choose`` picks: the compiled core where it
supports the player (a net's evaluator, a rule other than caro's; ``GOMOKU_CORE=off`` turns it
off), else the Python tree.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from gomoku.game.board import Board
from gomoku.search.backend import CORE, open_search
from gomoku.search.mcts import MCTS, Evaluator, SearchStopped
from gomoku.search.player_protocol import SearchResult
from gomoku.search.playout_cap import N_FAST, check_playout_cap
from gomoku.search.tree import Leaf
from gomoku.search.tree_threats import VctBudgets, set_root_vct


class MCTSPlayer:
    """A player that searches with an evaluator: AlphaZero with a net, pure MCTS with rollouts.

    The search is driven in two halves (``next_leaf`` / ``receive``) so that a
    lockstep runner can batch many players' leaves; ``get_action`` drives it alone.

    Two self-play options from KataGo (Wu 2019, "Accelerating Self-Play Learning
    in Go") spend the search where it teaches most; both leave the default player
    unchanged (no extra random draws):

    * playout cap randomisation (``p_full < 1``): each move is, with probability
      ``p_full``, a full search (``n_playout`` playouts, the usual noise in the
      move choice, forced playouts if asked) whose position is a training
      target; otherwise a fast search of ``n_fast`` playouts, no noise, whose
      move is played but not recorded (``recorded`` is False in the
      ``SearchResult`` of ``choose``). The chance is drawn from the player's own generator.
    * forced playouts with policy-target pruning (``forced_k > 0``, KataGo: 2),
      in full searches: see ``MCTS``; the returned pi is the pruned visit
      distribution and the move is chosen from the unpruned one, as without them.

    Args:
        evaluator: gives priors and values for leaf positions.
        c_puct: exploration constant.
        n_playout: playouts per move (per full-search move with playout cap randomisation).
        self_play: add Dirichlet noise to the move choice, sample at temperature 1,
            and keep the subtree of the chosen move.
        temperature: for self-play move sampling.
        dirichlet_alpha, noise_frac: the noise mixed into the move choice in self-play.
        explore_moves: in self-play, sample (with noise) only the first this many moves
            of a game and play the most visited move after them; 0 samples every move
            (docs/algorithm.md, section 4). The returned pi stays the temperature-1 visit distribution.
        reuse_tree: keep the subtree of each played move (default: in self-play only).
        p_full: playout cap randomisation: the chance of a full search (1: every move).
        n_fast: playouts of a fast search.
        forced_k: forced playouts and pruning of the policy target in full searches (0: off).
        full_vct: with ``threats``, the root VCT searches' depth and budgets in full searches (fast
            searches keep the defaults); None or the defaults: ``VctBudgets()`` in every search.
        fpu, win_check, solve, threats: see ``MCTS`` (None and False: the plain search).
        seed: seeds the player's own random generator.
        name: shown in UIs and logs.
    """

    def __init__(self, evaluator: Evaluator, c_puct: float = 5.0, n_playout: int = 400,
                 self_play: bool = False, temperature: float = 1.0, dirichlet_alpha: float = 0.3,
                 noise_frac: float = 0.25, explore_moves: int = 0, reuse_tree: Optional[bool] = None,
                 p_full: float = 1.0, n_fast: int = N_FAST, forced_k: float = 0.0,
                 fpu: Optional[float] = None, win_check: bool = False, solve: bool = False,
                 threats: bool = False, seed: Optional[int] = None, name: str = "MCTS",
                 full_vct: Optional[VctBudgets] = None):
        check_playout_cap(n_playout, p_full, n_fast)
        if forced_k < 0:
            raise ValueError(f"forced_k must not be negative, got {forced_k}")
        self.evaluator = evaluator
        self.n_playout = int(n_playout)
        self.mcts = MCTS(c_puct, fpu=fpu, win_check=win_check, solve=solve, threats=threats)
        self.self_play = self_play
        self.temperature = temperature if self_play else 1e-3
        self.dirichlet_alpha = dirichlet_alpha
        self.noise_frac = noise_frac
        self.explore_moves = explore_moves
        self.reuse_tree = self_play if reuse_tree is None else reuse_tree
        self.p_full = float(p_full)
        self.n_fast = int(n_fast)
        self.forced_k = float(forced_k)
        self.full_vct = None if full_vct == VctBudgets() else full_vct
        self.rng = np.random.default_rng(seed)
        self.name = name
        self.done = 0  # playouts done for the current move
        self._full: Optional[bool] = None  # whether the current move is a full search; None until drawn
        self.playouts_run = 0  # playouts over the player's life, for throughput figures
        self._core = None  # ``get_action``'s backend on the compiled core (``core.single.CoreSearch``), once used
        self._on_core = False  # whether the search running now, or the last one, ran on the core

    root_search = "puct"

    @property
    def search_tree(self) -> MCTS:
        return self.mcts

    @property
    def keeps_tree(self) -> bool:
        return self.reuse_tree

    def take_root(self, root, done: int) -> None:
        """The lockstep core's search is done: ``root`` is a copy of its root, ``done`` its playouts."""
        self.mcts.root = root
        self.done = done

    @property
    def progress(self) -> float:
        """Fraction of the current move's playouts done (for progress bars)."""
        return self.done / self.budget()

    def budget(self) -> int:
        """Playouts of the current move, drawing full or fast on its first call."""
        if self._full is None:
            self._full = self.p_full >= 1.0 or bool(self.rng.random() < self.p_full)
            self.mcts.forced_k = self.forced_k if self._full else 0.0
            set_root_vct(self.mcts.threat_solver, self.full_vct, self._full)
        return self.n_playout if self._full else self.n_fast

    def prepare_root(self) -> None:
        """Called before the root's threat searches, whose budgets depend on the move's full or fast
        search: draws it now."""
        self.budget()

    def _end_move(self) -> None:
        self.done = 0
        self._full = None

    # -- the two halves, for lockstep runners
    def next_leaf(self, board: Board) -> Optional[Leaf]:
        """The next leaf to evaluate, or None once this move's playouts are done.

        A leaf whose game is over is backed up here and the next one is taken,
        so every returned leaf needs the evaluator.
        """
        budget = self.budget()
        while self.done < budget:
            leaf = self.mcts.select_leaf(board)
            if leaf.value is None:
                return leaf
            self.mcts.backup(leaf, board, None, leaf.value)
            self.done += 1
            self.playouts_run += 1
        return None

    def receive(self, leaf: Leaf, board: Board, priors: np.ndarray, value: float) -> None:
        self.mcts.backup(leaf, board, priors, value)
        self.done += 1
        self.playouts_run += 1

    def choose(self, board: Board) -> SearchResult:
        """Picks the move once the playouts are done; returns it with the search's pi.

        The result is recorded (a training target) unless the move was a fast search.
        """
        full = self._full is not False
        pi = self.mcts.visit_probs(board.size, self.temperature)
        moves = self.mcts.root.moves
        if self.self_play and (not self.explore_moves or len(board.history) < self.explore_moves):
            p = pi[moves]
            if full:
                noise = self.rng.dirichlet(np.full(len(moves), self.dirichlet_alpha))
                p = (1 - self.noise_frac) * p + self.noise_frac * noise
            move = int(self.rng.choice(moves, p=p / p.sum()))
        else:
            move = self.mcts.best_move(board)
        if full and self.forced_k > 0:
            pi = self.mcts.visit_probs(board.size, self.temperature, self.mcts.pruned_counts(self.forced_k))
        result = SearchResult(move, pi, self.mcts.root_value(), full)
        self._end_move()
        return result

    def notify_move(self, move: int) -> None:
        """Tells the player a move was played on the board (its own or the opponent's)."""
        self._end_move()
        if self.reuse_tree:
            self.mcts.advance(move)
            if self._core is not None:
                self._core.advance(move)
        else:
            self.reset_trees()

    def reset(self) -> None:
        """Forgets the tree, for a new game."""
        self._end_move()
        self.reset_trees()

    def reset_trees(self) -> None:
        self.mcts.reset()
        if self._core is not None:
            self._core.reset()

    def live_root(self):
        """The root of the search running now (or of the last one): a copy of the core's while the
        search runs there (the analysis view reads it between playouts), else the tree's own."""
        return self._core.root() if self._on_core else self.mcts.root

    # -- the sequential search
    def get_action(self, board: Board, return_probs: bool = False,
                   stop: Optional[Callable[[], bool]] = None):
        """Searches ``board`` (which is restored) and returns the chosen move (and pi).

        Args:
            board: the position; the game must not be over.
            return_probs: also return the search's pi.
            stop: asked between playouts; once it returns true the search ends.

        Raises:
            SearchStopped: ``stop`` ended the search before the playout budget was
                spent; the player has forgotten the half-done search.
        """
        if board.game_over:
            raise ValueError("the game is over: there is no move to choose")

        budget = self.budget()

        def enough(done: int) -> bool:
            self.done = done
            return done >= budget or (stop is not None and stop())

        backend = open_search(self.mcts, board, self.evaluator, self._core)
        on_core = backend.name == CORE
        if not on_core and self._on_core:
            self.mcts.reset()  # the tree holds a copy of the core's root, not a tree to go on with
        self._on_core = on_core
        if on_core:
            self._core = backend
        backend.start_move(board, self.evaluator)
        backend.run(enough)  # the core's backend leaves a copy of its root in ``self.mcts``
        self.playouts_run += self.done
        if self.done < budget:
            self.reset()
            raise SearchStopped()
        result = self.choose(board)
        return (result.move, result.pi) if return_probs else result.move

    def __str__(self) -> str:
        return f"{self.name} ({self.n_playout} playouts)"
