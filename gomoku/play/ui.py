"""The pygame window: a wooden board, a seat for each side, and an AI that thinks off the drawing loop.

``GameWindow`` draws a ``game.Match`` and turns pygame events into moves
and commands. Pixels and moves meet in two methods: ``pixel_of(move)`` is the
centre of a point on the grid and ``cell_at(pixel)`` is the point nearest a
pixel (None off the grid), so tests can post clicks exactly where a user would.
Row 0 is drawn at the bottom, as the labels of ``Board.move_to_label`` say.

An AI move is searched by a ``SearchTask``: a daemon thread that runs the
player's two search halves (``next_leaf`` / ``receive``) on a *copy* of the
board, checking a stop flag between playouts. The drawing loop only reads the
player's ``progress`` for the progress bar, so the window stays responsive, and
undo, a new game, a change of players or closing the window cancel the search
within one playout. A search's result is applied only if the game has not
changed since it started (a ``generation`` counter tells).

Under renju, when a human plays Black and it is Black's turn, Black's forbidden
points carry a small red cross (``forbidden_marks``), and a click on one is refused
with the reason in the status line. The panel and the title name any rule but
freestyle.

Keys: N new game, U (or Backspace) undo, X swap sides, S save, Q (or Esc) quit,
B / W change Black's / White's player, Left / Right / Home / End review the moves.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep pygame's banner out of the terminal
import pygame  # noqa: E402
import pygame.gfxdraw  # noqa: E402

from gomoku.game.board import COLUMN_LETTERS, Board, IllegalMoveError  # noqa: E402
from gomoku.game.gamefile import COLOUR_NAMES, default_game_path, save_game  # noqa: E402
from gomoku.game.rules import FREESTYLE  # noqa: E402
from gomoku.play.match import Match  # noqa: E402
from gomoku.search.mcts import SearchStopped  # noqa: E402

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
NOTICE_SECONDS = 4.0


class NoDisplayError(RuntimeError):
    """No screen to open a window on."""


def display_available() -> bool:
    """Whether a real window can be opened here.

    SDL quietly falls back to an invisible "offscreen" driver when no display is
    reachable; that counts as no display unless the caller asked for a driver.
    """
    if os.environ.get("SDL_VIDEODRIVER"):
        return True
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        pygame.display.init()
    except pygame.error:
        return False
    return pygame.display.get_driver() not in ("offscreen", "dummy")


# ------------------------------------------------------------------ search
class SearchTask:
    """One AI move, searched in a daemon thread on a copy of the board.

    Args:
        player: an AI player (``next_leaf`` / ``receive`` / ``choose`` / ``reset``).
        board: the position; it is copied, so the window may keep drawing the original.
        generation: the window's game generation when the search started.
    """

    def __init__(self, player, board: Board, generation: int):
        self.player = player
        self.board = board.copy()
        self.generation = generation
        self.move: Optional[int] = None
        self.error: Optional[BaseException] = None
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gomoku-search", daemon=True)

    def start(self) -> "SearchTask":
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    @property
    def progress(self) -> float:
        return 1.0 if self.done else min(1.0, max(0.0, float(self.player.progress)))

    def cancel(self, wait: float = 2.0) -> None:
        """Stops the search after its current playout (waiting up to ``wait`` seconds)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(wait)

    def wait(self, timeout: Optional[float] = None) -> bool:
        return self._finished.wait(timeout)

    def _run(self) -> None:
        try:
            self.move = self.player.get_action(self.board, stop=self._stop.is_set)
        except SearchStopped:
            pass  # cancelled: the player has already forgotten the half-done search
        except Exception as exc:  # shown in the window: a failed search must not kill it
            self.error = exc
        finally:
            self._finished.set()


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


# ------------------------------------------------------------------ window
class GameWindow:
    """Draws a match and plays it: clicks for humans, background searches for the AIs.

    Args:
        match: the game and its two seats.
        surface: where to draw (the display); None opens the display window.
        save_dir: where S saves games.
        ai_delay: seconds between moves when two AIs play each other, so a user can follow.
        cell: pixels between grid lines; None fits the board into about 560 pixels.
    """

    def __init__(self, match: Match, surface: Optional[pygame.Surface] = None, save_dir: str = "games",
                 ai_delay: float = 0.4, cell: Optional[int] = None):
        pygame.font.init()
        self.match = match
        self.save_dir = save_dir
        self.ai_delay = ai_delay
        board = match.board
        self.cell = cell or max(26, min(80, 560 // max(board.width, board.height)))
        # Labels sit just beyond the stones of the outer lines, so the margin grows with the stones.
        self.label_gap = int(self.cell * 0.46) + 15
        self.margin = self.label_gap + 20
        self.board_rect = pygame.Rect(
            16, 16, (board.width - 1) * self.cell + 2 * self.margin, (board.height - 1) * self.cell + 2 * self.margin)
        height = max(self.board_rect.bottom + 16, 560) + STATUS_HEIGHT
        self.size = (self.board_rect.right + 16 + PANEL_WIDTH, height)
        self.board_rect.centery = (height - STATUS_HEIGHT) // 2
        if surface is None:
            surface = pygame.display.set_mode(self.size)
            rule = board.rule
            pygame.display.set_caption("Gomoku Zero" if rule == FREESTYLE else f"Gomoku Zero ({rule})")
        self.surface = surface

        self.running = True
        self.task: Optional[SearchTask] = None
        self.generation = 0  # bumped whenever the game changes other than by a search's own move
        self.ai_failed = False  # a failed search is not retried until the game or a seat changes
        self._cancelled: list[SearchTask] = []  # cancelled searches whose thread has not ended yet
        self.last_move_time = 0.0
        self.view: Optional[int] = None  # moves shown while reviewing; None shows the live game
        self.hover: Optional[tuple[int, int]] = None
        self.notice = ""
        self.notice_until = 0.0
        # Black's forbidden points, worked out once per position (see forbidden_marks), not per frame.
        self._forbidden_key: Optional[tuple] = None
        self._forbidden: list[int] = []

        self._fonts()
        radius = int(self.cell * 0.46)
        self._stones = {p: stone_sprite(radius, p) for p in (1, 2)}
        self._ghosts = {p: stone_sprite(radius, p, opacity=0.45) for p in (1, 2)}
        self._shadow = shadow_sprite(radius)
        self._icons = {p: stone_sprite(9, p) for p in (1, 2)}
        self._wood = wood_texture(self.board_rect.width, self.board_rect.height)
        self.buttons = self._layout_buttons()

    def _fonts(self) -> None:
        def font(size: int, bold: bool = False) -> pygame.font.Font:
            try:
                return pygame.font.SysFont("dejavusans,freesans,arial,helvetica", size, bold=bold)
            except Exception:  # no font config on this system: pygame's bundled font
                return pygame.font.Font(None, int(size * 1.3))

        self.font_title = font(24, bold=True)
        self.font = font(16)
        self.font_bold = font(17, bold=True)
        self.font_small = font(13)
        self.font_label = font(max(11, min(16, self.cell // 3)), bold=True)

    # ------------------------------------------------------------ geometry
    def pixel_of(self, move: int) -> tuple[int, int]:
        """Centre of a move's point on the grid, in window pixels."""
        row, col = self.match.board.location(move)
        x = self.board_rect.left + self.margin + col * self.cell
        y = self.board_rect.top + self.margin + (self.match.board.height - 1 - row) * self.cell
        return x, y

    def cell_at(self, pos: tuple[int, int]) -> Optional[int]:
        """The move whose point is nearest ``pos``, or None when ``pos`` is off the grid."""
        board = self.match.board
        fx = (pos[0] - self.board_rect.left - self.margin) / self.cell
        fy = (pos[1] - self.board_rect.top - self.margin) / self.cell
        col, row_from_top = round(fx), round(fy)
        if not (0 <= col < board.width and 0 <= row_from_top < board.height):
            return None
        return (board.height - 1 - row_from_top) * board.width + col

    # ------------------------------------------------------------- actions
    def say(self, text: str) -> None:
        """Shows a short message under the status line for a few seconds."""
        self.notice = text
        self.notice_until = time.monotonic() + NOTICE_SECONDS

    @property
    def thinking(self) -> bool:
        return self.task is not None

    def _changed(self) -> None:
        """The game changed under any running search: stop it and forget its result."""
        if self.task is not None:
            self.task.cancel()
            if not self.task.done:
                # Still inside one long evaluation: its player must not start another search meanwhile.
                self._cancelled.append(self.task)
            self.task = None
        self.generation += 1
        self.ai_failed = False
        self.last_move_time = time.monotonic()

    def click(self, pos: tuple[int, int]) -> None:
        """A left click: a button, or a move on the board (ignored with a message when it cannot be one)."""
        for button in self.buttons:
            if button.rect.collidepoint(pos):
                button.action()
                return
        move = self.cell_at(pos)
        board = self.match.board
        if move is None:
            if self.board_rect.collidepoint(pos):
                self.say("Click on a point where two lines cross.")
            return
        if self.view is not None:
            self.say(f"Reviewing move {self.view} of {len(board.history)}: press End to return to the game.")
        elif board.game_over:
            self.say("The game is over: N starts a new game, U takes back your last move.")
        elif not self.match.human_to_move:
            player = board.current_player
            self.say(f"Wait: {COLOUR_NAMES[player]} ({self.match.specs[player]}) is thinking.")
        elif board.cells[move] != 0:
            self.say(f"{board.move_to_label(move)} is taken: pick an empty point.")
        elif (reason := board.forbidden_reason(move)) is not None:
            self.say(f"{board.move_to_label(move)} is forbidden for Black under renju: {reason}.")
        else:
            try:
                self.match.play(move)
            except IllegalMoveError as exc:  # the checks above should leave nothing, but never crash
                self.say(str(exc))
                return
            self.last_move_time = time.monotonic()

    def new_game(self) -> None:
        self._changed()
        self.view = None
        self.match.new_game()
        self.say("New game.")

    def undo(self) -> None:
        self._changed()
        self.view = None
        try:
            undone = self.match.undo()
        except IllegalMoveError as exc:
            self.say(str(exc).capitalize() + ".")
            return
        board = self.match.board
        self.say("Took back " + ", ".join(board.move_to_label(m) for m in reversed(undone)) + ".")

    def swap_sides(self) -> None:
        self._changed()
        self.match.swap_sides()
        self.say(f"Swapped: Black is {self.match.specs[1]}, White is {self.match.specs[2]}.")

    def cycle_seat(self, player: int) -> None:
        self._changed()
        for _ in range(len(self.match.choices)):
            try:
                spec = self.match.cycle_seat(player)
            except ValueError as exc:  # a model that will not load: skip that choice
                self.say(str(exc))
                continue
            self.say(f"{COLOUR_NAMES[player]} is now {spec}.")
            return

    def save(self) -> Optional[str]:
        """Saves the game under ``save_dir``; returns the path (None if it failed)."""
        path = default_game_path(self.save_dir)
        try:
            save_game(path, self.match.record())
        except OSError as exc:
            self.say(f"Could not save the game: {exc}")
            return None
        self.say(f"Saved to {path}")
        return path

    def review(self, step: Optional[int] = None, to: Optional[int] = None) -> None:
        """Moves the reviewed position by ``step`` moves, or to move number ``to``."""
        total = len(self.match.board.history)
        current = total if self.view is None else self.view
        target = max(0, min(total, current + step if step is not None else to))
        self.view = None if target == total else target

    def quit(self) -> None:
        """Stops any search and ends the loop (the thread is a daemon: it cannot keep us alive)."""
        self.running = False
        if self.task is not None:
            self.task.cancel(wait=1.0)
            self.task = None

    def _layout_buttons(self) -> list[Button]:
        left = self.board_rect.right + 24
        width = PANEL_WIDTH - 40
        buttons = [
            Button(pygame.Rect(left + 86, 112, width - 86, 34), "", lambda: self.cycle_seat(1), "B"),
            Button(pygame.Rect(left + 86, 154, width - 86, 34), "", lambda: self.cycle_seat(2), "W"),
        ]
        half = (width - 10) // 2
        actions = [("New game", self.new_game, "N"), ("Undo", self.undo, "U"),
                   ("Swap sides", self.swap_sides, "X"), ("Save", self.save, "S"),
                   ("Quit", self.quit, "Q")]
        for i, (text, action, key) in enumerate(actions):
            row, col = divmod(i, 2)
            rect = pygame.Rect(left + col * (half + 10), 236 + row * 44, half, 36)
            buttons.append(Button(rect, text, action, key))
        return buttons

    # -------------------------------------------------------------- events
    def handle_event(self, event: pygame.event.Event) -> None:
        """Reacts to one pygame event; nothing a user does raises."""
        if event.type == pygame.QUIT:
            self.quit()
        elif event.type == pygame.MOUSEMOTION:
            self.hover = event.pos
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.hover = event.pos
            self.click(event.pos)
        elif event.type == pygame.KEYDOWN:
            keys = {
                pygame.K_n: self.new_game, pygame.K_u: self.undo, pygame.K_BACKSPACE: self.undo,
                pygame.K_x: self.swap_sides, pygame.K_s: self.save, pygame.K_q: self.quit,
                pygame.K_ESCAPE: self.quit, pygame.K_b: lambda: self.cycle_seat(1),
                pygame.K_w: lambda: self.cycle_seat(2),
                pygame.K_LEFT: lambda: self.review(step=-1), pygame.K_RIGHT: lambda: self.review(step=1),
                pygame.K_HOME: lambda: self.review(to=0), pygame.K_END: lambda: self.review(to=10 ** 9),
            }
            action = keys.get(event.key)
            if action is not None:
                action()

    def process_events(self) -> None:
        """Handles every pending pygame event."""
        for event in pygame.event.get():
            self.handle_event(event)

    def update(self) -> None:
        """Collects a finished search and starts the next one when an AI is to move."""
        task = self.task
        if task is not None and task.done:
            self.task = None
            if task.error is not None:
                self.ai_failed = True
                self.say(f"The AI failed: {task.error}. Undo, N or a change of players tries again.")
                self.notice_until = float("inf")
            elif task.generation == self.generation and task.move is not None:
                try:
                    self.match.play(task.move)
                except IllegalMoveError as exc:
                    self.ai_failed = True
                    self.say(f"The AI chose an illegal move: {exc}")
                self.last_move_time = time.monotonic()
        self._cancelled = [t for t in self._cancelled if not t.done]
        player = self.match.ai_to_move
        if self.task is None and player is not None and self.running and not self.ai_failed \
                and not self._cancelled:
            both_ai = not any(self.match.is_human(p) for p in (1, 2))
            if both_ai and time.monotonic() - self.last_move_time < self.ai_delay:
                return
            self.task = SearchTask(player, self.match.board, self.generation).start()

    def run(self, max_frames: Optional[int] = None, fps: int = 30) -> None:
        """The main loop: events, the AI, drawing; until quit (or ``max_frames`` frames)."""
        clock = pygame.time.Clock()
        frames = 0
        while self.running and (max_frames is None or frames < max_frames):
            self.process_events()
            self.update()
            self.draw()
            pygame.display.flip()
            clock.tick(fps)
            frames += 1

    # ------------------------------------------------------------- drawing
    def shown_board(self) -> Board:
        """The live board, or the position being reviewed."""
        board = self.match.board
        if self.view is None:
            return board
        return Board.from_moves(board.width, board.height, board.n_in_row,
                                board.history[: self.view], board.start_player, board.rule)

    def forbidden_marks(self) -> list[int]:
        """The points marked as forbidden now: Black's forbidden points under renju while a
        human is to play Black in the live game, else none. Worked out once per position."""
        board = self.match.board
        if self.view is not None or not self.match.human_to_move:
            return []
        key = (board.current_player, tuple(board.history))
        if key != self._forbidden_key:
            self._forbidden_key = key
            self._forbidden = board.forbidden_moves()
        return self._forbidden

    def draw(self, surface: Optional[pygame.Surface] = None) -> None:
        surface = surface or self.surface
        surface.fill(BACKGROUND)
        board = self.shown_board()
        self._draw_board(surface, board)
        self._draw_stones(surface, board)
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
            text = self.font.render(button.text, True, PANEL_TEXT)
            surface.blit(text, text.get_rect(midleft=(button.rect.left + 12, button.rect.centery)))
            key = self.font_small.render(button.key_hint, True, MUTED)
            surface.blit(key, key.get_rect(midright=(button.rect.right - 10, button.rect.centery)))

        help_lines = ["Click a point to play.", "B / W: change Black's / White's player",
                      "Left / Right, Home / End: review moves", "U takes back your move and the reply"]
        help_top = self.size[1] - STATUS_HEIGHT - 16 - 19 * len(help_lines)
        self._draw_moves(surface, left, 374, help_top - 8)
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
        first -= first % 2
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
        if self.task is not None:
            side = board.current_player
            status = f"{COLOUR_NAMES[side]} ({self.match.specs[side]}) is thinking"
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
        if self.task is not None:
            bar = pygame.Rect(20, line_y + 2, 240, 14)
            pygame.draw.rect(surface, BUTTON, bar, border_radius=7)
            filled = bar.copy()
            filled.width = max(14, int(bar.width * self.task.progress))
            pygame.draw.rect(surface, ACCENT, filled, border_radius=7)
            text = f"{int(100 * self.task.progress)}% of the search"
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


def open_window(match: Match, **kwargs) -> GameWindow:
    """Opens the display and a window for ``match``.

    Raises:
        NoDisplayError: there is no screen to open it on.
    """
    try:
        pygame.display.init()
        pygame.font.init()
        return GameWindow(match, **kwargs)
    except pygame.error as exc:
        raise NoDisplayError(f"cannot open a window: {exc}") from None


def run_window(match: Match, **kwargs) -> int:
    """Plays ``match`` in a window until the user closes it; returns the exit code."""
    window = open_window(match, **kwargs)
    try:
        window.run()
    finally:
        window.quit()
        pygame.quit()
    return 0
