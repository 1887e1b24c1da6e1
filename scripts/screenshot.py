"""Renders the play window in mid-game to a PNG (docs/screenshot.png by default), with no screen.

The position is a fixed opening on an 8x8 board (5 in a row); White is the
shipped model when ``models/gomoku_8x8_5.npz`` exists, else pure MCTS. The
picture is taken while White is thinking, so it shows the progress bar.

    python scripts/screenshot.py [--out docs/screenshot.png]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ["SDL_VIDEODRIVER"] = "dummy"  # draw without a screen
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
warnings.filterwarnings("ignore", module="paddle")

import pygame  # noqa: E402

from gomoku.play.match import DEFAULT_MODEL, setup_match  # noqa: E402
from gomoku.play.ui import open_window  # noqa: E402
from gomoku.search.options import SEARCH_PRESETS  # noqa: E402

OPENING = ["d4", "e5", "e4", "c4", "d5", "d3", "f3", "c6", "c2", "e6", "f6"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join("docs", "screenshot.png"), help="PNG to write")
    args = parser.parse_args(argv)

    if os.path.isfile(DEFAULT_MODEL):
        # The seat play.py gives by default: the shipped model with the sharp search.
        match = setup_match(white="az:" + DEFAULT_MODEL + ":4000", seed=1, device="cpu",
                            search=SEARCH_PRESETS["sharp"])
    else:
        match = setup_match(white="pure:4000", size=(8, 8), n_in_row=5, seed=1)
    for label in OPENING:
        match.play(match.board.parse_move(label))
    window = open_window(match)
    # Let White think until the progress bar is partly filled, then take the picture.
    window.update()
    deadline = time.monotonic() + 60
    while window.task is not None and window.task.progress < 0.4 and time.monotonic() < deadline:
        time.sleep(0.02)
    window.draw()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    pygame.image.save(window.surface, args.out)
    window.quit()
    pygame.quit()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
