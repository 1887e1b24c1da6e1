"""The window's star points: on 15x15 the centre (tengen) is marked like the four others."""

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame is imported anywhere
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402

from gomoku.game.board import Board  # noqa: E402
from gomoku.play.match import Match  # noqa: E402
from gomoku.play.ui import open_window  # noqa: E402
from gomoku.play.ui_draw import GRID  # noqa: E402
from gomoku.search.player_specs import PlayerSpec  # noqa: E402


def test_the_15x15_board_marks_its_centre_and_its_four_star_points():
    board = Board(15, 15, 5)
    window = open_window(Match(board, {1: PlayerSpec.parse("human"), 2: PlayerSpec.parse("human")}), ai_delay=0)
    try:
        window.draw()

        def dotted(label: str) -> bool:  # a pixel off the grid lines, inside a star point's dot
            x, y = window.pixel_of(board.parse_move(label))
            return tuple(window.surface.get_at((x + 2, y + 2)))[:3] == tuple(GRID)[:3]

        assert all(dotted(label) for label in ("h8", "d4", "l4", "d12", "l12"))
        assert not any(dotted(label) for label in ("g8", "h7", "e5", "a1"))
    finally:
        window.quit()
        pygame.quit()
