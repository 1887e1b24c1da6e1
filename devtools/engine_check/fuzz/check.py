"""The fuzz's checker: the position a manager knows and the answers each line is due."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gomoku.play.engine.protocol import OPPONENT, OWN


FAILURES = ("crash", "count", "illegal", "wrong", "hang", "end")
COMMANDS = frozenset({"START", "RECTSTART", "RESTART", "BEGIN", "TURN", "BOARD", "SWAP2BOARD",
                      "TAKEBACK", "DONE", "INFO", "ABOUT", "END"})
"""the command words of the protocol table (case does not matter)"""
PLAIN_SIDE = 20  # every board from n_in_row to this side must be accepted (Gomocup plays 15 and 20)
WALL_FACTOR = 4  # in this process, an answer that takes this many times its limit of wall time is a hang too
HUGE = 10 ** 30  # stands for any number of more than 30 digits: the checker never converts thousands of them

OK, ERROR, MOVE, UNKNOWN, ABOUT = "OK", "ERROR", "MOVE", "UNKNOWN", "ABOUT"

_SPLIT = re.compile(r"[ \t]+")
_NUMBER = re.compile(r"-?[0-9]+")
_PAIR = re.compile(r"(-?[0-9]+)[ \t]*,[ \t]*(-?[0-9]+)")
_TRIPLE = re.compile(r"(-?[0-9]+)[ \t]*,[ \t]*(-?[0-9]+)[ \t]*,[ \t]*(-?[0-9]+)")
_MOVE = re.compile(r"([0-9]+),([0-9]+)")
_ABOUT = re.compile(r'name="[^"]*"(\s*,\s*[a-z_]+="[^"]*")*')
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


# ------------------------------------------------------------------ the checker
@dataclass(frozen=True)
class Rules:
    """What the engine under test plays: the line that wins and the boards it must accept."""

    n_in_row: int = 5
    board: Optional[tuple[int, int]] = None
    """a fixed-size model's only board (width, height); None plays any board"""
    plain_side: int = PLAIN_SIDE
    """every board from n_in_row x n_in_row to this side must get OK; larger ones may get ERROR"""

    def size_answers(self, width: int, height: int) -> tuple[str, ...]:
        """The answers START or RECTSTART may get for a ``width`` x ``height`` board."""
        if min(width, height) < self.n_in_row:
            return (ERROR,)  # no line fits, or no cell at all
        if self.board is not None:
            return (OK,) if (width, height) == self.board else (ERROR,)
        if max(width, height) <= self.plain_side:
            return (OK,)
        return OK, ERROR  # the engine decides which large boards it plays


@dataclass
class Due:
    """An answer a line asks for: the command that asked and the kinds of answer that are right."""

    command: str
    kinds: tuple[str, ...]
    size: Optional[tuple[int, int]] = None
    """START and RECTSTART: the board an ``OK`` sets up"""


def _number(text: str) -> int:
    """An integer the checker has matched with ``_NUMBER``; any longer than 30 digits is +-HUGE."""
    digits = text.lstrip("-")
    value = int(digits) if len(digits) <= 30 else HUGE
    return -value if text.startswith("-") else value


def split_command(text: str) -> tuple[str, str]:
    """The command word (upper case) and the rest of a stripped, non-empty line.

    Words are separated by spaces or tabs; any other character, control and
    non-ASCII characters included, belongs to a word.
    """
    parts = _SPLIT.split(text, maxsplit=1)
    return parts[0].upper(), (parts[1].strip(" \t") if len(parts) > 1 else "")


class Manager:
    """The engine's state as a manager knows it, and the answers each line is due.

    ``feed`` takes a line as it is sent and returns its ``Due`` answers (none for
    INFO, END, data lines, empty lines), applying at once what the line itself
    settles: TURN's stone, BOARD's position, TAKEBACK, RESTART. ``accept`` checks
    one answer against its ``Due`` and applies what the answer settles: the
    engine's move, the board of an accepted START.

    Stones are keyed by ``(x, y)``; the value is ``OWN`` (the engine's) or
    ``OPPONENT``, as BOARD lines write it; the dict keeps the order they came in.
    """

    def __init__(self, rules: Rules):
        self.rules = rules
        self.size: Optional[tuple[int, int]] = None  # the board, None before the first accepted START
        self.stones: dict[tuple[int, int], int] = {}
        self.block: Optional[tuple[str, list[str]]] = None  # an open BOARD or SWAP2BOARD and its lines
        self.ended = False

    # ----------------------------------------------------------- lines
    def feed(self, line: str) -> list[Due]:
        """The answers ``line`` is due, in order."""
        text = line.strip()  # whitespace at either end is no part of a line
        if not text:
            return []
        word, arg = split_command(text)
        if self.block is not None:
            command, lines = self.block
            if word == "DONE":
                self.block = None
                if command == "SWAP2BOARD":
                    return [Due(command, (UNKNOWN, ERROR))]
                return [self._board(lines)]
            if word == "INFO":
                return []  # limits may come inside a block: the block goes on
            if word in COMMANDS:  # the manager moved on without DONE
                self.block = None
                cut = Due(f"{command} (cut short)", (UNKNOWN, ERROR) if command == "SWAP2BOARD" else (ERROR,))
                return [cut, *self._command(word, arg, text)]
            lines.append(text)
            return []
        return self._command(word, arg, text)

    def _command(self, word: str, arg: str, text: str) -> list[Due]:
        if word == "START":
            if not _NUMBER.fullmatch(arg):
                return [Due(text, (ERROR,))]
            side = _number(arg)
            return [Due(text, self.rules.size_answers(side, side), (side, side))]
        if word == "RECTSTART":
            match = _PAIR.fullmatch(arg)
            if not match:
                return [Due(text, (ERROR,))]
            width, height = (_number(g) for g in match.groups())
            return [Due(text, self.rules.size_answers(width, height), (width, height))]
        if word in ("BOARD", "SWAP2BOARD"):
            self.block = (word, [])
            return []
        if word == "DONE":
            return [Due(text, (UNKNOWN, ERROR))]
        if word == "INFO":
            return []
        if word == "ABOUT":
            return [Due(text, (ABOUT,))]
        if word == "END":
            self.ended = True
            return []
        if word not in COMMANDS:
            return [Due(text, (UNKNOWN,))]
        if self.size is None:  # RESTART, BEGIN, TURN, TAKEBACK need a game
            return [Due(text, (ERROR,))]
        if word == "RESTART":
            self.stones.clear()
            return [Due(text, (OK,))]
        if word == "BEGIN":
            return [Due(text, (ERROR,) if self.stones else (MOVE,))]
        cell = self._cell(arg)
        if word == "TURN":
            if cell is None or cell in self.stones:
                return [Due(text, (ERROR,))]
            self.stones[cell] = OPPONENT
            return [self._move(text)]
        # TAKEBACK
        if cell is None or cell not in self.stones:
            return [Due(text, (ERROR,))]
        del self.stones[cell]
        return [Due(text, (OK,))]

    def _cell(self, arg: str) -> Optional[tuple[int, int]]:
        """The ``x,y`` of an argument, or None if it is not a pair or off the board."""
        match = _PAIR.fullmatch(arg)
        if not match:
            return None
        x, y = (_number(g) for g in match.groups())
        return (x, y) if self.on_board(x, y) else None

    def on_board(self, x: int, y: int) -> bool:
        width, height = self.size
        return 0 <= x < width and 0 <= y < height

    def _board(self, lines: list[str]) -> Due:
        if self.size is None:
            return Due("BOARD", (ERROR,))
        stones: dict[tuple[int, int], int] = {}
        for text in lines:
            match = _TRIPLE.fullmatch(text)
            if not match:
                return Due("BOARD", (ERROR,))
            x, y, who = (_number(g) for g in match.groups())
            if who not in (OWN, OPPONENT) or not self.on_board(x, y) or (x, y) in stones:
                return Due("BOARD", (ERROR,))
            stones[(x, y)] = who
        self.stones = stones
        return self._move("BOARD")

    def _move(self, command: str) -> Due:
        return Due(command, (ERROR,) if self.game_over() else (MOVE,))

    def game_over(self) -> bool:
        """Whether the position has a line of ``n_in_row`` (anyone's) or a full board."""
        width, height = self.size
        if len(self.stones) >= width * height:
            return True
        stones, n = self.stones, self.rules.n_in_row
        for (x, y), who in stones.items():
            for dx, dy in DIRECTIONS:
                if stones.get((x - dx, y - dy)) == who:
                    continue  # not the first stone of its line in this direction
                length = 1
                while stones.get((x + length * dx, y + length * dy)) == who:
                    length += 1
                if length >= n:
                    return True
        return False

    # --------------------------------------------------------- answers
    def accept(self, due: Due, answer: str) -> Optional[tuple[str, str]]:
        """Checks an answer; returns None or ``(failure kind, what was wrong)``."""
        word = answer.split(" ", 1)[0]
        if answer.startswith("ERROR internal error"):
            return "crash", f"{short(due.command)} answered {short(answer)}"
        if MOVE in due.kinds:
            match = _MOVE.fullmatch(answer)
            if not match:
                return "wrong", f"{short(due.command)} answered {short(answer)} where a move was due"
            x, y = (_number(g) for g in match.groups())
            if not self.on_board(x, y):
                width, height = self.size
                return "illegal", f"{short(due.command)} answered {short(answer)}, off the {width}x{height} board"
            if (x, y) in self.stones:
                return "illegal", f"{short(due.command)} answered {answer}, an occupied cell"
            self.stones[(x, y)] = OWN
            return None
        if OK in due.kinds and answer == "OK":
            if due.size is not None:
                self.size = due.size
                self.stones = {}
            return None
        if (ERROR in due.kinds and word == "ERROR" or UNKNOWN in due.kinds and word == "UNKNOWN"
                or ABOUT in due.kinds and _ABOUT.fullmatch(answer)):
            return None
        return "wrong", f"{short(due.command)} answered {short(answer)} where {' or '.join(due.kinds)} was due"


def short(line: str, limit: int = 80) -> str:
    """A line as a failure report quotes it: repr, long ones cut in the middle."""
    text = repr(line)
    return text if len(text) <= limit else f"{text[:limit // 2]}...({len(line)} characters)...{text[-limit // 4:]}"
