"""The VCT search (victory by continuous threats) on a ``LineBoard``, over the game layer's VCF.

Both from the viewpoint of the attacker (notation: ``line_board``):

* VCF (victory by continuous fours, ``gomoku.game.vcf``): ``a`` plays only four
  moves, ``d`` must block the single five cell each time, until ``a`` makes two
  five cells;
* VCT: ``a`` also plays three moves; ``d`` may answer those with any cell of a
  window that could still become ``a``'s five, or with any four move of its own.
  Every answer must still lose for ``d``. At each of ``a``'s nodes a VCF is tried first.

Under renju a White threat whose only block is forbidden for Black wins, as a
White four whose only five cell is forbidden does in the VCF.

A VCT is no proof, as its defender tries only the answers above. Searches stop at
a node budget, never a clock, so they repeat themselves exactly. This module uses
NumPy and the game layer only.
"""

from __future__ import annotations

from typing import Optional

from gomoku.game.line_board import LineBoard
from gomoku.game.vcf import VCF_DEPTH, vcf_line

# Budgets of the searches, in nodes (positions visited) per call.
VCT_NODES = 1000
VCT_DEPTH = 3  # attacker threes in one VCT line
VCT_THREES = 8  # best-scored three moves tried at each VCT node


# ---------------------------------------------------------------------- VCT
def find_vct(tb: LineBoard, attacker: int, budget: int = VCT_NODES,
             depth: int = VCT_DEPTH) -> Optional[int]:
    """The first move of a VCT for ``attacker`` to move, or None (also when the budget runs out)."""
    tb.nodes = 0
    return _vct_attack(tb, attacker, depth, tb.nodes + budget, {}, first=True)


def _three_moves(tb: LineBoard, a: int) -> list[int]:
    """Moves of ``a`` that threaten an open four, best-scored first (at most ``VCT_THREES``)."""
    if tb.n < 3:
        return []
    rows = tb.open_windows(a, tb.n - 3)
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


def _vct_attack(tb: LineBoard, a: int, depth: int, limit: int, memo: dict, first: bool = False):
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
    line = vcf_line(tb, a, VCF_DEPTH, min(limit, tb.nodes + 200), {})
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


def _vct_defend(tb: LineBoard, a: int, depth: int, limit: int, memo: dict) -> bool:
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
