"""The VCF search (victory by continuous fours) on a ``LineBoard``: the one VCF of the Python side.

It answers the threat searches of the search layer (``vct``, ``tree_threats``,
``heuristic``: the line of a win) and the VCF planes of input version 2
(``features.has_vcf``: whether there is one, with the planes' smaller budget).

From the viewpoint of the attacker ``a`` (notation: ``line_board``), at each node:
``a`` wins with a five cell (the lowest); two five cells of the defender ``d``, no
depth left or the node budget spent end the line; a position already failed with as
much depth left fails again. Else ``a`` plays a four move (against one five cell of
``d`` only the four that blocks it; under renju never Black's forbidden points): a four
with two five cells wins at once (the most five cells first, then the lowest cell),
and so, against Black under renju, does a four whose five cell Black may not take.
Then each four in increasing order, ``d`` blocking its five cell, is searched
deeper. The compiled core's VCF (``search.core.vcf``) visits the same positions in the
same order.

A VCF is a proof: every reply of the defender is forced. The search stops at a node
budget, never a clock, so it repeats itself exactly. This module uses the game layer only.
"""

from __future__ import annotations

from typing import Optional

from gomoku.game.line_board import LineBoard

VCF_NODES = 2000
"""the default budget of ``find_vcf``, in nodes (positions visited); the planes use ``features``' own"""
VCF_DEPTH = 12
"""the default depth of ``find_vcf``: attacker fours in one line"""


def find_vcf(board: LineBoard, attacker: int, budget: int = VCF_NODES,
             depth: int = VCF_DEPTH) -> Optional[list[int]]:
    """A VCF for ``attacker`` to move: the line of moves (both sides' moves, in order), or None.

    The line ends with a move that wins or makes two five cells, or (under renju,
    for White) a four whose five cell is forbidden to Black. None also when the
    node budget runs out first. Counts its nodes in ``board.nodes`` from 0.
    """
    board.nodes = 0
    return vcf_line(board, attacker, depth, budget, {})


def vcf_line(board: LineBoard, a: int, depth: int, limit: int, failed: dict) -> Optional[list[int]]:
    """``find_vcf`` within a larger search: counts on in ``board.nodes`` and stops once it passes
    ``limit``; ``failed`` maps the positions found lost to the depth they were searched with."""
    d = 3 - a
    board.nodes += 1
    mine, theirs, fours = board.threats(a)
    if mine:
        return [mine[0]]
    if len(theirs) > 1 or depth <= 0 or board.nodes > limit:
        return None
    key = board.key()
    if failed.get(key, -1) >= depth:
        return None
    if theirs:
        fours = {theirs[0]: fours[theirs[0]]} if theirs[0] in fours else {}
    if board.restricted(a):
        fours = {m: f for m, f in fours.items() if not board.forbidden(m)}
    for move in sorted(fours, key=lambda m: (-len(fours[m]), m)):
        if len(fours[move]) >= 2:
            return [move]
    if board.restricted(d):
        # Black cannot block a four on a point forbidden to it: such a four wins.
        for move in sorted(fours):
            (reply,) = fours[move]
            board.play(move, a)
            unblockable = board.forbidden(reply)
            board.undo(move, a)
            if unblockable:
                return [move]
    for move in sorted(fours):
        (reply,) = fours[move]
        board.play(move, a)
        board.play(reply, d)
        line = vcf_line(board, a, depth - 1, limit, failed)
        board.undo(reply, d)
        board.undo(move, a)
        if line is not None:
            return [move, reply] + line
        if board.nodes > limit:
            return None
    failed[key] = depth
    return None
