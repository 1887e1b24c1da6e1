"""The pygame window: a wooden board, a seat for each side, and an AI that thinks off the drawing loop.

``GameWindow`` draws a ``game.Match`` and turns pygame events into moves
and commands. Pixels and moves meet in two methods: ``pixel_of(move)`` is the
centre of a point on the grid and ``cell_at(pixel)`` is the point nearest a
pixel (None off the grid), so tests can post clicks exactly where a user would.
Row 0 is drawn at the bottom, as the labels of ``Board.move_to_label`` say.

An AI move is searched by an ``analysis.SearchTask``: a daemon thread that runs the
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
B / W change Black's / White's player, Left / Right / Home / End review the moves,
H hint, P the policy net's heat map, A the search's top moves on the board.

What the AI thinks (the win-rate bar, its top moves, the heat map, the hint) is
``ui_analysis.AnalysisView``'s: a search hands its root statistics over as finished
``analysis.Analysis`` records (``SearchTask.analysis``), taken between its playouts.

``GameWindow`` keeps the state and handles the events; what it looks like (colours,
sprites, the painting of a frame) is in ``ui_draw``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Optional

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # keep pygame's banner out of the terminal
import pygame  # noqa: E402

from gomoku.game.board import Board, IllegalMoveError  # noqa: E402
from gomoku.game.gamefile import COLOUR_NAMES, default_game_path, save_game  # noqa: E402
from gomoku.game.rules import FREESTYLE  # noqa: E402
from gomoku.play.analysis import SearchTask  # noqa: E402
from gomoku.play.match import Match  # noqa: E402
from gomoku.play.ui_analysis import AnalysisView  # noqa: E402
from gomoku.play.ui_draw import (PANEL_WIDTH, STATUS_HEIGHT, Button, WindowDrawing, shadow_sprite,  # noqa: E402
                                  stone_sprite, wood_texture)

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


# ------------------------------------------------------------------ window
class GameWindow(WindowDrawing, AnalysisView):
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
        height = max(self.board_rect.bottom + 16, 620) + STATUS_HEIGHT
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
        self._init_analysis()
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
        self.cancel_hint()
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
            self.cancel_hint()  # its search would share the evaluator with the reply's
            try:
                self.match.play(move)
            except IllegalMoveError as exc:  # the checks above should leave nothing, but never crash
                self.say(str(exc))
                return
            self.last_move_time = time.monotonic()

    def new_game(self) -> None:
        self._changed()
        self.view = None
        self.forget_analyses()
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
        self.forget_analyses()
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
        if self.hint_task is not None:
            self.hint_task.cancel(wait=1.0)
            self.hint_task = None

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
                   ("Hint", self.ask_hint, "H"), ("Quit", self.quit, "Q")]
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
                pygame.K_h: self.ask_hint, pygame.K_p: self.toggle_heatmap, pygame.K_a: self.toggle_moves,
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
            self.keep_analysis(task.analysis)
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
        self.collect_hint()
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
