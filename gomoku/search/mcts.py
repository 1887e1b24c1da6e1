"""Monte Carlo tree search with PUCT selection (AlphaZero), sequential playouts, no virtual loss.

Notation follows the AlphaGo Zero paper. For the edge from a node to its child
``a``: ``N(a)`` visits, ``Q(a)`` mean value, ``P(a)`` prior. Values are always
from the viewpoint of the player who *makes* the move ``a`` (the player to move
at the node), so a node selects ``argmax Q + U`` with
``U = c_puct * P * sqrt(N_node) / (1 + N(a))``. The nodes and their statistics
are ``tree.TreeNode``; this module is the search over them, with the in-tree
solver (``solve``) and the decision of the move to play (``MCTS.best_move``).

A playout has two halves so that many trees can share one batched evaluation:

1. ``select_leaf`` descends from the root, playing the moves on the board,
   until it reaches an unexpanded node or a finished game;
2. ``backup`` expands the leaf with the evaluator's priors, adds the value along
   the path (flipping its sign at each level) and takes the moves back.

``search`` is the one sequential loop: the two halves back to back, one playout
at a time, until the caller's stop rule says enough. The rule belongs to whoever
drives the search (a playout budget for ``mcts_player.MCTSPlayer``, a clock for the engine,
a cancel flag for the window); the tree holds statistics, not budgets.
``lockstep.Lockstep`` runs one half for many games, evaluates all their leaves
in one call, then runs the other half. Each tree still sees its playouts one at
a time, in the same order, with the same results.

Evaluators return ``(priors, values)`` for a list of boards: priors over all
``width * height`` moves (illegal ones are ignored) and the value of each
position for the player to move there. ``evaluator.NetEvaluator`` makes this AlphaZero;
``rollout.RolloutEvaluator`` makes it pure MCTS.

The rule is the board's (``Board.rule``): a node's children are its legal moves,
so under renju a node where Black is to move has no child on a forbidden point
(its prior goes to the others), and the win checks ask the board, whose winning
cells follow the rule.
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Protocol, Sequence

import numpy as np

from gomoku import interrupt
from gomoku.game.board import Board
from gomoku.search.options import check_search_options
from gomoku.search.tree import Leaf, TreeNode, favour, legal_moves
from gomoku.search.tree_threats import ThreatSolver


class Evaluator(Protocol):
    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        """Priors ``(B, size)`` and values ``(B,)`` for the player to move on each board."""


class MCTS:
    """One search tree over one game.

    Forced playouts (KataGo, Wu 2019, "Accelerating Self-Play Learning in Go"):
    with ``forced_k > 0``, a root child ``c`` with ``N(c) < sqrt(forced_k * P(c) * sum N)``
    is selected before PUCT is consulted (among several, the one with the highest
    ``Q + U``), so that every move the prior likes gets a few visits even when its
    first ones looked bad. ``pruned_counts`` takes those visits back out of the
    policy target. ``forced_k = 0`` is the plain AlphaZero search.

    Two options sharpen the search where the prior is wrong; both off is the
    plain PUCT search (docs/algorithm.md, section 4):

    * ``fpu`` (first-play urgency, as in Leela Zero and KataGo): an unvisited
      child counts with its node's mean value (its own evaluation and its
      children's backed-up values) less ``fpu * sqrt(P of the visited
      children)``, instead of 0. With 0, a side that is behind tries every
      legal move once, however small its prior, before it looks again at the
      moves that matter.
    * ``win_check``: a new node whose player to move can complete a line at once
      is a known win, like a finished game one move later (the evaluator is not
      asked). Any move that leaves the opponent such a line then gets the value
      -1 on its first visit, however the net judged it, and PUCT passes over it
      from then on while any other move is left (the first step of an MCTS
      solver, Winands et al. 2008).
    * ``solve``, the in-tree solver (the win check and more, from the rules
      alone; not the exact solver of ``scripts/exact_solver``): a new node
      where the opponent threatens to complete a line gets only the blocking
      moves as children (any other move loses at once), and is lost without a
      net call if there are two such cells to block; at the root the player's
      own winning moves are the only children. Results known for certain are
      backed up as in an MCTS solver (Winands et al. 2008): a node with a
      child lost for its mover is won, and is then always entered through that
      child; a node whose children are all won for their movers is lost. A
      forcing line of fours is then followed one reply deep at each step and
      proved in a few playouts.
    * ``threats`` (the in-tree solver and the threat searches, ``tree_threats.ThreatSolver``):
      before the net is asked at a new node, a VCF (victory by continuous
      fours) of the player to move is looked for within a small node budget;
      one found makes the node a proven win, ``plies`` moves from the end,
      backed up like any proven result. At the root, the player's own VCF is
      the only child; else, when the opponent has a forced win (a VCF or a
      VCT, looked for as if the player passed), the children are only the
      moves after which the opponent has none, so a move that loses by force
      gets no visits (all moves stay when none defends). A root kept from the
      last move (tree reuse) gets the same searches on the first descent: the
      VCF is proved at once, and the moves that do not defend are marked lost.
      With no threat against it, the first move of the player's own VCT gets a
      prior of at least ``tree.HINT_PRIOR``; a VCT is no proof, so it is not backed up.

    Args:
        c_puct: exploration constant.
        forced_k: the forced-playout constant ``k`` (KataGo: 2); 0 turns them off.
        fpu: the first-play-urgency reduction; None: unvisited children count as 0.
        win_check: treat a node whose player to move can win at once as won.
        solve: the in-tree solver: the win check, forced blocks and proven results backed up.
        threats: the in-tree solver, VCF at new nodes, and forced wins and defences at the root.
    """

    kind = "puct"
    """the root search (``protocol``'s ``root_search``): PUCT at every node"""

    def __init__(self, c_puct: float = 5.0, forced_k: float = 0.0, fpu: Optional[float] = None,
                 win_check: bool = False, solve: bool = False, threats: bool = False):
        check_search_options(fpu, win_check, solve, threats)
        self.c_puct = float(c_puct)
        self.forced_k = float(forced_k)
        self.fpu = None if fpu is None else float(fpu)
        self.solve = solve or threats
        self.win_check = win_check or self.solve
        self.threats = threats
        self.threat_solver = ThreatSolver() if threats else None
        self._analysed: Optional[TreeNode] = None  # the root the threat searches last looked at
        self.root = TreeNode()

    def playout(self, board: Board, evaluator: Evaluator) -> None:
        """One playout on its own: descend, evaluate the leaf, back up (``board`` is restored)."""
        leaf = self.select_leaf(board)
        if leaf.value is None:
            priors, values = evaluator.evaluate([board])
            self.backup(leaf, board, priors[0], float(values[0]))
        else:
            self.backup(leaf, board, None, leaf.value)

    def select_leaf(self, board: Board) -> Leaf:
        """Descends to a leaf, playing the moves on ``board`` (``backup`` takes them back)."""
        node = self.root
        path = []
        if self.threats and node.expanded and node is not self._analysed:
            self._analyse_kept_root(board)
        while True:
            if board.winner is not None:
                # The last mover made the game end: a win for them, so a loss for the player to move.
                return Leaf(node, path, 0.0 if board.winner == 0 else -1.0)
            if node.proven and path:
                return Leaf(node, path, float(node.proven), plies=node.plies)
            if node.moves is None:
                if self.solve:
                    return self.solver_leaf(node, path, board)
                if self.win_check and path and (node.N > 0 or board.can_win_now()):
                    # The player to move completes a line next move: a known win, no net needed.
                    return Leaf(node, path, 1.0, plies=1)
                return Leaf(node, path, None)
            index = self.select_index(node)
            board.play(int(node.moves[index]))
            path.append((node, index))
            node = node.child(index)

    def solver_leaf(self, node: TreeNode, path: list, board: Board) -> Leaf:
        """The leaf at a new node under ``solve`` (the in-tree solver): a known result, or the moves worth expanding."""
        mine, theirs = board.completing_cells()
        if len(mine):
            # Won at once. The root (which must pick a move) keeps only the winning moves.
            return Leaf(node, path, 1.0, plies=1) if path else Leaf(node, path, None, mine)
        if len(theirs) > 1 and path:
            return Leaf(node, path, -1.0, plies=2)  # one block leaves another cell that completes a line
        if len(theirs) and board.rule.restricted == board.current_player:
            theirs = theirs[[not board.is_forbidden(c) for c in theirs.tolist()]]
            if not len(theirs):
                # Black may not block on a forbidden point: lost (the root plays any legal move).
                return Leaf(node, path, -1.0, plies=2) if path else Leaf(node, path, None, None)
        if self.threats:
            if path:
                found = self.threat_solver.vcf(board, board.current_player)
                if found is not None:
                    return Leaf(node, path, 1.0, plies=found[1])
            elif not len(theirs):
                self._analysed = node
                found = self.threat_solver.root(board)
                if found.win is not None:
                    return Leaf(node, path, None, np.array([found.win[0]], dtype=np.int64))
                if found.keep is not None:
                    return Leaf(node, path, None, np.flatnonzero(found.keep))
                return Leaf(node, path, None, None, hint=found.hint)
        return Leaf(node, path, None, theirs if len(theirs) else None)

    def _analyse_kept_root(self, board: Board) -> None:
        """The root's threat searches for a root expanded before it became the root (tree reuse):
        its own VCF is proved through its first move; moves that do not defend against the
        opponent's forced win are marked lost, unless that would leave no move."""
        root = self.root
        self._analysed = root
        if root.proven or board.winner is not None:
            return
        mine, theirs = board.completing_cells()
        if len(mine) or len(theirs):
            return  # the in-tree solver's own rules answer these
        found = self.threat_solver.root(board)
        if found.win is not None:
            where = np.flatnonzero(root.moves == found.win[0])
            if len(where):
                index = int(where[0])
                self.prove(Leaf(root.child(index), [(root, index)], -1.0, plies=found.plies - 1), -1)
        elif found.keep is not None:
            bad = ~found.keep[root.moves]
            if bad.any() and not bad.all():
                for index in np.flatnonzero(bad):
                    root.mark_lost(int(index))

    def select_index(self, node: TreeNode) -> int:
        """The child a descent takes at ``node`` (an expanded node)."""
        if self.forced_k > 0 and node is self.root:
            forced = node.child_N < np.sqrt(self.forced_k * node.child_P * node.child_N.sum())
            if forced.any():
                return int(np.where(forced, node.puct(self.c_puct, self.fpu), -np.inf).argmax())
        return node.select(self.c_puct, self.fpu)

    def backup(self, leaf: Leaf, board: Board, priors: Optional[np.ndarray], value: float) -> None:
        """Expands the leaf (if ``priors`` is given), backs ``value`` up, and restores the board.

        Args:
            leaf: what ``select_leaf`` returned for this board.
            board: the board ``select_leaf`` played the path on.
            priors: the evaluator's priors over all moves, or None for a finished game.
            value: the leaf's value for the player to move there.
        """
        node = leaf.node
        if priors is not None and not node.expanded:
            moves = legal_moves(board) if leaf.moves is None else leaf.moves
            node.expand(moves, priors, value)
            if leaf.hint is not None:
                favour(node, leaf.hint)
        elif self.solve:
            if priors is None and value != 0.0 and leaf.path:
                self.prove(leaf, int(value))
        elif priors is None and value == 1.0 and leaf.path:
            # Only the win check gives an unexpanded node a won value: the move into it loses.
            parent, index = leaf.path[-1]
            parent.mark_lost(index)
        node.N += 1
        value = -float(value)  # for the player who moved into the leaf
        for parent, index in reversed(leaf.path):
            n = parent.child_N[index] + 1.0
            parent.child_N[index] = n
            parent.child_Q[index] += (value - parent.child_Q[index]) / n
            parent.N += 1
            parent.W += value
            if n == 1.0:
                parent.visited_P += parent.child_P[index]
            value = -value
        for _ in leaf.path:
            board.undo()

    @staticmethod
    def prove(leaf: Leaf, result: int) -> None:
        """Records ``result`` (1 won, -1 lost, for the player to move) at the leaf and up its path.

        Each proven node also keeps ``plies``, the length of the line that proved it:
        the shortest of its winning moves' lines plus one when won, the longest of its
        children's lines plus one when lost. The decision at the root reads it to win
        by the quickest line it has seen and to lose by the slowest.
        """
        node, plies = leaf.node, leaf.plies
        node.proven, node.plies = result, plies
        for parent, index in reversed(leaf.path):
            if result == -1:
                plies += 1
                if parent.win < 0 or plies < parent.plies:
                    parent.win, parent.plies = index, plies  # the move into a lost node wins
                parent.proven = result = 1
            else:
                parent.mark_lost(index)
                if not parent.lost.all():
                    return
                plies = 1 + max(child.plies for child in parent.children.values())
                parent.proven, parent.plies = -1, plies
                result = -1

    def best_move(self, board: Board) -> int:
        """The move to play from the root after a search (``board`` is the root's position).

        Normally the most visited move (``TreeNode.best_index``). Where the result is
        known the choice follows it instead, so that a lost position is defended and
        a won one is finished:

        * a move that completes a line is played at once;
        * a won root plays the winning move with the quickest proven line;
        * a lost root (every move proven or known to lose) holds out as long as it
          can: it blocks the opponent's line if one is a move from complete, else
          makes a four of its own if it can (the opponent must answer it), and among
          those moves takes the one whose proven line is longest, then the one the
          prior likes best. A move that is not proven lost counts as the longest.

        Raises:
            ValueError: the root has not been expanded (no playout has run on it).
        """
        root = self.root
        if not root.expanded:
            raise ValueError("the search has not expanded the root: run at least one playout")
        mine, theirs = board.completing_cells()
        wins = np.flatnonzero(np.isin(root.moves, mine))
        if len(wins):
            return int(root.moves[wins[0]])
        if root.win >= 0:
            return int(root.moves[root.win])
        lost = root.lost is not None and bool(root.lost.all())
        if root.proven != -1 and not lost:
            return int(root.moves[root.best_index()])
        return int(root.moves[self._hold_out(board, theirs)])

    def _hold_out(self, board: Board, theirs: np.ndarray) -> int:
        """The root child to play in a lost position: see ``best_move``."""
        root = self.root
        candidates = np.flatnonzero(np.isin(root.moves, theirs)) if len(theirs) else np.zeros(0, dtype=np.int64)
        if not len(candidates):
            fours = []
            for index, move in enumerate(root.moves):
                board.play(int(move))
                if board.winner is None and len(board.completing_cells()[1]):
                    fours.append(index)
                board.undo()
            candidates = np.array(fours or range(len(root.moves)), dtype=np.int64)

        def holds(index: int) -> tuple[float, float]:
            child = root.children.get(int(index))
            proven_lost = child is not None and child.proven == 1
            return (child.plies if proven_lost else math.inf, float(root.child_P[index]))

        return int(max(candidates, key=holds))

    def advance(self, move: int) -> None:
        """Keeps the subtree under ``move`` as the new root (tree reuse), or starts afresh."""
        root = self.root
        if root.expanded:
            where = np.flatnonzero(root.moves == move)
            if len(where) and int(where[0]) in root.children:
                self.root = root.children[int(where[0])]
                return
        self.root = TreeNode()

    def reset(self) -> None:
        self.root = TreeNode()

    def root_value(self) -> float:
        """The root's mean value from the search, for the player to move there (0 before any visit)."""
        root = self.root
        if not root.expanded or root.child_N.sum() == 0:
            return 0.0
        return float(root.child_N @ root.child_Q / root.child_N.sum())

    def pruned_counts(self, k: float) -> np.ndarray:
        """Root visit counts with forced playouts taken out (KataGo's policy-target pruning).

        For every child ``c`` other than the most visited ``c*``, up to
        ``sqrt(k * P(c) * sum N)`` visits are removed, but only as many as keep
        ``c``'s ``Q + U`` (recomputed with the reduced count) below ``c*``'s:
        visits that PUCT alone would have given stay. A child left with a single
        visit is dropped. No count rises and ``c*`` keeps all of its visits.

        Args:
            k: the forced-playout constant the search used.

        Returns:
            The pruned counts, one per root child (in the order of ``root.moves``).
        """
        root = self.root
        visits = root.child_N
        best = root.best_index()
        best_value = root.puct(self.c_puct, self.fpu)[best]
        scale = self.c_puct * math.sqrt(root.N)  # of TreeNode.puct, solved for the count below
        forced = np.sqrt(k * root.child_P * visits.sum())
        gap = best_value - root.child_Q
        with np.errstate(divide="ignore", invalid="ignore"):
            # Q + scale * P / (1 + n) < best_value  <=>  n > scale * P / gap - 1 (for gap > 0)
            bound = np.where(gap > 0, scale * root.child_P / gap - 1.0, np.inf)
        fewest = np.where(np.isfinite(bound), np.floor(np.maximum(bound, -1.0)) + 1.0, visits)
        pruned = np.minimum(visits, np.maximum(fewest, np.ceil(visits - forced)))
        pruned[pruned <= 1] = 0.0
        pruned[best] = visits[best]
        return pruned

    def visit_probs(self, size: int, temperature: float, counts: Optional[np.ndarray] = None) -> np.ndarray:
        """``pi(a) ∝ N(a)^(1/temperature)`` over all ``size`` moves (0 where not legal).

        Args:
            size: moves on the board.
            temperature: 1 for the visit distribution, near 0 for the most visited move.
            counts: counts to use instead of the root's visits (e.g. ``pruned_counts``).
        """
        root = self.root
        pi = np.zeros(size)
        if not root.expanded:
            return pi
        counts = root.child_N if counts is None else counts
        logits = np.log(counts + 1e-10) / temperature
        logits -= logits.max()
        weights = np.exp(logits)
        pi[root.moves] = weights / weights.sum()
        return pi


class SearchStopped(Exception):
    """A search was stopped by its caller before its playout budget was spent."""


def search(tree: MCTS, board: Board, evaluator: Evaluator, stop: Callable[[int], bool]) -> int:
    """The search loop: playouts one at a time until ``stop(playouts_done)`` is true.

    ``stop`` is asked before every playout, with the number done so far, so the
    caller's rule (a budget, a deadline, a cancel flag) ends the search between
    playouts, with ``board`` restored. Under ``interrupt.deferred()`` a Ctrl-C
    also ends it there, as a ``KeyboardInterrupt``.

    Returns:
        The number of playouts run.
    """
    done = 0
    while True:
        interrupt.check()
        if stop(done):
            return done
        tree.playout(board, evaluator)
        done += 1
