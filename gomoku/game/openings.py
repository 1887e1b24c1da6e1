"""Random openings: a few stones near the centre, placed before the players start.

The arena plays each opening twice, colours swapped, so that a match measures
play from many positions instead of one game repeated; self-play can start from
them too (``--opening-stones``), so that the net learns the central fights
people and the arena start from.
"""

from __future__ import annotations

import numpy as np

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
