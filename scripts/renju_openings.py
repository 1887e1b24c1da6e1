"""Writes the 26 standard renju openings as an openings file (``--openings FILE``).

    python scripts/renju_openings.py > gomoku/data/renju_26_15x15.txt

Renju games begin with three stones: Black in the centre, White next to it, straight (the 13
"direct" openings) or diagonally (the 13 "indirect" ones), and Black's second stone anywhere in
the 5x5 square around the centre. Up to the board's symmetries that leaves 13 of each: the
third stone's 23 free cells fall into 13 classes under the mirror that keeps the first two
stones in place. This script lists one representative of each class, in a fixed order, so the
file is made, not copied; the traditional names (Kagetsu, Ukigumo, ...) are not used.
"""

from __future__ import annotations

import sys

SIZE = 15


def label(x: int, y: int) -> str:
    """The project's label of the cell ``x`` columns right and ``y`` rows up from the centre."""
    centre = SIZE // 2
    return f"{chr(ord('a') + centre + x)}{centre + y + 1}"


def openings() -> list[tuple[str, list[tuple[int, int]]]]:
    """``(kind, [black 1, white 2, black 3])`` for the 26 openings, offsets from the centre."""
    found = []
    for kind, white, mirror in (("direct", (0, 1), lambda x, y: (-x, y)),
                                ("indirect", (1, 1), lambda x, y: (y, x))):
        seen = set()
        for y in range(2, -3, -1):
            for x in range(-2, 3):
                if (x, y) in ((0, 0), white) or mirror(x, y) in seen:
                    continue
                seen.add((x, y))
                found.append((kind, [(0, 0), white, (x, y)]))
    return found


def main() -> int:
    rows = openings()
    assert len(rows) == 26, len(rows)
    print("# the 26 standard renju openings (13 direct, 13 indirect), one stone each for Black, White, Black;")
    print("# written by: python scripts/renju_openings.py")
    print(f"board {SIZE}x{SIZE} 5")
    for kind, stones in rows:
        print(f"{' '.join(label(x, y) for x, y in stones):<12}  # {kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
