"""What the game window looks like: colours, stone and wood sprites, and ``WindowDrawing``,
which paints the board, the stones, the side panel and the status line.

``ui.GameWindow`` holds the state and handles the events; it draws itself through the
``WindowDrawing`` methods it inherits, which read its attributes (``match``, ``board_rect``,
``cell``, ``margin``, the fonts and sprites, ``task``, ``view``, ``notice``, ``buttons``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep pygame's banner out of the terminal
import pygame  # noqa: E402
import pygame.gfxdraw  # noqa: E402

from gomoku.game.board import COLUMN_LETTERS, Board  # noqa: E402
from gomoku.game.gamefile import COLOUR_NAMES  # noqa: E402

WOOD = (222, 178, 104)
GRID = (52, 36, 18)
LABEL = (92, 62, 30)
BACKGROUND = (40, 36, 33)
PANEL_TEXT = (236, 228, 214)
MUTED = (164, 154, 140)
ACCENT = (232, 160, 62)
NOTICE = (250, 196, 90)
LAST_MOVE = (222, 52, 40)
WIN_LINE = (226, 44, 36)
FORBIDDEN = (200, 30, 24)
BUTTON = (66, 60, 54)
BUTTON_HOVER = (88, 80, 72)
BUTTON_BORDER = (110, 100, 90)

PANEL_WIDTH = 300
STATUS_HEIGHT = 64


# ----------------------------------------------------------------- sprites
def _disc_alpha(d: np.ndarray, radius: float) -> np.ndarray:
    """Anti-aliased coverage of a disc: 1 inside, 0 outside, a one-pixel ramp at the edge."""
    return np.clip(radius - d + 0.5, 0.0, 1.0)


def _sprite(rgb: np.ndarray, alpha: np.ndarray) -> pygame.Surface:
    """A per-pixel-alpha surface from ``(w, h, 3)`` colours and ``(w, h)`` alpha in [0, 1]."""
    w, h = alpha.shape
    surface = pygame.Surface((w, h), pygame.SRCALPHA)
    pygame.surfarray.pixels3d(surface)[...] = np.clip(rgb, 0, 255).astype(np.uint8)
    pygame.surfarray.pixels_alpha(surface)[...] = np.clip(alpha * 255, 0, 255).astype(np.uint8)
    return surface


def stone_sprite(radius: int, player: int, opacity: float = 1.0) -> pygame.Surface:
    """A shaded stone lit from the upper left (black for player 1, white for player 2)."""
    size = 2 * radius + 2
    x, y = np.meshgrid(np.arange(size) + 0.5 - size / 2, np.arange(size) + 0.5 - size / 2, indexing="ij")
    d = np.hypot(x, y)
    # Distance to the highlight, in radii: a soft spot up and to the left of the centre.
    spot = np.hypot(x + 0.38 * radius, y + 0.42 * radius) / radius
    rim = np.clip(d / radius, 0.0, 1.0) ** 3
    if player == 1:
        grey = 24 + 120 * np.exp(-(spot / 0.42) ** 2) - 10 * rim
        rgb = np.stack([grey, grey, grey * 1.04], axis=-1)
    else:
        grey = 246 - 58 * rim - 26 * np.clip(spot - 0.6, 0.0, None) + 9 * np.exp(-(spot / 0.5) ** 2)
        rgb = np.stack([grey, grey * 0.99, grey * 0.96], axis=-1)
    return _sprite(rgb, _disc_alpha(d, radius) * opacity)


def shadow_sprite(radius: int) -> pygame.Surface:
    """A soft dark disc drawn under a stone, offset towards the lower right."""
    size = 2 * radius + 8
    x, y = np.meshgrid(np.arange(size) + 0.5 - size / 2, np.arange(size) + 0.5 - size / 2, indexing="ij")
    d = np.hypot(x, y)
    alpha = 0.45 * np.clip((radius + 2.5 - d) / 4.0, 0.0, 1.0)
    return _sprite(np.zeros((size, size, 3)), alpha)


def wood_texture(width: int, height: int, seed: int = 7) -> pygame.Surface:
    """A warm wooden board face with faint, wavy horizontal grain (the same every time)."""
    rng = np.random.default_rng(seed)
    x, y = np.meshgrid(np.arange(width), np.arange(height), indexing="ij")
    wave = 7.0 * np.sin(x / 97.0 + 1.3) + 3.0 * np.sin(x / 41.0)
    grain = 0.55 * np.sin((y + wave) * 0.21) + 0.3 * np.sin((y + 0.6 * wave) * 0.057 + 2.0)
    streaks = np.repeat(rng.normal(0.0, 1.0, height)[None, :], width, axis=0)
    shade = 1.0 + 0.035 * grain + 0.014 * streaks
    rgb = np.array(WOOD, dtype=np.float64)[None, None, :] * shade[..., None]
    return pygame.surfarray.make_surface(np.clip(rgb, 0, 255).astype(np.uint8))


# ----------------------------------------------------------------- buttons
@dataclass
class Button:
    rect: pygame.Rect
    text: str
    action: Callable[[], None]
    key_hint: str = ""


def fit_label(text: str, width: int, fonts: tuple, colour) -> pygame.Surface:
    """``text`` rendered to fit ``width`` pixels: in the first of ``fonts`` it fits, else in the
    last one cut short with an ellipsis (a player's long name must not run past its button)."""
    for font in fonts:
        rendered = font.render(text, True, colour)
        if rendered.get_width() <= width:
            return rendered
    font = fonts[-1]
    while len(text) > 1:
        text = text[:-1].rstrip()
        rendered = font.render(text + "\u2026", True, colour)
        if rendered.get_width() <= width:
            return rendered
    return font.render(text, True, colour)


# ------------------------------------------------------------------ window
class WindowDrawing:
    """The drawing half of ``ui.GameWindow``: one frame of the window from the window's state."""

    def draw(self, surface: Optional[pygame.Surface] = None) -> None:
        surface = surface or self.surface
        surface.fill(BACKGROUND)
        board = self.shown_board()
        self._draw_board(surface, board)
        self._draw_heatmap(surface, board)  # the AI's view: ui_analysis.AnalysisView
        self._draw_stones(surface, board)
        self._draw_candidates(surface, board)
        self._draw_hint(surface, board)
        self._draw_panel(surface)
        self._draw_status(surface)

    def _draw_board(self, surface: pygame.Surface, board: Board) -> None:
        rect = self.board_rect
        # A darker edge under the wood gives the board some thickness.
        pygame.draw.rect(surface, (120, 84, 40), rect.move(0, 4), border_radius=6)
        surface.blit(self._wood, rect)
        pygame.draw.rect(surface, (176, 130, 66), rect, width=1)
        first, last = self.pixel_of(0), self.pixel_of(board.size - 1)
        left, bottom = first
        right, top = last
        for col in range(board.width):
            x = left + col * self.cell
            pygame.draw.line(surface, GRID, (x, top), (x, bottom), 1)
        for row in range(board.height):
            y = bottom - row * self.cell
            pygame.draw.line(surface, GRID, (left, y), (right, y), 1)
        pygame.draw.rect(surface, GRID, pygame.Rect(left - 1, top - 1, right - left + 3, bottom - top + 3), width=2)
        for move in _star_points(board.width, board.height):
            x, y = self.pixel_of(move)
            pygame.gfxdraw.aacircle(surface, x, y, max(3, self.cell // 14), GRID)
            pygame.gfxdraw.filled_circle(surface, x, y, max(3, self.cell // 14), GRID)
        gap = self.label_gap
        for col in range(board.width):
            text = self.font_label.render(COLUMN_LETTERS[col], True, LABEL)
            x = left + col * self.cell
            surface.blit(text, text.get_rect(center=(x, bottom + gap)))
            surface.blit(text, text.get_rect(center=(x, top - gap)))
        for row in range(board.height):
            text = self.font_label.render(str(row + 1), True, LABEL)
            y = bottom - row * self.cell
            surface.blit(text, text.get_rect(center=(left - gap, y)))
            surface.blit(text, text.get_rect(center=(right + gap, y)))

    def _draw_stones(self, surface: pygame.Surface, board: Board) -> None:
        for move, player in enumerate(board.cells):
            if player:
                x, y = self.pixel_of(move)
                surface.blit(self._shadow, self._shadow.get_rect(center=(x + 2, y + 3)))
                surface.blit(self._stones[player], self._stones[player].get_rect(center=(x, y)))
        line = board.winning_line()
        if line:
            # The line's two ends are its outermost stones (cells are sorted along any direction).
            start, end = self.pixel_of(line[0]), self.pixel_of(line[-1])
            overlay = pygame.Surface(surface.get_size(), pygame.SRCALPHA)
            pygame.draw.line(overlay, WIN_LINE + (150,), start, end, max(4, self.cell // 9))
            for move in line:
                x, y = self.pixel_of(move)
                for r in range(int(self.cell * 0.47), int(self.cell * 0.47) + 3):
                    pygame.gfxdraw.aacircle(overlay, x, y, r, WIN_LINE + (230,))
            surface.blit(overlay, (0, 0))
        if board.last_move is not None:
            x, y = self.pixel_of(board.last_move)
            r = max(4, self.cell // 9)
            pygame.gfxdraw.filled_circle(surface, x, y, r, LAST_MOVE)
            pygame.gfxdraw.aacircle(surface, x, y, r, LAST_MOVE)
        arm = max(4, self.cell // 6)
        for move in self.forbidden_marks():
            x, y = self.pixel_of(move)
            pygame.draw.line(surface, FORBIDDEN, (x - arm, y - arm), (x + arm, y + arm), 3)
            pygame.draw.line(surface, FORBIDDEN, (x - arm, y + arm), (x + arm, y - arm), 3)
        if self.view is None and self.match.human_to_move and self.hover is not None:
            move = self.cell_at(self.hover)
            if move is not None and board.cells[move] == 0 and move not in self.forbidden_marks():
                ghost = self._ghosts[board.current_player]
                surface.blit(ghost, ghost.get_rect(center=self.pixel_of(move)))

    def _draw_panel(self, surface: pygame.Surface) -> None:
        match = self.match
        board = match.board
        left = self.board_rect.right + 24
        surface.blit(self.font_title.render("Gomoku Zero", True, PANEL_TEXT), (left, 22))
        info = f"{board.width}x{board.height} board, {board.n_in_row} in a row{match.rule_text()}"
        surface.blit(self.font_small.render(info, True, MUTED), (left, 56))
        surface.blit(self.font_bold.render("Players", True, ACCENT), (left, 84))
        for player, button in zip((1, 2), self.buttons[:2]):
            y = button.rect.centery
            icon = self._icons[player]
            surface.blit(icon, icon.get_rect(center=(left + 10, y)))
            text = self.font.render(COLOUR_NAMES[player], True, PANEL_TEXT)
            surface.blit(text, text.get_rect(midleft=(left + 26, y)))
            if board.current_player == player and not board.game_over:
                pygame.draw.polygon(surface, ACCENT, [(left - 14, y - 6), (left - 14, y + 6), (left - 6, y)])
            button.text = str(match.specs[player])
        surface.blit(self.font_bold.render("Game", True, ACCENT), (left, 208))
        hover = self.hover
        for button in self.buttons:
            lit = hover is not None and button.rect.collidepoint(hover)
            pygame.draw.rect(surface, BUTTON_HOVER if lit else BUTTON, button.rect, border_radius=7)
            pygame.draw.rect(surface, BUTTON_BORDER, button.rect, width=1, border_radius=7)
            key = self.font_small.render(button.key_hint, True, MUTED)
            room = button.rect.width - 12 - (key.get_width() + 16 if button.key_hint else 10)
            text = fit_label(button.text, room, (self.font, self.font_small), PANEL_TEXT)
            surface.blit(text, text.get_rect(midleft=(button.rect.left + 12, button.rect.centery)))
            surface.blit(key, key.get_rect(midright=(button.rect.right - 10, button.rect.centery)))

        help_lines = ["Click a point to play; U takes it back.", "B / W: change Black's / White's player",
                      "Left / Right, Home / End: review moves", "H hint, P heat map, A top moves on/off"]
        help_top = self.size[1] - STATUS_HEIGHT - 16 - 19 * len(help_lines)
        moves_top = self._draw_winrate(surface, left, 372, PANEL_WIDTH - 40)
        self._draw_moves(surface, left, moves_top, help_top - 8)
        y = help_top
        for text in help_lines:
            surface.blit(self.font_small.render(text, True, MUTED), (left, y))
            y += 19

    def _draw_moves(self, surface: pygame.Surface, left: int, top: int, bottom: int) -> None:
        """The move list, latest moves last, two numbered pairs to a row; the reviewed move is lit."""
        board = self.match.board
        history = board.history
        title = f"Moves ({len(history)})" if history else "Moves: none yet"
        surface.blit(self.font_bold.render(title, True, ACCENT), (left, top))
        if self.view is not None:
            text = self.font_small.render(f"reviewing {self.view} of {len(history)}", True, NOTICE)
            surface.blit(text, text.get_rect(topright=(left + PANEL_WIDTH - 40, top + 3)))
        # Pair each move with its reply; a game opened by White starts with an empty first half.
        labels = [""] * (board.start_player - 1) + [board.move_to_label(m) for m in history]
        shown = len(history) if self.view is None else self.view
        pairs = [labels[i:i + 2] for i in range(0, len(labels), 2)]
        rows = max(0, (bottom - top - 26) // 20)
        first = max(0, len(pairs) - 2 * rows)
        first += first % 2  # whole rows from the top, and the latest pair always among them
        for k, pair in enumerate(pairs[first:first + 2 * rows]):
            number = first + k
            row, col = divmod(k, 2)
            x, y = left + col * 130, top + 26 + row * 20
            surface.blit(self.font_small.render(f"{number + 1}.", True, MUTED), (x, y))
            for half, label in enumerate(pair):
                index = 2 * number + half - (board.start_player - 1)
                colour = NOTICE if index == shown - 1 else PANEL_TEXT
                surface.blit(self.font_small.render(label, True, colour), (x + 30 + 44 * half, y))

    def _draw_status(self, surface: pygame.Surface) -> None:
        width, height = self.size
        top = height - STATUS_HEIGHT
        pygame.draw.rect(surface, (30, 27, 25), pygame.Rect(0, top, width, STATUS_HEIGHT))
        pygame.draw.line(surface, (70, 64, 58), (0, top), (width, top))
        board = self.match.board
        status = self.match.status()
        task = self.task or self.hint_task
        if self.task is not None:
            side = board.current_player
            status = f"{COLOUR_NAMES[side]} ({self.match.specs[side]}) is thinking"
        elif task is not None:
            name = getattr(task.player, "name", "the AI")
            status = f"Looking for a hint for {COLOUR_NAMES[board.current_player]} ({name})"
        player = board.winner if board.winner else (None if board.game_over else board.current_player)
        x = 20
        if player:
            icon = self._icons[player]
            surface.blit(icon, icon.get_rect(center=(x + 9, top + 20)))
            x += 28
        colour = ACCENT if board.game_over else PANEL_TEXT
        if board.game_over and self.task is None:
            status += "  -  N starts a new game"
        surface.blit(self.font_bold.render(status, True, colour), (x, top + 10))
        line_y = top + 38
        if task is not None:
            bar = pygame.Rect(20, line_y + 2, 240, 14)
            pygame.draw.rect(surface, BUTTON, bar, border_radius=7)
            filled = bar.copy()
            filled.width = max(14, int(bar.width * task.progress))
            pygame.draw.rect(surface, ACCENT, filled, border_radius=7)
            text = f"{int(100 * task.progress)}% of the search"
            surface.blit(self.font_small.render(text, True, MUTED), (bar.right + 12, line_y))
        elif self.notice and time.monotonic() < self.notice_until:
            surface.blit(self.font.render(self.notice, True, NOTICE), (20, line_y - 2))
        elif self.match.human_to_move and self.view is None:
            hint = "Your move: click an empty point."
            if self.forbidden_marks():
                hint = "Your move: click an empty point (a red cross: forbidden for Black under renju)."
            surface.blit(self.font_small.render(hint, True, MUTED), (20, line_y))


def _star_points(width: int, height: int) -> list[int]:
    """The marked points of a Go-style board: the centre and the corner points on larger boards."""
    if min(width, height) < 9:
        return []
    edge = 3 if min(width, height) >= 13 else 2
    points = [(r, c) for r in (edge, height - 1 - edge) for c in (edge, width - 1 - edge)]
    if width % 2 and height % 2:
        points.append((height // 2, width // 2))
    return [r * width + c for r, c in points]
