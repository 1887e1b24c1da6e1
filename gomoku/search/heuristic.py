"""A threat-aware heuristic player: window scoring plus forced-win searches (VCF, VCT).

Notation. A *window* is any ``n_in_row`` consecutive cells on one line of the
board (``n = n_in_row``); ``ThreatBoard`` keeps, for every window, how many stones
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

* where a player needs *exactly* ``n`` (both under standard, Black under renju),
  a window whose cell just beyond either end holds that player's stone can only
  make an overline: it is *dead* for that player, and none of the above (nor the
  scores below) counts it. A five cell is then a cell that makes exactly ``n``;
* under renju, Black's forbidden points (``rules.forbidden_reason``) are never
  Black's four moves, three moves, answers or candidate moves. A White four
  whose only five cell is forbidden for Black wins, as an open four does: Black
  cannot block it. The same holds in the VCT when Black's only block is forbidden.

Searches, all from the viewpoint of the attacker:

* VCF (victory by continuous fours): ``a`` plays only four moves, ``d`` must
  block the single five cell each time, until ``a`` makes two five cells.
* VCT (victory by continuous threats): ``a`` also plays three moves; ``d`` may
  answer those with any cell of a window that could still become ``a``'s five, or
  with any four move of its own. Every answer must still lose for ``d``.

A point's *score* for the player to move sums, over the windows through it,
a weight for what the window holds: ``ATTACK[k]`` when only the mover's ``k``
stones are in it, ``DEFEND[k]`` when only the opponent's ``k`` stones are (the
classic tuple evaluation). An open three lies in three windows, a closed three
in one, so the sum ranks shapes the way a player would.

Strength levels, each adding to the one below:

0. win at once, else block the opponent's five, else one of the ``LEVEL0_CHOICES``
   best-scored moves at random: a rung for young models, which lose every game to
   level 1 on 15x15 long before they lose none to pure MCTS;
1. win at once, else block the opponent's five, else the best score;
2. play a VCF; against the opponent's VCF play the best-scored move that
   leaves the opponent without one;
3. play a VCT; against the opponent's VCT play the best-scored move that
   leaves the opponent without one;
4. otherwise, instead of the best score, the move that a shallow alpha-beta
   search (negamax over the best-scored ``SEARCH_WIDTH`` moves, ``SEARCH_DEPTH``
   plies, forced blocks followed at no cost in width) rates best; its leaves are
   valued by ``ThreatBoard.evaluate``.

Searches stop at a node budget, never a clock, so a seeded player repeats
itself exactly; ties between equal scores are broken by the seeded generator.
This module uses NumPy and the game layer only.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Optional

import numpy as np

from gomoku.game import rules
from gomoku.game.board import Board, line_cells, line_ends
from gomoku.game.rules import BLACK, RENJU

LEVELS = (0, 1, 2, 3, 4)
DEFAULT_LEVEL = 4
LEVEL0_CHOICES = 5  # level 0 plays one of this many best-scored moves, uniformly

# Budgets of the searches, in nodes (positions visited) per call; a defence
# checks many candidate moves, each with the smaller budget.
VCF_NODES = 2000
VCT_NODES = 1000
DEFENCE_VCF_NODES = 300
DEFENCE_VCT_NODES = 200
VCF_DEPTH = 12  # attacker fours in one VCF line
VCT_DEPTH = 3  # attacker threes in one VCT line
DEFENCE_CANDIDATES = 10  # best-scored moves tried against the opponent's forced win
DEFENCE_EXTRA = 8  # at most this many more: cells of the opponent's line, our fours
VCT_THREES = 8  # best-scored three moves tried at each VCT node
NEAR = 2  # candidate moves lie within this many cells (king steps) of a stone
SEARCH_DEPTH = 3
SEARCH_WIDTH = 8
WIN = 1e9


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
def _touch_geometry(width: int, height: int, n: int, exact: tuple) -> tuple:
    """``touch[player][cell]``: the entries of ``ThreatBoard``'s flat state (rows of ``n_windows``)
    that a stone of ``player`` on ``cell`` adds one to. Row ``player``: the windows through
    ``cell``. When some player needs exactly ``n`` (``exact``, by player), also what closes
    windows (row ``2 + p`` for player ``p``): the windows through ``cell`` for the opponent, and
    if ``player`` needs exactly ``n``, the windows that ``cell`` lies just beyond, for ``player``."""
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
            if any(exact):
                parts.append((5 - player) * count + through[cell])
                if exact[player]:
                    parts.append((2 + player) * count + np.asarray(beyond[cell], dtype=np.int64))
            per_cell.append(np.concatenate(parts))
        touch.append(tuple(per_cell))
    return tuple(touch)


def _weights(n: int) -> tuple[np.ndarray, np.ndarray]:
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


class ThreatBoard:
    """Stones and per-window stone counts of a position, with cheap play and undo.

    ``against[p]`` counts, per window, what closes it for player ``p``: the
    opponent's stones in it, and where ``p`` needs exactly ``n``, ``p``'s stones
    just beyond its ends (the window is dead for ``p``). Under renju the cells are
    also kept as a list with a blocked sentinel, for the forbidden-point test.

    Args:
        board: the position to copy (the board itself is not touched); its rule is kept.
    """

    def __init__(self, board: Board):
        self.width, self.height, self.n = board.width, board.height, board.n_in_row
        self.size = board.size
        self.rule = board.rule
        self.exact = rules.exact_players(board.rule)  # by player: needs exactly n
        self.renju = board.rule == RENJU
        self.windows, self.through = _geometry(self.width, self.height, self.n)
        self.stones = np.asarray(board.cells, dtype=np.int8)
        count = len(self.windows)
        # Rows: 0 unused, 1 and 2 the players' stones per window, 3 and 4 what closes each
        # window for players 1 and 2 (only where some player needs exactly n).
        state = np.zeros((5, count), dtype=np.int16)
        self.counts = state[:3]
        self._flat = state.reshape(-1)
        self._touch = _touch_geometry(self.width, self.height, self.n, self.exact)
        for player in (1, 2):
            self.counts[player] = (self.stones[self.windows] == player).sum(axis=1)
        if any(self.exact):
            padded = np.append(self.stones, 0)  # off the board is no stone
            ends = line_ends(self.width, self.height, self.n)
            for player in (1, 2):
                state[2 + player] = self.counts[3 - player]
                if self.exact[player]:
                    state[2 + player] += (padded[ends] == player).sum(axis=1).astype(np.int16)
            self.against = (None, state[3], state[4])
        else:
            self.against = (None, state[2], state[1])
        self.padded: Optional[list] = None
        if self.renju:
            self.padded = list(board.cells) + [2]
            self.renju_geometry = rules.renju_geometry(self.width, self.height)
        self.attack, self.defend = _weights(self.n)
        worth = 8.0 ** np.arange(self.n + 1)
        worth[0] = 0.0
        self.worth = worth
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
        return self.renju and player == BLACK

    def forbidden(self, cell: int) -> bool:
        """Whether a black stone on the empty ``cell`` is forbidden (only ever under renju)."""
        return (self.padded is not None and self.padded[cell] == 0
                and rules.forbidden_reason(self.padded, cell, self.renju_geometry) is not None)

    def allowed(self, cells, player: int) -> list[int]:
        """``cells`` (in their order) less those forbidden to ``player``."""
        if not self.restricted(player):
            return list(cells)
        return [c for c in cells if not self.forbidden(c)]

    def forbidden_mask(self) -> np.ndarray:
        """A mask over all cells of the empty ones forbidden to Black (all False but under renju)."""
        mask = np.zeros(self.size, dtype=bool)
        if self.padded is not None:
            mask[rules.forbidden_points(self.padded[:-1], self.width, self.height)] = True
        return mask

    def key(self) -> bytes:
        return self.stones.tobytes()

    def _open_windows(self, player: int, stones: int) -> np.ndarray:
        """Cells of the windows holding ``stones`` of ``player`` and none of the other."""
        mask = (self.counts[player] == stones) & (self.against[player] == 0)
        return self.windows[mask]

    def five_cells(self, player: int) -> list[int]:
        """The cells where ``player`` wins at once, in increasing order."""
        rows = self._open_windows(player, self.n - 1)
        if not len(rows):
            return []
        cells = rows[self.stones[rows] == 0]
        return sorted(set(cells.tolist()))

    def four_moves(self, player: int) -> dict[int, set]:
        """Each four move of ``player`` with the five cells it makes."""
        rows = self._open_windows(player, self.n - 2)
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

    def threat_cells(self, player: int) -> set:
        """Empty cells of windows that could still become ``player``'s five within two moves."""
        rows = self._open_windows(player, self.n - 2) if self.n >= 2 else self.windows[:0]
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
        if self.restricted(player) and (self.stones == BLACK).sum() >= 4:
            # a forbidden point needs at least four black stones near it (see rules.forbidden_points)
            near &= ~self.forbidden_mask()
        return np.where(near, total, -np.inf)

    def _clear(self, player: int) -> tuple[np.ndarray, np.ndarray]:
        """The windows open to ``player`` (no opponent's stone, not dead), and those open to the opponent."""
        return self.against[player] == 0, self.against[3 - player] == 0

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


# ---------------------------------------------------------------------- VCF
def find_vcf(tb: ThreatBoard, attacker: int, budget: int = VCF_NODES,
             depth: int = VCF_DEPTH) -> Optional[list[int]]:
    """A VCF for ``attacker`` to move: the line of moves (both sides' moves, in order), or None.

    The line ends with a move that wins or makes two five cells, or (under renju,
    for White) a four whose five cell is forbidden to Black. None also when the
    node budget runs out first.
    """
    tb.nodes = 0
    return _vcf(tb, attacker, depth, tb.nodes + budget, {})


def _vcf(tb: ThreatBoard, a: int, depth: int, limit: int, failed: dict) -> Optional[list[int]]:
    d = 3 - a
    tb.nodes += 1
    mine = tb.five_cells(a)
    if mine:
        return [mine[0]]
    theirs = tb.five_cells(d)
    if len(theirs) > 1 or depth <= 0 or tb.nodes > limit:
        return None
    key = tb.key()
    if failed.get(key, -1) >= depth:
        return None
    fours = tb.four_moves(a)
    if theirs:
        fours = {theirs[0]: fours[theirs[0]]} if theirs[0] in fours else {}
    for move in sorted(fours, key=lambda m: (-len(fours[m]), m)):
        if len(fours[move]) >= 2:
            return [move]
    if tb.restricted(d):
        # Black cannot block a four on a point forbidden to it: such a four wins.
        for move in sorted(fours):
            (reply,) = fours[move]
            tb.play(move, a)
            unblockable = tb.forbidden(reply)
            tb.undo(move, a)
            if unblockable:
                return [move]
    for move in sorted(fours):
        (reply,) = fours[move]
        tb.play(move, a)
        tb.play(reply, d)
        line = _vcf(tb, a, depth - 1, limit, failed)
        tb.undo(reply, d)
        tb.undo(move, a)
        if line is not None:
            return [move, reply] + line
        if tb.nodes > limit:
            return None
    failed[key] = depth
    return None


# ---------------------------------------------------------------------- VCT
def find_vct(tb: ThreatBoard, attacker: int, budget: int = VCT_NODES,
             depth: int = VCT_DEPTH) -> Optional[int]:
    """The first move of a VCT for ``attacker`` to move, or None (also when the budget runs out)."""
    tb.nodes = 0
    return _vct_attack(tb, attacker, depth, tb.nodes + budget, {}, first=True)


def _three_moves(tb: ThreatBoard, a: int) -> list[int]:
    """Moves of ``a`` that threaten an open four, best-scored first (at most ``VCT_THREES``)."""
    if tb.n < 3:
        return []
    rows = tb._open_windows(a, tb.n - 3)
    if not len(rows):
        return []
    candidates = set(rows[tb.stones[rows] == 0].tolist())
    score = tb.scores(a)
    threes = []
    for cell in sorted(candidates, key=lambda c: (-score[c], c)):
        if tb.restricted(a) and tb.forbidden(cell):
            continue
        tb.nodes += 1
        tb.play(cell, a)
        if any(len(w) >= 2 for w in tb.four_moves(a).values()):
            threes.append(cell)
        tb.undo(cell, a)
        if len(threes) >= VCT_THREES:
            break
    return threes


def _vct_attack(tb: ThreatBoard, a: int, depth: int, limit: int, memo: dict, first: bool = False):
    """Whether ``a`` to move wins by threats (the first move of the win when ``first``)."""
    d = 3 - a
    tb.nodes += 1
    mine = tb.five_cells(a)
    if mine:
        return mine[0] if first else True
    if tb.five_cells(d) or tb.nodes > limit:
        return None if first else False
    key = (tb.key(), a, depth)
    if key in memo and not first:
        return memo[key]
    saved = tb.nodes
    line = _vcf(tb, a, VCF_DEPTH, min(limit, tb.nodes + 200), {})
    tb.nodes = max(saved, tb.nodes)
    if line is not None:
        return line[0] if first else True
    result = False
    if depth > 0:
        for move in _three_moves(tb, a):
            tb.play(move, a)
            won = _vct_defend(tb, a, depth - 1, limit, memo)
            tb.undo(move, a)
            if won:
                result = move if first else True
                break
            if tb.nodes > limit:
                break
    memo[key] = result is not False
    return (result if result is not False else None) if first else result


def _vct_defend(tb: ThreatBoard, a: int, depth: int, limit: int, memo: dict) -> bool:
    """Whether ``a``, who just made a threat, wins against every answer of the defender."""
    d = 3 - a
    tb.nodes += 1
    if tb.five_cells(d) or tb.nodes > limit:
        return False
    fives = tb.five_cells(a)
    if len(fives) > 1:
        return True
    answers = set(fives) if fives else tb.threat_cells(a) | set(tb.four_moves(d))
    # Under renju Black's forbidden points are no answers; without one Black is lost.
    for answer in tb.allowed(sorted(answers), d):
        tb.play(answer, d)
        blocks = tb.five_cells(d)
        if len(blocks) > 1 or (blocks and tb.restricted(a) and tb.forbidden(blocks[0])):
            won = False
        elif blocks:
            # The defender made a four: the attacker must block it, then the defender answers again.
            tb.play(blocks[0], a)
            won = _vct_defend(tb, a, depth, limit, memo)
            tb.undo(blocks[0], a)
        else:
            won = _vct_attack(tb, a, depth, limit, memo)
        tb.undo(answer, d)
        if not won:
            return False
    return True


# ------------------------------------------------------------------- choice
def check_level(level, what: str = "the heuristic level") -> None:
    """Raises ValueError naming the levels there are, unless ``level`` is one of them.

    ``what`` names the value in the message, e.g. the flag it came from.
    """
    if level not in LEVELS:
        raise ValueError(f"{what} must be one of {', '.join(map(str, LEVELS))}, got {level!r}")


def choose_move(board: Board, level: int = DEFAULT_LEVEL,
                rng: Optional[np.random.Generator] = None) -> int:
    """The heuristic's move for the player to move on ``board``.

    Args:
        board: the position; the game must not be over.
        level: strength, one of ``LEVELS``.
        rng: breaks ties between equal scores (the lowest cell wins without one), and
            draws level 0's move (from a fresh, unseeded generator without one).

    The move is always legal under the board's rule (never a point forbidden to Black).

    Raises:
        ValueError: the game is over, or an unknown level.
    """
    check_level(level)
    if board.game_over:
        raise ValueError("the game is over: there is no move to choose")
    tb = ThreatBoard(board)
    me = board.current_player
    them = 3 - me
    mine = tb.five_cells(me)
    if mine:
        return mine[0]
    theirs = tb.allowed(tb.five_cells(them), me)
    if theirs:
        return theirs[0]
    # (An opponent's five that cannot be blocked, on a forbidden point, is lost anyway.)
    ranked = tb.ranked(me, rng)
    if not ranked:
        ranked = board.legal_moves()  # every cell near the stones is forbidden to Black
    if level == 0:
        rng = rng if rng is not None else np.random.default_rng()
        return ranked[int(rng.integers(min(LEVEL0_CHOICES, len(ranked))))]
    if level == 1:
        return ranked[0]
    line = find_vcf(tb, me)
    if line is not None:
        return line[0]

    def their_vcf() -> bool:
        return find_vcf(tb, them, DEFENCE_VCF_NODES) is not None

    def their_vct() -> bool:
        return find_vct(tb, them, DEFENCE_VCT_NODES) is not None

    threat = find_vcf(tb, them)
    if threat is not None:
        checks = [their_vcf] if level == 2 else [their_vcf, their_vct]
        return _defend(tb, me, ranked, threat, checks)
    if level >= 3:
        move = find_vct(tb, me)
        if move is not None:
            return move
        first = find_vct(tb, them)
        if first is not None:
            return _defend(tb, me, ranked, [first], [their_vct])
    if level >= 4:
        return _alpha_beta_root(tb, me, ranked)
    return ranked[0]


def _alpha_beta_root(tb: ThreatBoard, me: int, ranked: list[int]) -> int:
    """The best of the best-scored moves by negamax; the better-ranked move wins a tie."""
    best, best_value = ranked[0], -np.inf
    alpha = -np.inf
    for move in ranked[:SEARCH_WIDTH]:
        tb.play(move, me)
        value = -_negamax(tb, 3 - me, SEARCH_DEPTH - 1, -np.inf, -alpha)
        tb.undo(move, me)
        if value > best_value:
            best, best_value = move, value
            alpha = max(alpha, value)
    return best


def _negamax(tb: ThreatBoard, player: int, depth: int, alpha: float, beta: float) -> float:
    """The value for ``player`` to move, searched ``depth`` plies over the best-scored moves."""
    if tb.five_cells(player):
        return WIN
    theirs = tb.five_cells(3 - player)
    if len(theirs) > 1:
        return -WIN
    if theirs and tb.restricted(player) and tb.forbidden(theirs[0]):
        return -WIN  # Black cannot block on a forbidden point
    if depth <= 0 and not theirs:
        return tb.evaluate(player)
    moves = theirs if theirs else tb.ranked(player)[:SEARCH_WIDTH]
    if not moves:
        return 0.0
    best = -np.inf
    for move in moves:
        tb.play(move, player)
        value = -_negamax(tb, 3 - player, depth - 1, -beta, -alpha)
        tb.undo(move, player)
        if value > best:
            best = value
            if value > alpha:
                alpha = value
                if alpha >= beta:
                    break
    return best


def _defend(tb: ThreatBoard, me: int, ranked: list[int], threat: list[int],
            checks: list[Callable[[], bool]]) -> int:
    """The best-ranked move after which no check says the opponent still wins.

    Tried: the best ``DEFENCE_CANDIDATES`` moves, the cells of the opponent's
    winning line, and every four move of ours (a four gains a tempo). A move
    that passes only the first checks is kept in case none passes them all;
    the best-ranked move is played if none passes even the first.
    """
    tried = ranked[:DEFENCE_CANDIDATES]
    extra = tb.allowed([c for c in threat if tb.stones[c] == 0], me) + sorted(tb.four_moves(me))
    position = {c: i for i, c in enumerate(ranked)}
    extra.sort(key=lambda c: position.get(c, len(ranked)))
    best, best_passed = ranked[0], 0
    for cell in tried + [c for c in dict.fromkeys(extra) if c not in tried][:DEFENCE_EXTRA]:
        tb.play(cell, me)
        passed = 0
        for check in checks:
            if check():
                break
            passed += 1
        tb.undo(cell, me)
        if passed == len(checks):
            return cell
        if passed > best_passed:
            best, best_passed = cell, passed
    return best


class HeuristicPlayer:
    """Plays ``choose_move`` at a fixed level; follows ``mcts.MCTSPlayer``'s protocol.

    It needs no evaluator: ``next_leaf`` always returns None, so a lockstep runner
    calls ``choose`` at once.

    Args:
        level: strength, one of ``LEVELS``.
        seed: seeds the tie-breaking generator.
        name: shown in UIs and logs.

    Raises:
        ValueError: an unknown level.
    """

    evaluator = None
    n_playout = 1
    playouts_run = 0  # no playouts
    progress = 0.0

    def __init__(self, level: int = DEFAULT_LEVEL, seed: Optional[int] = None, name: Optional[str] = None):
        check_level(level)
        self.level = level
        self.rng = np.random.default_rng(seed)
        self.name = name or f"heuristic {level}"

    def next_leaf(self, board: Board):
        return None

    def receive(self, leaf, board: Board, priors: np.ndarray, value: float) -> None:
        raise RuntimeError("the heuristic player asks for no evaluations")

    def choose(self, board: Board) -> tuple[int, np.ndarray]:
        """The move, with pi all on it."""
        move = choose_move(board, self.level, self.rng)
        pi = np.zeros(board.size)
        pi[move] = 1.0
        return move, pi

    def notify_move(self, move: int) -> None:
        pass

    def reset(self) -> None:
        pass

    def get_action(self, board: Board, return_probs: bool = False, stop=None):
        """The chosen move (and pi); ``stop`` has nothing to end, a move takes well under a second."""
        move, pi = self.choose(board)
        return (move, pi) if return_probs else move

    def __str__(self) -> str:
        return self.name
