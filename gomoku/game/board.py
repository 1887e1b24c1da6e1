"""Gomoku rules: the board, legal moves, the winner, and the network's input planes.

Notation used across the project:

* Players are ``1`` and ``2``; ``start_player`` moves first.
* A move is a flat index ``row * width + col``; ``location(move) == (row, col)``.
  Row 0 is the bottom row when a board is drawn, so the human label of a move is
  its column letter and its row number counted from 1 at the bottom (``h8`` is
  the centre of a 15x15 board).
* The rule (a ``gomoku.game.rules.Rule``, read as ``board.rule``): ``freestyle`` (the
  default) lets ``n_in_row`` *or more* stones in a line win; ``standard`` wants exactly
  ``n_in_row``; ``renju`` wants exactly five from Black (player 1) and five or more from
  White, and forbids Black's overlines, double fours and double threes; ``caro`` is
  freestyle where a line of exactly ``n_in_row`` between two opponent's stones does not
  win. A full board without a winner is a draw (``winner == 0``), and so is a renju
  position where Black must move and every empty cell is forbidden.

This module imports neither paddle nor pygame.
"""

from __future__ import annotations

import re
import string
from numbers import Integral
from typing import Optional, Sequence

import numpy as np

from gomoku.game import rules
from gomoku.game.lines import line_cells, line_ends, rays
from gomoku.game.rules import FREESTYLE

DRAW = 0
COLUMN_LETTERS = string.ascii_lowercase


class IllegalMoveError(ValueError):
    """A move that the rules do not allow; the board is left unchanged."""


class Board:
    """A Gomoku position and its history.

    Args:
        width: number of columns.
        height: number of rows.
        n_in_row: stones in a line needed to win.
        start_player: the player who moves first, 1 or 2 (1 under renju: Black).
        rule: a rule's name or ``Rule`` (``gomoku.game.rules.RULES``); ``board.rule`` is the ``Rule``.

    Raises:
        ValueError: on sizes that cannot hold a game, an unknown rule, a rule played with
            another ``n_in_row`` (renju: 5) or whose first player is the other one.
    """

    def __init__(self, width: int = 8, height: int = 8, n_in_row: int = 5, start_player: int = 1,
                 rule: str = FREESTYLE):
        for name, value in (("width", width), ("height", height), ("n_in_row", n_in_row)):
            if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if width > len(COLUMN_LETTERS):
            raise ValueError(f"width {width} is larger than the {len(COLUMN_LETTERS)} columns we can label")
        if width < n_in_row or height < n_in_row:
            raise ValueError(
                f"the board {width}x{height} cannot hold {n_in_row} in a row: "
                f"width and height must be at least n_in_row"
            )
        self.rule = rules.check_rule(rule, n_in_row)
        self.width = int(width)
        self.height = int(height)
        self.n_in_row = int(n_in_row)
        self.size = self.width * self.height
        # n_in_row cells each side of a cell: one past the longest run on one side that can
        # still belong to a line of exactly n_in_row, so a run's ends can be read.
        self._rays = rays(self.width, self.height, self.n_in_row + 1)
        # How many moves must have been played before play() asks whether the game is drawn:
        # a board can only fill up at the last move, while a player with forbidden points
        # (Black under renju) may be left without an allowed move at any time.
        self._draw_test_from = 0 if self.rule.restricted else self.size
        self.reset(start_player)

    # ------------------------------------------------------------------ state
    def reset(self, start_player: int = 1) -> None:
        """Empties the board for a new game that ``start_player`` opens."""
        if start_player not in (1, 2):
            raise ValueError(f"start_player must be 1 or 2, got {start_player!r}")
        first = self.rule.first_player
        if first and start_player != first:
            raise ValueError(f"under {self.rule} player {first} moves first: start_player must be {first}")
        self.start_player = start_player
        self.current_player = start_player
        self.cells = [0] * self.size  # 0 empty, else the player's stone
        self.history: list[int] = []
        self.winner: Optional[int] = None  # None while the game goes on; 0 for a draw

    def copy(self) -> "Board":
        """A cheap independent copy (no deep copy of the geometry tables); keeps the rule."""
        other = Board.__new__(Board)
        other.__dict__.update(self.__dict__)
        other.cells = self.cells.copy()
        other.history = self.history.copy()
        return other

    @property
    def last_move(self) -> Optional[int]:
        return self.history[-1] if self.history else None

    @property
    def opponent(self) -> int:
        """The player who is not to move."""
        return 3 - self.current_player

    @property
    def game_over(self) -> bool:
        return self.winner is not None

    def stones(self) -> np.ndarray:
        """The cells as a uint8 array (0 empty, else the player), a fresh copy."""
        return np.frombuffer(bytes(self.cells), dtype=np.uint8)

    def legal_moves(self) -> list[int]:
        """The empty cells, in increasing order (none once the game is over), less the forbidden
        points of the player to move (Black's under renju)."""
        if self.winner is not None:
            return []
        empty = [m for m, stone in enumerate(self.cells) if stone == 0]
        if self.rule.restricted == self.current_player:
            forbidden = set(self.forbidden_moves())
            if forbidden:
                return [m for m in empty if m not in forbidden]
        return empty

    def winning_moves(self) -> list[int]:
        """The legal moves that win at once for the player to move, under the rule, in increasing order.

        A move that makes a winning line is never a forbidden point, so the empty cells are
        all the candidates.
        """
        if self.winner is not None:
            return []
        player = self.current_player
        return [m for m, stone in enumerate(self.cells) if stone == 0 and self._wins_at(m, player)]

    def is_forbidden(self, move: int) -> bool:
        """Whether ``move`` is an empty cell forbidden to the player to move: only for the
        rule's restricted player (Black under renju), and never for a move that makes exactly five."""
        return self.forbidden_reason(move) is not None

    def forbidden_reason(self, move: int) -> Optional[str]:
        """``"overline"``, ``"double four"`` or ``"double three"`` when ``is_forbidden(move)``, else None.

        Raises:
            IllegalMoveError: ``move`` is not a cell of this board.
        """
        if isinstance(move, bool) or not isinstance(move, Integral) or not 0 <= move < self.size:
            raise IllegalMoveError(f"move {move!r} is not a cell of the {self.width}x{self.height} board")
        if self.rule.restricted != self.current_player or self.cells[move] != 0:
            return None
        geometry = rules.renju_geometry(self.width, self.height)
        return rules.forbidden_reason(self.cells + [2], int(move), geometry)

    def forbidden_moves(self) -> list[int]:
        """The empty cells forbidden to the player to move, in increasing order: empty
        unless the player to move is the rule's restricted one (Black under renju) and the game goes on."""
        if self.rule.restricted != self.current_player or self.winner is not None:
            return []
        return rules.forbidden_points(self.cells, self.width, self.height)

    def can_win_now(self) -> bool:
        """Whether the player to move has a move that wins at once (``winning_moves`` is not empty).

        One vectorised pass over every line of ``n_in_row`` cells: some line holds
        ``n_in_row - 1`` of the player's stones and one empty cell. Cheap enough to
        ask at every new node of a search.
        """
        found = self._lines_one_short()
        return found is not None and bool(self._short_for(self.current_player, *found[1:]).any())

    def completing_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The empty cells that would complete a line: ``(for the player to move, for the opponent)``.

        Each is a sorted array of move indices, from the same one pass over every
        line as ``can_win_now``: the empty cell of a line one short for a player.
        """
        none = np.zeros(0, dtype=np.int64)
        found = self._lines_one_short()
        if found is None:
            return none, none
        lines, windows, open_one = found
        cells = []
        for player in (self.current_player, 3 - self.current_player):
            hit = self._short_for(player, windows, open_one)
            cells.append(np.unique(lines[hit][windows[hit] == 0]) if hit.any() else none)
        return cells[0], cells[1]

    def _lines_one_short(self):
        """Every line of ``n_in_row`` cells, the stones on each, and which have exactly one empty
        cell; None while no line can be one stone short of a player's line (or the game is over)."""
        if self.winner is not None or len(self.history) < 2 * self.n_in_row - 3:
            return None
        lines = line_cells(self.width, self.height, self.n_in_row)
        windows = self.stones()[lines]
        return lines, windows, (windows == 0).sum(axis=1) == 1

    def _short_for(self, player: int, windows: np.ndarray, open_one: np.ndarray) -> np.ndarray:
        """Which lines hold ``n_in_row - 1`` of ``player``'s stones and one empty cell, and
        would win once filled: the rule's ``dead_lines`` reads the cells just beyond their ends
        (an exact player's own stone there makes an overline; under caro the opponent's
        stones at both ends block the five)."""
        short = open_one & ((windows == player).sum(axis=1) == self.n_in_row - 1)
        if self.rule.ends_matter:
            ends = self._padded_stones()[line_ends(self.width, self.height, self.n_in_row)]
            short &= ~self.rule.dead_lines(player, ends)
        return short

    def _padded_stones(self) -> np.ndarray:
        """``stones()`` followed by one empty cell, which ``line_ends`` uses for off the board."""
        return np.frombuffer(bytes(self.cells) + b"\0", dtype=np.uint8)

    # ------------------------------------------------------------------ moves
    def check_move(self, move) -> int:
        """Returns ``move`` as an int if it is legal now, else raises IllegalMoveError."""
        if isinstance(move, bool) or not isinstance(move, Integral):
            raise IllegalMoveError(f"a move must be an integer cell index, got {move!r}")
        move = int(move)
        if self.winner is not None:
            raise IllegalMoveError("the game is over: no more moves")
        if not 0 <= move < self.size:
            raise IllegalMoveError(
                f"move {move} is off the {self.width}x{self.height} board (0..{self.size - 1})"
            )
        if self.cells[move] != 0:
            raise IllegalMoveError(f"move {move} ({self.move_to_label(move)}) is on an occupied cell")
        if self.rule.restricted == self.current_player:
            reason = self.forbidden_reason(move)
            if reason is not None:
                colour = "Black" if self.current_player == rules.BLACK else "White"
                raise IllegalMoveError(
                    f"move {move} ({self.move_to_label(move)}) is forbidden for {colour} under {self.rule}: {reason}")
        return move

    def do_move(self, move) -> None:
        """Plays ``move`` for the player to move.

        Raises:
            IllegalMoveError: the move is not an integer, off the board, on an
                occupied cell, forbidden for Black under renju, or the game is over.
                The board is unchanged.
        """
        self.play(self.check_move(move))

    def play(self, move: int) -> None:
        """Plays a move already known to be legal (the search's fast path).

        The rule only costs time when the move makes a line of ``n_in_row`` or more (does it
        win?) and, under renju, after White's moves (has Black a move left?).
        """
        player = self.current_player
        self.cells[move] = player
        self.history.append(move)
        if self._wins_at(move, player):
            self.winner = player
        elif len(self.history) >= self._draw_test_from:
            # A full board is a draw; under renju (where _draw_test_from is 0) so is a
            # position after White's move where every empty cell is forbidden to Black.
            if len(self.history) == self.size or (3 - player == self.rule.restricted and not
                                                  rules.black_has_allowed_move(self.cells, self.width, self.height)):
                self.winner = DRAW
        self.current_player = 3 - player

    def undo(self) -> int:
        """Takes back the last move and returns it.

        Raises:
            IllegalMoveError: there is no move to take back.
        """
        if not self.history:
            raise IllegalMoveError("there is no move to undo")
        move = self.history.pop()
        self.current_player = self.cells[move]
        self.cells[move] = 0
        self.winner = None
        return move

    def _winning_run(self, move: int, player: int, table: Optional[tuple] = None) -> Optional[list]:
        """The board's one ray walk: the cells of a winning line of ``player`` through ``move``
        (``move`` counted as ``player``'s whatever it holds), else None.

        Per direction it counts ``player``'s stones along both rays from ``move`` (nearest first,
        up to the first other cell) and asks the rule whether the line wins, with the cells just
        beyond its ends (0 off the board). ``table`` is a ``rays`` table: ``self._rays`` (the win
        test: ``n_in_row`` cells per side shows the ends of any line exactly ``n_in_row`` long,
        and a longer one is an overline whatever lies beyond) or rays to the board's edge, for
        the whole line."""
        cells, n, rule = self.cells, self.n_in_row, self.rule
        for forward, backward in (table or self._rays)[move]:
            ahead = behind = 0
            for cell in forward:
                if cells[cell] != player:
                    break
                ahead += 1
            for cell in backward:
                if cells[cell] != player:
                    break
                behind += 1
            if 1 + ahead + behind >= n and rule.line_wins(
                    player, 1 + ahead + behind, n, cells[backward[behind]] if behind < len(backward) else 0,
                    cells[forward[ahead]] if ahead < len(forward) else 0):
                return [move, *forward[:ahead], *backward[:behind]]
        return None

    def _wins_at(self, move: int, player: int) -> bool:
        """Whether a stone of ``player`` on ``move`` lies (or would lie) on a winning line under the rule."""
        return self._winning_run(move, player) is not None

    def winning_line(self) -> list[int]:
        """The cells of the line that won the game (all of it, for an overline that won), else []."""
        if not self.winner:
            return []
        move = self.history[-1]
        whole = rays(self.width, self.height, max(self.width, self.height) + 1)  # every ray to the edge
        return sorted(self._winning_run(move, self.cells[move], whole) or [])

    # ----------------------------------------------------------------- planes
    def planes(self) -> np.ndarray:
        """The network input of input version 1, ``(4, height, width)`` float32, for the player to move.

        Plane 0: own stones; 1: opponent's stones; 2: the last move; 3: all ones
        when the player to move is the one who opened the game. Later input
        versions begin with these four (``gomoku.game.features`` builds every version).
        """
        out = np.zeros((4, self.size), dtype=np.float32)
        self.fill_planes(out)
        return out.reshape(4, self.height, self.width)

    def fill_planes(self, out: np.ndarray) -> None:
        """Writes the planes into a zeroed ``(4, size)`` float32 array (``fill_base_planes`` for one board)."""
        fill_base_planes([self], bytes(self.cells), out[None])

    # ------------------------------------------------------------ coordinates
    def location(self, move: int) -> tuple[int, int]:
        """``(row, col)`` of a move index."""
        return divmod(int(move), self.width)

    def move_at(self, row: int, col: int) -> int:
        """The move index of ``(row, col)``; raises IllegalMoveError off the board."""
        if not (0 <= row < self.height and 0 <= col < self.width):
            raise IllegalMoveError(f"({row}, {col}) is off the {self.width}x{self.height} board")
        return row * self.width + col

    def move_to_label(self, move: int) -> str:
        """Human label: column letter and 1-based row from the bottom, e.g. ``h8``."""
        row, col = self.location(move)
        return f"{COLUMN_LETTERS[col]}{row + 1}"

    def parse_move(self, text: str) -> int:
        """Reads ``h8`` (column letter, row from 1) or ``row,col`` (0-based) into a move.

        Raises:
            IllegalMoveError: the text is not a move on this board (it may still
                be occupied: ``check_move`` tells that).
        """
        text = str(text).strip().lower()
        label = re.fullmatch(r"([a-z])\s*(\d+)", text)
        pair = re.fullmatch(r"(\d+)\s*[, ]\s*(\d+)", text)
        if label:
            col = COLUMN_LETTERS.index(label.group(1))
            row = int(label.group(2)) - 1
        elif pair:
            row, col = int(pair.group(1)), int(pair.group(2))
        else:
            raise IllegalMoveError(
                f"cannot read {text!r} as a move: write a column letter and a row number "
                f"like {self.move_to_label(self.size // 2)}, or 'row,col' counted from 0"
            )
        return self.move_at(row, col)

    # ------------------------------------------------------------- rendering
    def to_text(self) -> str:
        """ASCII drawing: ``X`` for player 1, ``O`` for player 2, row 1 at the bottom."""
        marks = {0: ".", 1: "X", 2: "O"}
        last = self.last_move
        lines = []
        for row in range(self.height - 1, -1, -1):
            cells = []
            for col in range(self.width):
                move = row * self.width + col
                mark = marks[self.cells[move]]
                cells.append(mark.lower() if move == last and mark != "." else mark)
            lines.append(f"{row + 1:>2} " + " ".join(cells))
        lines.append("   " + " ".join(COLUMN_LETTERS[: self.width]))
        return "\n".join(lines)

    def __repr__(self) -> str:
        rule = "" if self.rule is FREESTYLE else f", rule={self.rule}"
        return f"Board({self.width}x{self.height}, n_in_row={self.n_in_row}{rule}, moves={len(self.history)})"

    @classmethod
    def from_moves(cls, width: int, height: int, n_in_row: int, moves: Sequence[int],
                   start_player: int = 1, rule: str = FREESTYLE) -> "Board":
        """A board after playing ``moves`` in order (each checked) under ``rule``."""
        board = cls(width, height, n_in_row, start_player, rule)
        for move in moves:
            board.do_move(move)
        return board


def fill_base_planes(boards: Sequence[Board], cells: bytes, out: np.ndarray) -> None:
    """``Board.planes``'s four planes for many boards of one size, into ``out[:, :4]`` of a zeroed
    ``(B, C, size)`` float32 array, in a few array operations for the whole batch.

    ``cells``: the boards' cells one after another (``b"".join(bytes(b.cells) ...)``), which a
    caller that keys positions by their cells has at hand already.
    """
    n, size = len(boards), out.shape[2]
    stones = np.frombuffer(cells, dtype=np.uint8).reshape(n, size)
    to_move = np.fromiter((b.current_player for b in boards), dtype=np.uint8, count=n)[:, None]
    out[:, 0] = stones == to_move
    out[:, 1] = stones == 3 - to_move
    for row, board in enumerate(boards):
        history = board.history
        if history:
            out[row, 2, history[-1]] = 1.0
        if len(history) % 2 == 0:  # the player to move opened the game
            out[row, 3] = 1.0
