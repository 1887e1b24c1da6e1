"""The engine's brain: reads protocol lines, keeps the position, searches and answers (``PbrainEngine``).

The protocol, its commands and answers, the rules and the time control are described in
``engine``, the command line that runs this brain for a manager.
"""

from __future__ import annotations

import gc
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, TextIO

from gomoku import __version__
from gomoku.game.board import Board
from gomoku.game.rules import CONTINUOUS_BIT, FREESTYLE, RULES, rule_from_protocol
from gomoku.net import shipped
from gomoku.play.engine.brain_moves import MoveMaker
from gomoku.play.engine.move_search import PlayoutTimer, SimulationRate, Watchdog
from gomoku.play.engine.protocol import (CONTINUOUS_MARK, MAX_SIDE, OPPONENT, OWN, SIZE_RE, TRIPLE_RE, UNLIMITED_MS,
                                         Position, ProtocolError, TimeControl, parse_pair, shown)
from gomoku.search.backend import CORE, choose
from gomoku.search.core.single import core_ready
from gomoku.search.gumbel import GumbelPlayer
from gomoku.search.heuristic import HeuristicPlayer
from gomoku.search.mcts import MCTS
from gomoku.search.options import SearchOptions
from gomoku.search.rollout import RolloutEvaluator

ABOUT_LINE = f'name="GomokuZero", version="{__version__}", author="the Gomoku Zero project"'


# --------------------------------------------------------------------- engine
@dataclass
class EngineOptions:
    """How the engine plays; ``main`` fills it from the command line."""

    model: Optional[str] = None
    """model file for AlphaZero; None plays the shipped models (``shipped``), pure MCTS or the heuristic"""
    shipped: bool = False
    """without ``model``: play each game with the shipped model nearest to its board and rule
    (``net.shipped.nearest_shipped_model``, chosen again when ``INFO rule`` changes the rule), pure
    MCTS where ``models/`` has none for the board's five (or ``n_in_row``)"""
    heuristic: Optional[int] = None
    """the heuristic player's level (no model, no search tree); None searches with MCTS"""
    n_in_row: int = 5
    """stones in a row that win, for pure MCTS and the heuristic (a model brings its own)"""
    device: str = "auto"
    """where the model runs: cpu, gpu or auto"""
    threads: int = 1
    """CPU threads for the model's inference"""
    precision: str = "auto"
    """the model's inference arithmetic: fp32, bf16, or auto (bf16 on a CPU that does it natively)"""
    c_puct: float = 5.0
    """PUCT exploration constant"""
    max_playouts: Optional[int] = None
    """stop a move's search after this many playouts even if time is left"""
    turn_ms: int = 5000
    """time per move until the manager sends INFO timeout_turn"""
    margin_ms: int = 100
    """time kept back from every move (see TimeControl)"""
    seed: Optional[int] = None
    """seeds the random rollouts of pure MCTS and the heuristic's tie-breaks"""
    messages: bool = True
    """send a MESSAGE line with the search's statistics before every move"""
    search: SearchOptions = SearchOptions()
    """how the search goes beyond the plain PUCT search (here the plain search itself; the
    command line's default is the sharp preset, see ``build_parser``)"""
    root_search: str = "puct"
    """with a model: "puct" searches ``mcts.MCTS``'s tree; "gumbel" plans Gumbel's sequential halving
    (``gumbel.GumbelPlayer``) from the clock, a round of root candidates a net call (``search``'s
    in-tree solver and threat searches apply; its fpu does not)"""


@dataclass
class _Block:
    """A command whose data lines follow it until DONE (BOARD, SWAP2BOARD)."""

    command: str
    started: float
    lines: list[str] = field(default_factory=list)


class PbrainEngine(MoveMaker):
    """The protocol's brain: reads command lines, keeps the position, searches, answers.

    The search (``mcts.MCTS``'s PUCT, or ``gumbel.GumbelPlayer``'s rounds) runs on the backend of the
    search protocol that ``backend.open_search`` picks: the compiled core where it supports the net
    (``core.single.CoreSearch``), else the Python tree; PUCT is driven one playout at a time with the clock
    checked before each, so that no playout count, and no run of playouts that all
    end in a finished game, can overrun the deadline; ``move_search`` holds the
    stop rule and the watchdog that answers for a search stuck in one long step.
    The tree is kept from move to move while the game goes on as expected (our
    move, then one of the opponent's) and dropped after ``BOARD``, ``TAKEBACK``
    and new games.

    Args:
        options: how to play.
        out: where replies go; each line is flushed at once.
        clock: seconds, monotonic (tests may pass a fake one).
        watchdog: answer for a search still running at its hard deadline (``move_search.Watchdog``);
            None: only with the real clock, the watchdog waiting in real time.
    """

    def __init__(self, options: EngineOptions, out: TextIO, clock: Callable[[], float] = time.monotonic,
                 watchdog: Optional[bool] = None):
        self.options = options
        self._out = out
        self._clock = clock
        self._timer = PlayoutTimer()
        if watchdog is None:
            watchdog = clock is time.monotonic
        self._watchdog = Watchdog(self._watchdog_answer, clock) if watchdog else None
        self._answered: Optional[int] = None  # the move the watchdog answered for the search just ended
        self._move_started = 0.0  # when the command of the move being searched arrived
        self._set_up_at = float("-inf")  # when the last START or RECTSTART ended
        self.time = TimeControl(timeout_turn=options.turn_ms, margin_ms=options.margin_ms)
        self.position: Optional[Position] = None
        self.n_in_row = options.n_in_row
        self.rule = FREESTYLE  # the model's rule once one is loaded, until the manager sends INFO rule
        self._rule_told = False
        self.running = True
        self._evaluator = None
        self._models: dict = {}  # path -> (evaluator, NetSpec) of every model loaded so far
        self._model_path: Optional[str] = None  # the model playing now, None for rollouts or the heuristic
        self._shipped_paths: dict = {}  # rule -> the shipped model for the game's board (``shipped``), set at START
        self._heuristic = None if options.heuristic is None else HeuristicPlayer(options.heuristic, options.seed)
        self._model_spec = None  # the loaded model's NetSpec
        self.mcts = MCTS(options.c_puct, **options.search.kwargs())
        # the PUCT search's backend on the compiled core, once one has searched (``backend.open_search``; the
        # Gumbel player keeps its own)
        self._core = None
        self._gumbel = None if options.root_search != "gumbel" else GumbelPlayer(
            None, seed=options.seed, name="engine", **options.search.gumbel_kwargs())
        self._rate = SimulationRate()  # the Gumbel search's recent seconds a simulation, to plan its budget
        self._on_core = False  # whether the last search ran on the core (``self.mcts`` holds a copy of its root)
        self._tree_stones: Optional[tuple] = None  # the stones at the tree's root, to know when to keep it
        self._pending: list[str] = []  # notes waiting for the next reply
        self._block: Optional[_Block] = None
        self._commands = {
            "START": self._start, "RECTSTART": self._rectstart, "RESTART": self._restart,
            "BEGIN": self._begin, "TURN": self._turn, "BOARD": self._open_board,
            "SWAP2BOARD": self._open_swap2, "TAKEBACK": self._takeback, "INFO": self._info,
            "ABOUT": self._about, "END": self._end, "DONE": self._stray_done,
        }

    # ------------------------------------------------------------- the loop
    def run(self, lines: Iterable) -> None:
        """Handles lines until END or the end of input: strings, or ``(line, arrived)`` pairs with the
        moment each arrived on the engine's clock (``move_search.stamped_lines``)."""
        for item in lines:
            line, arrived = (item, None) if isinstance(item, str) else item
            if not self.handle(line, arrived):
                break

    def handle(self, line: str, arrived: Optional[float] = None) -> bool:
        """Processes one input line (that arrived at ``arrived``, else now); returns False once the
        engine should exit."""
        line = line.strip()
        if not line:
            return self.running
        # A move's time counts from the moment its command arrived (else from now, when it is read),
        # or from START's end for a command that came while START loaded the models: the protocol
        # does not count START's time, and a move's search must not find it spent.
        started = max(self._clock() if arrived is None else arrived, self._set_up_at)
        try:
            if self._block is not None and self._block_line(line):
                return self.running
            word, _, arg = line.replace("\t", " ").partition(" ")
            handler = self._commands.get(word.upper())
            if handler is None:
                self._reply(f"UNKNOWN command {word!r} is not supported")
            else:
                handler(arg.strip(), started)
        except ProtocolError as exc:
            self._reply(f"ERROR {exc}")
        except Exception as exc:  # a bug in one answer must not end the engine's match
            traceback.print_exc(file=sys.stderr)
            self._reply(f"ERROR internal error: {type(exc).__name__}: {exc}")
        return self.running

    def _write(self, line: str) -> None:
        self._out.write(line.replace("\r", " ").replace("\n", " ") + "\n")
        self._out.flush()

    def _reply(self, line: str, notes: Iterable[str] = ()) -> None:
        for note in [*self._pending, *notes]:
            self._write(f"MESSAGE {note}")
        self._pending.clear()
        self._write(line)

    def _need_game(self) -> Position:
        if self.position is None:
            raise ProtocolError("no game yet: send START first")
        return self.position

    # -------------------------------------------------------- game set-up
    def _start(self, arg: str, started: float) -> None:
        match = SIZE_RE.fullmatch(arg)
        if not match:
            raise ProtocolError(f"cannot read {shown(arg)}: expected START size")
        size = int(match.group(1))
        self._new_game(size, size)

    def _rectstart(self, arg: str, started: float) -> None:
        self._new_game(*parse_pair(arg, "RECTSTART width,height"))

    def _new_game(self, width: int, height: int) -> None:
        try:
            self._set_up_game(width, height)
        finally:
            self._set_up_at = self._clock()

    def _set_up_game(self, width: int, height: int) -> None:
        if width < 1 or height < 1:
            raise ProtocolError(f"the board {width}x{height} has no cells")
        if width > MAX_SIDE or height > MAX_SIDE:
            raise ProtocolError(f"the board {width}x{height} is too large: at most {MAX_SIDE} cells a side")
        if self.options.shipped:
            self._load_shipped_models(width, height)
        model = self._model_for()
        note = ""
        if model is not None:
            try:
                spec = self._use_model(model)
            except ProtocolError as exc:
                if self.options.model is not None:
                    raise
                note, model = f"; {exc}", None  # a shipped model nobody asked for: play on without it
        if model is not None:
            n_in_row = spec.n_in_row
            problem = spec.board_mismatch(width, height, n_in_row)
            if problem is not None:
                raise ProtocolError(f"cannot play: {problem}")
            try:
                Board(width, height, n_in_row)
            except ValueError as exc:
                raise ProtocolError(str(exc)) from None
            what = (f"AlphaZero with {model} ({n_in_row} in a row, "
                    f"{self._evaluator.model.precision} inference)")
        else:
            try:
                Board(width, height, self.n_in_row)
            except ValueError as exc:
                raise ProtocolError(str(exc)) from None
            if self._heuristic is not None:
                what = f"the heuristic, level {self._heuristic.level} ({self.n_in_row} in a row)"
            else:
                self._use_rollouts()
                what = f"pure MCTS with random rollouts ({self.n_in_row} in a row)"
                if self.options.shipped:
                    note = note or f"; no shipped model plays {self.n_in_row} in a row"
        self.position = Position(width, height)
        self._forget_tree()
        self._reply("OK", [f"GomokuZero {__version__}: {what} on {width}x{height}{note}"])

    def _model_for(self) -> Optional[str]:
        """The model file the game is played with: ``--model``, the shipped one for the board
        and the rule (``shipped``), or None (rollouts or the heuristic)."""
        if self.options.model is not None:
            return self.options.model
        return self._shipped_paths.get(self.rule)

    def _load_shipped_models(self, width: int, height: int) -> None:
        """Chooses and loads, at START, the shipped model for this board under each rule: the
        manager may send ``INFO rule`` after ``START``, and a model looked for or loaded then would
        eat into the first move's time (the manager's clock runs from the command it sends next).
        A model that fails to load here is reported when it is chosen."""
        self._shipped_paths = {rule: shipped.nearest_shipped_model(width, height, self.n_in_row, rule)
                               for rule in RULES}
        for path in dict.fromkeys(self._shipped_paths.values()):
            if path is not None and path not in self._models:
                try:
                    self._models[path] = self._load_model(path)
                except ProtocolError:
                    continue

    def _use_model(self, path: str):
        """Plays with the model at ``path`` from now on, loading it the first time (a failure is
        retried at the next START); returns its ``NetSpec``."""
        if path not in self._models:
            self._models[path] = self._load_model(path)
        self._evaluator, self._model_spec = self._models[path]
        if path != self._model_path:
            self._forget_tree()
        self._model_path = path
        self.n_in_row = self._model_spec.n_in_row
        if not self._rule_told and not self.options.shipped:
            self.rule = self._model_spec.rule
        self._warn_rule()
        return self._model_spec

    def _use_rollouts(self) -> None:
        if self._model_path is not None or self._evaluator is None:
            self._evaluator = RolloutEvaluator(self.options.seed)
            self._forget_tree()
        self._model_spec = self._model_path = None

    def _load_model(self, path: Optional[str] = None):
        """Loads a model file (``--model`` by default); returns its evaluator and ``NetSpec``."""
        try:
            from gomoku.net.policy_value import PolicyValueModel
            from gomoku.search.evaluator import NetEvaluator

            model = PolicyValueModel.load(path or self.options.model, device=self.options.device,
                                          threads=self.options.threads, precision=self.options.precision)
            evaluator = NetEvaluator(model)
            spec = model.spec
            # The first evaluation builds the inference predictor (a second or so):
            # START is the one command whose time the protocol does not count.
            evaluator.evaluate([Board(spec.width, spec.height, spec.n_in_row)])
            if choose(Board(spec.width, spec.height, spec.n_in_row), evaluator, self.options.root_search)[0] == CORE:
                core_ready(background=True)  # the core's kernels: loaded now, or compiled on a thread meanwhile
            if self._gumbel is not None:
                self._warm_up_gumbel(evaluator, spec)
        except Exception as exc:  # ModelFileError, Paddle errors: all mean "cannot play"
            raise ProtocolError(f"cannot use the model: {exc}") from None
        # The model leaves some 150,000 objects that live as long as the engine; a
        # full collection walked them all (0.2 s, measured, in the middle of a search).
        # Frozen, collections skip them.
        gc.collect()
        gc.freeze()
        return evaluator, spec

    def _restart(self, arg: str, started: float) -> None:
        position = self._need_game()
        self.position = Position(position.width, position.height)
        self._forget_tree()
        self._reply("OK")

    # ------------------------------------------------------------- moves
    def _begin(self, arg: str, started: float) -> None:
        if self._need_game().stones:
            raise ProtocolError("BEGIN is for an empty board: send RESTART first")
        self._move(started)

    def _turn(self, arg: str, started: float) -> None:
        position = self._need_game()
        x, y = parse_pair(arg, "TURN x,y")
        position.add(position.move_of(x, y), OPPONENT)
        self._move(started)

    def _takeback(self, arg: str, started: float) -> None:
        position = self._need_game()
        x, y = parse_pair(arg, "TAKEBACK x,y")
        position.remove(position.move_of(x, y))
        self._reply("OK")

    # BOARD's and SWAP2BOARD's data lines come before any reply, so even one sent
    # before START is read to its DONE and answered once, keeping replies in step.
    def _open_board(self, arg: str, started: float) -> None:
        self._block = _Block("BOARD", started)

    def _open_swap2(self, arg: str, started: float) -> None:
        self._block = _Block("SWAP2BOARD", started)

    def _block_line(self, line: str) -> bool:
        """Takes a line inside BOARD/SWAP2BOARD; False if it is a command to run instead."""
        block = self._block
        word = line.replace("\t", " ").partition(" ")[0].upper()  # the command word as handle() reads it
        if word == "DONE":
            self._block = None
            if block.command == "SWAP2BOARD":
                self._reply("UNKNOWN SWAP2BOARD: swap2 openings are not supported")
            else:
                self._board(block.lines, block.started)
            return True
        if word == "INFO":
            return False  # limits may change at any moment; the data lines go on after it
        if word in self._commands:
            # The manager has moved on without DONE: answer the broken BOARD, then obey.
            self._block = None
            self._reply(f"ERROR {block.command} was not ended by DONE")
            return False
        block.lines.append(line)
        return True

    def _board(self, lines: list[str], started: float) -> None:
        old = self._need_game()
        position = Position(old.width, old.height)
        for text in lines:
            match = TRIPLE_RE.fullmatch(text)
            if not match:
                raise ProtocolError(f"cannot read BOARD line {shown(text)}: expected x,y,who")
            x, y, who = (int(g) for g in match.groups())
            if who == CONTINUOUS_MARK:
                raise ProtocolError("BOARD field 3 (continuous game) is not supported")
            if who not in (OWN, OPPONENT):
                raise ProtocolError(f"BOARD line {shown(text)}: who must be 1 (own) or 2 (opponent's)")
            position.add(position.move_of(x, y), who)
        self.position = position
        self._move(started)

    # ------------------------------------------------------------- the rest
    def _info(self, arg: str, started: float) -> None:
        key, _, value = arg.partition(" ")
        key, value = key.lower(), value.strip()
        if key not in ("timeout_turn", "timeout_match", "time_left", "max_memory", "rule"):
            return  # game_type, evaluate, folder and keys yet to come change nothing here
        try:
            number = int(value)
        except ValueError:
            self._pending.append(f"ignored INFO {key} {shown(value)}: not an integer")
            return
        if key == "rule":
            self._set_rule(number)
            return
        if number < 0 and key != "time_left":  # time_left goes negative once the time is overrun
            self._pending.append(f"ignored INFO {key} {number}: must not be negative")
            return
        if key == "timeout_match" and number > 0 and self.time.time_left == UNLIMITED_MS:
            self.time.time_left = number  # until the manager sends time_left, as it must
        setattr(self.time, key, number)

    def _set_rule(self, number: int) -> None:
        """``INFO rule``: the rule whose ``protocol`` number it is (``rules.rule_from_protocol``:
        0 freestyle, 1 standard, 4 renju, 8 caro); 2 (a continuous game) gets a note that it is
        not supported and changes nothing else. A number no rule has, or a rule that cannot be
        played with this ``n_in_row``, gets a note, and the rule stays as it was."""
        if number & CONTINUOUS_BIT:
            self._pending.append(f"INFO rule {number}: continuous games are not supported; "
                                 f"each game ends at its first line")
        try:
            rule = rule_from_protocol(number).check(self.n_in_row)
        except ValueError as exc:
            self._pending.append(f"INFO rule {number}: {exc}; the rule stays {self.rule}")
            return
        if rule != self.rule:
            self._forget_tree()
        self.rule = rule
        self._rule_told = True
        if self.options.shipped and self.position is not None:
            self._choose_shipped_model()
        self._warn_rule()

    def _choose_shipped_model(self) -> None:
        """After a new rule: plays the shipped model nearest to this board and rule from now on.
        ``INFO`` gets no reply, so a model that fails to load is a note, and the one before stays."""
        model = self._model_for()
        if model is None or model == self._model_path:
            return
        try:
            self._use_model(model)
        except ProtocolError as exc:
            self._pending.append(f"{exc}; playing on with {self._model_path or 'pure MCTS'}")
            return
        self._pending.append(f"playing {self.rule} with {model}")

    def _warn_rule(self) -> None:
        """A note when the model was trained for another rule than the game's. The engine still
        plays: a game the manager has set up must get moves, and they are legal under the
        game's rule (the board and the search follow it), only weaker."""
        if self._model_spec is not None and self._model_spec.rule_mismatch(self.rule):
            note = (f"playing {self.rule} with a model trained for {self._model_spec.rule}: "
                    f"its moves are legal, but it may play them worse")
            if note not in self._pending:  # a new model and a new rule both warn
                self._pending.append(note)

    def _about(self, arg: str, started: float) -> None:
        self._reply(ABOUT_LINE)

    def _end(self, arg: str, started: float) -> None:
        self.running = False

    def _stray_done(self, arg: str, started: float) -> None:
        raise ProtocolError("DONE without BOARD")
