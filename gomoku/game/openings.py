"""Openings: a few stones near the centre, placed before the players start.

The arena plays each opening twice, colours swapped, so that a match measures
play from many positions instead of one game repeated; self-play can start from
them too (``--opening-stones``), so that the net learns the central fights
people and the arena start from. Openings are drawn at random here, or read
from an openings file (``read_openings``), such as the balanced openings that
``gomoku.play.arena.balanced`` generates: random central stones leave most freestyle
positions won for Black, and only openings from which either side can win tell
two players apart by their White games.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence

import numpy as np

from gomoku.game.board import Board, IllegalMoveError
from gomoku.game.rules import FREESTYLE, rule_of
from gomoku.game.symmetry import symmetries

OPENING_TRIES = 200  # draws per opening before a repeat (up to symmetry) is accepted


class OpeningError(ValueError):
    """Opening stones that do not fit the board's centre, or could already win."""


def opening_area(width: int, height: int) -> list[int]:
    """The central cells openings are drawn from: the board less a quarter on each side."""
    margin_col, margin_row = width // 4, height // 4
    return [row * width + col
            for row in range(margin_row, height - margin_row)
            for col in range(margin_col, width - margin_col)]


def check_opening_stones(stones: int, width: int, height: int, n_in_row: int) -> None:
    """Raises OpeningError unless ``stones`` opening stones fit and cannot end the game."""
    area = len(opening_area(width, height))
    if stones < 0:
        raise OpeningError(f"--opening-stones must be 0 or more, got {stones}")
    if stones >= area:
        raise OpeningError(f"--opening-stones {stones} does not fit the {area} central cells of a "
                           f"{width}x{height} board: use fewer than {area}")
    if (stones + 1) // 2 >= n_in_row:
        raise OpeningError(f"--opening-stones {stones} would give Black {(stones + 1) // 2} stones, "
                           f"enough to win at {n_in_row} in a row: use at most {2 * (n_in_row - 1)}")


def make_openings(n_openings: int, width: int, height: int, n_in_row: int, stones: int,
                  rng: np.random.Generator) -> list[list[int]]:
    """Random openings: ``stones`` distinct central cells each, Black's stones first, alternating.

    An opening that is a symmetric image of an earlier one (the same Black and
    White stones after a rotation or mirror) is drawn again, up to
    ``OPENING_TRIES`` times; after that repeats are allowed, for small areas
    that have few distinct openings.

    Raises:
        OpeningError: the stones do not fit or could already win.
    """
    check_opening_stones(stones, width, height, n_in_row)
    if stones == 0:
        return [[] for _ in range(n_openings)]
    area = np.asarray(opening_area(width, height))
    perms = [sym.move_permutation(width, height) for sym in symmetries(width, height)]

    def canonical(moves: np.ndarray) -> tuple:
        # Black's and White's stones as sets, smallest over the symmetries.
        return min((tuple(sorted(p[moves[0::2]])), tuple(sorted(p[moves[1::2]]))) for p in perms)

    seen: set = set()
    openings = []
    for _ in range(n_openings):
        for _ in range(OPENING_TRIES):
            moves = rng.choice(area, size=stones, replace=False)
            key = canonical(moves)
            if key not in seen:
                break
        seen.add(key)
        openings.append([int(m) for m in moves])
    return openings


def paired_openings(n_games: int, width: int, height: int, n_in_row: int, stones: int,
                    rng: np.random.Generator) -> list[list[int]]:
    """The opening of each of ``n_games`` games: game ``i`` starts from opening ``i // 2``,
    so that each opening is played twice (the players swap colours between the two)."""
    openings = make_openings((n_games + 1) // 2, width, height, n_in_row, stones, rng)
    return [openings[i // 2] for i in range(n_games)]


# ------------------------------------------------------------ opening files
# An openings file is text: a ``board WIDTHxHEIGHT N_IN_ROW`` line, then one opening a
# line, its moves as labels in the order they are played (Black first), e.g. ``h8 i9 g7``.
# ``#`` starts a comment, to the end of the line; blank lines are skipped.

DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
BALANCED = "balanced"  # names the shipped balanced openings of a board in ``--openings``


def openings_path(name: str, width: int, height: int, n_in_row: int, rule: str = FREESTYLE) -> str:
    """The file ``--openings NAME`` means: ``balanced`` is the project's own balanced openings
    for the board and rule (the rule's ``openings`` file in ``gomoku/data``: under renju the 26
    standard renju openings); a file's name in ``gomoku/data`` without its ``.txt`` (such as
    ``renju_balanced_15x15``) is that file, unless a file of that name exists where it is asked
    for; anything else is a path.

    Raises:
        OpeningError: ``balanced`` on a board the project ships no openings for under ``rule``.
    """
    if name != BALANCED:
        shipped = os.path.join(DATA_DIR, name + ".txt")
        if not os.path.exists(name) and os.path.basename(name) == name and os.path.exists(shipped):
            return shipped
        return name
    path = os.path.join(DATA_DIR, rule_of(rule).openings.format(width=width, height=height, n_in_row=n_in_row))
    if not os.path.exists(path):
        raise OpeningError(f"no balanced openings ship for {width}x{height} with {n_in_row} in a row under {rule} "
                           f"(gomoku/data has: {', '.join(_shipped_openings()) or 'none'}); make some with "
                           f"python -m gomoku.play.arena.balanced --size {width}x{height} --n-in-row {n_in_row} --out FILE")
    return path


def _shipped_openings() -> list[str]:
    return sorted(f[:-len(".txt")] for f in os.listdir(DATA_DIR) if f.endswith(".txt")) if os.path.isdir(DATA_DIR) else []


def load_openings(name: str, width: int, height: int, n_in_row: int, rule: str = FREESTYLE) -> list[list[int]]:
    """``read_openings`` of the file ``--openings NAME`` means (see ``openings_path``)."""
    return read_openings(openings_path(name, width, height, n_in_row, rule), width, height, n_in_row)


def book_for_board(name: str, width: int, height: int, n_in_row: int, rule: str = FREESTYLE) -> list[list[int]]:
    """The openings of ``--openings NAME`` for this board, or [] when they are for another
    board (a run on several boards uses them where they fit).

    Raises:
        OpeningError: the file cannot be read, or is damaged.
    """
    try:
        path = openings_path(name, width, height, n_in_row, rule)
    except OpeningError:
        return []
    if read_board_line(path) != (width, height, n_in_row):
        return []
    return read_openings(path, width, height, n_in_row)


def read_board_line(path: str) -> tuple[int, int, int]:
    """``(width, height, n_in_row)`` of an openings file's ``board`` line.

    Raises:
        OpeningError: the file cannot be read or does not start with a board line.
    """
    try:
        with open(path, encoding="utf-8") as f:
            for number, raw in enumerate(f, 1):
                line = raw.split("#", 1)[0].strip()
                if line:
                    return _board_line(line, f"{path}, line {number}")
    except (OSError, UnicodeDecodeError) as e:
        raise OpeningError(f"cannot read the openings file {path}: {e}") from None
    raise OpeningError(f"{path} holds no openings")


def _board_line(line: str, where: str) -> tuple[int, int, int]:
    words = line.split()
    size = words[1].lower().split("x") if len(words) == 3 else []
    if words[:1] != ["board"] or len(size) != 2 or not all(p.isdigit() for p in size + words[2:]):
        raise OpeningError(f"{where}: an openings file starts with 'board WIDTHxHEIGHT N_IN_ROW', got {line!r}")
    return int(size[0]), int(size[1]), int(words[2])


def read_openings(path: str, width: int, height: int, n_in_row: int) -> list[list[int]]:
    """The openings of the file at ``path``, as move lists, for a ``width``x``height`` board.

    Raises:
        OpeningError: the file is missing or unreadable, is for another board, holds
            a move that is not a legal one, or an opening that already ends the game.
    """
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise OpeningError(f"cannot read the openings file {path}: {e}") from None
    openings: list[list[int]] = []
    board_seen = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}, line {number}"
        if not board_seen:
            found = _board_line(line, where)
            if found != (width, height, n_in_row):
                raise OpeningError(f"{where}: the openings are for {found[0]}x{found[1]} with {found[2]} in a "
                                   f"row, not {width}x{height} with {n_in_row}")
            board_seen = True
            continue
        board = Board(width, height, n_in_row)
        try:
            for label in line.split():
                board.do_move(board.parse_move(label))
        except IllegalMoveError as e:
            raise OpeningError(f"{where}: {e}") from None
        if board.game_over:
            raise OpeningError(f"{where}: the opening {line!r} already ends the game")
        openings.append(list(board.history))
    if not openings:
        raise OpeningError(f"{path} holds no openings")
    return openings


def format_openings(openings: Sequence[Sequence[int]], width: int, height: int, n_in_row: int,
                    header: Sequence[str] = (), notes: Optional[Sequence[str]] = None) -> str:
    """The text of an openings file: ``header`` lines as comments, then the openings, each
    followed by its note (``notes[i]``) as a comment when there is one."""
    board = Board(width, height, n_in_row)
    lines = [f"# {h}" if h else "#" for h in header]
    lines.append(f"board {width}x{height} {n_in_row}")
    for i, moves in enumerate(openings):
        text = " ".join(board.move_to_label(m) for m in moves)
        note = notes[i] if notes is not None else ""
        lines.append(f"{text:<24}  # {note}" if note else text)
    return "\n".join(lines) + "\n"


def openings_for_games(openings: Sequence[Sequence[int]], n_games: int,
                       rng: np.random.Generator) -> list[list[int]]:
    """The opening of each of ``n_games`` games from a list: game ``i`` starts from the
    ``i // 2``-th of the list in an order drawn by ``rng``, so that each opening is played
    twice (the players swap colours between the two); the order starts over when the
    games outnumber twice the openings."""
    order: list[int] = []
    while len(order) < (n_games + 1) // 2:
        order.extend(int(k) for k in rng.permutation(len(openings)))
    return [list(openings[order[i // 2]]) for i in range(n_games)]
