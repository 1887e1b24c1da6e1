"""The symmetries of the board, applied to input planes and move probabilities together.

A square board has 8 (4 rotations x plain/mirrored); a non-square board keeps
the 4 that map it onto itself. Arrays are laid out ``(..., height, width)`` with
row 0 first, matching ``Board.planes`` and the flat move index ``row * width + col``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Symmetry:
    """Rotate by ``rotations`` quarter turns after mirroring left-right if ``mirror``."""

    rotations: int
    mirror: bool

    def apply(self, array: np.ndarray) -> np.ndarray:
        """Transforms the last two axes of ``array`` (a grid of height x width)."""
        if self.mirror:
            array = np.flip(array, axis=-1)
        return np.rot90(array, self.rotations, axes=(-2, -1))

    def inverse(self) -> "Symmetry":
        if self.mirror:  # mirror-then-rotate is its own inverse
            return self
        return Symmetry((4 - self.rotations) % 4, False)

    def move_permutation(self, width: int, height: int) -> np.ndarray:
        """``perm[m]`` is where flat move ``m`` lands once the board is transformed."""
        cells = np.arange(width * height).reshape(height, width)
        moved = self.apply(cells)
        perm = np.empty(width * height, dtype=np.int64)
        perm[moved.reshape(-1)] = np.arange(width * height)
        return perm


ALL_SYMMETRIES = tuple(Symmetry(r, m) for m in (False, True) for r in range(4))


def symmetries(width: int, height: int) -> tuple[Symmetry, ...]:
    """The symmetries that map a ``width x height`` board onto itself (identity first)."""
    if width == height:
        return ALL_SYMMETRIES
    # Non-square: identity, half turn, and the two mirrors (a half turn after a mirror is a flip up-down).
    return tuple(s for s in ALL_SYMMETRIES if s.rotations % 2 == 0)


def augment(planes: np.ndarray, pis: np.ndarray, zs: np.ndarray):
    """Every position under every symmetry of its board.

    Args:
        planes: ``(N, C, H, W)`` network inputs.
        pis: ``(N, H*W)`` move probabilities.
        zs: ``(N,)`` outcomes (unchanged by symmetry).

    Returns:
        ``(planes, pis, zs)`` with ``N * len(symmetries)`` rows, grouped by symmetry.
    """
    n, _, height, width = planes.shape
    grids = pis.reshape(n, height, width)
    out_planes, out_pis = [], []
    for sym in symmetries(width, height):
        out_planes.append(sym.apply(planes))
        out_pis.append(sym.apply(grids).reshape(n, height * width))
    count = len(out_planes)
    return (
        np.ascontiguousarray(np.concatenate(out_planes), dtype=np.float32),
        np.ascontiguousarray(np.concatenate(out_pis), dtype=np.float32),
        np.tile(np.asarray(zs, dtype=np.float32), count),
    )
