"""The text mode: the board drawn in a terminal, moves read from a line of input.

``play_text`` plays a ``game.Match`` over any pair of text streams, so the
same code serves a terminal, a pipe, and tests that feed it ``io.StringIO``.
The board is ``Board.to_text``: ``X`` is Black (player 1), ``O`` is White, and
the last move is written in lower case; row 1 is at the bottom. A move is a
column letter and a row number (``c3``) or ``row,col`` counted from 0.

Under renju, when a human plays Black and it is Black's turn, Black's forbidden
points are drawn as ``#`` and listed with their reasons under the board; typing
one gets the reason and a new prompt.

``hint`` and ``analyze`` ask the AI (``analysis.advisor``) to search the position for the
side to move and print its choice, or its win rate and top moves (``gomoku.play.analysis``).

Nothing a user types raises: bad input gets a message and a new prompt, and the
end of the input ends the game quietly (exit code 0).
"""

from __future__ import annotations

import sys
from typing import Optional, TextIO

from gomoku import interrupt
from gomoku.game.board import COLUMN_LETTERS, Board, IllegalMoveError
from gomoku.play.analysis import advisor, analysis_text, hint_text, search_with_analysis
from gomoku.play.match import STONE_MARKS, Match
from gomoku.game.gamefile import COLOUR_NAMES, default_game_path, save_game

HELP = """\
Commands:
  c3 or 2,3     play a move: column letter and row number, or row,col counted from 0
  undo          take back your last move and the reply to it
  new           start a new game
  swap          swap sides: your opponent takes your colour
  hint          the AI's move for you, with your win rate as it sees it
  analyze       the AI's search of this position: win rate, top moves numbered on the board
  save [FILE]   save the game as JSON (default: a new file under {save_dir}/)
  board         draw the board again
  help          this list
  quit          leave (so does the end of the input, e.g. Ctrl-D)"""
FORBIDDEN_MARK = "#"  # a point Black may not play under renju (no stone is drawn with it)


def play_text(match: Match, stdin: Optional[TextIO] = None, stdout: Optional[TextIO] = None,
              save_dir: str = "games") -> int:
    """Plays ``match`` over text streams until ``quit`` or the end of the input.

    When neither side is human the game is played out and the function returns.

    Args:
        match: the game and its seats.
        stdin: where moves and commands come from (default: ``sys.stdin``).
        stdout: where the board and messages go (default: ``sys.stdout``).
        save_dir: where ``save`` without a file name writes.

    Returns:
        The exit code: 0.
    """
    return TextGame(match, sys.stdin if stdin is None else stdin,
                    sys.stdout if stdout is None else stdout, save_dir).run()


class TextGame:
    """The prompt loop of the text mode (see ``play_text``)."""

    def __init__(self, match: Match, stdin: TextIO, stdout: TextIO, save_dir: str = "games"):
        self.match = match
        self.board = match.board
        self.stdin = stdin
        self.stdout = stdout
        self.save_dir = save_dir
        # Typed input shows on a terminal by itself; echo piped input so a transcript reads like a session.
        self.echo = not _isatty(stdin)

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def show(self) -> None:
        """Draws the board, the winning line if there is one, and whose turn it is."""
        board = self.board
        forbidden = board.forbidden_moves() if self.match.human_to_move else []
        self.say()
        self.say(board_text(board, forbidden))
        if forbidden:
            self.say(f"{FORBIDDEN_MARK}: forbidden for Black under renju: "
                     + ", ".join(f"{board.move_to_label(m)} ({board.forbidden_reason(m)})" for m in forbidden))
        line = board.winning_line()
        if line:
            self.say("Winning line: " + " ".join(board.move_to_label(m) for m in line))
        self.say(self.match.status() + ("." if board.game_over else ""))

    def run(self) -> int:
        match, board = self.match, self.board
        self.say(f"Gomoku Zero: {board.width}x{board.height} board, {board.n_in_row} in a row"
                 f"{match.rule_text()}. {match.seat_label(1)}; {match.seat_label(2)}.")
        self.say("X is Black, O is White; the last move is in lower case. Type 'help' for commands.")
        self.show()
        while True:
            player = match.ai_to_move
            if player is not None:
                side = board.current_player
                self.say(f"{COLOUR_NAMES[side]} ({match.specs[side]}) is thinking ...")
                with interrupt.deferred():  # Ctrl-C stops between playouts, not inside a Paddle call
                    move = player.get_action(board)
                match.play(move)
                self.say(f"{COLOUR_NAMES[side]} plays {board.move_to_label(move)}.")
                self.show()
                continue
            if board.game_over and not any(match.is_human(p) for p in (1, 2)):
                return 0
            if board.game_over:
                prompt = "game over (new, undo, save, quit) > "
            else:
                prompt = f"{COLOUR_NAMES[board.current_player]} ({STONE_MARKS[board.current_player]}) to move > "
            self.stdout.write(prompt)
            self.stdout.flush()
            line = self.stdin.readline()
            if not line:
                self.say("\nEnd of input: goodbye.")
                return 0
            if self.echo:
                self.stdout.write(line if line.endswith("\n") else line + "\n")
            if not self.command(line):
                self.say("Goodbye.")
                return 0

    def command(self, line: str) -> bool:
        """Carries out one line of input; returns False when the user asked to quit."""
        match, board = self.match, self.board
        words = line.split()
        command = words[0].lower() if words else ""
        bare = len(words) == 1
        if command in ("quit", "exit", "q") and bare:
            return False
        if command in ("help", "?") and bare:
            self.say(HELP.format(save_dir=self.save_dir))
        elif command == "board" and bare:
            self.show()
        elif command == "undo" and bare:
            try:
                undone = match.undo()
            except IllegalMoveError as exc:
                self.say(f"Cannot undo: {exc}.")
            else:
                self.say("Took back " + ", ".join(board.move_to_label(m) for m in reversed(undone)) + ".")
                self.show()
        elif command == "new" and bare:
            match.new_game()
            self.say("New game.")
            self.show()
        elif command == "swap" and bare:
            match.swap_sides()
            self.say(f"Swapped sides: {match.seat_label(1)}; {match.seat_label(2)}.")
            self.show()
        elif command == "save" and len(words) <= 2:
            self.save(words[1] if len(words) == 2 else default_game_path(self.save_dir))
        elif board.game_over:
            self.say(f"The game is over ({match.status()}): type new, undo, save or quit.")
        elif command in ("hint", "analyze", "analyse") and bare:
            self.advise(hint_only=command == "hint")
        elif not command:
            centre = board.move_at(board.height // 2, board.width // 2)
            self.say(f"Type a move like {board.move_to_label(centre)} "
                     f"(column letter, row number), or 'help'.")
        else:
            self.human_move(line)
        return True

    def advise(self, hint_only: bool) -> None:
        """Prints the AI's move for the side to move (``hint``) or its whole view (``analyze``)."""
        player = advisor(self.match)
        if player is None:
            self.say("There is no AI in this game to ask.")
            return
        name = getattr(player, "name", str(player))
        self.say(f"{name} is thinking ...")
        with interrupt.deferred():  # Ctrl-C stops between playouts, as for an AI's move
            analysis = search_with_analysis(player, self.board.copy())
        self.say(hint_text(analysis, self.board, name) if hint_only else analysis_text(analysis, self.board, name))

    def save(self, path: str) -> None:
        try:
            save_game(path, self.match.record())
        except OSError as exc:
            self.say(f"Could not save to {path}: {exc}")
        else:
            self.say(f"Saved the game to {path}.")

    def human_move(self, text: str) -> None:
        """Plays the move ``text`` names, or explains why it cannot be played."""
        board = self.board
        try:
            move = board.parse_move(text)
        except IllegalMoveError as exc:
            if "off the" in str(exc):
                last = COLUMN_LETTERS[board.width - 1]
                self.say(f"{text.strip()} is off the board: columns a to {last}, rows 1 to {board.height} "
                         f"(or row,col from 0,0 to {board.height - 1},{board.width - 1}).")
            else:
                self.say(f"{exc}. Type 'help' for commands.")
            return
        if board.cells[move] != 0:
            self.say(f"{board.move_to_label(move)} is taken: pick an empty point.")
            return
        reason = board.forbidden_reason(move)
        if reason is not None:
            self.say(f"{board.move_to_label(move)} is forbidden for Black under renju ({reason}): "
                     f"pick another point.")
            return
        side = board.current_player
        try:
            self.match.play(move)
        except IllegalMoveError as exc:  # the checks above should leave nothing, but never crash
            self.say(f"{exc}.")
            return
        self.say(f"{COLOUR_NAMES[side]} plays {board.move_to_label(move)}.")
        if not self.match.ai_to_move:
            self.show()  # no AI reply follows to redraw the board


def board_text(board: Board, marked=()) -> str:
    """``board.to_text()`` with ``FORBIDDEN_MARK`` on the empty points ``marked``."""
    lines = board.to_text().split("\n")
    for move in marked:
        row, col = board.location(move)
        index = board.height - 1 - row  # row 1 is the last line but one (the letters come last)
        text = lines[index]
        at = 3 + 2 * col  # after the right-aligned row number and its space, one cell every two characters
        lines[index] = text[:at] + FORBIDDEN_MARK + text[at + 1:]
    return "\n".join(lines)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or file-like without a terminal
        return False
