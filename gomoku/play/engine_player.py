"""Any Gomocup engine as a player: ``engine:COMMAND``, driven through the protocol.

This module registers the player kind ``engine`` (``ENGINE``, see ``search.player_registry``):
``PlayerSpec.parse("engine:pbrain-rapfi")`` describes an engine by its command line;
``make_player`` builds an ``EnginePlayer`` for one game, and the games of one match
share one ``EngineConnection`` (one engine process) per command line, board and rule.
A program that lets its users name engines imports this module (``gomoku.commands`` does
for every command).
The connection speaks to the process with ``engine_process.EngineProcess``:

* ``START`` (``RECTSTART`` on a board that is not square), then ``INFO timeout_turn``,
  ``timeout_match 0``, ``time_left`` (unlimited), ``rule`` (the game's), then the
  ``INFO`` lines of ``--engine-info "KEY VALUE;KEY VALUE"`` in their order (an engine's
  own keys, such as Rapfi's ``max_node``; ``timeout_turn`` there replaces the default);
* each move with ``TURN x,y`` when the engine's last answer and one more stone make
  the position, ``BEGIN`` on an empty board (after ``RESTART`` once it has played a
  game), and otherwise a ``BOARD`` block with the whole position.

Faults are counted for each game (``EnginePlayer.faults``) and travel with it:

* ``illegal``: an answer that is not a move, off the board, on a stone, (renju, Black) on a
  forbidden point, or a third ``ERROR`` in a row. The engine forfeits the game, as in Gomocup.
* ``error``: an ``ERROR`` answer to a move request. Engines that drop a command in the
  instant after they answer (below) drop ``BOARD`` this way and then refuse each stone line
  with ``ERROR``. The connection waits until the engine falls quiet and sends the whole
  position again.
* ``late``: an answer after ``timeout_turn``. It is played.
* ``hang``: no answer within ``timeout_turn`` and ``HANG_GRACE_S`` more. Some engines
  drop a command that reaches them in the instant after they answer, while their search
  thread winds down, and then wait for ever. So a hang is no loss: the process is
  killed, started again and given the whole position. The connection also waits
  ``SETTLE_S`` after an answer before it sends the next command, which avoids most
  such drops in the first place.
* ``crash``: the engine exited or closed its pipe. It too is started again and asked
  once more.

An engine that gives no move after ``RETRIES`` restarts stops the match with an
``EngineError`` rather than hand its opponent a win it did not earn.

Engine processes die with the process that started them (``PR_SET_PDEATHSIG`` on Linux),
and every connection still open at exit is closed.
"""

from __future__ import annotations

import atexit
import tempfile
import time
import weakref
from collections import deque
from typing import Optional

import numpy as np

from gomoku.game.board import Board, IllegalMoveError
from gomoku.game.rules import rule_of
from gomoku.play.engine.protocol import ProtocolError, UNLIMITED_MS, parse_pair
from gomoku.play.engine_process import HANG_GRACE_S, EngineProcess, board_block
from gomoku.search.player_protocol import SearchResult
from gomoku.search.player_registry import Build, PlayerKind, register
from gomoku.search.player_specs import (EngineError, PlayerSpec, engine_argv, engine_name, info_text,  # noqa: F401
                                        parse_engine_info)

DEFAULT_TURN_MS = 5000  # timeout_turn when --engine-info names none
START_TIMEOUT_S = 120.0  # an engine may load a model or a network at START
SETTLE_S = 0.05  # pause between an engine's answer and the next command it is sent
RETRIES = 2  # restarts after a hang or a crash before the match stops; ERROR answers sent again
QUIET_S = 0.3  # after an ERROR answer, the engine is done once it says nothing for this long
DRAIN_S = 5.0  # ... or after this long in all
ENGINE_FAULTS = ("illegal", "error", "late", "hang", "crash")
ENGINES = ("engines",)
"""the key of a match's player cache (``Build.cache``) under which its engine connections are kept"""
_OPEN: "weakref.WeakSet[EngineConnection]" = weakref.WeakSet()


class EngineConnection:
    """One engine process that plays the moves of any number of games, one request at a time.

    Args:
        command: the engine's command line.
        info: ``--engine-info`` pairs (``parse_engine_info``).
        width, height: the board.
        rule: the game's rule; sent as ``INFO rule`` (an ``info`` rule must agree with it).

    Raises:
        EngineError: an info rule that contradicts ``rule``, or an engine that cannot start.
    """

    def __init__(self, command: str, info: tuple = (), width: int = 15, height: int = 15,
                 rule: str = "freestyle"):
        self.command = command
        self.argv = engine_argv(command)
        self.width, self.height, self.rule = width, height, rule
        values = dict(info)
        number = rule_of(rule).protocol
        if "rule" in values and int(values["rule"]) != number:
            raise EngineError(f"--engine-info rule {values['rule']} is not the game's rule, {rule} "
                              f"(INFO rule {number})")
        self.turn_ms = int(values.get("timeout_turn", DEFAULT_TURN_MS))
        own = [(k, v) for k, v in info if k not in ("timeout_turn", "rule")]
        self.info_lines = [f"INFO timeout_turn {self.turn_ms}", "INFO timeout_match 0",
                           f"INFO time_left {UNLIMITED_MS}", f"INFO rule {number}"] + \
                          [f"INFO {key} {value}" for key, value in own]
        self.transcript: deque = deque(maxlen=400)  # the latest lines each way, for error messages
        self.process: Optional[EngineProcess] = None
        self.known: Optional[list[int]] = None  # the position the engine holds, None: unknown
        self.answered_at = 0.0
        self.restarts = 0
        self._stderr = None
        _OPEN.add(self)
        self._start()

    # ------------------------------------------------------------ process
    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        try:
            self.process = EngineProcess(self.argv, "engine", self.transcript, stderr=self._stderr)
        except OSError as exc:
            raise EngineError(f"cannot start the engine {self.command!r}: {exc.strerror or exc}") from None
        start = f"START {self.width}" if self.width == self.height else f"RECTSTART {self.width},{self.height}"
        try:
            self.process.send(start)
            answer, _ = self.process.reply(START_TIMEOUT_S)
        except TimeoutError:
            self.close()
            raise EngineError(f"the engine {self.command!r} did not answer {start} within "
                              f"{START_TIMEOUT_S:.0f} s") from None
        except (EOFError, OSError):
            tail = self._stderr_tail()
            self.close()
            raise EngineError(f"the engine {self.command!r} exited before it answered {start}"
                              + (f": {tail}" if tail else "")) from None
        if answer.strip().upper() != "OK":
            self.close()
            raise EngineError(f"the engine {self.command!r} refused {start}: {answer.strip()[:80]!r}")
        self.process.send(*self.info_lines)
        self.known = []

    def _stderr_tail(self) -> str:
        """The last line the engine wrote to stderr, if any."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            lines = [line.strip() for line in self._stderr.read().decode("utf-8", "replace").splitlines()]
        except (OSError, ValueError):
            return ""
        lines = [line for line in lines if line]
        return lines[-1][:200] if lines else ""

    def _kill(self) -> None:
        """Ends a hung or dead engine at once; the next request starts a new one."""
        if self.process is not None:
            if self.process.proc.poll() is None:
                self.process.proc.kill()
            self.process.close(timeout=5.0)
        self.process = None
        self.known = None

    def close(self) -> None:
        """Sends END and waits for the engine to exit (killing it if it does not)."""
        if self.process is not None:
            self.process.close()
            self.process = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        _OPEN.discard(self)

    # ------------------------------------------------------------ moves
    def _request(self, board: Board) -> list[str]:
        """The command that asks for a move in ``board``, given what the engine holds."""
        history = list(board.history)
        known = self.known
        if known is not None and len(history) == len(known) + 1 and history[:-1] == known:
            y, x = divmod(history[-1], board.width)
            return [f"TURN {x},{y}"]
        if not history:
            if known:  # a new game on the same process
                self.process.send("RESTART")
                answer, _ = self.process.reply(START_TIMEOUT_S)
                if answer.strip().upper() != "OK":
                    raise EOFError(f"it answered RESTART with {answer.strip()[:40]!r}")
            return ["BEGIN"]
        return board_block(board, board.current_player, board.width)

    def ask(self, board: Board) -> tuple[Optional[int], dict, list[str]]:
        """The engine's move in ``board``, the faults on the way, and a note on each fault.

        Returns:
            ``(move, faults, notes)``; ``move`` is None when the engine forfeits (``illegal``).

        Raises:
            EngineError: no move after ``RETRIES`` restarts, or the engine cannot start again.
        """
        faults: dict = {}
        notes: list[str] = []
        limit = self.turn_ms / 1000.0
        refusals = restarts = 0
        while True:
            if self.process is None:
                if restarts == RETRIES:
                    raise EngineError(f"the engine {self.command!r} gave no move after {RETRIES} restarts "
                                      f"({'; '.join(notes)})")
                restarts += 1
                self.restarts += 1
                self._start()
            wait = SETTLE_S - (time.monotonic() - self.answered_at)
            if wait > 0:
                time.sleep(wait)
            try:
                self.process.send(*self._request(board))
                answer, latency = self.process.reply(limit + HANG_GRACE_S)
            except TimeoutError:
                self._fault(faults, notes, "hang", f"no answer within {limit + HANG_GRACE_S:.1f} s after "
                                                   f"move {len(board.history)}: restarted")
                self._kill()
                continue
            except (EOFError, OSError) as exc:
                tail = self._stderr_tail()
                self._fault(faults, notes, "crash", f"the engine exited ({exc}{'; ' + tail if tail else ''}): "
                                                    "restarted")
                self._kill()
                continue
            self.answered_at = time.monotonic()
            if latency > limit:
                self._fault(faults, notes, "late", f"answered in {latency:.2f} s of {limit:.2f} s")
            if answer.strip().upper().startswith("ERROR") and refusals < RETRIES:
                # Most often a dropped command: the engine missed BOARD and refuses its stone lines
                # one by one. Let it fall quiet, then send the whole position again.
                refusals += 1
                self._fault(faults, notes, "error", f"it answered {answer.strip()[:60]!r}: position sent again")
                self._drain()
                self.known = None
                continue
            move, problem = self._read_move(board, answer)
            if move is None:
                self.known = None  # it may have put its stone down: the next request sends the board
                self._fault(faults, notes, "illegal", problem)
                return None, faults, notes
            self.known = list(board.history) + [move]
            return move, faults, notes

    def _drain(self) -> None:
        """Reads the engine's lines until it has been quiet for ``QUIET_S`` (at most ``DRAIN_S``)."""
        deadline = time.monotonic() + DRAIN_S
        while time.monotonic() < deadline:
            try:
                self.process.reply(QUIET_S)
            except (TimeoutError, EOFError):
                return
        self.answered_at = time.monotonic()

    @staticmethod
    def _fault(faults: dict, notes: list, kind: str, note: str) -> None:
        faults[kind] = faults.get(kind, 0) + 1
        notes.append(f"{kind}: {note}")

    @staticmethod
    def _read_move(board: Board, answer: str) -> tuple[Optional[int], str]:
        """The move an answer names, or None and why it is not a legal move."""
        if answer.strip().upper().startswith("ERROR"):
            return None, f"it answered {answer.strip()[:80]!r}"
        try:
            x, y = parse_pair(answer, "x,y")
            move = board.move_at(y, x)
            if board.cells[move] != 0:
                raise IllegalMoveError(f"{x},{y} is taken")
        except (ProtocolError, IllegalMoveError, ValueError) as exc:
            return None, f"illegal answer {answer.strip()[:40]!r} ({exc})"
        forbidden = board.forbidden_reason(move)
        if forbidden is not None:
            return None, f"forbidden move {answer.strip()!r}: {forbidden}"
        return move, ""


class EnginePlayer:
    """A player whose moves come from an engine process; the faults of its current game on the side.

    It follows ``MCTSPlayer``'s protocol: ``next_leaf`` never asks for an evaluation and
    ``choose`` asks the engine (a move of None: the engine forfeits the game).
    """

    n_playout = 1
    playouts_run = 0
    evaluator = None
    progress = 0.0

    def __init__(self, connection: EngineConnection, name: str):
        self.connection = connection
        self.name = name
        self.faults: dict = {}
        self.fault_notes: list[str] = []

    def next_leaf(self, board: Board):
        return None

    def receive(self, leaf, board: Board, priors, value: float) -> None:
        pass

    def choose(self, board: Board) -> SearchResult:
        move, faults, notes = self.connection.ask(board)
        for kind, count in faults.items():
            self.faults[kind] = self.faults.get(kind, 0) + count
        self.fault_notes.extend(notes)
        pi = np.zeros(board.size)
        if move is not None:
            pi[move] = 1.0
        return SearchResult(move, pi)

    def notify_move(self, move: int) -> None:
        pass

    def reset(self) -> None:
        self.faults = {}
        self.fault_notes = []

    def get_action(self, board: Board, return_probs: bool = False, stop=None):
        """The engine's move (``stop`` cannot end an engine's search early).

        Raises:
            EngineError: the engine answered with no legal move.
        """
        if board.game_over:
            raise ValueError("the game is over: there is no move to choose")
        result = self.choose(board)
        if result.move is None:
            raise EngineError(f"{self.name} forfeits: {self.fault_notes[-1]}")
        return (result.move, result.pi) if return_probs else result.move

    def __str__(self) -> str:
        return self.name


def connection_for(command: str, info: tuple, board: Board, engines: dict) -> EngineConnection:
    """The shared connection for ``command`` and ``info`` on ``board``'s size and rule, started once."""
    key = (command, tuple(info), board.width, board.height, board.rule)
    if key not in engines:
        engines[key] = EngineConnection(command, tuple(info), board.width, board.height, board.rule)
    return engines[key]


def check_engine(command: str, info: tuple, width: int, height: int, rule: str) -> None:
    """Starts the engine once and ends it, so that a bad command or info fails before any game.

    Raises:
        EngineError: the command or the info cannot work.
    """
    EngineConnection(command, tuple(info), width, height, rule).close()


def close_engines(engines: dict) -> None:
    """Closes every connection in ``engines`` and empties it."""
    for connection in engines.values():
        connection.close()
    engines.clear()


def _parse(rest: Optional[str], whole: str, default_model, default_playouts) -> PlayerSpec:
    command = (rest or "").strip()
    engine_argv(command)  # raises for an empty command or unbalanced quotes
    return PlayerSpec("engine", command=command)


def _build(spec: PlayerSpec, build: Build) -> "EnginePlayer":
    engines = {} if build.cache is None else build.cache.setdefault(ENGINES, {})
    return EnginePlayer(connection_for(spec.command, spec.engine_info, build.board, engines), str(spec))


def _check(spec: PlayerSpec, width: int, height: int, rule: str) -> None:
    check_engine(spec.command, spec.engine_info, width, height, rule)


def _close(cache: dict) -> None:
    if cache.get(ENGINES):
        close_engines(cache[ENGINES])


ENGINE = register(PlayerKind(
    "engine", "engine:COMMAND", "a Gomocup engine's command line, e.g. \"engine:/opt/rapfi/pbrain-rapfi\"; "
    "its INFO lines from --engine-info", _parse, lambda spec: f"engine:{spec.command}",
    lambda spec: engine_name(spec.command, spec.engine_info), _build, info=True, check=_check, close=_close),
    __name__)


@atexit.register
def _close_open() -> None:
    for connection in list(_OPEN):
        connection.close()
