"""A protocol fuzz for the Gomocup engine: seeded random command sequences, every answer checked.

``python -m gomoku.play.fuzz --sequences 5000 --seed 0`` sends thousands of
random command sequences to ``engine.PbrainEngine``, in this process for speed
or, with ``--process``, to a real ``python -m gomoku.play.engine`` child process, and
checks every answer against the protocol table of ``engine``'s docstring. It
prints a short table and exits with status 1 if anything failed.

The sequences (``Scenario``) are mostly plausible games on small boards, so
that moves really get searched: START or RECTSTART, INFO limits, BEGIN or TURN
after TURN, whole positions in BOARD blocks, TAKEBACK, RESTART in the middle of
a game, turns on after the game is won. A minority of lines are hostile (the
categories of ``HOSTILE``): garbage, control characters and non-ASCII, unknown
words, empty lines, lowercase, odd spacing and tabs, huge and negative numbers,
BOARD blocks with bad lines or cut short by a command, TAKEBACK of empty cells,
turns on occupied cells. One sequence in five is chaos: any command in any
order, commands before START included.

The checker (``Manager``) keeps the position the engine should have, as a
manager does: the stones TURN and BOARD sent, the engine's own moves, the stones
TAKEBACK lifted. From it, the answers each line is due (``Due``):

=========================  ===========================================================
line                       due
=========================  ===========================================================
START, RECTSTART           ``OK`` for a board from n x n to 20 x 20 (a fixed-size model: its own
                           board), ``ERROR`` for one too small to hold a line, either beyond
RESTART                    ``OK``, or ``ERROR`` before START
TAKEBACK x,y               ``OK``, or ``ERROR`` before START, for a bad or empty cell
BEGIN, TURN, BOARD..DONE   a move ``x,y`` on an empty cell of the board, or ``ERROR`` before START,
                           for bad input, a board that is not empty (BEGIN) or a finished game
SWAP2BOARD..DONE, DONE     ``UNKNOWN`` or ``ERROR``
a command inside a block   ``ERROR`` for the unfinished block, then the command's own answer
ABOUT                      ``name="...", ...``
INFO, END, empty lines     nothing; END must end the engine
anything else              ``UNKNOWN``
=========================  ===========================================================

Bad input leaves the position as it was. A TURN on a free cell stays on the
board even when the game is then over (the answer is ``ERROR``), and a BOARD
that parses replaces the position even when that position is finished: the
manager's stone is a real move, only the engine has none left.

Failures, by kind (``FAILURES``):

* ``crash``: an ``ERROR internal error`` answer (an exception reached the
  engine's catch-all), an exception out of ``handle``, or a process that died;
* ``count``: more or fewer answers than the line asks for;
* ``illegal``: a move off the board or on an occupied cell;
* ``wrong``: an answer of the wrong kind, say a move where ``ERROR`` was due
  or the reverse, or something that is no answer at all;
* ``hang``: an answer slower than ``hang_s`` seconds (by default 5 s of CPU
  in this process, 15 s from a process), or a sequence slower than
  ``sequence_s``. In this process a command still running after
  ``hang_s`` seconds of CPU is interrupted (``Hung``), and one that returns
  counts its CPU time, so that a machine busy with other work makes no false
  hangs (wall time counts too, from ``WALL_FACTOR`` times the limit on, for an
  engine that waits instead of working). A process is waited for ``hang_s``
  seconds, then killed;
* ``end``: output after END, or an engine that does not stop.

With ``--process`` every sequence that did not END ends with ABOUT: an answer
too many anywhere before it shows as ABOUT's answer.

A sequence ends at its first failure; the engine is then thrown away. In this
process each failure's lines are shrunk (``Fuzz.shrink``) to a short sequence
that still fails the same way, the repro a bug report needs.

``--skip`` leaves hostile categories out, say one that finds a bug already
known, so that a run looks for others.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import math
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, TextIO

from gomoku.play.engine import OPPONENT, OWN, EngineOptions, PbrainEngine
from gomoku.play.referee import EngineProcess
from gomoku.search.heuristic import DEFAULT_LEVEL, LEVELS
from gomoku.search.options import SEARCH_PRESETS, SearchOptions, add_search_flags
from gomoku.util import DefaultsHelpFormatter

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
_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


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
            for dx, dy in _DIRECTIONS:
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
            return "crash", f"{_short(due.command)} answered {_short(answer)}"
        if MOVE in due.kinds:
            match = _MOVE.fullmatch(answer)
            if not match:
                return "wrong", f"{_short(due.command)} answered {_short(answer)} where a move was due"
            x, y = (_number(g) for g in match.groups())
            if not self.on_board(x, y):
                width, height = self.size
                return "illegal", f"{_short(due.command)} answered {_short(answer)}, off the {width}x{height} board"
            if (x, y) in self.stones:
                return "illegal", f"{_short(due.command)} answered {answer}, an occupied cell"
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
        return "wrong", f"{_short(due.command)} answered {_short(answer)} where {' or '.join(due.kinds)} was due"


# ------------------------------------------------------------- the sequences
HOSTILE = {  # category: weight among hostile lines
    "garbage": 10,
    "unknown": 8,
    "empty": 6,
    "case": 8,
    "spacing": 8,
    "numbers": 10,
    "bad_board": 12,
    "cut_block": 8,
    "takeback_empty": 6,
    "occupied": 6,
    "restart": 5,
    "huge_board": 0.2,
    "long_digits": 1,
}
"""The kinds of hostile line, each made by ``Scenario._h_<name>``. ``huge_board`` (a
RECTSTART tens of millions of rows high, which an engine must refuse before it builds
anything) is rare: should an engine build the board, each one costs ``hang_s``."""

CHAOS_SHARE = 0.2  # sequences that are any command in any order
END_SHARE = 0.15  # sequences that end with END
TURN_MS = (0, 20, 50, 100, 200, 500, 1000)
LONG_DIGITS = "9" * 5000  # Python refuses to read an int of more than 4300 digits
NON_ASCII = "éßÄ中文字😀✓\u00a0\u200b\ufeff\u202e"
CONTROL = "\x00\x01\x07\x1b\x7f"
ODD_SPACE = "\x0b\x0c\x1c\x85\u2028\u3000"  # whitespace to Python's strip(), only at the ends of lines


class Scenario:
    """One random sequence of lines, made up while it runs: each line may depend on the answers so far.

    ``lines`` reads ``manager`` between lines (the board, the stones, the open
    block), so that turns go to empty cells and take-backs to the last stones,
    as in a real game; the same seed and the same answers give the same lines.

    Args:
        rng: the sequence's random numbers.
        manager: the checker's state, updated by the caller after every line.
        rules: the engine's rules (line length, the boards it plays).
        hostile_share: the share of steps that send a hostile line.
        skip: hostile categories to leave out.
        max_side: the largest side of the boards games start on (hostile lines try larger ones).
    """

    def __init__(self, rng: random.Random, manager: Manager, rules: Rules, hostile_share: float = 0.08,
                 skip: frozenset = frozenset(), max_side: int = PLAIN_SIDE):
        self.rng = rng
        self.manager = manager
        self.rules = rules
        self.max_side = max(rules.n_in_row, max_side)
        self.hostile_share = hostile_share
        self.categories = [name for name in HOSTILE if name not in skip and HOSTILE[name] > 0]
        self.weights = [HOSTILE[name] for name in self.categories]

    def lines(self) -> Iterator[str]:
        """The sequence's lines, one at a time; stops after END."""
        rng = self.rng
        steps = self._chaos() if rng.random() < CHAOS_SHARE else self._game()
        for lines in steps:
            for line in lines:
                yield line
                if self.manager.ended:
                    return
        if rng.random() < END_SHARE:
            yield rng.choice(["END", "END", "end", " END\t"])

    # ------------------------------------------------------------ games
    def _game(self) -> Iterator[list[str]]:
        rng, manager = self.rng, self.manager
        if rng.random() < 0.1:
            yield ["ABOUT"]
        if manager.size is None or rng.random() < 0.8:
            yield [self._start()]
        yield [f"INFO timeout_turn {rng.choice(TURN_MS)}"]
        if rng.random() < 0.3:
            yield [rng.choice(["INFO timeout_match 0", "INFO timeout_match 60000", "INFO max_memory 83886080",
                               "INFO game_type 1", "INFO rule 0", "INFO rule 1", "INFO folder /tmp",
                               "INFO time_left 30000", "INFO evaluate 1,1"])]
        for _ in range(rng.randint(4, 40)):
            yield self._hostile() if rng.random() < self.hostile_share else self._play()

    def _start(self) -> str:
        rng, rules = self.rng, self.rules
        if rules.board is not None:
            width, height = rules.board
        else:
            sides = [side for side in range(rules.n_in_row, self.max_side + 1)
                     for _ in range(3 if side <= rules.n_in_row + 5 else 1)]  # small boards end more games
            width = rng.choice(sides)
            height = width if rng.random() < 0.75 else rng.choice(sides)
        return f"START {width}" if width == height else f"RECTSTART {width},{height}"

    def _play(self) -> list[str]:
        """A plausible step of a game, given the manager's position."""
        rng, manager = self.rng, self.manager
        if manager.size is None:
            return [self._start()]
        if manager.block is not None:
            return ["DONE"]
        if manager.game_over():
            roll = rng.random()
            if roll < 0.45 and manager.stones:
                return [self._takeback_last()]
            if roll < 0.7:
                return ["RESTART"]
            if roll < 0.85:
                return [self._start()]
            cell = self._empty_cell()
            return [f"TURN {cell[0]},{cell[1]}"] if cell else ["RESTART"]
        if not manager.stones:
            roll = rng.random()
            if roll < 0.6:
                return ["BEGIN"]
            if roll < 0.9:
                cell = self._empty_cell()
                return [f"TURN {cell[0]},{cell[1]}"]
            return self._board_block(extra=rng.randint(0, 3))
        roll = rng.random()
        if roll < 0.75:
            cell = self._threat_cell() if rng.random() < 0.3 else self._empty_cell()
            return [f"TURN {cell[0]},{cell[1]}"] if cell else ["RESTART"]
        if roll < 0.86:
            return self._board_block(extra=1 if rng.random() < 0.8 else 0)
        if roll < 0.93:
            lines = [self._takeback_last()]
            if len(manager.stones) > 1 and rng.random() < 0.6:  # the engine's move and the turn before it
                x, y = list(manager.stones)[-2]
                lines.append(f"TAKEBACK {x},{y}")
            return lines
        if roll < 0.95:
            return ["RESTART"]
        return [rng.choice([f"INFO time_left {rng.randint(0, 100000)}", f"INFO timeout_turn {rng.choice(TURN_MS)}"])]

    def _takeback_last(self) -> str:
        x, y = list(self.manager.stones)[-1]
        return f"TAKEBACK {x},{y}"

    def _empty_cell(self) -> Optional[tuple[int, int]]:
        manager, rng = self.manager, self.rng
        width, height = manager.size
        for _ in range(50):
            cell = (rng.randrange(width), rng.randrange(height))
            if cell not in manager.stones:
                return cell
        if width * height > 10000:
            return None
        empty = [(x, y) for x in range(width) for y in range(height) if (x, y) not in manager.stones]
        return rng.choice(empty) if empty else None

    def _threat_cell(self) -> Optional[tuple[int, int]]:
        """An empty cell that lengthens a line of the opponent's, so that some games end in its win."""
        manager, rng = self.manager, self.rng
        theirs = [cell for cell, who in manager.stones.items() if who == OPPONENT]
        if theirs:
            x, y = rng.choice(theirs)
            dx, dy = rng.choice(_DIRECTIONS)
            while manager.stones.get((x, y)) == OPPONENT:
                x, y = x + dx, y + dy
            if manager.on_board(x, y) and (x, y) not in manager.stones:
                return x, y
        return self._empty_cell()

    def _board_block(self, extra: int) -> list[str]:
        """The position as a BOARD block, with up to ``extra`` new stones of the opponent's."""
        stones = dict(self.manager.stones)
        for _ in range(extra):
            cell = self._empty_cell()
            if cell is not None and cell not in stones:
                stones[cell] = OPPONENT
        lines = [f"{x},{y},{who}" for (x, y), who in stones.items()]
        if self.rng.random() < 0.2:
            self.rng.shuffle(lines)
        return ["BOARD", *lines, "DONE"]

    # ------------------------------------------------------------ chaos
    def _chaos(self) -> Iterator[list[str]]:
        """Commands in any order, with arguments that are right as often as not."""
        rng = self.rng
        for _ in range(rng.randint(3, 30)):
            roll = rng.random()
            if roll < 0.25:
                yield self._hostile()
            elif roll < 0.5:
                yield self._play()
            else:
                yield self._any_command()

    def _any_command(self) -> list[str]:
        rng = self.rng
        side = self.manager.size[0] if self.manager.size else 10
        x, y = rng.randint(-1, side), rng.randint(-1, side)
        choices = [
            lambda: [self._start()],
            lambda: [f"START {rng.randint(-2, 30)}"],
            lambda: [f"RECTSTART {rng.randint(-2, 30)},{rng.randint(-2, 30)}"],
            lambda: ["RESTART"], lambda: ["BEGIN"], lambda: [f"TURN {x},{y}"], lambda: [f"TAKEBACK {x},{y}"],
            lambda: ["BOARD", *[f"{rng.randint(-1, side)},{rng.randint(-1, side)},{rng.randint(0, 3)}"
                                for _ in range(rng.randint(0, 4))], "DONE"],
            lambda: ["SWAP2BOARD", f"{x},{y}", "DONE"], lambda: ["DONE"], lambda: ["ABOUT"],
            lambda: [f"INFO {rng.choice(['timeout_turn', 'time_left', 'max_memory', 'rule', 'x'])} "
                     f"{rng.randint(-10, 5000)}"],
        ]
        return rng.choice(choices)()

    # ---------------------------------------------------------- hostile
    def _hostile(self) -> list[str]:
        name = self.rng.choices(self.categories, self.weights)[0]
        return getattr(self, f"_h_{name}")()

    def _h_garbage(self) -> list[str]:
        rng = self.rng
        alphabet = "abcXYZ019,;:=-+_ ./\\\"'{}[]()<>|\t" + NON_ASCII + CONTROL
        choice = rng.random()
        if choice < 0.5:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        elif choice < 0.6:
            text = "x" * rng.choice([1000, 20000])
        elif choice < 0.8:
            text = rng.choice(["\x00", "\x1b[2J", "é", "中文 1,1", "\ufeffSTART 10", "TURN 😀,1", "TURN 1,1é",
                               "12345", "1,1", "1,1,1", "{}", "??", "\x00TURN 1,1", "TURN\x001,1", "\u202eNIGEB",
                               "BEGIN!", "TURN 1,1 ; BEGIN", "TURN 1.5,2", "TURN 0x1,2", "TURN 1,,2"])
        else:  # whitespace that Python strips, around a real command
            def pad() -> str:
                return "".join(rng.choice(ODD_SPACE + " \t") for _ in range(rng.randint(1, 3)))
            return [pad() + line + pad() for line in self._play()[:1]]
        return [text]

    def _h_unknown(self) -> list[str]:
        return [self.rng.choice(["PLAY 3,4", "YXBOARD", "SWAP2", "FOO bar", "STARTX 10", "TURNS 1,1", "BEGINS",
                                 "INFOTIME 5", "ABOUTX", "ENDX", "BOARD2", "DONEX", "RESTART!", "TAKE BACK 1,1",
                                 "SUGGEST", "PLEASE 1", "A", "x", "1"])]

    def _h_empty(self) -> list[str]:
        return [self.rng.choice(["", " ", "\t", "  \t  ", "\r", " \r"])]

    def _h_case(self) -> list[str]:
        """A plausible step with its command words in lower or mixed case."""
        rng = self.rng

        def shuffle_case(line: str) -> str:
            word, sep, rest = line.partition(" ")
            if not word.isalpha():
                return line
            if rng.random() < 0.5:
                return word.lower() + sep + rest
            return "".join(c.lower() if rng.random() < 0.5 else c for c in word) + sep + rest
        return [shuffle_case(line) for line in self._play()]

    def _h_spacing(self) -> list[str]:
        """A plausible step with odd spacing: tabs, runs of spaces, spaces round commas, CR at the end."""
        rng = self.rng

        def space() -> str:
            return rng.choice([" ", "  ", "\t", " \t ", "    "])

        def respace(line: str) -> str:
            line = line.replace(" ", space(), 1).replace(",", rng.choice([",", " , ", "\t,", ", "]))
            return rng.choice(["", " ", "\t"]) + line + rng.choice(["", " ", "\t", "\r", " \r"])
        return [respace(line) for line in self._play()]

    def _h_numbers(self) -> list[str]:
        rng = self.rng
        side = self.manager.size[0] if self.manager.size else 10
        return [rng.choice([
            "START 100000000", "START -1", "START 0", "START 1", "START 99999999999999999999", "START 27",
            "START 26", f"START {LONG_DIGITS}", "START -99999999999999999999", "START 007", "START 1e3",
            "RECTSTART 5,-3", "RECTSTART -5,5", "RECTSTART 0,0", "RECTSTART 100000000,5", "RECTSTART 26,300",
            "RECTSTART 27,5", "RECTSTART 1,20", "RECTSTART 5", "RECTSTART 5,5,5", "RECTSTART ,",
            "TURN -1,3", "TURN 3,-1", "TURN 99999999999999999999,1", f"TURN {side},0", f"TURN 0,{side}",
            "TURN -0,0", "TURN 2147483648,0", "TAKEBACK -1,-1", "TAKEBACK 99999999999999999999,0",
            "INFO timeout_turn -5", "INFO time_left 99999999999999999999", "INFO time_left -1000",
            "INFO max_memory 1", "INFO max_memory 99999999999999999999", "INFO timeout_turn 0",
            "INFO timeout_match -1", "INFO rule 99999999999999999999", "INFO rule -1", "INFO rule 4",
            "INFO timeout_turn abc", "INFO", "INFO time_left", "INFO timeout_turn 1.5",
            f"INFO timeout_turn {LONG_DIGITS}", "INFO timeout_turn 99999999999999999999",
        ])]

    def _h_huge_board(self) -> list[str]:
        """Boards tens of millions of rows high, narrow enough for ``Board``'s limit on the width."""
        return [self.rng.choice(["RECTSTART 5,99999999", "RECTSTART 5,100000000", "RECTSTART 20,2147483647"])]

    def _h_long_digits(self) -> list[str]:
        """Coordinates of thousands of digits: Python's int() refuses them with a ValueError of its own."""
        return self.rng.choice([[f"TURN 1,{LONG_DIGITS}"], [f"TAKEBACK {LONG_DIGITS},1"],
                                [f"RECTSTART {LONG_DIGITS},5"], ["BOARD", f"{LONG_DIGITS},1,1", "DONE"]])

    def _h_bad_board(self) -> list[str]:
        """BOARD blocks that must get ERROR, or odd ones that must not; a stray DONE; SWAP2BOARD."""
        rng = self.rng
        side = self.manager.size[0] if self.manager.size else 10
        n = self.rules.n_in_row
        return rng.choice([
            ["BOARD", "1,1,1", "1,1,2", "DONE"], ["BOARD", "1,1,1", f"{side},1,2", "DONE"],
            ["BOARD", "1,1,1", "1,2", "DONE"], ["BOARD", "1,1,4", "DONE"], ["BOARD", "1,1,3", "DONE"],
            ["BOARD", "1,1,0", "DONE"], ["BOARD", "-1,0,1", "DONE"], ["BOARD", "a,b,c", "DONE"],
            ["BOARD", "1,1,1,1", "DONE"], ["BOARD", "DONE"], ["BOARD", "", "  ", "DONE"],
            ["BOARD", "0,0,2", "INFO timeout_turn 50", "1,1,1", "DONE"], ["board", "0,0,2", "done"],
            ["BOARD", *[f"{i},0,2" for i in range(n)], "DONE"],  # the opponent has a line: the game is over
            ["BOARD", *[f"{i},0,1" for i in range(n)], "0,1,2", "DONE"],  # the engine has a line
            ["BOARD", "0,0,1", "PLAY", "DONE"], ["DONE"], ["done"],
            ["SWAP2BOARD", "DONE"], ["SWAP2BOARD", "1,1", "2,2", "3,3", "DONE"],
        ])

    def _h_cut_block(self) -> list[str]:
        """A BOARD or SWAP2BOARD block that a command interrupts before DONE."""
        rng = self.rng
        block = rng.choice([["BOARD"], ["BOARD", "0,0,2"], ["SWAP2BOARD"], ["BOARD", "1,1,1", "x"]])
        command = self._play()[:1] if rng.random() < 0.7 else [rng.choice(["ABOUT", "START 9", "BOARD"])]
        return block + command

    def _h_takeback_empty(self) -> list[str]:
        manager, rng = self.manager, self.rng
        if manager.size is None:
            return [f"TAKEBACK {rng.randint(0, 9)},{rng.randint(0, 9)}"]
        cell = self._empty_cell() or (0, 0)
        return [rng.choice([f"TAKEBACK {cell[0]},{cell[1]}", "TAKEBACK", "TAKEBACK 1", "TAKEBACK a,b"])]

    def _h_occupied(self) -> list[str]:
        manager, rng = self.manager, self.rng
        if not manager.stones:
            return ["BEGIN", "BEGIN"]
        x, y = rng.choice(list(manager.stones))
        return rng.choice([[f"TURN {x},{y}"], ["BEGIN"], ["BOARD", f"{x},{y},1", f"{x},{y},2", "DONE"]])

    def _h_restart(self) -> list[str]:
        return ["RESTART"]


# ------------------------------------------------------------------ engines
class Hung(BaseException):
    """Raised into a command that has spent its CPU time. A BaseException, so that the
    engine's catch-all for Exception (its ``ERROR internal error``) lets it through."""


@contextlib.contextmanager
def cpu_limit(seconds: float) -> Iterator[None]:
    """Interrupts the block with ``Hung`` once this process has spent ``seconds`` of CPU in it.

    CPU time rather than wall time, because a busy machine slows a command down
    without making it hang, and because pytest-timeout keeps SIGALRM for itself.
    Signals reach only the main thread: elsewhere the block runs unguarded.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    armed = [True]

    def interrupt(signum, frame):
        if armed[0]:
            raise Hung(f"still running after {seconds:g} s of CPU")

    previous = signal.signal(signal.SIGPROF, interrupt)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous if previous is not None else signal.SIG_DFL)


@dataclass
class Exchange:
    """What one line brought back from the engine."""

    answers: list[str]
    """the answer lines, MESSAGE and DEBUG lines left out"""
    seconds: float
    """from sending the line to its last answer, wall time"""
    problem: Optional[tuple[str, str]] = None
    """a failure the transport itself saw (crash, hang, end) as (kind, detail)"""
    stderr: str = ""
    """the last lines the engine wrote to stderr (a traceback), for crash reports"""
    cpu: Optional[float] = None
    """in this process, the CPU time the line took (None: only the wall time is known)"""


class InProcessTarget:
    """A ``PbrainEngine`` in this process, fed with ``handle``; its output is read back after each line.

    Args:
        engine: makes the engine, given the stream it must write to.
    """

    def __init__(self, engine: Callable[[TextIO], PbrainEngine]):
        self.out = io.StringIO()
        self.engine = engine(self.out)

    def exchange(self, line: str, dues: list[Due], ended: bool, limit: float) -> Exchange:
        errors = io.StringIO()
        problem = None
        running = True
        started, cpu = time.perf_counter(), time.process_time()
        try:
            with contextlib.redirect_stderr(errors), cpu_limit(limit):
                running = self.engine.handle(line)
        except Hung as exc:
            problem = "hang", f"{_short(line)}: {exc}"
        except Exception as exc:  # the engine must answer ERROR instead
            problem = "crash", f"handle({_short(line)}) raised {type(exc).__name__}: {exc}"
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        text = self.out.getvalue()
        self.out.seek(0)
        self.out.truncate()
        answers = [a for a in text.split("\n")[:-1] if not a.startswith(("MESSAGE", "DEBUG"))]
        if problem is None and running == ended:
            problem = "end", (f"{_short(line)}: the engine went on after END" if ended
                              else f"{_short(line)}: the engine stopped without END")
        return Exchange(answers, seconds, problem, "\n".join(errors.getvalue().strip().splitlines()[-3:]), cpu)

    def close(self, kill: bool = False) -> None:
        pass


class ProcessTarget:
    """A real engine process, spoken to through ``referee.EngineProcess``: hangs and deaths show.

    Args:
        command: the engine's command line.
        start_s: how long its first answer may take (the interpreter starts meanwhile).
    """

    def __init__(self, command: list[str], start_s: float):
        self.stderr = tempfile.TemporaryFile(mode="a+")  # appends: the child shares the file's offset
        self.engine = EngineProcess(command, "engine", [], self.stderr)
        self.start_s = start_s
        self.fresh = True

    def exchange(self, line: str, dues: list[Due], ended: bool, limit: float) -> Exchange:
        answers: list[str] = []
        seconds = 0.0
        self.engine.transcript.clear()  # the fuzz keeps its own
        try:
            self.engine.send(line)
        except OSError as exc:  # a closed pipe: it is dead
            return Exchange(answers, seconds, ("crash", f"{_short(line)} could not be sent: {exc}"), self._tail())
        for _ in dues:
            timeout = self.start_s if self.fresh else limit
            try:
                answer, latency = self.engine.reply(timeout)
            except TimeoutError:
                return Exchange(answers, timeout, ("hang", f"no answer to {_short(line)} within {timeout:g} s"))
            except EOFError:
                return Exchange(answers, seconds, ("crash", f"the engine died at {_short(line)}"), self._tail())
            self.fresh = False
            answers.append(answer)
            seconds = max(seconds, latency)
        if ended:
            try:
                code = self.engine.proc.wait(limit)
            except subprocess.TimeoutExpired:
                return Exchange(answers, seconds, ("end", f"still running {limit:g} s after END"))
            if code != 0:
                return Exchange(answers, seconds, ("end", f"exit status {code} after END"), self._tail())
            try:
                extra, _ = self.engine.reply(limit)
                return Exchange(answers, seconds, ("end", f"{extra!r} written after END"))
            except (EOFError, TimeoutError):
                pass
        return Exchange(answers, seconds)

    def _tail(self) -> str:
        self.stderr.flush()
        self.stderr.seek(0)
        return "\n".join(self.stderr.read().strip().splitlines()[-3:])

    def close(self, kill: bool = False) -> None:
        """Ends the process with END, or kills it (it may be hung), and closes its pipes."""
        proc = self.engine.proc
        if kill and proc.poll() is None:
            proc.kill()
            proc.wait()
        self.engine.close()  # END, and a kill if it does not exit
        self.stderr.close()


def _short(line: str, limit: int = 80) -> str:
    """A line as a failure report quotes it: repr, long ones cut in the middle."""
    text = repr(line)
    return text if len(text) <= limit else f"{text[:limit // 2]}...({len(line)} characters)...{text[-limit // 4:]}"


# --------------------------------------------------------------------- the fuzz
@dataclass
class FuzzConfig:
    """Which engine the fuzz runs, how, and how hard it pushes."""

    engine: str = "pure"
    """pure (MCTS with random rollouts), heuristic or model"""
    model: Optional[str] = None
    """the model file for ``engine="model"``"""
    level: int = DEFAULT_LEVEL
    """the heuristic's level"""
    n_in_row: int = 5
    """for pure and heuristic; a model brings its own"""
    max_playouts: int = 8
    """playouts per move, few, so that every move is quick whatever the clock says"""
    search: SearchOptions = SEARCH_PRESETS["sharp"]
    """the search options (the engine's command line plays the sharp preset)"""
    device: str = "cpu"
    process: bool = False
    """talk to a ``python -m gomoku.play.engine`` child process instead of an engine in this process"""
    hang_s: Optional[float] = None
    """the most one answer may take: CPU time in this process (None: 5 s), wall time from a process
    (None: 15 s, as a busy machine may hold a process back for seconds)"""
    start_s: float = 20.0
    """the most the first START may take (it loads the model) and, for a process, its first answer"""
    sequence_s: float = 60.0
    """the most a whole sequence may take"""
    restart_every: Optional[int] = None
    """sequences per engine before a fresh one (None: 1 in this process without a model, else 25)"""
    hostile_share: float = 0.08
    """the share of a game's steps that send a hostile line"""
    skip: frozenset = frozenset()
    """hostile categories to leave out (see ``HOSTILE``)"""
    max_side: int = PLAIN_SIDE
    """the largest side of the boards games start on"""
    engine_class: type = PbrainEngine
    """the engine class in this process (tests pass broken subclasses)"""
    engine_command: Optional[list[str]] = None
    """the engine process's command line; None runs ``python -m gomoku.play.engine`` with the options above"""
    clock: Callable[[], float] = time.monotonic
    """the engine's clock in this process"""

    @property
    def answer_s(self) -> float:
        """``hang_s`` or its default."""
        return self.hang_s if self.hang_s is not None else 15.0 if self.process else 5.0

    def rules(self) -> Rules:
        if self.engine != "model":
            return Rules(self.n_in_row)
        from gomoku.net.modelfile import read_model_file

        spec, _ = read_model_file(self.model)
        return Rules(spec.n_in_row, None if spec.size_free else (spec.width, spec.height))

    def options(self, seed: int) -> EngineOptions:
        return EngineOptions(model=self.model if self.engine == "model" else None,
                             heuristic=self.level if self.engine == "heuristic" else None,
                             n_in_row=self.n_in_row, device=self.device, max_playouts=self.max_playouts,
                             seed=seed, search=self.search)

    def command(self, seed: int) -> list[str]:
        if self.engine_command is not None:
            return list(self.engine_command)
        who = {"pure": ["--pure"], "heuristic": ["--heuristic", str(self.level)],
               "model": ["--model", str(self.model)]}[self.engine]
        return [sys.executable, "-m", "gomoku.play.engine", *who, "--n-in-row", str(self.n_in_row),
                "--device", self.device, "--max-playouts", str(self.max_playouts), "--seed", str(seed),
                "--search", "reference", *self.search.flags().split()]

    @property
    def lifetime(self) -> int:
        if self.restart_every is not None:
            return max(1, self.restart_every)
        return 1 if self.engine != "model" and not self.process else 25

    def describe(self) -> str:
        what = {"pure": f"pure MCTS, {self.max_playouts} playouts", "heuristic": f"heuristic level {self.level}",
                "model": f"model {self.model}, {self.max_playouts} playouts"}[self.engine]
        where = "a python -m gomoku.play.engine process" if self.process else "this process"
        return f"{what}, in {where}"


@dataclass
class Failure:
    """One sequence's first failure."""

    kind: str
    sequence: int
    detail: str
    lines: list[str]
    """every line the engine was sent since it started, the failing one last"""
    engine_seed: int
    repro: Optional[list[str]] = None
    """a shorter list of lines that fails the same way on a fresh engine (in this process)"""

    @property
    def word(self) -> str:
        """The failing line's command word (a data line's first field), for the report's tally."""
        text = self.lines[-1].strip() if self.lines else ""
        return split_command(text)[0].encode("unicode_escape").decode()[:20] if text else "(empty line)"

    def describe(self) -> str:
        lines = self.repro if self.repro is not None else self.lines[-20:]
        head = "repro on a fresh engine" if self.repro is not None else "last lines sent"
        return "\n".join([f"[{self.kind}] sequence {self.sequence}: {self.detail}", f"  {head}:",
                          *(f"    {_short(line, 100)}" for line in lines)])


@dataclass
class Report:
    """The figures of a fuzz run."""

    description: str
    sequences: int = 0
    commands: int = 0
    """lines sent, data lines and empty lines included"""
    answers: int = 0
    """answers checked"""
    seen: Counter = field(default_factory=Counter)
    """right answers by kind: move, OK, ERROR, UNKNOWN, ABOUT"""
    failures: Counter = field(default_factory=Counter)
    """failing sequences by failure kind"""
    failing: Counter = field(default_factory=Counter)
    """failing sequences by (kind, the failing line's command word)"""
    examples: list[Failure] = field(default_factory=list)
    """the first failures of each kind"""
    slowest_move: tuple[float, str] = (0.0, "")
    slowest_other: tuple[float, str] = (0.0, "")
    seconds: float = 0.0

    @property
    def failed(self) -> int:
        return sum(self.failures.values())

    def table(self) -> str:
        kinds = ", ".join(f"{kind} {self.failures[kind]}" for kind in FAILURES if self.failures[kind])
        rows = [("engine", self.description), ("sequences", str(self.sequences)),
                ("commands sent", str(self.commands)),
                ("answers checked", f"{self.answers} ({', '.join(f'{k} {n}' for k, n in self.seen.most_common())})"),
                ("failures", f"{self.failed}" + (f" ({kinds})" if kinds else "")),
                ("failing lines", "; ".join(
                    f"{kind}: " + ", ".join(f"{word} {n}" for (k, word), n in self.failing.most_common() if k == kind)
                    for kind in FAILURES if self.failures[kind]) or "none"),
                ("hangs", str(self.failures["hang"])),
                ("slowest answer", f"{self.slowest_move[0]:.3f} s to a move command ({_short(self.slowest_move[1])})"),
                ("slowest other", f"{self.slowest_other[0]:.3f} s ({_short(self.slowest_other[1])})"),
                ("seconds", f"{self.seconds:.1f}")]
        return "\n".join(f"{name:<16} {value}" for name, value in rows)


class Fuzz:
    """Runs seeded scenarios against engines and checks every answer (see the module docstring).

    An engine serves ``config.lifetime`` sequences, then a fresh one starts; it
    is also thrown away after END and after any failure. The checker's
    ``Manager`` lives as long as its engine, so a sequence may begin in the
    game the last one left.
    """

    def __init__(self, config: FuzzConfig):
        self.config = config
        self.rules = config.rules()
        self._target = None
        self._manager: Optional[Manager] = None
        self._sent: list[str] = []  # lines sent to the current engine
        self._served = 0  # sequences the current engine has served
        self._engine_seed = 0
        self._warm = False  # the current engine has answered a START with OK (and so loaded its model)

    # ----------------------------------------------------------- running
    def run(self, sequences: int, seed: int = 0, keep: int = 3, shrink_s: float = 0.0,
            max_failures: Optional[int] = None, progress: Optional[Callable[[Report, int], None]] = None) -> Report:
        """Runs ``sequences`` sequences, or fewer once ``max_failures`` of them have failed.

        Keeps ``keep`` examples of each failure kind; ``shrink_s`` (in this process
        only) is the time each of them may take to shrink to a short repro.
        """
        report = Report(self.config.describe())
        started = time.perf_counter()
        # The engine runs a full garbage collection after every move. Frozen, the objects
        # this process held before the run (the interpreter's, numpy's, a test session's)
        # are not walked each time: without it the collections took most of the run.
        gc.freeze()
        try:
            for index in range(sequences):
                failure = self._sequence(index, seed, report)
                report.sequences += 1
                if failure is not None:
                    report.failures[failure.kind] += 1
                    report.failing[failure.kind, failure.word] += 1
                    if sum(f.kind == failure.kind for f in report.examples) < keep:
                        report.examples.append(failure)
                if progress is not None:
                    progress(report, index + 1)
                if max_failures is not None and report.failed >= max_failures:
                    break
        finally:
            self._discard()
            gc.unfreeze()
        report.seconds = time.perf_counter() - started  # the shrinking below not included
        if shrink_s > 0 and not self.config.process:
            for failure in report.examples:
                failure.repro = self.shrink(failure, shrink_s)
        return report

    def _new_target(self, engine_seed: int):
        config = self.config
        if config.process:
            return ProcessTarget(config.command(engine_seed), config.start_s)
        options = config.options(engine_seed)
        return InProcessTarget(lambda out: config.engine_class(options, out, config.clock))

    def _discard(self, kill: bool = False) -> None:
        if self._target is not None:
            self._target.close(kill)
        self._target = None

    def _sequence(self, index: int, seed: int, report: Report) -> Optional[Failure]:
        config = self.config
        if self._target is None or self._served >= config.lifetime:
            self._discard()
            self._engine_seed = seed * 1_000_003 + index
            self._target = self._new_target(self._engine_seed)
            self._manager = Manager(self.rules)
            self._sent, self._served, self._warm = [], 0, False
        self._served += 1
        manager = self._manager
        scenario = Scenario(random.Random(f"{seed}/{index}"), manager, self.rules, config.hostile_share, config.skip,
                            config.max_side)
        started = time.perf_counter()
        lines = scenario.lines()
        if config.process:  # ABOUT at the end: an answer too many shows as ABOUT's answer
            lines = _then(lines, manager, "ABOUT")
        for line in lines:
            self._sent.append(line)
            problem = self._step(self._target, manager, line, report)
            if problem is None and time.perf_counter() - started > config.sequence_s:
                problem = "hang", f"the sequence took over {config.sequence_s:g} s"
            if problem is not None:
                failure = Failure(problem[0], index, problem[1], list(self._sent), self._engine_seed)
                self._discard(kill=True)
                return failure
        if manager.ended:
            self._discard()
        return None

    def _limit(self, dues: list[Due]) -> float:
        """The time an answer may take: the first START of an engine may load its model."""
        if not self._warm and any(d.size is not None and OK in d.kinds and ERROR not in d.kinds for d in dues):
            return self.config.start_s
        return self.config.answer_s

    def _step(self, target, manager: Manager, line: str, report: Optional[Report]) -> Optional[tuple[str, str]]:
        """Sends one line, checks what came back; returns ``(kind, detail)`` of a failure or None."""
        dues = manager.feed(line)
        limit = self._limit(dues)
        exchange = target.exchange(line, dues, manager.ended, limit)
        if report is not None:
            report.commands += 1
            if exchange.answers:
                slowest = "slowest_move" if any(MOVE in d.kinds for d in dues) else "slowest_other"
                if exchange.seconds > getattr(report, slowest)[0]:
                    setattr(report, slowest, (exchange.seconds, line))
        problem = exchange.problem
        if problem is None and len(exchange.answers) != len(dues):
            problem = "count", (f"{_short(line)} got {len(exchange.answers)} answers {exchange.answers[:3]}, "
                                f"{len(dues)} due")
        for due, answer in zip(dues, exchange.answers):
            if problem is not None:
                break
            if report is not None:
                report.answers += 1
            problem = manager.accept(due, answer)
            if problem is None:
                if report is not None:
                    report.seen["move" if MOVE in due.kinds else ABOUT if ABOUT in due.kinds
                                else answer.split(" ", 1)[0]] += 1
                if answer == OK and due.size is not None:
                    self._warm = True
        if problem is None:
            if exchange.cpu is None and exchange.seconds > limit:
                problem = "hang", f"{_short(line)} took {exchange.seconds:.1f} s (limit {limit:g} s)"
            elif exchange.cpu is not None and (exchange.cpu > limit or exchange.seconds > WALL_FACTOR * limit):
                problem = "hang", (f"{_short(line)} took {exchange.seconds:.1f} s, {exchange.cpu:.1f} s of CPU "
                                   f"(limit {limit:g} s)")
        if problem is not None and problem[0] == "crash" and exchange.stderr:
            problem = problem[0], f"{problem[1]}\n  stderr: {exchange.stderr}"
        return problem

    # ------------------------------------------------------- shrinking
    def replay(self, lines: list[str], engine_seed: int) -> Optional[tuple[str, int]]:
        """Sends ``lines`` to a fresh engine; returns ``(failure kind, index of the failing line)`` or None."""
        target = self._new_target(engine_seed)
        manager = Manager(self.rules)
        warm, self._warm = self._warm, False
        try:
            for index, line in enumerate(lines):
                problem = self._step(target, manager, line, None)
                if problem is not None:
                    return problem[0], index
            return None
        finally:
            self._warm = warm
            target.close(kill=True)

    def shrink(self, failure: Failure, budget_s: float = 30.0) -> Optional[list[str]]:
        """A short list of lines that fails like ``failure`` on a fresh engine, found within ``budget_s``.

        The failing line alone first, then with the last START before it, then
        chunks of lines taken out while the failure stays (delta debugging).
        None if the lines do not fail the same way again on a fresh engine.
        """
        deadline = time.monotonic() + budget_s

        def fails(candidate: list[str]) -> Optional[list[str]]:
            if not candidate or time.monotonic() > deadline:
                return None
            result = self.replay(candidate, failure.engine_seed)
            return candidate[:result[1] + 1] if result is not None and result[0] == failure.kind else None

        lines = fails(failure.lines)
        if lines is None:
            return None
        starts = [line for line in lines[:-1] if split_command(line.strip() or "x")[0] in ("START", "RECTSTART")]
        for candidate in ([lines[-1]], starts[-1:] + [lines[-1]]):
            found = fails(candidate) if len(candidate) < len(lines) else None
            if found is not None:
                lines = found
                break
        chunks = 2
        while len(lines) > 1 and time.monotonic() < deadline:
            size = math.ceil(len(lines) / chunks)
            for start in range(0, len(lines), size):
                found = fails(lines[:start] + lines[start + size:])
                if found is not None:
                    lines = found
                    chunks = max(2, chunks - 1)
                    break
            else:
                if size == 1:
                    break
                chunks = min(len(lines), chunks * 2)
        return lines


def _then(lines: Iterator[str], manager: Manager, last: str) -> Iterator[str]:
    """``lines``, then ``last`` unless the engine was sent END."""
    yield from lines
    if not manager.ended:
        yield last


# ------------------------------------------------------------ command line
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gomoku.play.fuzz",
        description="Send seeded random command sequences, valid and hostile, to the Gomocup engine and check "
                    "every answer against the protocol. Exit status 1 if anything failed.",
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--sequences", type=int, default=1000, help="how many sequences to send")
    parser.add_argument("--seed", type=int, default=0, help="seeds the sequences and the engines")
    parser.add_argument("--engine", choices=["pure", "heuristic", "model"],
                        help="the engine to fuzz (default: model with --model, else pure)")
    parser.add_argument("--model", help="model file for --engine model")
    parser.add_argument("--level", type=int, choices=LEVELS, default=DEFAULT_LEVEL, help="the heuristic's level")
    parser.add_argument("--n-in-row", type=int, default=5, help="stones in a row that win (pure and heuristic)")
    parser.add_argument("--max-playouts", type=int, default=8, help="playouts per move")
    add_search_flags(parser, "the engine's search", default="sharp")
    parser.add_argument("--device", choices=["cpu", "gpu", "auto"], default="cpu", help="where the model runs")
    parser.add_argument("--process", action="store_true",
                        help="talk to a python -m gomoku.play.engine process instead of an engine in this process")
    parser.add_argument("--hang-s", type=float,
                        help="seconds one answer may take: of CPU in this process (default 5), of wall time "
                             "from a process (default 15)")
    parser.add_argument("--start-s", type=float, default=20.0,
                        help="seconds the first START may take (model loading), and a process's first answer")
    parser.add_argument("--restart-every", type=int,
                        help="sequences per engine (default: 1 in this process without a model, else 25)")
    parser.add_argument("--hostile-share", type=float, default=0.08, help="share of hostile steps in a game")
    parser.add_argument("--skip", nargs="*", default=[], choices=sorted(HOSTILE), metavar="CATEGORY",
                        help=f"hostile categories to leave out: {', '.join(HOSTILE)}")
    parser.add_argument("--max-side", type=int, default=PLAIN_SIDE,
                        help="the largest side of the boards games start on")
    parser.add_argument("--max-failures", type=int, help="stop once this many sequences have failed")
    parser.add_argument("--show", type=int, default=2, help="examples to print of each failure kind")
    parser.add_argument("--shrink-s", type=float, default=30.0,
                        help="seconds to shrink each example to a short repro (in this process; 0: no shrinking)")
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    engine = args.engine or ("model" if args.model else "pure")
    if engine == "model" and not args.model:
        build_parser().error("--engine model needs --model PATH")
    config = FuzzConfig(engine=engine, model=args.model, level=args.level, n_in_row=args.n_in_row,
                        max_playouts=args.max_playouts, search=SearchOptions.from_args(args), device=args.device,
                        process=args.process, hang_s=args.hang_s, start_s=args.start_s,
                        restart_every=args.restart_every, hostile_share=args.hostile_share, skip=frozenset(args.skip),
                        max_side=args.max_side)
    step = max(1, args.sequences // 10)

    def progress(report: Report, done: int) -> None:
        if done % step == 0:
            print(f"  {done}/{args.sequences} sequences, {report.failed} failures", file=sys.stderr, flush=True)

    report = Fuzz(config).run(args.sequences, args.seed, keep=args.show, shrink_s=args.shrink_s,
                             max_failures=args.max_failures, progress=progress)
    print(report.table())
    for failure in report.examples:
        print()
        print(failure.describe())
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
