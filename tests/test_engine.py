"""The Gomocup engine: its protocol driven through pipes as a manager drives it, and its parts.

Subprocess tests talk to ``python -m gomoku.play.engine`` with their own small
driver (not the referee's ``EngineProcess``), time every answer from the moment
the command was written, and hold it to the ``timeout_turn`` they sent. Their
engines keep a 200 ms margin instead of the default 100 ms, because a busy
test machine can hold a process back longer than that, and every limit has ``LOAD_SLACK_S`` on top
(the slack of a machine busy with other work); the exact deadline arithmetic is tested
in-process with a fake clock. Boards are small and turns
short so that the whole file runs in about a minute on an idle machine.
"""

from __future__ import annotations

import gc
import io
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from gomoku.game.board import Board
from gomoku.play.engine.brain import EngineOptions, PbrainEngine
from gomoku.play.engine.protocol import OPPONENT, OWN, UNLIMITED_MS, Position, ProtocolError, TimeControl
from devtools.engine_check.referee import run_match
from gomoku.search.options import SearchOptions
from tests.helpers import LOAD_SLACK_S, FakeClock, converse

ROOT = Path(__file__).resolve().parents[1]
MOVE = re.compile(r"(\d+),(\d+)")
MARGIN = ("--margin-ms", "200")


# --------------------------------------------------------------- the driver
class Engine:
    """An engine process; ``ask`` sends a command and returns its answer and how long it took."""

    def __init__(self, command: list[str], stderr_path: Path, cwd: Path = ROOT):
        env = dict(os.environ)
        if cwd == ROOT:
            env["PYTHONPATH"] = str(ROOT)
        else:  # an installed command must find the package by itself
            env.pop("PYTHONPATH", None)
        self._stderr = open(stderr_path, "w")
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, text=True, bufsize=1, cwd=cwd, env=env)
        self.lines: queue.Queue = queue.Queue()
        self.sent_at = 0.0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        # The arrival time is taken here, so a slow test thread cannot make an answer look late.
        for line in self.proc.stdout:
            self.lines.put((line.rstrip("\n"), time.monotonic()))
        self.lines.put((None, time.monotonic()))

    def send(self, *lines: str) -> None:
        for line in lines:
            self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        self.sent_at = time.monotonic()

    def answer(self, timeout: float = 10.0) -> tuple[str, float, list[str]]:
        """The next non-MESSAGE line, its latency since the last send, and the MESSAGE lines before it."""
        messages = []
        while True:
            line, arrived = self.lines.get(timeout=timeout)
            assert line is not None, "the engine closed its output"
            if line.startswith("MESSAGE "):
                messages.append(line)
                continue
            return line, arrived - self.sent_at, messages

    def ask(self, *lines: str, limit: float = 2.0, timeout: float = 10.0) -> str:
        """Sends a command (and its data lines); returns the answer, which must come within ``limit``
        and the slack a busy machine takes (``LOAD_SLACK_S``)."""
        self.send(*lines)
        answer, latency, _ = self.answer(max(timeout, limit + LOAD_SLACK_S))
        assert latency < limit + LOAD_SLACK_S, (f"{lines[0]!r} answered {answer!r} after {latency:.3f} s "
                                                f"(limit {limit} s and {LOAD_SLACK_S} s for the machine's load)")
        return answer

    def end(self) -> None:
        """END must make the engine exit, writing nothing more (an interpreter that imported Paddle
        takes seconds to shut down on a busy machine)."""
        self.send("END")
        assert self.proc.wait(timeout=60) == 0
        line, _ = self.lines.get(timeout=5)
        assert line is None, f"output after END: {line!r}"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()


@pytest.fixture
def spawn(tmp_path):
    engines = []

    def start(*args: str, command: list[str] | None = None, cwd: Path = ROOT) -> Engine:
        engine = Engine(command or [sys.executable, "-m", "gomoku.play.engine", *MARGIN, *args],
                        tmp_path / f"stderr{len(engines)}.txt", cwd)
        engines.append(engine)
        return engine

    yield start
    for engine in engines:
        engine.close()


@pytest.fixture(scope="module")
def model_6x6(tmp_path_factory):
    """A random-weight model for 6x6, 4 in a row."""
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    path = tmp_path_factory.mktemp("model") / "random_6x6.npz"
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(str(path))
    return path


def cell(answer: str, width: int, height: int) -> tuple[int, int]:
    """The ``x,y`` of a move answer, checked to be on the board."""
    match = MOVE.fullmatch(answer)
    assert match, f"not a move: {answer!r}"
    x, y = int(match.group(1)), int(match.group(2))
    assert 0 <= x < width and 0 <= y < height, f"{answer} is off the {width}x{height} board"
    return x, y


# ---------------------------------------------------- games through the pipes
def test_scripted_game_with_pure_mcts(spawn):
    turn = 0.4
    engine = spawn("--pure", "--n-in-row", "5", "--seed", "0")
    # The first answer waits for the process to start and import its modules: seconds on a busy machine.
    assert engine.ask("ABOUT", limit=10).startswith('name="GomokuZero", version="')
    # START's time is not counted by the protocol (it loads what the engine plays with): a long limit.
    assert engine.ask("START 7", limit=30, timeout=30) == "OK"
    # INFO gets no answer: if one came, the next ask would read it instead of the move.
    engine.send("INFO timeout_turn 400", "INFO timeout_match 0", f"INFO time_left {UNLIMITED_MS}",
                "INFO max_memory 83886080", "INFO game_type 1", "INFO folder /tmp", "INFO evaluate 3,3",
                "INFO some_future_key 7")
    stones = {cell(engine.ask("BEGIN", limit=turn), 7, 7)}
    for _ in range(3):
        opponent = next((x, y) for x, y in [(0, 0), (6, 6), (0, 6), (6, 0), (1, 1)] if (x, y) not in stones)
        stones.add(opponent)
        reply = cell(engine.ask(f"TURN {opponent[0]},{opponent[1]}", limit=turn), 7, 7)
        assert reply not in stones
        stones.add(reply)
    # Take back the engine's last move and the opponent's before it; both cells are free again.
    assert engine.ask(f"TAKEBACK {reply[0]},{reply[1]}", limit=turn) == "OK"
    assert engine.ask(f"TAKEBACK {opponent[0]},{opponent[1]}", limit=turn) == "OK"
    assert engine.ask(f"TAKEBACK {opponent[0]},{opponent[1]}", limit=turn).startswith("ERROR")
    again = cell(engine.ask(f"TURN {opponent[0]},{opponent[1]}", limit=turn), 7, 7)
    assert again != opponent

    assert engine.ask("RESTART") == "OK"
    # Four own stones in column x=3, rows 1-4: only 3,0 or 3,5 wins. Sent in no
    # particular order; a swapped x and y would answer 0,3 or 5,3.
    board = ["3,2,1", "0,0,2", "3,4,1", "6,0,2", "3,1,1", "0,6,2", "3,3,1", "6,6,2"]
    assert engine.ask("BOARD", *board, "DONE", limit=turn) in ("3,0", "3,5")
    engine.end()


def test_bad_input_gets_error_and_the_engine_goes_on(spawn):
    turn = 0.4
    engine = spawn("--pure", "--n-in-row", "5")
    # The first answer waits for the process to start and import its modules: seconds on a busy machine.
    for i, command in enumerate((["BEGIN"], ["TURN 1,1"], ["TAKEBACK 1,1"], ["RESTART"], ["BOARD", "1,1,1", "DONE"])):
        assert engine.ask(*command, limit=10 if i == 0 else 2).startswith("ERROR no game yet"), command
    assert engine.ask("START abc").startswith("ERROR")
    assert engine.ask("START 3").startswith("ERROR")  # too small for 5 in a row
    assert engine.ask("RECTSTART 7").startswith("ERROR")
    assert engine.ask("START 7", limit=30, timeout=30) == "OK"
    engine.send("INFO timeout_turn 400")
    assert engine.ask("FOO bar").startswith("UNKNOWN")
    assert engine.ask("PLAY 1,1").startswith("UNKNOWN")
    assert engine.ask("DONE").startswith("ERROR")
    for bad in ("TURN 7,0", "TURN 0,7", "TURN -1,2", "TURN 3", "TURN a,b", "TURN 1,2,3", "TURN"):
        assert engine.ask(bad).startswith("ERROR"), bad

    first = cell(engine.ask("BEGIN", limit=turn), 7, 7)
    assert engine.ask(f"TURN {first[0]},{first[1]}").startswith("ERROR")  # occupied
    assert engine.ask("BEGIN").startswith("ERROR")  # the board is not empty
    empty = next((x, 0) for x in range(7) if (x, 0) != first)
    assert engine.ask(f"TAKEBACK {empty[0]},{empty[1]}").startswith("ERROR")
    bad_boards = [["1,1,1", "1,1,2"],  # one cell twice
                  ["1,1,1", "9,1,2"],  # off the board
                  ["1,1,1", "1,2"],  # not x,y,who
                  ["1,1,1", "2,2,4"],  # no such owner
                  ["1,1,1", "2,2,3"]]  # continuous games are not supported
    for lines in bad_boards:
        assert engine.ask("BOARD", *lines, "DONE").startswith("ERROR"), lines
    # INFO may come inside BOARD; a BOARD cut short by another command is answered, then the
    # command is obeyed.
    answer = engine.ask("BOARD", "1,1,2", "INFO timeout_turn 400", "1,1,1", "DONE")
    assert answer == "ERROR 1,1 is already occupied"
    engine.send("BOARD", "1,1,1", "ABOUT")
    assert engine.answer()[0].startswith("ERROR")
    assert engine.answer()[0].startswith("name=")

    # None of it changed the game: the engine's first stone is still there, and it still plays.
    # The note on a bad INFO (which gets no answer) comes with the next answer.
    engine.send("", "INFO time_left soon", f"TURN {first[0]},{first[1]}")
    answer, _, messages = engine.answer()
    assert answer.startswith("ERROR") and any("ignored INFO time_left" in m for m in messages)
    free = next((x, 6) for x in range(7) if (x, 6) != first)
    assert cell(engine.ask(f"TURN {free[0]},{free[1]}", limit=turn), 7, 7) not in (first, free)
    engine.end()


def test_engine_with_a_model(spawn, model_6x6):
    turn = 0.5
    engine = spawn("--model", str(model_6x6), "--device", "cpu")
    answer = engine.ask("START 7", limit=60, timeout=60)
    assert answer.startswith("ERROR") and "6x6" in answer
    assert engine.ask("START 6", limit=60, timeout=60) == "OK"
    engine.send(f"INFO timeout_turn {int(turn * 1000)}")
    first = cell(engine.ask("BEGIN", limit=turn), 6, 6)
    opponent = next((x, y) for x in range(6) for y in range(6) if (x, y) != first)
    second = cell(engine.ask(f"TURN {opponent[0]},{opponent[1]}", limit=turn), 6, 6)
    assert second not in (first, opponent)
    assert engine.ask("RESTART") == "OK"
    assert cell(engine.ask("BOARD", "2,2,2", "DONE", limit=turn), 6, 6) != (2, 2)
    engine.end()


def test_a_missing_model_is_reported_at_start(spawn, tmp_path):
    engine = spawn("--model", str(tmp_path / "missing.npz"))
    # The first answer also waits for the interpreter to start: that is no move, so no move limit.
    assert engine.ask("ABOUT", limit=30, timeout=30).startswith("name=")
    answer = engine.ask("START 15", limit=60, timeout=60)
    assert answer.startswith("ERROR") and "missing.npz" in answer
    assert engine.ask("BEGIN").startswith("ERROR no game yet")
    engine.end()


def test_time_left_and_instant_moves(spawn):
    engine = spawn("--pure", "--turn-ms", "30000")
    assert engine.ask("START 15", limit=30, timeout=30) == "OK"
    # 3 s left for the match on an empty 15x15 board: at most 1/25 of it for this move.
    engine.send("INFO timeout_turn 30000", "INFO time_left 3000")
    first = cell(engine.ask("BEGIN", limit=0.3), 15, 15)
    engine.send("INFO time_left 2147483647", "INFO timeout_turn 0")  # 0: as fast as possible
    free = (7, 7) if first != (7, 7) else (8, 8)
    assert cell(engine.ask(f"TURN {free[0]},{free[1]}", limit=0.2), 15, 15) not in (first, free)
    engine.end()


def test_the_installed_command_runs_from_another_directory(spawn, tmp_path):
    # Managers start the engine from a folder of their choosing, by the command's path. pip puts
    # the command beside this Python's interpreter.
    command = shutil.which("pbrain-gomokuzero", path=os.path.dirname(sys.executable))
    if command is None:
        pytest.skip("the pbrain-gomokuzero command is not installed (pip install -r requirements.txt)")
    engine = spawn(command=[command, *MARGIN, "--pure", "--n-in-row", "4", "--turn-ms", "300"], cwd=tmp_path)
    # The first answer also waits for the interpreter to start: that is no move, so no move limit.
    assert engine.ask("ABOUT", limit=30, timeout=30).startswith('name="GomokuZero"')
    assert engine.ask("START 6", limit=30, timeout=30) == "OK"
    cell(engine.ask("BEGIN", limit=0.3), 6, 6)
    engine.end()


def test_a_whole_match_between_two_engine_processes():
    # A playout cap ends each move long before its time: the referee's clock has seconds to spare
    # for a machine busy with other work (answering in time is tested above, on a fake clock).
    engine = [sys.executable, "-m", "gomoku.play.engine", *MARGIN, "--pure", "--n-in-row", "4",
              "--max-playouts", "300"]
    result = run_match((engine + ["--seed", "1"], engine + ["--seed", "2"]), 6, 6, n_in_row=4,
                       timeout_turn_ms=3000, stderr=subprocess.DEVNULL)
    assert result.winner in (0, 1, 2), result.reason
    assert "lost" not in result.reason
    assert len(result.moves) == len(set(result.moves)) >= 7
    referee = Board.from_moves(6, 6, 4, result.moves)
    assert referee.game_over and (referee.winner or 0) == result.winner
    assert result.transcript[0] == "[1] > START 6"


# ------------------------------------------------------------- in-process parts
@pytest.mark.timeout(120)
def test_without_a_player_flag_the_engine_plays_the_shipped_model_for_the_board_and_rule():
    # Managers start a brain without arguments, then set the board (START) and the rule (INFO rule).
    from gomoku.play.engine.cli import engine_options

    assert engine_options([]).shipped and engine_options(["--shipped"]).shipped
    for flags in (["--pure"], ["--heuristic", "2"], ["--model", "some.npz"]):
        assert not engine_options(flags).shipped
    options = replace(engine_options(["--max-playouts", "20", "--device", "cpu", "--quiet"]), turn_ms=60000)
    out = io.StringIO()
    engine = PbrainEngine(options, out, FakeClock(0.001))
    started = converse(engine, out, "START 15")
    assert started[-1] == "OK" and "AlphaZero with" in started[0] and "gomoku_15x15_5.npz" in started[0]
    # START, whose time the protocol does not count, loads the models of every rule: a manager
    # times the first move from the command after INFO rule, so no model may load then.
    loaded = dict(engine._models)
    assert sorted(os.path.basename(path) for path in loaded) == ["gomoku_15x15_5.npz", "gomoku_15x15_renju.npz"]
    engine.handle("INFO rule 4")  # renju: INFO has no answer; the note comes with the next reply
    assert engine._models == loaded
    black = converse(engine, out, "BEGIN")
    assert "playing renju with" in black[0] and "gomoku_15x15_renju.npz" in black[0]
    assert engine.rule == "renju" and engine._model_spec.rule == "renju"
    cell(black[-1], 15, 15)
    # Back to freestyle, then a board where the size-free model has to do: it still plays it.
    engine.handle("INFO rule 0")
    assert "gomoku_15x15_5.npz" in converse(engine, out, "RESTART")[0] and engine._model_spec.rule == "freestyle"
    assert "gomoku_15x15_5.npz" in converse(engine, out, "START 20")[0]
    cell(converse(engine, out, "BEGIN")[-1], 20, 20)
    # No shipped model makes four in a row on 7x7: pure MCTS, and the start says why.
    out = io.StringIO()
    four = PbrainEngine(replace(options, n_in_row=4), out, FakeClock(0.001))
    answer = converse(four, out, "START 7")
    assert answer[-1] == "OK" and "pure MCTS" in answer[0] and "no shipped model" in answer[0]
    assert four._model_spec is None


@pytest.mark.timeout(60)
def test_a_shipped_model_that_cannot_load_leaves_pure_mcts_and_says_why(tmp_path, monkeypatch):
    from gomoku.net import shipped

    broken = tmp_path / "gomoku_15x15_5.npz"
    broken.write_text("not a model\n")
    monkeypatch.setattr(shipped, "nearest_shipped_model", lambda *board: str(broken))
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(shipped=True, max_playouts=20, seed=0), out, FakeClock(0.001))
    started = converse(engine, out, "START 9")
    assert started[-1] == "OK" and "pure MCTS" in started[0] and "cannot use the model" in started[0]
    cell(converse(engine, out, "BEGIN")[-1], 9, 9)


def test_the_search_stops_before_the_deadline():
    clock = FakeClock(0.01)  # every playout "takes" 10 ms
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, margin_ms=100), out, clock)
    converse(engine, out, "START 6", "INFO timeout_turn 1000")
    started = clock.now + clock.step  # handle() reads the clock first
    note, move = converse(engine, out, "BEGIN")
    playouts = int(note.split()[1])
    # 1000 ms less 100 ms and 5% leaves 850 ms; a playout that would end later is not started.
    assert 80 <= playouts <= 85
    assert clock.now - started <= 0.85
    assert MOVE.fullmatch(move)

    converse(engine, out, "INFO timeout_turn 0")
    free = "0,0" if move != "0,0" else "1,1"
    note, _ = converse(engine, out, f"TURN {free}")
    assert note.split()[1] == "2"  # as fast as possible: root expansion and one descent


def test_a_move_sent_while_start_loads_gets_its_whole_time_after_start():
    # A manager may send BEGIN without waiting for START's OK: both arrive at once, START loads the
    # models (seconds, and Paddle's import on the first one), and BEGIN's search must not find its
    # time spent by then. The protocol does not count START's time: the move counts from its end.
    clock = FakeClock(0.01)  # every playout "takes" 10 ms
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, margin_ms=100), out, clock)
    set_up = engine._set_up_game

    def slow_set_up(*board):
        set_up(*board)
        clock.now += 30.0  # a START that took 30 s

    engine._set_up_game = slow_set_up
    for line in ("INFO timeout_turn 1000", "START 6", "BEGIN"):
        engine.handle(line, arrived=0.0)
    note, move = out.getvalue().splitlines()[-2:]
    assert 80 <= int(note.split()[1]) <= 85, note  # the whole 850 ms of the move, as in the test above
    assert MOVE.fullmatch(move)


class GcWatchingClock(FakeClock):
    """A fake clock that notes, at every reading, whether the garbage collector was on."""

    def __init__(self, step: float):
        super().__init__(step)
        self.gc_on: list[bool] = []

    def __call__(self) -> float:
        self.gc_on.append(gc.isenabled())
        return super().__call__()


def test_no_garbage_collection_while_a_move_is_searched():
    clock = GcWatchingClock(0.01)
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0), out, clock)
    converse(engine, out, "START 6", "INFO timeout_turn 1000")
    assert gc.isenabled()
    clock.gc_on.clear()
    note, move = converse(engine, out, "BEGIN")
    assert MOVE.fullmatch(move) and int(note.split()[1]) > 50
    # The first reading is the command's arrival; every reading after it is taken inside the search.
    assert clock.gc_on[0] and not any(clock.gc_on[1:])
    assert gc.isenabled()  # back on once the move is answered


def test_a_win_in_one_is_played_at_once_without_search():
    out = io.StringIO()
    clock = FakeClock(0.001)
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, max_playouts=300), out, clock)
    converse(engine, out, "START 6")
    # Own stones on 1,0 2,0 3,0: 0,0 and 4,0 both win; the lower move index, 0,0, is played.
    note, move = converse(engine, out, "BOARD", "1,0,1", "0,5,2", "2,0,1", "5,5,2", "3,0,1", "3,3,2", "DONE")
    assert move == "0,0"
    assert "wins at once" in note
    assert engine.mcts.root.N == 0  # no playout was spent


def test_a_win_the_solver_proves_ends_the_search_before_its_time():
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, search=SearchOptions(solve=True)), out, FakeClock(0.001))
    converse(engine, out, "START 8", "INFO timeout_turn 5000")  # about 4,650 playouts' worth of fake time
    # Own stones on 2,3 and 3,3: 1,3 or 4,3 makes three with both ends open, two cells that complete
    # four, which the opponent cannot both block; the opponent's stones threaten nothing.
    note, move = converse(engine, out, "BOARD", "2,3,1", "0,7,2", "3,3,1", "7,7,2", "DONE")
    assert move in ("1,3", "4,3") and "won by force" in note
    assert int(note.split()[1]) < 1000  # the search stopped once the root was proven, long before 5 s


def test_max_playouts_and_time_left_bookkeeping():
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, max_playouts=10), out, FakeClock(0.001))
    converse(engine, out, "START 6", "INFO timeout_turn 5000", "INFO time_left 60000")
    note, _ = converse(engine, out, "BEGIN")
    assert note.split()[1] == "10"
    assert engine.time.time_left < 60000


def test_tree_is_kept_after_the_opponents_answer_and_dropped_otherwise():
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, max_playouts=300), out, FakeClock(0.0001))
    converse(engine, out, "START 6")
    converse(engine, out, "BEGIN")
    # The tree's root is now the position after our move; answer with the reply it searched most.
    root = engine.mcts.root
    reply = int(root.moves[root.child_N.argmax()])
    kept = int(root.child_N.max())
    assert kept > 0
    note, _ = converse(engine, out, f"TURN {reply % 6},{reply // 6}")
    assert "300 playouts in" in note and f"(tree {kept + 300})" in note
    note = converse(engine, out, "RESTART", "BOARD", f"{reply % 6},{reply // 6},2", "DONE")[1]
    assert "(tree 300)" in note


def test_position_replays_stones_alternately_with_the_opponents_last_stone_last():
    position = Position(6, 6)
    for move, who in [(0, OWN), (7, OPPONENT), (14, OWN), (21, OPPONENT)]:
        position.add(move, who)
    board = position.to_board(4)
    assert board.history == [0, 7, 14, 21] and board.start_player == board.current_player
    assert len(board.history) % 2 == 0  # we opened the game: the net's first-player plane is on

    position.add(30, OPPONENT)  # the opponent opened: one stone more
    board = position.to_board(4)
    assert board.history[-1] == 30 and len(board.history) == 5
    assert board.cells[0] == board.current_player and board.cells[30] == board.opponent
    assert board.planes()[2].flatten()[30] == 1.0


def test_position_with_surplus_stones_still_plays():
    position = Position(6, 6)
    for move in (0, 1, 2):
        position.add(move, OWN)
    position.add(35, OPPONENT)
    board = position.to_board(4)
    assert not board.game_over and board.history[-1] == 35
    me = board.current_player
    assert [board.cells[m] for m in (0, 1, 2, 35)] == [me, me, me, 3 - me]
    assert board.legal_moves().count(3) == 1  # 3 would complete four: the game is on
    board.play(3)
    assert board.winner == me


def test_position_errors():
    position = Position(6, 6)
    position.add(position.move_of(2, 3), OWN)
    assert position.label(position.move_of(2, 3)) == "2,3"
    with pytest.raises(ProtocolError):
        position.add(position.move_of(2, 3), OPPONENT)
    with pytest.raises(ProtocolError):
        position.move_of(6, 0)
    with pytest.raises(ProtocolError):
        position.remove(position.move_of(0, 0))


def test_time_control_shares():
    tc = TimeControl(timeout_turn=1000, margin_ms=100, margin_share=0.0)
    assert tc.move_seconds(100) == pytest.approx(0.9)
    tc.time_left = 10000  # 10 s for at most 25 more moves of ours
    assert tc.move_seconds(100) == pytest.approx(0.3)
    assert tc.move_seconds(3) == pytest.approx(0.9)  # two moves left at most: the turn limit binds
    tc.time_left = -50
    assert tc.move_seconds(100) == 0.0
    tc.timeout_turn = 0
    assert tc.move_seconds(100) == 0.0
    assert TimeControl().tree_limit(225) is None
    assert TimeControl(max_memory=80_000_000).tree_limit(225) == 20_000_000 // (32 * 225 + 400)


def test_unsupported_rules_and_field_three_are_reported():
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, max_playouts=20), out, FakeClock(0.001))
    converse(engine, out, "START 6", "INFO rule 4")
    lines = converse(engine, out, "BEGIN")
    assert lines[0].startswith("MESSAGE INFO rule 4") and MOVE.fullmatch(lines[-1])
    swap2 = converse(engine, out, "SWAP2BOARD", "1,1", "DONE")
    assert swap2 == ["UNKNOWN SWAP2BOARD: swap2 openings are not supported"]
    over = converse(engine, out, "RESTART", "BOARD", "0,0,2", "1,0,2", "2,0,2", "3,0,2", "0,1,1", "DONE")
    assert over == ["OK", "ERROR the game is over: the opponent has 4 in a row"]


def test_search_options_reach_the_engines_tree_and_bad_ones_are_refused(capsys):
    from gomoku.play.engine.cli import main

    options = EngineOptions(n_in_row=4, seed=0, search=SearchOptions(fpu=0.25, solve=True))
    engine = PbrainEngine(options, io.StringIO(), FakeClock(0.001))
    assert engine.mcts.win_check and engine.mcts.solve and engine.mcts.fpu == 0.25
    with pytest.raises(SystemExit):
        main(["--pure", "--fpu", "-0.5"])
    assert "fpu" in capsys.readouterr().err


# ------------------------------------------------- lost positions and failures
def board_lines(board: Board, me: int) -> list[str]:
    """A BOARD block of ``board``'s stones as the engine playing ``me`` sees them."""
    lines = ["BOARD"]
    for move, owner in enumerate(board.cells):
        if owner:
            y, x = divmod(move, board.width)
            lines.append(f"{x},{y},{OWN if owner == me else OPPONENT}")
    return lines + ["DONE"]


def test_a_lost_position_and_the_kept_tree_after_it_each_get_a_legal_move():
    from tests.boards import FOUR_AND_THREE, load_board

    # White (the engine) loses whatever it plays: the solver proves it, the engine blocks the
    # four at f3 (5,2); after Black's g5 (6,4), an open four, the kept subtree is a proven loss
    # whose root was never expanded. The engine still answers, with a block at one end.
    board = load_board(FOUR_AND_THREE, to_move=2)
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(seed=0, search=SearchOptions(solve=True)), out, FakeClock(0.001))
    converse(engine, out, "START 9", "INFO timeout_turn 5000")
    note, move = converse(engine, out, *board_lines(board, me=2))
    assert move == "5,2" and "lost by force" in note
    assert engine.mcts.root.proven == 1  # Black's turn, won for Black
    note, move = converse(engine, out, "TURN 6,4")
    assert move in ("6,3", "6,8"), note
    assert "lost by force" in note


# The game of a forfeit: the engine as White answered ERROR on the turn after its search proved
# the loss (after 27 stones). Each White turn comes as a BOARD block, as managers send it. The
# engine joins the game after 19 stones: two turns searched as usual, then the turn whose search
# proves the loss (23 stones) and the turns from the proven root kept from it.
FORFEITED_GAME = [(8, 7), (5, 9), (7, 6), (6, 5), (7, 7), (5, 7), (7, 8), (7, 9), (6, 9), (9, 6),
                  (5, 8), (6, 8), (4, 6), (7, 5), (6, 6), (5, 6), (5, 5), (4, 4), (4, 7), (7, 10),
                  (5, 10), (4, 11), (4, 9), (8, 10), (9, 11), (9, 10), (6, 7)]


@pytest.mark.timeout(240)
def test_the_forfeited_game_gets_a_legal_move_on_every_turn():
    out = io.StringIO()
    options = EngineOptions(model=str(ROOT / "models" / "gomoku_15x15_5.npz"), device="cpu", max_playouts=800,
                            search=SearchOptions(fpu=0.25, solve=True))
    engine = PbrainEngine(options, out, FakeClock(0.0001))
    assert converse(engine, out, "START 15", "INFO timeout_turn 60000")[-1] == "OK"
    proven = 0
    for stones in range(19, len(FORFEITED_GAME) + 1, 2):
        lines = ["BOARD"] + [f"{x},{y},{OPPONENT if i % 2 == 0 else OWN}"
                             for i, (x, y) in enumerate(FORFEITED_GAME[:stones])] + ["DONE"]
        reply = converse(engine, out, *lines)
        x, y = cell(reply[-1], 15, 15)
        assert (x, y) not in FORFEITED_GAME[:stones], f"after {stones} stones: {reply}"
        proven += "lost by force" in reply[0]
    assert proven >= 2  # the last turns were searched from a proven root


def test_a_search_that_fails_still_answers_a_legal_move_and_says_why(monkeypatch):
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, max_playouts=50), out, FakeClock(0.001))
    converse(engine, out, "START 6")

    def broken(board, started):
        raise RuntimeError("the tree is broken")

    monkeypatch.setattr(engine, "_search", broken)
    lines = converse(engine, out, "BEGIN")
    x, y = cell(lines[-1], 6, 6)
    assert lines[0] == (f"MESSAGE the search failed (RuntimeError: the tree is broken); played {x},{y}, "
                        "the heuristic's move (level 1)")
    # The opponent's four is blocked by the fallback before anything else.
    lines = converse(engine, out, "BOARD", "0,0,2", "1,0,2", "2,0,2", "5,5,1", "4,4,1", "DONE")
    assert lines[-1] == "3,0" and "a block" in lines[0]
    monkeypatch.undo()
    assert MOVE.fullmatch(converse(engine, out, "TURN 0,5")[-1])  # and the search is back


def test_a_model_engine_whose_search_fails_plays_the_policy_nets_move(monkeypatch, model_6x6):
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(model=str(model_6x6), device="cpu", max_playouts=20), out, FakeClock(0.001))
    converse(engine, out, "START 6")
    monkeypatch.setattr(engine.mcts, "best_move", lambda board: 99)  # an illegal move from the search
    lines = converse(engine, out, "BEGIN")
    assert lines[0].startswith("MESSAGE the search failed") and "the policy net's best move" in lines[0]
    priors, _ = engine._evaluator.evaluate([Board(6, 6, 4)])
    y, x = divmod(int(priors[0].argmax()), 6)
    assert lines[-1] == f"{x},{y}"


def rule_board(*stones: tuple) -> list[str]:
    return ["BOARD", *(f"{x},{y},{who}" for x, y, who in stones), "DONE"]


# Row 7 of a 15x15 board: White at 2, Black (the engine) at 3-6 and 8. The gap 7,7 makes six in
# a row: a win in freestyle, no win in standard, a forbidden overline for Black in renju.
OVERLINE_GAP = rule_board((3, 7, 1), (4, 7, 1), (5, 7, 1), (6, 7, 1), (8, 7, 1),
                          (2, 7, 2), (0, 0, 2), (14, 0, 2), (0, 14, 2))


def test_info_rule_chooses_the_rule_and_the_engine_follows_it():
    def answer(*info: str) -> list[str]:
        out = io.StringIO()
        engine = PbrainEngine(EngineOptions(seed=0, max_playouts=30), out, FakeClock(0.001))
        converse(engine, out, "START 15", *info)
        return [engine.rule] + converse(engine, out, *OVERLINE_GAP)

    assert answer()[:1] == ["freestyle"] and answer()[-1] == "7,7"  # six in a row wins
    assert answer("INFO rule 2")[-1] == "7,7"  # a continuous game: still freestyle
    renju = answer("INFO rule 4")
    assert renju[0] == "renju" and MOVE.fullmatch(renju[-1]) and renju[-1] != "7,7"
    standard = answer("INFO rule 1")
    assert standard[0] == "standard" and MOVE.fullmatch(standard[-1])
    caro = answer("INFO rule 8")
    assert caro[0] == "caro" and caro[-1] == "7,7"  # an overline wins under caro
    refused = answer("INFO rule 4", "INFO rule 9")  # caro with exactly five: no rule of ours
    assert refused[0] == "renju" and any(line.startswith("MESSAGE INFO rule 9: no rule is numbered 9")
                                         and line.endswith("the rule stays renju") for line in refused)


def test_the_fallback_never_blocks_on_a_forbidden_point():
    # White's four on column 7 can only be blocked at 7,7, an overline for Black under renju:
    # the fallback must play another cell rather than an illegal block.
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(seed=0, max_playouts=30), out, FakeClock(0.001))
    converse(engine, out, "START 15", "INFO rule 4")
    stones = [(3, 7, 1), (4, 7, 1), (5, 7, 1), (6, 7, 1), (8, 7, 1), (2, 7, 2),
              (7, 3, 2), (7, 4, 2), (7, 5, 2), (7, 6, 2)]
    engine.position = Position(15, 15)
    for x, y, who in stones:
        engine.position.add(engine.position.move_of(x, y), who)
    board = engine.position.to_board(5, "renju")
    assert board.current_player == 1 and board.is_forbidden(7 * 15 + 7)
    move, how = engine._fallback_move(board)
    assert move != 7 * 15 + 7 and not board.is_forbidden(move), how


def test_a_model_brings_its_rule_and_another_rule_gets_a_message(tmp_path):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    path = str(tmp_path / "renju.npz")
    PolicyValueModel(NetSpec(9, 9, 5, "sizefree", 1, 8, ((9, 9),), rule="renju"), device="cpu").save(path)
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(model=path, seed=0, max_playouts=20, device="cpu", precision="fp32"),
                          out, FakeClock(0.001))
    assert converse(engine, out, "START 9")[-1] == "OK" and engine.rule == "renju"
    lines = converse(engine, out, "INFO rule 0", "BEGIN")
    assert engine.rule == "freestyle"
    assert any("playing freestyle with a model trained for renju" in line for line in lines)
    assert MOVE.fullmatch(lines[-1])
