"""Renders the play window in mid-game to PNGs in docs/, with no screen.

The position is a fixed opening on an 8x8 board (5 in a row); White is the
shipped model when ``models/gomoku_8x8_5.npz`` exists, else pure MCTS. Three pictures:

* ``thinking`` (docs/screenshot.png): White is thinking; the progress bar, the
  win-rate bar and the search's top moves on the board, as they stand at 40% of the search;
* ``heatmap`` (docs/analysis_heatmap.png): Black (the human) to move, the policy net's heat map (P) on;
* ``hint`` (docs/analysis_hint.png): Black to move, the hint (H) shown with the search's top moves.

``--panel`` draws instead each state of the panel's win-rate section on a 15x15 board, as
``docs/window/<state>.png`` (``PANEL_STATES``). The searches are seeded and stopped at a fixed
playout, and the lopsided and even bars set the root's value of a real search, so the pictures
come out the same each time:

* ``no_search``: Black to move, nothing searched yet;
* ``thinking``: White's search held at 40% of its playouts;
* ``after_move``: White has moved; the bar and the faint circles are its search's;
* ``lopsided``, ``split73``, ``even``: a finished search of Black's move with Black at 95%, 73%, 50%;
* ``hint``: Black's hint (H) with the search's top moves;
* ``proven``: Black to move with an open three: the solver has proven the win;
* ``renju``: the renju model's game, Black to move, a double three marked forbidden, and the hint.

    python scripts/screenshot.py                        # all three
    python scripts/screenshot.py --shot hint --out hint.png
    python scripts/screenshot.py --panel                # docs/window/*.png
    python scripts/screenshot.py --panel --state even --out even.png
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

import dataclasses  # noqa: E402

import pygame  # noqa: E402

from gomoku.net.shipped import DEFAULT_MODEL  # noqa: E402
from gomoku.play.analysis import advisor, search_with_analysis  # noqa: E402
from gomoku.play.match import setup_match  # noqa: E402
from gomoku.play.ui import open_window  # noqa: E402
from gomoku.search.mcts import SearchStopped  # noqa: E402
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


# ------------------------------------------------------------------ the panel's states, 15x15
OPENING_15 = ["h8", "i9", "i8", "g8", "h9", "h7", "j7", "g10"]  # Black (the human) to move after it
PROVEN_15 = ["h8", "h10", "i8", "c3", "j8", "c4"]  # Black to move with an open three
RENJU_15 = ["h8", "h9", "g8", "j10", "i9", "k5", "i10", "b2"]  # i8 is a double three for Black
PANEL_STATES = ("no_search", "thinking", "after_move", "lopsided", "split73", "even", "hint", "proven", "renju")
BAR_VALUES = {"lopsided": 0.9, "split73": 0.46, "even": 0.0}  # Black's value: 95%, 73%, 50%


class HeldSearch:
    """A search that stands still part of the way: what the window draws of a running ``SearchTask``."""

    def __init__(self, player, analysis, progress: float, generation: int):
        self.player, self.analysis, self.progress, self.generation = player, analysis, progress, generation
        self.done, self.move, self.error = False, None, None

    def cancel(self, wait: float = 0.0) -> None:
        pass

    def wait(self, timeout=None) -> bool:
        return False


def held_analysis(player, board, playouts: int):
    """The seeded search's snapshot once it has run ``playouts`` playouts (it is stopped there)."""
    held = []

    def report(shot):
        if not held and shot.playouts >= playouts:
            held.append(shot)

    try:
        search_with_analysis(player, board.copy(), stop=lambda: bool(held), report=report, every=0.0)
    except SearchStopped:
        pass
    if not held:
        raise RuntimeError(f"the search ended before {playouts} playouts")
    return held[0]


def panel_window(state: str, playouts: int = 200, cell=None):
    """A 15x15 window drawn in ``state`` (one of ``PANEL_STATES``) with the shipped models at
    ``playouts``; no search thread is left running. The caller quits it."""
    renju = state == "renju"
    match = setup_match(size=(15, 15), rule="renju" if renju else None, playouts=playouts, seed=1,
                        device="cpu", search=SEARCH_PRESETS["sharp"])
    moves = {"proven": PROVEN_15, "renju": RENJU_15}.get(state, OPENING_15)
    moves = moves + (["f9"] if state in ("thinking", "after_move") else [])  # then White is to move
    for label in moves:
        match.play(match.board.parse_move(label))
    window = open_window(match, cell=cell)
    board = match.board
    if state == "thinking":
        player = advisor(match)
        window.task = HeldSearch(player, held_analysis(player, board, int(0.4 * playouts)), 0.4, window.generation)
    elif state == "after_move":
        analysis = search_with_analysis(advisor(match), board.copy())
        window.keep_analysis(analysis)
        match.play(analysis.move)
    elif state in BAR_VALUES:
        analysis = search_with_analysis(advisor(match), board.copy())
        window.keep_analysis(dataclasses.replace(analysis, root_value=BAR_VALUES[state]))
    elif state in ("hint", "proven", "renju"):
        window.ask_hint()
        _wait(window, lambda: window.hint_task is None)
        if state == "proven" and window.analysis_for(board)[0].proven != 1:
            raise RuntimeError("the solver did not prove Black's win")
    elif state != "no_search":
        raise ValueError(f"unknown panel state {state!r}: use one of {', '.join(PANEL_STATES)}")
    return window


def save_small(surface: pygame.Surface, out: str) -> None:
    """Saves ``surface`` as a PNG of 256 colours (a third of the full-colour file), where Pillow is at hand."""
    try:
        from PIL import Image
    except ImportError:
        pygame.image.save(surface, out)
        return
    image = Image.frombytes("RGB", surface.get_size(), pygame.image.tobytes(surface, "RGB"))
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(out, optimize=True)


def shoot_panel(state: str, out: str, playouts: int = 200) -> None:
    window = panel_window(state, playouts)
    window.draw()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    save_small(window.surface, out)
    window.quit()
    print(f"wrote {out}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shot", choices=("all",) + tuple(SHOTS), default="all", help="which picture")
    parser.add_argument("--panel", action="store_true", help="the panel's states on 15x15 (docs/window/)")
    parser.add_argument("--state", choices=("all",) + PANEL_STATES, default="all", help="which state, with --panel")
    parser.add_argument("--out", help="PNG to write, for one --shot or --state (default: its file in docs/)")
    args = parser.parse_args(argv)
    if args.out and (args.state if args.panel else args.shot) == "all":
        parser.error("--out needs one --shot, or --panel with one --state")
    if args.panel:
        for state in PANEL_STATES if args.state == "all" else (args.state,):
            shoot_panel(state, args.out or os.path.join("docs", "window", state + ".png"))
    else:
        for shot in SHOTS if args.shot == "all" else (args.shot,):
            shoot(shot, args.out or os.path.join("docs", SHOTS[shot]))
    pygame.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
