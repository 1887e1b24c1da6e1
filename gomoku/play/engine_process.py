"""An engine child process spoken to over pipes, as a Gomocup manager speaks to it.

``EngineProcess`` starts the engine's command line, writes protocol lines to its stdin and
reads its answers with their arrival times; ``board_block`` writes a position as the
protocol's ``BOARD`` block. The ``engine:COMMAND`` player (``engine_player``) plays through it,
and so do the developer checks outside the package (``devtools/engine_check``: the referee,
the soak, the fuzz).
"""

from __future__ import annotations

import queue
import threading
import time

from gomoku.game.board import Board
from gomoku.play.engine.protocol import OPPONENT, OWN
from gomoku.processes import start_command, wait_or_kill

HANG_GRACE_S = 5.0  # how long past its limit the referee waits for an answer before calling it a hang


class EngineProcess:
    """An engine child process spoken to over pipes, as a manager does.

    A reader thread queues the engine's lines with their arrival times, so that
    waiting for a reply can time out instead of hanging on a silent engine, and
    a slow referee thread cannot make an answer look late. The child dies with the
    process that started it (``processes.start_command``).

    Args:
        command: the engine's command line.
        name: its label in the transcript.
        transcript: where sent (``>``) and received (``<``) lines are logged.
        stderr: where the engine's stderr goes (None: this process's stderr).
    """

    def __init__(self, command: list[str], name: str, transcript: list[str], stderr=None):
        self.name = name
        self.transcript = transcript
        self.proc = start_command(command, stderr)
        self._lines: queue.Queue = queue.Queue()
        self.sent_at = 0.0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put((line.rstrip("\r\n"), time.monotonic()))
        self._lines.put((None, time.monotonic()))

    def send(self, *lines: str) -> None:
        """Writes lines (a command and its data lines) at once; the clock starts after the last."""
        for line in lines:
            self.transcript.append(f"{self.name} > {line}")
            self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        self.sent_at = time.monotonic()

    def reply(self, timeout: float) -> tuple[str, float]:
        """The next line that is not MESSAGE or DEBUG (those are logged), and its seconds since the last send.

        Raises:
            TimeoutError: nothing came within ``timeout`` seconds.
            EOFError: the engine closed its output.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                line, arrived = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"{self.name} gave no answer within {timeout:.2f} s") from None
            if line is None:
                raise EOFError(f"{self.name} closed its output")
            self.transcript.append(f"{self.name} < {line}")
            if not line.upper().startswith(("MESSAGE", "DEBUG")):
                return line, arrived - self.sent_at

    def close(self, timeout: float = 3.0) -> None:
        """Sends END and waits for the process to exit, killing it if it does not."""
        if self.proc.poll() is None:
            try:
                self.send("END")
            except OSError:  # it died already: its pipe is closed
                pass
            wait_or_kill(self.proc, timeout)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


def board_block(board: Board, me: int, width: int) -> list[str]:
    """The ``BOARD`` block of ``board`` for the engine playing ``me``, stones in the order played."""
    lines = ["BOARD"]
    for index, move in enumerate(board.history):
        owner = board.start_player if index % 2 == 0 else 3 - board.start_player
        y, x = divmod(move, width)
        lines.append(f"{x},{y},{OWN if owner == me else OPPONENT}")
    return lines + ["DONE"]
