"""The fuzz's command sequences: mostly plausible games, some hostile lines, some chaos."""

from __future__ import annotations

import random
from typing import Iterator, Optional

from devtools.engine_check.fuzz.check import DIRECTIONS, PLAIN_SIDE, Manager, Rules
from gomoku.play.engine.protocol import OPPONENT


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
            dx, dy = rng.choice(DIRECTIONS)
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
