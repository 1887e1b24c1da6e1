"""A threat-aware heuristic player: window scoring plus the threat searches (VCF, VCT).

Moves are scored on a ``line_board.LineBoard`` (the notation, and the
scores, are that module's); the forced wins are ``gomoku.game.vcf``'s VCF and
``vct``'s VCT.

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
   valued by ``LineBoard.evaluate``.

Searches stop at a node budget, never a clock, so a seeded player repeats
itself exactly; ties between equal scores are broken by the seeded generator.
This module uses NumPy and the game layer only.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from gomoku.game.board import Board
from gomoku.game.line_board import LineBoard
from gomoku.game.vcf import find_vcf
from gomoku.search.player_protocol import SearchResult
from gomoku.search.vct import find_vct

LEVELS = (0, 1, 2, 3, 4)
DEFAULT_LEVEL = 4
LEVEL0_CHOICES = 5  # level 0 plays one of this many best-scored moves, uniformly

# Budgets of the defence's searches, in nodes per call: a defence checks many candidate
# moves, each with these smaller budgets.
DEFENCE_VCF_NODES = 300
DEFENCE_VCT_NODES = 200
DEFENCE_CANDIDATES = 10  # best-scored moves tried against the opponent's forced win
DEFENCE_EXTRA = 8  # at most this many more: cells of the opponent's line, our fours
SEARCH_DEPTH = 3
SEARCH_WIDTH = 8
WIN = 1e9


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
    tb = LineBoard(board)
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


def _alpha_beta_root(tb: LineBoard, me: int, ranked: list[int]) -> int:
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


def _negamax(tb: LineBoard, player: int, depth: int, alpha: float, beta: float) -> float:
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


def _defend(tb: LineBoard, me: int, ranked: list[int], threat: list[int],
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
    """Plays ``choose_move`` at a fixed level; follows ``mcts_player.MCTSPlayer``'s protocol.

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

    def choose(self, board: Board) -> SearchResult:
        """The move, with pi all on it."""
        move = choose_move(board, self.level, self.rng)
        pi = np.zeros(board.size)
        pi[move] = 1.0
        return SearchResult(move, pi)

    def notify_move(self, move: int) -> None:
        pass

    def reset(self) -> None:
        pass

    def get_action(self, board: Board, return_probs: bool = False, stop=None):
        """The chosen move (and pi); ``stop`` has nothing to end, a move takes well under a second."""
        result = self.choose(board)
        return (result.move, result.pi) if return_probs else result.move

    def __str__(self) -> str:
        return self.name
