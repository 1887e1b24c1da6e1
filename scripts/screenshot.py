"""Renders the play window in mid-game to PNGs in docs/, with no screen.

The position is a fixed opening on an 8x8 board (5 in a row); White is the
shipped model when ``models/gomoku_8x8_5.npz`` exists, else pure MCTS. Three pictures:

* ``thinking`` (docs/screenshot.png): White is thinking; the progress bar, the
  win-rate bar and the search's top moves on the board, as they stand at 40% of the search;
* ``heatmap`` (docs/analysis_heatmap.png): Black (the human) to move, the policy net's heat map (P) on;
* ``hint`` (docs/analysis_hint.png): Black to move, the hint (H) shown with the search's top moves.

    python scripts/screenshot.py                        # all three
    python scripts/screenshot.py --shot hint --out hint.png
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

from gomoku.net.shipped import DEFAULT_MODEL  # noqa: E402
from gomoku.play.match import setup_match  # noqa: E402
from gomoku.play.ui import open_window  # noqa: E402
from gomoku.search.options import SEARCH_PRESETS  # noqa: E402

OPENING = ["d4", "e5", "e4", "c4", "d5", "d3", "f3", "c6", "c2", "e6", "f6"]
SHOTS = {"thinking": "screenshot.png", "heatmap": "analysis_heatmap.png", "hint": "analysis_hint.png"}


def _match(playouts: int):
    if os.path.isfile(DEFAULT_MODEL):
        # The seat play.py gives by default: the shipped model with the sharp search.
        return setup_match(white=f"az:{DEFAULT_MODEL}:{playouts}", seed=1, device="cpu",
                           search=SEARCH_PRESETS["sharp"])
    return setup_match(white=f"pure:{playouts}", size=(8, 8), n_in_row=5, seed=1)


def _wait(window, done, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        window.update()
        time.sleep(0.02)


def shoot(shot: str, out: str) -> None:
    """Draws the window for ``shot`` (one of ``SHOTS``) and saves it as ``out``."""
    match = _match(4000 if shot == "thinking" else 800)
    moves = OPENING if shot == "thinking" else OPENING[:-1]  # Black (the human) to move for the others
    for label in moves:
        match.play(match.board.parse_move(label))
    window = open_window(match)
    window.update()
    if shot == "thinking":
        # Let White think until the progress bar is partly filled, then take the picture.
        _wait(window, lambda: window.task is None or window.task.progress >= 0.4)
    elif shot == "heatmap":
        window.toggle_heatmap()
        window.toggle_moves()
        window.notice = ""
    else:
        window.ask_hint()
        _wait(window, lambda: window.hint_task is None)
    window.draw()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    pygame.image.save(window.surface, out)
    window.quit()
    print(f"wrote {out}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shot", choices=("all",) + tuple(SHOTS), default="all", help="which picture")
    parser.add_argument("--out", help="PNG to write, for one --shot (default: its file in docs/)")
    args = parser.parse_args(argv)
    if args.out and args.shot == "all":
        parser.error("--out needs one --shot")
    for shot in SHOTS if args.shot == "all" else (args.shot,):
        shoot(shot, args.out or os.path.join("docs", SHOTS[shot]))
    pygame.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
