"""The line-pattern board of the threat searches and the heuristic: stones and per-window counts.

Notation. A *window* is any ``n_in_row`` consecutive cells on one line of the
board (``n = n_in_row``); ``LineBoard`` keeps, for every window, how many stones
of each player it holds. For a player ``a`` (the attacker) and the other player
``d`` (the defender):

* a *five cell* of ``a`` is an empty cell of a window holding ``n - 1`` stones of
  ``a`` and none of ``d``: playing it wins (freestyle: overlines win too);
* a *four move* of ``a`` is an empty cell of a window holding ``n - 2`` stones of
  ``a`` and none of ``d``: after it ``a`` has a five cell, the window's other
  empty cell. A four move with two or more distinct five cells (an open four, or
  two fours at once) wins unless ``d`` can win first;
* a *three move* of ``a`` is a move after which ``a`` has a four move with two
  five cells: ``a`` threatens to make an open four next.

The rule (``Board.rule``, see ``gomoku.game.rules``) changes these words:

* a window that can never win for a player (``Rule.dead_lines``) is *dead* for
  that player, and none of the above (nor the scores below) counts it. Where a
  player needs *exactly* ``n`` (both under standard, Black under renju), that is
  a window whose cell just beyond either end holds that player's stone (it can
  only make an overline): a five cell is then a cell that makes exactly ``n``.
  Under caro it is a window with the opponent's stones just beyond both ends (the
  five would be blocked), so a four that can only become such a five is no four;
* under renju, Black's forbidden points (``rules.forbidden_reason``) are never
  Black's four moves, three moves, answers or candidate moves. A White four
  whose only five cell is forbidden for Black wins, as an open four does: Black
  cannot block it.

A point's *score* for the player to move sums, over the windows through it,
a weight for what the window holds: ``ATTACK[k]`` when only the mover's ``k``
stones are in it, ``DEFEND[k]`` when only the opponent's ``k`` stones are (the
classic tuple evaluation). An open three lies in three windows, a closed three
in one, so the sum ranks shapes the way a player would.

The VCF search is in ``vcf`` (it gives the threat planes of ``features`` too), the VCT in
the search layer's ``vct``, the heuristic player there in ``heuristic``. This module
uses NumPy and the rest of the game layer only.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from gomoku.game import rules
from gomoku.game.board import Board
from gomoku.game.lines import line_cells, line_ends
from gomoku.game.rules import FREESTYLE, Rule

NEAR = 2  # candidate moves lie within this many cells (king steps) of a stone
FIVE, FOUR, THEIR_FIVE = 1, 2, 4
"""the bits of a window's kind in ``LineBoard.threats``"""
_SWAP = np.array([0, 2, 1], dtype=np.int8)
"""a stone array's labels, side 1 and side 2 the other way round"""


@lru_cache(maxsize=None)
def _geometry(width: int, height: int, n: int) -> tuple[np.ndarray, tuple]:
    """All windows as an ``(n_windows, n)`` array of cells, and the windows through each cell."""
    table = line_cells(width, height, n)
    through = [[] for _ in range(width * height)]
    for index, cells in enumerate(table):
        for cell in cells:
            through[cell].append(index)
    return table, tuple(np.asarray(t, dtype=np.int64) for t in through)


@lru_cache(maxsize=None)
def _kinds(n: int) -> np.ndarray:
    """A window's kind for a player with ``mine`` stones in it and ``theirs`` of the opponent, at
    ``mine * (n + 1) + theirs``: the bits ``FIVE`` (its empty cell is the player's five cell),
    ``FOUR`` (either empty cell is a four move, the other its five cell) and ``THEIR_FIVE``."""
    mine, theirs = np.divmod(np.arange((n + 1) ** 2), n + 1)
    kinds = (FIVE * ((mine == n - 1) & (theirs == 0)) + FOUR * ((mine == n - 2) & (theirs == 0))
             + THEIR_FIVE * ((theirs == n - 1) & (mine == 0))).astype(np.int8)
    kinds.setflags(write=False)
    return kinds


@lru_cache(maxsize=None)
def _tallies(n: int) -> np.ndarray:
    """``tallies[k, code]``: the digits ``k`` of a window's base-3 code (``features``' window codes:
    a digit per cell, empty 0, else the side whose stone), that is the window's stones of side ``k``."""
    digits = (np.arange(3 ** n)[:, None] // 3 ** np.arange(n)) % 3
    tallies = np.stack([(digits == k).sum(axis=1) for k in range(3)]).astype(np.intp)
    tallies.setflags(write=False)
    return tallies


@lru_cache(maxsize=None)
def _touch_geometry(width: int, height: int, n: int, rule: Rule) -> tuple:
    """``touch[player][cell]``: the entries of ``LineBoard``'s flat state (rows of ``n_windows``)
    that a stone of ``player`` on ``cell`` adds one to. Row ``player``: the windows through
    ``cell``. When some player needs exactly ``n`` (``rule.exact``), also what closes windows
    (row ``2 + p`` for player ``p``): the windows through ``cell`` for the opponent, and if
    ``player`` needs exactly ``n``, the windows that ``cell`` lies just beyond, for ``player``.
    When a five between two opponent's stones does not win (caro), the windows that ``cell``
    lies just beyond, for the opponent (row ``4 + p`` counts the stones flanking ``p``'s windows)."""
    windows, through = _geometry(width, height, n)
    count = len(windows)
    beyond = [[] for _ in range(width * height + 1)]
    for index, pair in enumerate(line_ends(width, height, n).tolist()):
        for cell in pair:
            beyond[cell].append(index)
    touch = [()]
    for player in (1, 2):
        per_cell = []
        for cell in range(width * height):
            parts = [player * count + through[cell]]
            ends = np.asarray(beyond[cell], dtype=np.int64)
            if any(rule.exact):
                parts.append((5 - player) * count + through[cell])
                if rule.exact[player]:
                    parts.append((2 + player) * count + ends)
            if not rule.flanked_wins:
                parts.append((7 - player) * count + ends)
            per_cell.append(np.concatenate(parts))
        touch.append(tuple(per_cell))
    return tuple(touch)


def line_weights(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``ATTACK[k]`` and ``DEFEND[k]`` for a window holding ``k`` stones of one side only."""
    attack_top = [800000.0, 15000.0, 800.0, 35.0]  # k = n-1, n-2, n-3, n-4
    defend_top = [100000.0, 1800.0, 400.0, 15.0]
    attack = np.full(n + 1, 35.0)
    defend = np.full(n + 1, 15.0)
    for i in range(4):
        if n - 1 - i >= 1:
            attack[n - 1 - i] = attack_top[i]
            defend[n - 1 - i] = defend_top[i]
    attack[0], defend[0] = 7.0, 0.0  # an empty window counts once, as the mover's
    attack[n], defend[n] = 0.0, 0.0  # a finished line; the game is over
    return attack, defend


@lru_cache(maxsize=None)
def _weights(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``line_weights(n)`` and ``8 ** k`` for a window holding ``k`` stones of one side only (0 for
    none, ``evaluate``), read-only and cached: every line board of ``n`` shares them."""
    worth = 8.0 ** np.arange(n + 1)
    worth[0] = 0.0
    tables = (*line_weights(n), worth)
    for table in tables:
        table.setflags(write=False)
    return tables


class LineBoard:
    """Stones and per-window stone counts of a position, with cheap play and undo.

    ``against[p]`` counts, per window, what closes it for player ``p``: the
    opponent's stones in it, and where ``p`` needs exactly ``n``, ``p``'s stones
    just beyond its ends (the window is dead for ``p``). Under caro ``flanks[p]``
    counts the opponent's stones just beyond its two ends: at two it is dead for
    ``p``. Under renju the cells are also kept as a list with a blocked sentinel,
    for the forbidden-point test. ``of_stones`` builds one from a stone array instead of a board.

    Args:
        board: the position to copy (the board itself is not touched); its rule is kept.
    """

    def __init__(self, board: Optional[Board] = None, *, cells: Optional[np.ndarray] = None, width: int = 0,
                 height: int = 0, n: int = 0, rule: Rule = FREESTYLE, codes: Optional[np.ndarray] = None,
                 swapped: bool = False):
        """The line board of ``board``, or of ``cells`` (the players' stones, int8, kept) on a
        ``width`` x ``height`` board with ``n`` in a row (``of_stones`` gives the arguments)."""
        if board is not None:
            cells = np.frombuffer(bytes(board.cells), dtype=np.int8).copy()
            width, height, n, rule = board.width, board.height, board.n_in_row, board.rule
        self._setup(cells, width, height, n, rule, codes, swapped)

    @classmethod
    def of_stones(cls, stones: np.ndarray, width: int, height: int, n: int, rule: Rule = FREESTYLE, mover: int = 1,
                  codes: Optional[np.ndarray] = None) -> "LineBoard":
        """The line board of a stone array in ``features``' labels, its own cells in the players'.

        Args:
            stones: ``(size,)`` uint8, 0 empty, 1 player ``mover``'s stone, 2 the other player's.
            codes: the base-3 code of every window of ``n`` cells in ``stones``' labels (``line_cells``
                order, as ``features.fill_threat_planes`` returns them), if at hand: the counts are
                read from them.
        """
        cells = stones.astype(np.int8) if mover == 1 else _SWAP[stones.astype(np.intp)]
        return cls(cells=cells, width=width, height=height, n=n, rule=rule, codes=codes, swapped=mover == 2)

    def _setup(self, cells: np.ndarray, width: int, height: int, n: int, rule: Rule,
               codes: Optional[np.ndarray] = None, swapped: bool = False) -> None:
        """Builds the line board of ``cells`` (the players' stones, int8, kept); ``codes`` as in
        ``of_stones``, with side 1 the second player when ``swapped``."""
        self.width, self.height, self.n = width, height, n
        self.size = width * height
        self.rule = rule
        self.windows, self.through = _geometry(width, height, n)
        self.stones = cells
        self.kinds = _kinds(n)
        # Rows: 0 unused, 1 and 2 the players' stones per window, 3 and 4 what closes each
        # window for players 1 and 2 (only where some player needs exactly n), 5 and 6 the
        # stones flanking each window for players 1 and 2 (only under caro). Native ints: the
        # VCF's lookups index with them as they are.
        state = np.zeros((7, len(self.windows)), dtype=np.intp)
        self.counts = state[:3]
        self._flat = state.reshape(-1)
        self._touch = _touch_geometry(width, height, n, rule)
        if codes is not None:
            tallies = _tallies(n)
            for player in (1, 2):
                self.counts[player] = tallies[3 - player if swapped else player][codes]
        else:
            window_stones, ones = cells[self.windows], np.ones(n, dtype=np.float32)
            for player in (1, 2):
                self.counts[player] = (window_stones == player).astype(np.float32) @ ones  # BLAS: quicker than sum
        self.ends_matter = rule.ends_matter
        first = last = None  # the cells just beyond each window's two ends, where the rule reads them
        if self.ends_matter:
            beyond = np.append(cells, 0)[line_ends(width, height, n)]  # off the board: no stone
            first, last = beyond[:, 0], beyond[:, 1]
        if any(rule.exact):
            for player in (1, 2):
                state[2 + player] = self.counts[3 - player]
                if rule.exact[player]:
                    state[2 + player] += first == player
                    state[2 + player] += last == player
            self.against = (None, state[3], state[4])
        else:
            self.against = (None, state[2], state[1])
        self.flanks = None
        if not rule.flanked_wins:
            for player in (1, 2):
                state[4 + player] = first == 3 - player
                state[4 + player] += last == 3 - player
            self.flanks = (None, state[5], state[6])
        self.padded: Optional[list] = None
        if rule.restricted:
            self.padded = cells.tolist() + [2]
            self.renju_geometry = rules.renju_geometry(width, height)
        self.attack, self.defend, self.worth = _weights(n)
        self.nodes = 0  # positions visited by searches, checked against their budgets

    def play(self, cell: int, player: int) -> None:
        self.stones[cell] = player
        self._flat[self._touch[player][cell]] += 1
        if self.padded is not None:
            self.padded[cell] = player

    def undo(self, cell: int, player: int) -> None:
        self.stones[cell] = 0
        self._flat[self._touch[player][cell]] -= 1
        if self.padded is not None:
            self.padded[cell] = 0

    # ------------------------------------------------------------ the rule
    def restricted(self, player: int) -> bool:
        """Whether ``player`` has forbidden points (Black under renju)."""
        return player == self.rule.restricted

    def forbidden(self, cell: int) -> bool:
        """Whether a stone of the restricted player (Black under renju) on the empty ``cell`` is forbidden."""
        return (self.padded is not None and self.padded[cell] == 0
                and rules.forbidden_reason(self.padded, cell, self.renju_geometry) is not None)

    def allowed(self, cells, player: int) -> list[int]:
        """``cells`` (in their order) less those forbidden to ``player``."""
        if not self.restricted(player):
            return list(cells)
        return [c for c in cells if not self.forbidden(c)]

    def forbidden_mask(self) -> np.ndarray:
        """A mask over all cells of the empty ones forbidden to the restricted player (Black under renju;
        all False under the other rules)."""
        mask = np.zeros(self.size, dtype=bool)
        if self.padded is not None:
            mask[rules.forbidden_points(self.padded[:-1], self.width, self.height)] = True
        return mask

    def key(self) -> bytes:
        return self.stones.tobytes()

    def live(self, player: int) -> np.ndarray:
        """Which windows are open to ``player``: none of the opponent's stones in them, and not dead."""
        clear = self.against[player] == 0
        if self.flanks is not None:
            clear &= self.flanks[player] < 2
        return clear

    def open_windows(self, player: int, stones: int) -> np.ndarray:
        """Cells of the windows holding ``stones`` of ``player`` and none of the other, not dead."""
        mask = (self.counts[player] == stones) & self.live(player)
        return self.windows[mask]

    def five_cells(self, player: int) -> list[int]:
        """The cells where ``player`` wins at once, in increasing order."""
        rows = self.open_windows(player, self.n - 1)
        if not len(rows):
            return []
        cells = rows[self.stones[rows] == 0]
        return sorted(set(cells.tolist()))

    def four_moves(self, player: int) -> dict[int, set]:
        """Each four move of ``player`` with the five cells it makes."""
        rows = self.open_windows(player, self.n - 2)
        fours: dict[int, set] = {}
        if not len(rows) or self.n < 2:
            return fours
        pairs = rows[self.stones[rows] == 0].reshape(-1, 2).tolist()
        for a, b in pairs:
            fours.setdefault(a, set()).add(b)
            fours.setdefault(b, set()).add(a)
        if self.restricted(player):
            fours = {m: f for m, f in fours.items() if not self.forbidden(m)}
        return fours

    def threats(self, player: int) -> tuple[list[int], list[int], dict[int, set]]:
        """What a node of the VCF reads, from one pass over the windows: ``(five_cells(player),
        five_cells(other), fours)``, ``fours`` being ``four_moves(player)`` with the forbidden points
        still among its moves. When ``player`` has a five cell, the other two are left empty."""
        other = 3 - player
        kind = self.kinds[self.counts[player] * (self.n + 1) + self.counts[other]]
        found = kind.nonzero()[0]
        if not len(found):
            return [], [], {}
        kind = kind[found]
        if self.ends_matter:
            # Dead windows count for nobody: keep each kind where its side's window is live.
            mine, theirs = self.against[player][found] == 0, self.against[other][found] == 0
            if self.flanks is not None:
                mine &= self.flanks[player][found] < 2
                theirs &= self.flanks[other][found] < 2
            kind &= mine * (FIVE | FOUR) + theirs * THEIR_FIVE
        stones = self.stones
        fives, their_fives, fours = set(), set(), {}
        for bits, row in zip(kind.tolist(), self.windows[found].tolist()):
            if bits & FIVE:
                fives.update(cell for cell in row if not stones[cell])
            elif fives:
                continue
            if bits & THEIR_FIVE:
                their_fives.update(cell for cell in row if not stones[cell])
            if bits & FOUR:
                x, y = (cell for cell in row if not stones[cell])
                fours.setdefault(x, set()).add(y)
                fours.setdefault(y, set()).add(x)
        if fives:
            return sorted(fives), [], {}
        return [], sorted(their_fives), fours

    def threat_cells(self, player: int) -> set:
        """Empty cells of windows that could still become ``player``'s five within two moves."""
        rows = self.open_windows(player, self.n - 2) if self.n >= 2 else self.windows[:0]
        return set(rows[self.stones[rows] == 0].tolist())

    def near_mask(self) -> np.ndarray:
        """Empty cells within ``NEAR`` king steps of a stone (the centre on an empty board)."""
        grid = (self.stones != 0).reshape(self.height, self.width)
        if not grid.any():
            mask = np.zeros(self.size, dtype=bool)
            mask[(self.height // 2) * self.width + self.width // 2] = True
            return mask
        padded = np.pad(grid, NEAR)
        near = np.zeros_like(grid)
        for dr in range(2 * NEAR + 1):
            for dc in range(2 * NEAR + 1):
                near |= padded[dr:dr + self.height, dc:dc + self.width]
        return near.ravel() & (self.stones == 0)

    def scores(self, player: int) -> np.ndarray:
        """Score of every cell for ``player`` to move (``-inf`` where it is no candidate: far
        from the stones, or forbidden to ``player``). Dead windows count for nobody."""
        own, other = self.counts[player], self.counts[3 - player]
        mine, theirs = self._clear(player)
        value = np.where(mine, self.attack[own], 0.0) + np.where(theirs, self.defend[other], 0.0)
        total = np.bincount(self.windows.ravel(), weights=np.repeat(value, self.n), minlength=self.size)
        near = self.near_mask()
        if self.restricted(player) and (self.stones == player).sum() >= 4:
            # a forbidden point needs at least four black stones near it (see rules.forbidden_points)
            near &= ~self.forbidden_mask()
        return np.where(near, total, -np.inf)

    def _clear(self, player: int) -> tuple[np.ndarray, np.ndarray]:
        """The windows open to ``player`` (no opponent's stone, not dead), and those open to the opponent."""
        return self.live(player), self.live(3 - player)

    def evaluate(self, player: int) -> float:
        """The position's value for ``player`` to move: their windows' worth less the opponent's.

        A window holding only ``k`` stones of one side is worth ``8 ** k``; the
        side to move gets its windows at twice the worth, as it plays next.
        """
        own, other = self.counts[player], self.counts[3 - player]
        clear_mine, clear_theirs = self._clear(player)
        mine = np.where(clear_mine, self.worth[own], 0.0).sum()
        theirs = np.where(clear_theirs, self.worth[other], 0.0).sum()
        return float(2.0 * mine - theirs)

    def ranked(self, player: int, rng: Optional[np.random.Generator] = None) -> list[int]:
        """Candidate cells for ``player``, best score first (ties in a random order if ``rng``)."""
        score = self.scores(player)
        cells = np.flatnonzero(np.isfinite(score))
        jitter = rng.random(len(cells)) if rng is not None else -cells.astype(np.float64)
        order = np.lexsort((-jitter, -score[cells]))
        return cells[order].tolist()
