"""The Gomocup protocol's data: a position as the manager sends it, the time limits, the parsing of lines.

``engine`` documents the protocol (the commands and their answers); ``brain`` answers it
with these pieces. A cell ``x,y`` of the protocol is the move ``y * width + x`` of
``board.Board``, and a stone is ``OWN`` or ``OPPONENT``'s from the engine's viewpoint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gomoku.game.board import COLUMN_LETTERS, Board
from gomoku.game.rules import FREESTYLE

OWN, OPPONENT = 1, 2  # a stone's owner, as BOARD lines write it
CONTINUOUS_MARK = 3  # BOARD field of a continuous game's finished line (not supported)
UNLIMITED_MS = 2147483647  # the protocol's time_left when the match has no time limit

# The first playout only expands the root; the second visits the child the
# priors like best, so that a hurried move is the policy's move, not cell 0,0.
MIN_PLAYOUTS = 2
# Rough bytes of one expanded tree node: four float64/int64 arrays over the legal moves, plus the object.
NODE_BYTES_PER_CELL = 32
NODE_BYTES = 400
TREE_MEMORY_SHARE = 0.25  # of max_memory; the rest is Python, Paddle and the net's cache

# Numbers of at most 9 digits: anything longer is off every board (and Python's int() refuses
# strings of thousands of digits with an error of its own).
# ASCII digits only: Python's \d also matches Arabic-Indic and fullwidth digits.
_PAIR = re.compile(r"\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*", re.ASCII)
TRIPLE_RE = re.compile(r"\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*,\s*(-?\d{1,9})\s*", re.ASCII)
SIZE_RE = re.compile(r"\s*(-?\d{1,9})\s*", re.ASCII)
MAX_SIDE = len(COLUMN_LETTERS)  # the widest board the rules module labels; the tallest we build


class ProtocolError(ValueError):
    """Input the engine answers with ``ERROR`` and otherwise ignores."""


def shown(text: str, most: int = 40) -> str:
    """``text`` quoted for an error message, cut short if long (an answer is one short line)."""
    return repr(text if len(text) <= most else text[:most] + "...")


def parse_pair(text: str, what: str) -> tuple[int, int]:
    """Reads ``"a,b"`` (two integers) or raises ProtocolError naming ``what`` was expected."""
    match = _PAIR.fullmatch(text)
    if not match:
        raise ProtocolError(f"cannot read {shown(text)}: expected {what}")
    return int(match.group(1)), int(match.group(2))


# --------------------------------------------------------------------- limits
@dataclass
class TimeControl:
    """The limits a manager sends with ``INFO``, and how much of them one move may use.

    Times are in milliseconds, as the protocol sends them.
    """

    timeout_turn: int = 5000
    """time for one move; 0 asks for an instant move (the Gomocup template assumes 30 s when
    no INFO comes, we assume 5 s so that a forgotten INFO does not stall a game)"""
    timeout_match: int = 0
    """time for the whole match, 0 for no limit"""
    time_left: int = UNLIMITED_MS
    """time left in the match; the manager sends it before every move of a timed match"""
    max_memory: int = 0
    """memory limit in bytes, 0 for no limit"""
    margin_ms: int = 100
    """kept back from every move for reading the command, writing the reply and a slow last playout"""
    margin_share: float = 0.05
    """and this share of the move's time on top, for the jitter of a busy machine"""
    horizon: int = 25
    """a move may spend at most 1/horizon of the time left in the match"""

    def move_seconds(self, empty_cells: int) -> float:
        """How long this move may search, margin already taken off; 0 asks for a minimal search.

        Args:
            empty_cells: empty cells on the board; half of them (our moves at most)
                bounds the number of moves the time left must still be shared by.
        """
        if self.timeout_turn <= 0:
            return 0.0
        budget = self._budget_ms(empty_cells)
        budget -= self.margin_ms + self.margin_share * budget
        return max(0.0, budget / 1000.0)

    def hard_seconds(self, empty_cells: int) -> Optional[float]:
        """When the engine's watchdog answers for a search that has not ended: halfway between
        ``move_seconds`` and the move's whole time (None for an instant move, which has no watchdog)."""
        if self.timeout_turn <= 0:
            return None
        budget = self._budget_ms(empty_cells)
        budget -= (self.margin_ms + self.margin_share * budget) / 2
        return max(0.0, budget / 1000.0)

    def _budget_ms(self, empty_cells: int) -> float:
        """The move's whole time: ``timeout_turn``, or less where the match's time left is short."""
        budget = float(self.timeout_turn)
        if self.time_left < UNLIMITED_MS:
            moves_left = max(1, min(self.horizon, (empty_cells + 1) // 2))
            budget = min(budget, self.time_left / moves_left)
        return budget

    def tree_limit(self, cells: int) -> Optional[int]:
        """The most nodes the search tree may hold within ``max_memory`` (None: no limit)."""
        if self.max_memory <= 0:
            return None
        node_bytes = NODE_BYTES_PER_CELL * cells + NODE_BYTES
        return max(MIN_PLAYOUTS, int(self.max_memory * TREE_MEMORY_SHARE) // node_bytes)

    def spend(self, seconds: float) -> None:
        """Takes a move's time off ``time_left``, in case the manager does not send it again."""
        if self.time_left < UNLIMITED_MS:
            self.time_left -= int(seconds * 1000)


# ------------------------------------------------------------------- position
class Position:
    """The stones of the game in the order they came, each own or the opponent's.

    This, not a ``Board``, is the engine's state: ``BOARD`` may send stones in any
    order and ``TAKEBACK`` may lift any stone, which a move history cannot follow.
    ``to_board`` turns it into a ``Board`` with the engine to move.
    """

    def __init__(self, width: int, height: int):
        self.width = width
        self.height = height
        self.stones: list[tuple[int, int]] = []  # (move, OWN or OPPONENT)
        self._owner: dict[int, int] = {}

    def move_of(self, x: int, y: int) -> int:
        """The move index of cell ``x,y``; raises ProtocolError off the board."""
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise ProtocolError(f"{x},{y} is off the {self.width}x{self.height} board")
        return y * self.width + x

    def label(self, move: int) -> str:
        """``x,y`` of a move, as the protocol writes it."""
        y, x = divmod(move, self.width)
        return f"{x},{y}"

    def add(self, move: int, owner: int) -> None:
        """Puts a stone; raises ProtocolError if the cell is taken."""
        if move in self._owner:
            raise ProtocolError(f"{self.label(move)} is already occupied")
        self._owner[move] = owner
        self.stones.append((move, owner))

    def remove(self, move: int) -> None:
        """Lifts a stone; raises ProtocolError if the cell is empty."""
        if move not in self._owner:
            raise ProtocolError(f"there is no stone on {self.label(move)} to take back")
        owner = self._owner.pop(move)
        self.stones.remove((move, owner))

    @property
    def empty_cells(self) -> int:
        return self.width * self.height - len(self.stones)

    def to_board(self, n_in_row: int, rule: str = FREESTYLE) -> Board:
        """A ``Board`` holding these stones with the engine to move.

        The stones are replayed alternately, the opponent's latest one last, so the
        net sees the real last move and, in a normal game, the real parity (own
        stones equal to the opponent's when the engine opened the game, one fewer
        otherwise). A position no game can reach (say three own stones and one of
        the opponent's, set up by hand) has its surplus stones played first, each
        by setting ``current_player`` before ``Board.play``. Every stone is in the
        history either way, so ``undo``, draws and the winner work as in a game.

        The winner cannot be set falsely on the way: a line that is complete at
        some step stays complete in the final position. So ``board.game_over``
        is True exactly when the position itself has a line or a full board.
        """
        own = [m for m, who in self.stones if who == OWN]
        opponent = [m for m, who in self.stones if who == OPPONENT]
        order = []  # built from the end backwards: the opponent's latest stone, ours, theirs...
        want_opponent = True
        while own or opponent:
            if opponent and (want_opponent or not own):
                order.append((opponent.pop(), OPPONENT))
            else:
                order.append((own.pop(), OWN))
            want_opponent = not want_opponent
        order.reverse()
        me = 2 if order and order[0][1] == OPPONENT else 1
        board = Board(self.width, self.height, n_in_row, start_player=1, rule=rule)
        for move, who in order:
            board.current_player = me if who == OWN else 3 - me
            board.play(move)
        board.current_player = me
        return board
