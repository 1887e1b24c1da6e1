"""The board's lines: the four directions, and for a board's geometry the cells along each line.

A *line* here is a straight segment of ``n_in_row`` cells (horizontal, vertical or
diagonal). The tables are cached per geometry and read-only; the win check, the
rule's exact-length tests, the random rollouts, the line board and the input
planes all read them. This module uses NumPy only.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# The four line directions as (d_row, d_col): horizontal, vertical, both diagonals.
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


@lru_cache(maxsize=None)
def rays(width: int, height: int, n_in_row: int) -> tuple:
    """For every cell and direction, the cells on each side of it, nearest first.

    Each side holds at most ``n_in_row - 1`` cells: more can never change
    whether a line through the cell reaches ``n_in_row``.
    """
    table = []
    for move in range(width * height):
        row, col = divmod(move, width)
        per_direction = []
        for d_row, d_col in DIRECTIONS:
            sides = []
            for sign in (1, -1):
                side = []
                r, c = row + sign * d_row, col + sign * d_col
                while 0 <= r < height and 0 <= c < width and len(side) < n_in_row - 1:
                    side.append(r * width + c)
                    r, c = r + sign * d_row, c + sign * d_col
                sides.append(tuple(side))
            per_direction.append(tuple(sides))
        table.append(tuple(per_direction))
    return tuple(table)


def _segments(width: int, height: int, n_in_row: int):
    """Each line's first cell, direction and last cell, as ``(row, col, d_row, d_col, end_row, end_col)``,
    in the order of ``line_cells`` and ``line_ends``."""
    for row in range(height):
        for col in range(width):
            for d_row, d_col in DIRECTIONS:
                end_row, end_col = row + (n_in_row - 1) * d_row, col + (n_in_row - 1) * d_col
                if 0 <= end_row < height and 0 <= end_col < width:
                    yield row, col, d_row, d_col, end_row, end_col


@lru_cache(maxsize=None)
def line_cells(width: int, height: int, n_in_row: int) -> np.ndarray:
    """Every straight segment of ``n_in_row`` cells: ``(n_lines, n_in_row)`` move indices.

    Shared by the win check, the random rollouts, the line board and the input planes.
    Cached per geometry; callers must not write to it.
    """
    lines = [[(row + k * d_row) * width + col + k * d_col for k in range(n_in_row)]
             for row, col, d_row, d_col, _, _ in _segments(width, height, n_in_row)]
    table = np.asarray(lines, dtype=np.int64).reshape(-1, n_in_row)
    table.setflags(write=False)
    return table


@lru_cache(maxsize=None)
def line_ends(width: int, height: int, n_in_row: int) -> np.ndarray:
    """For every line of ``line_cells`` (same order), the cell just before its first cell
    and just after its last: ``(n_lines, 2)`` move indices, ``width * height`` where that
    cell is off the board. The exact-length win tests read these. Callers must not write to it.
    """
    size = width * height
    ends = []
    for row, col, d_row, d_col, end_row, end_col in _segments(width, height, n_in_row):
        pair = []
        for r, c in ((row - d_row, col - d_col), (end_row + d_row, end_col + d_col)):
            pair.append(r * width + c if 0 <= r < height and 0 <= c < width else size)
        ends.append(pair)
    table = np.asarray(ends, dtype=np.int64).reshape(-1, 2)
    table.setflags(write=False)
    return table
