"""engine:COMMAND: parsing, the protocol driver's faults and recoveries, and arena games against engines."""

import json
import os
import shlex
import subprocess
import sys

import pytest

from gomoku.game.board import Board
from gomoku.play import engine_player
from gomoku.play.arena.run import main as arena_main, run_arena
from gomoku.play.arena.settings import ArenaSettings
from gomoku.play.engine_player import (EngineConnection, EngineError, EnginePlayer, engine_argv, info_text,
                                       parse_engine_info)
from gomoku.search.player_specs import PlayerSpec, close_players, make_player, spec_text

pytestmark = pytest.mark.timeout(120)

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_engine.py")


def fake(mode: str = "ok") -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(FAKE)} {mode}"


def test_engine_info_reads_pairs_and_refuses_the_rest():
    assert parse_engine_info("timeout_turn 1000; MAX_NODE 5000;") == (("timeout_turn", "1000"), ("max_node", "5000"))
    assert parse_engine_info("") == ()
    assert info_text(parse_engine_info("a 1;b 2")) == "a 1;b 2"
    for bad in ("timeout_turn", "max node 5", "timeout_turn fast", "rule four", "1x 2"):
        with pytest.raises(EngineError, match="--engine-info"):
            parse_engine_info(bad)


def test_engine_spec_keeps_the_whole_command_line():
    spec = PlayerSpec.parse("engine:python -m gomoku.play.engine --model az:x.npz")
    assert spec.kind == "engine" and spec.command == "python -m gomoku.play.engine --model az:x.npz"
    assert spec_text(spec) == "engine:python -m gomoku.play.engine --model az:x.npz"
    assert str(spec.with_engine_info((("max_node", "10"),))) == "engine gomoku.play.engine (max_node 10)"
    for bad in ("engine:", "engine:  ", "engine:'unclosed"):
        with pytest.raises(ValueError, match="engine"):
            PlayerSpec.parse(bad)
    assert engine_argv("a 'b c'") == ["a", "b c"]


def play_one_game(command: str, info=(), size: int = 9):
    """A fake engine against itself through two players on one connection, as the lockstep plays."""
    board = Board(size, size, 5)
    models: dict = {}
    spec = PlayerSpec.parse(f"engine:{command}").with_engine_info(info)
    players = {1: make_player(spec, board, models=models), 2: make_player(spec, board, models=models)}
    try:
        while not board.game_over:
            move = players[board.current_player].choose(board).move
            if move is None:
                return board, players, None
            board.play(move)
        return board, players, board.winner
    finally:
        close_players(models)


def test_an_engine_plays_a_whole_game_through_the_protocol(tmp_path, monkeypatch):
    log = tmp_path / "lines"
    monkeypatch.setenv("FAKE_ENGINE_LOG", str(log))
    board, players, winner = play_one_game(fake(), (("timeout_turn", "2000"), ("max_node", "7")))
    assert winner in (1, 2) and not players[1].faults and not players[2].faults
    lines = log.read_text().splitlines()
    assert lines[:6] == ["START 9", "INFO timeout_turn 2000", "INFO timeout_match 0",
                         "INFO time_left 2147483647", "INFO rule 0", "INFO max_node 7"]
    assert "BEGIN" in lines and lines[-1] == "END"
    # One process plays both sides, so each request is the whole position.
    assert lines.count("BOARD") == len(board.history) - 1


def test_a_connection_sends_turn_when_it_can_and_restart_for_a_new_game(tmp_path, monkeypatch):
    log = tmp_path / "lines"
    monkeypatch.setenv("FAKE_ENGINE_LOG", str(log))
    connection = EngineConnection(fake(), (), 9, 9)
    try:
        board = Board(9, 9, 5)
        for _ in range(2):
            move, faults, _ = connection.ask(board)
            assert not faults
            board.play(move)
            board.play(next(m for m in board.legal_moves()))
        connection.ask(Board(9, 9, 5))
    finally:
        connection.close()
    lines = log.read_text().splitlines()
    assert lines[5:] == ["BEGIN", "TURN 1,0", "RESTART", "BEGIN", "END"]


def test_an_illegal_answer_forfeits_the_game():
    board, players, winner = play_one_game(fake("illegal"))
    assert winner is None and len(board.history) == 1
    assert players[2].faults == {"illegal": 1}
    assert "0,0" in players[2].fault_notes[0]


def test_a_dropped_command_is_a_hang_that_restarts_the_engine_not_a_loss(monkeypatch):
    monkeypatch.setattr(engine_player, "HANG_GRACE_S", 0.5)
    connection = EngineConnection(fake("drop"), (("timeout_turn", "1500"),), 9, 9)  # room for a slow first answer
    try:
        board = Board(9, 9, 5)
        move, faults, _ = connection.ask(board)
        assert not faults
        board.play(move)
        board.play(next(m for m in board.legal_moves()))
        # TURN comes 50 ms after the answer: dropped; the hang restarts the engine, which then
        # gets the whole position and answers it.
        move, faults, notes = connection.ask(board)
        assert faults == {"hang": 1} and "restarted" in notes[0]
        assert board.cells[move] == 0 and connection.restarts == 1
    finally:
        connection.close()


def test_a_crash_restarts_the_engine():
    board, players, winner = play_one_game(fake("crash"), size=6)
    assert winner in (0, 1, 2)
    assert players[1].faults.get("crash", 0) + players[2].faults.get("crash", 0) >= 1


def test_an_engine_that_never_answers_stops_the_match(monkeypatch):
    monkeypatch.setattr(engine_player, "HANG_GRACE_S", 0.2)
    connection = EngineConnection(fake("noanswer"), (("timeout_turn", "100"),), 9, 9)
    try:
        with pytest.raises(EngineError, match="no move after 2 restarts"):
            connection.ask(Board(9, 9, 5))
    finally:
        connection.close()


@pytest.mark.parametrize("command, message", [
    ("/nonexistent/pbrain-none", "cannot start the engine"),
    (f"{shlex.quote(sys.executable)} -c pass", "exited before it answered START 9"),
    (fake("refuse"), "refused START 9"),
])
def test_an_engine_that_cannot_start_is_a_one_line_error(command, message):
    with pytest.raises(EngineError, match=message):
        EngineConnection(command, (), 9, 9)


def test_info_rule_must_be_the_games():
    with pytest.raises(EngineError, match="not the game's rule"):
        EngineConnection(fake(), (("rule", "4"),), 9, 9, "freestyle")


def test_closed_engines_are_gone():
    board = Board(9, 9, 5)
    models: dict = {}
    player = make_player(PlayerSpec.parse(f"engine:{fake()}"), board, models=models)
    assert isinstance(player, EnginePlayer)
    process = player.connection.process.proc
    assert process.poll() is None
    close_players(models)
    assert process.poll() is not None


def test_the_arena_plays_an_engine_and_logs_faults(tmp_path):
    settings = ArenaSettings("heuristic:0", f"engine:{fake('illegal')}", games=2, size=(9, 9), n_in_row=5,
                             workers=1, engine_info="timeout_turn 1000")
    result = run_arena(settings)
    assert result.total.wins == 2  # the engine forfeits each game at its first move
    assert result.faults() == {"A": {}, "B": {"illegal": 2}}
    out = tmp_path / "games.jsonl"
    from gomoku.play.arena.report import format_report, write_games
    assert "faults of B: 2 illegal" in format_report(result)
    write_games(str(out), result)
    game = json.loads(out.read_text().splitlines()[0])
    assert game["faults"] == {"B": {"illegal": 1}} and game["fault_notes"]


def test_two_engines_at_two_budgets_each_get_their_info_and_the_games_say_whose(tmp_path, monkeypatch):
    log = tmp_path / "engine.log"
    monkeypatch.setenv("FAKE_ENGINE_LOG", str(log))
    settings = ArenaSettings(f"engine:{fake()}", f"engine:{fake()}", games=2, size=(9, 9), n_in_row=5,
                             workers=1, engine_info="timeout_turn 2000;max_node 7",
                             engine_info_b="timeout_turn 2000;max_node 9")
    result = run_arena(settings)
    lines = log.read_text().splitlines()
    assert "INFO max_node 7" in lines and "INFO max_node 9" in lines
    from gomoku.play.arena.report import engine_info_of
    for game in result.game_lines():
        assert game["engine_info"] == {"A": "timeout_turn 2000;max_node 7", "B": "timeout_turn 2000;max_node 9"}
        black_is_a = game["colours"]["A"] == "black"
        assert engine_info_of(game, "1").endswith("7" if black_is_a else "9")
        assert engine_info_of(game, "2").endswith("9" if black_is_a else "7")
    assert result.summary()["engine_info_b"] == "timeout_turn 2000;max_node 9"
    shared = run_arena(ArenaSettings("heuristic:0", f"engine:{fake()}", games=2, size=(9, 9), n_in_row=5,
                                     workers=1, engine_info="timeout_turn 2000"))
    assert all(g["engine_info"] == "timeout_turn 2000" for g in shared.game_lines())
    assert "engine_info_b" not in shared.summary()


@pytest.mark.parametrize("args, message", [
    (["--b", "engine:/nonexistent/pbrain-none"], "cannot start the engine '/nonexistent/pbrain-none'"),
    (["--b", "engine:x", "--engine-info", "max_node"], "--engine-info: cannot read 'max_node'"),
    (["--b", "engine:x", "--engine-info-b", "max_node 1;x"], "--engine-info: cannot read 'x'"),
    (["--b", "engine:'x"], "cannot read the engine command"),
])
def test_the_arena_gives_one_line_for_bad_engine_input(args, message, capsys):
    assert arena_main(["--a", "heuristic:0", "--size", "9x9", "--games", "2", "--workers", "1"] + args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.timeout(300)  # starts Paddle: slow on a loaded machine
def test_pbrain_gomokuzero_plays_as_an_engine_player():
    """The project's own engine, with its heuristic, against the heuristic in the arena."""
    command = f"{shlex.quote(sys.executable)} -m gomoku.play.engine --heuristic 0 --quiet"
    result = run_arena(ArenaSettings("heuristic:0", f"engine:{command}", games=2, size=(9, 9), n_in_row=5,
                                     workers=1, engine_info="timeout_turn 5000"))
    assert result.total.games == 2 and result.faults() == {"A": {}, "B": {}}


@pytest.mark.timeout(300)  # starts Paddle: slow on a loaded machine
def test_the_trainer_evaluates_against_an_engine(tmp_path):
    from gomoku.train.pipeline import TrainPipeline
    from tests.helpers import tiny_config

    config = tiny_config(width=9, height=9, n_in_row=5, eval_opponent=f"engine:{fake('illegal')}",
                         engine_info="timeout_turn 1000")
    pipeline = TrainPipeline(config, str(tmp_path / "run"), log=lambda s: None)
    try:
        record = pipeline.evaluate()
    finally:
        pipeline.actors.close()
    assert record["opponent"] == f"engine:{fake('illegal')}" and record["engine_info"] == "timeout_turn 1000"
    assert record["wins"] == 2 and record["engine_faults"] == [{2: {"illegal": 1}}, {1: {"illegal": 1}}]
    with pytest.raises(ValueError, match="engine:COMMAND needs a command line"):
        tiny_config(eval_opponent="engine: ").validate()


def test_a_dropped_board_answered_with_errors_is_sent_again_not_a_forfeit():
    board, players, winner = play_one_game(fake("droperror"), size=6)
    faults = [players[1].faults, players[2].faults]
    assert winner in (0, 1, 2) and len(board.history) >= 9
    assert sum(f.get("error", 0) for f in faults) >= 1 and not any("illegal" in f for f in faults)


def test_an_engine_dies_with_the_process_that_started_it():
    """Even one that never reads its input again, so that the end of its pipe cannot stop it."""
    import signal
    import time

    code = ("import sys, time\n"
            "from gomoku.play.engine_player import EngineConnection\n"
            f"c = EngineConnection({fake('deaf')!r}, (), 9, 9)\n"
            "print(c.process.proc.pid, flush=True)\n"
            "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=os.path.dirname(os.path.dirname(FAKE)))
    try:
        engine_pid = int(parent.stdout.readline())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(engine_pid, 0)
            except ProcessLookupError:
                return
            with open(f"/proc/{engine_pid}/stat") as f:  # a zombie waiting for init counts as gone
                if f.read().split(")")[-1].split()[0] == "Z":
                    return
            time.sleep(0.1)
        pytest.fail(f"the engine {engine_pid} outlived its parent")
    finally:
        if parent.poll() is None:
            parent.kill()


@pytest.mark.timeout(300)  # starts Paddle: slow on a loaded machine
def test_the_trainer_refuses_an_engine_that_cannot_start_before_it_trains(tmp_path, capsys):
    from gomoku.train.cli import main as train_main

    code = train_main(["--preset", "6x6x4", "--run-dir", str(tmp_path / "run"), "--iterations", "1",
                       "--workers", "1", "--device", "cpu", "--eval-opponent", "engine:/nonexistent/pbrain-none"])
    assert code == 2
    assert "cannot start the engine '/nonexistent/pbrain-none'" in capsys.readouterr().err
    assert not (tmp_path / "run" / "checkpoint.pkl").exists()


def test_play_gives_white_its_own_engine_info():
    from gomoku.play.match import setup_match

    match = setup_match(black=f"engine:{fake()}", white=f"engine:{fake()}", size=(9, 9), n_in_row=5,
                        engine_info="timeout_turn 2000;max_node 7", engine_info_white="timeout_turn 2000;max_node 9")
    try:
        assert info_text(match.specs[1].engine_info) == "timeout_turn 2000;max_node 7"
        assert info_text(match.specs[2].engine_info) == "timeout_turn 2000;max_node 9"
    finally:
        match.close()
    shared = setup_match(black=f"engine:{fake()}", size=(9, 9), n_in_row=5, engine_info="max_node 7")
    try:
        assert info_text(shared.specs[1].engine_info) == "max_node 7"
    finally:
        shared.close()
    with pytest.raises(EngineError, match="cannot read 'max_node'"):
        setup_match(black=f"engine:{fake()}", size=(9, 9), n_in_row=5, engine_info_white="max_node")
