"""The threat searches inside the tree search: VCF at new leaves, forced wins and defences at the root.

The search's ``threats`` option (``mcts.MCTS``) asks this module two questions,
both answered with the threat searches (``gomoku.game.vcf.find_vcf``,
``vct.find_vct``; see ``line_board`` for the notation):

* at a new leaf, before the net is asked: does the player to move have a VCF
  (victory by continuous fours) within ``LEAF_VCF_NODES`` nodes? A VCF is a
  proof (every reply of the defender is forced), so the leaf is a known win,
  ``plies`` moves from the end of the game;
* at the root: the player's own VCF (a proof again); else the moves that do not
  lose to the opponent's forced win. The opponent's threat is looked for as if
  the player passed: a VCF, else a VCT (victory by continuous threes and fours).
  Each move is then tried against it: a move after which the opponent still has
  a VCF loses by force (and of the moves that stop a VCF, those that leave the
  opponent a VCT are dropped too, unless every one does); against a VCT, a move after which the opponent still
  has a VCF or a VCT loses (only the moves that touch the opponent's lines, and
  the player's fours, are tried; any other move counts as a pass). The search
  keeps only the moves that do not lose. With no threat against it, the
  player's own VCT gives the move the search should look at first.

A VCT here is ``vct``'s: its defender answers are the cells of the
attacker's lines and the defender's own fours, which covers the defences that
matter in practice but is no proof. So the root's choice against a VCT is a
strong filter, not a certainty, and a VCT is never backed up as a proven result.

Speed. One ``LineBoard`` lives with the search tree and follows the search's
board from leaf to leaf: ``sync`` plays and takes back only the cells that
differ (a playout's path differs from the last one's by a few moves), so the
per-window counts are never rebuilt from the board. Results are cached by
position (the stones as bytes, and the attacker): a VCF found there, and every
position along its line, is a known win for any later budget; a search that
failed is only reused for budgets no larger than its own. Most leaves cost one
vectorised test: without a window holding ``n - 2`` of the mover's stones and
none of the opponent's there is no four to make and no VCF to look for.

The rule (``Board.rule``) is the line board's: five cells make exactly ``n_in_row``
where the rule asks it, and under renju Black's forbidden points are never Black's
moves in a line or a defence, while a White four that Black could only block on a
forbidden point wins. So a proven win for Black goes through legal moves only.

Node budgets, never a clock, bound every search, so a seeded search repeats
itself exactly. The VCT budgets and depth are ``ThreatSolver``'s arguments: the
defaults keep the root's searches to tens of milliseconds in most positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from gomoku.game.board import Board
from gomoku.game.line_board import LineBoard
from gomoku.game.vcf import find_vcf
from gomoku.search.vct import find_vct

LEAF_VCF_NODES = 60  # a VCF at a new leaf, before the net is asked
ROOT_VCF_NODES = 2000  # the player's own VCF at the root, and the opponent's when the player passes
ROOT_VCT_NODES = 1000  # the same for a VCT
DEFENCE_VCF_NODES = 200  # the opponent's VCF after each root move near the stones, against a VCT
DEFENCE_VCT_NODES = 100  # the opponent's VCT after each root move near its lines, at least
VCT_DEPTH = 3  # threes in one VCT line (``vct``'s default)
CACHE_SIZE = 5_000  # positions remembered per tree (a few MB at most); emptied when full
MOST_VCT_DEPTH = 8  # the deepest root VCT a search may ask for


@dataclass(frozen=True)
class VctBudgets:
    """The root's VCT searches: ``depth`` threes in a line, ``nodes`` for the player's VCT and the
    opponent's, at least ``defence_nodes`` for each move checked against the opponent's
    (``ThreatSolver``'s arguments of the same meaning). Raises ValueError on values out of range."""

    depth: int = VCT_DEPTH
    nodes: int = ROOT_VCT_NODES
    defence_nodes: int = DEFENCE_VCT_NODES

    def __post_init__(self):
        check_vct_budgets(self.depth, self.nodes, self.defence_nodes)


def set_root_vct(solver: Optional["ThreatSolver"], full_vct: Optional[VctBudgets], full: bool) -> None:
    """Gives ``solver`` (None: a search without threat searches) the root VCT budgets of the move
    about to be searched: ``full_vct`` for a full search, the defaults for a fast one. With
    ``full_vct`` None the solver keeps the budgets it has."""
    if solver is not None and full_vct is not None:
        solver.budgets = full_vct if full else VctBudgets()


def check_vct_budgets(depth: int, nodes: int, defence_nodes: int) -> None:
    """Raises ValueError unless ``1 <= depth <= MOST_VCT_DEPTH`` and ``1 <= defence_nodes <= nodes``."""
    for name, value in (("vct_depth", depth), ("vct_nodes", nodes), ("defence_vct_nodes", defence_nodes)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
    if not 1 <= depth <= MOST_VCT_DEPTH:
        raise ValueError(f"vct_depth must be 1 to {MOST_VCT_DEPTH} threes, got {depth}")
    if not 1 <= defence_nodes <= nodes:
        raise ValueError(f"vct_nodes and defence_vct_nodes must be at least 1, defence_vct_nodes at most "
                         f"vct_nodes, got {nodes} and {defence_nodes}")


@dataclass
class RootThreats:
    """What the threat searches found at the root, for the player to move there.

    Attributes:
        win: the player's own VCF line (both sides' moves), or None.
        plies: with ``win``, the moves to the end of the game along it.
        keep: a mask over all cells: the moves that do not lose to the opponent's
            forced win; None when the opponent has none, or every move loses.
        hint: the first move of the player's own VCT, when nothing above applies.
    """

    win: Optional[list] = None
    plies: int = 0
    keep: Optional[np.ndarray] = None
    hint: Optional[int] = None


def vcf_plies(tb: LineBoard, attacker: int, line: list) -> int:
    """The moves to the end of the game along a VCF ``line``: its length, plus a block and the
    five when its last move makes two five cells instead of a five."""
    played = []
    for i, cell in enumerate(line[:-1]):
        player = attacker if i % 2 == 0 else 3 - attacker
        tb.play(cell, player)
        played.append((cell, player))
    five = line[-1] in tb.five_cells(attacker)
    for cell, player in reversed(played):
        tb.undo(cell, player)
    return len(line) if five else len(line) + 2


def replays(tb: LineBoard, attacker: int, line: list) -> bool:
    """Whether the VCF ``line`` still wins on ``tb`` as it stands: each of the attacker's moves is
    empty and makes a four whose only five cell is the next move (which the defender must take),
    the defender never has a five cell of its own, and the last move wins or makes two five cells
    (or, under renju, a White four whose five cell Black may not block: then Black's
    forced block anywhere in the line ends it too). A line that replays is a proof, like one
    found by search."""
    d = 3 - attacker
    played = []
    ok = True
    for i in range(0, len(line), 2):
        move = line[i]
        if tb.stones[move] != 0 or tb.five_cells(d):
            ok = False
            break
        if i == len(line) - 1:
            if move in tb.five_cells(attacker):
                ok = True
            else:
                fives = tb.four_moves(attacker).get(move, ())
                ok = len(fives) >= 2 or (len(fives) == 1 and _unblockable(tb, attacker, move, next(iter(fives))))
            break
        reply = line[i + 1]
        if tb.four_moves(attacker).get(move) != {reply} or tb.five_cells(attacker):
            ok = False
            break
        if _unblockable(tb, attacker, move, reply):
            break  # ok: the defender cannot take the reply
        tb.play(move, attacker)
        tb.play(reply, d)
        played += [(move, attacker), (reply, d)]
    for cell, player in reversed(played):
        tb.undo(cell, player)
    return ok


def _unblockable(tb: LineBoard, attacker: int, move: int, five: int) -> bool:
    """Whether after the attacker's ``move`` its five cell ``five`` is forbidden to the defender
    (White's four against Black, under renju)."""
    if not tb.restricted(3 - attacker):
        return False
    tb.play(move, attacker)
    blocked = tb.forbidden(five)
    tb.undo(move, attacker)
    return blocked


class ThreatSolver:
    """The threat searches of one search tree, on a ``LineBoard`` kept in step with its board.

    Args:
        vct_nodes: the budget of a VCT search at the root (the player's, and the opponent's as if
            the player passed); a check of a move against the opponent's VCT gets twice the nodes
            that found it, at least ``defence_vct_nodes`` and at most ``vct_nodes``.
        defence_vct_nodes: see ``vct_nodes``.
        vct_depth: threes in one VCT line. Deeper and larger searches find more of the opponent's
            VCTs (the turning points of the shipped net's lost games needed depth 4 and 2,000 to
            20,000 nodes after the losing move) at a cost of tens of ms for each move checked.
    """

    def __init__(self, vct_nodes: int = ROOT_VCT_NODES, defence_vct_nodes: int = DEFENCE_VCT_NODES,
                 vct_depth: int = VCT_DEPTH):
        self.vct_nodes = int(vct_nodes)
        self.defence_vct_nodes = int(defence_vct_nodes)
        self.vct_depth = int(vct_depth)
        self.tb: Optional[LineBoard] = None
        self.cache: dict = {}  # (stones, attacker) -> (line or None, budget it failed within)
        self.searches = 0  # VCF searches run (not answered by the cache or the quick test)

    @property
    def budgets(self) -> VctBudgets:
        """The root VCT searches' depth and budgets, as one value."""
        return VctBudgets(self.vct_depth, self.vct_nodes, self.defence_vct_nodes)

    @budgets.setter
    def budgets(self, value: VctBudgets) -> None:
        self.vct_depth, self.vct_nodes, self.defence_vct_nodes = value.depth, value.nodes, value.defence_nodes

    def sync(self, board: Board) -> LineBoard:
        """The line board, brought to ``board``'s stones by playing and taking back the cells that differ."""
        tb = self.tb
        if tb is None or (tb.width, tb.height, tb.n, tb.rule) != (board.width, board.height, board.n_in_row,
                                                                  board.rule):
            self.tb = tb = LineBoard(board)
            self.cache.clear()
            return tb
        cells = np.frombuffer(bytes(board.cells), dtype=np.int8)
        for cell in (cells != tb.stones).nonzero()[0].tolist():
            old, new = int(tb.stones[cell]), int(cells[cell])
            if old:
                tb.undo(cell, old)
            if new:
                tb.play(cell, new)
        return tb

    def vcf(self, board: Board, attacker: int, budget: int = LEAF_VCF_NODES) -> Optional[tuple[list, int]]:
        """A VCF of ``attacker`` (who need not be the player to move) on ``board``: ``(line, plies)``, or None."""
        return self._vcf(self.sync(board), attacker, budget)

    def _vcf(self, tb: LineBoard, attacker: int, budget: int) -> Optional[tuple[list, int]]:
        n = tb.n
        if n < 2 or not ((tb.counts[attacker] >= n - 2) & (tb.counts[3 - attacker] == 0)).any():
            return None  # no four to make, no five to complete: no VCF
        key = (tb.key(), attacker)
        known = self.cache.get(key)
        if known is not None and (known[0] is not None or known[1] >= budget):
            return known[0]
        self.searches += 1
        line = find_vcf(tb, attacker, budget)
        if line is None:
            self._store(tb, attacker, None, budget)
            return None
        found = (line, vcf_plies(tb, attacker, line))
        self._store(tb, attacker, found)
        self._remember_line(tb, attacker, line, found[1])
        return found

    def _store(self, tb: LineBoard, attacker: int, found: Optional[tuple], budget: int = 0) -> None:
        """Caches ``found`` (``(line, plies)``, or None for a search of ``budget`` nodes that failed)."""
        if len(self.cache) >= CACHE_SIZE:
            self.cache.clear()
        self.cache[(tb.key(), attacker)] = (found, budget)

    def _remember_line(self, tb: LineBoard, attacker: int, line: list, plies: int) -> None:
        """Caches every attacker-to-move position along a found VCF as won, with the rest of the line."""
        played = []
        for i in range(0, len(line) - 1, 2):
            tb.play(line[i], attacker)
            tb.play(line[i + 1], 3 - attacker)
            played += [(line[i], attacker), (line[i + 1], 3 - attacker)]
            self._store(tb, attacker, (line[i + 2:], plies - i - 2))
        for cell, player in reversed(played):
            tb.undo(cell, player)

    def root(self, board: Board) -> RootThreats:
        """The root's threats for the player to move on ``board`` (see the module docstring)."""
        tb = self.sync(board)
        me = board.current_player
        them = 3 - me
        own = self._vcf(tb, me, ROOT_VCF_NODES)
        if own is not None:
            return RootThreats(win=own[0], plies=own[1])
        line = find_vcf(tb, them, ROOT_VCF_NODES)
        if line is not None:
            return RootThreats(keep=self._defences(tb, me, line, vcf_plies(tb, them, line), ROOT_VCF_NODES,
                                                   self.defence_vct_nodes))
        hint = find_vct(tb, me, self.vct_nodes, self.vct_depth)
        if hint is not None:
            return RootThreats(hint=hint)
        if find_vct(tb, them, self.vct_nodes, self.vct_depth) is not None:
            budget = self._budget(tb.nodes, self.defence_vct_nodes, self.vct_nodes)
            return RootThreats(keep=self._defences(tb, me, None, 0, DEFENCE_VCF_NODES, budget))
        return RootThreats()

    @staticmethod
    def _budget(used: int, least: int, most: int) -> int:
        """The budget of a search that checks a move against a win found in ``used`` nodes: twice
        that, within ``[least, most]``, so that a move that leaves the win standing rarely passes
        for a defence only because its search ran out of nodes first."""
        return int(min(most, max(least, 2 * used)))

    def _defences(self, tb: LineBoard, me: int, line: Optional[list], plies: int, vcf_nodes: int,
                  vct_nodes: int) -> Optional[np.ndarray]:
        """Which empty cells leave the opponent without its forced win; None if none does.

        Against a VCF ``line`` every empty cell is tried: one after which the line
        still replays loses (a proof), the others (the cells of the line and the few
        that give the player a four on it) get a VCF search of ``vcf_nodes``, as many
        as found the line: a move that breaks the line often leaves a longer one. The
        moves that stop every VCF then get a VCT search of ``vct_nodes``: a block that
        leaves the opponent a VCT is kept only when every block does (a lost position
        still keeps the moves that put the loss furthest off). Against a VCT, only the cells that can touch the
        opponent's threats are tried: the empty cells of windows holding at least
        ``n - 3`` of its stones and none of the player's, and the player's own four
        moves; any other cell changes none of the opponent's lines of three or more
        and counts as a pass, which loses. Each gets a VCF search, then a VCT
        search of ``vct_nodes``. A move that makes a four is judged by the searches
        too: they make the opponent block it first (the VCT search counts any
        four of the defender as a defence). Under renju Black's forbidden points are never kept.
        """
        them = 3 - me
        empty = tb.stones == 0
        if tb.restricted(me):
            empty = empty & ~tb.forbidden_mask()
        if vct_nodes and line is None:
            tried = np.zeros(tb.size, dtype=bool)
            n = tb.n
            zone = tb.windows[np.flatnonzero((tb.counts[them] >= max(n - 3, 1)) & (tb.counts[me] == 0))]
            tried[zone.ravel()] = True
            tried[list(tb.four_moves(me))] = True
        else:
            tried = empty
        keep = np.zeros(tb.size, dtype=bool)
        for cell in np.flatnonzero(tried & empty).tolist():
            tb.play(cell, me)
            if line is not None and replays(tb, them, line):
                loses = True
                self._store(tb, them, (line, plies))  # the search's next visit here is proven from the cache
            else:
                loses = self._vcf(tb, them, vcf_nodes) is not None
                if not loses and vct_nodes and line is None:
                    loses = find_vct(tb, them, vct_nodes, self.vct_depth) is not None
            tb.undo(cell, me)
            keep[cell] = not loses
        if line is not None and vct_nodes and keep.any():
            safe = np.zeros(tb.size, dtype=bool)
            for cell in np.flatnonzero(keep).tolist():
                tb.play(cell, me)
                safe[cell] = find_vct(tb, them, vct_nodes, self.vct_depth) is None
                tb.undo(cell, me)
            if safe.any():
                keep = safe
        return keep if keep.any() else None
