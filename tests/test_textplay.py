"""The text mode, driven through text streams in-process and through stdin in a subprocess."""

import io
import os
import subprocess
import sys

from gomoku.game.board import Board
from gomoku.play.match import Match
from gomoku.game.gamefile import load_game
from gomoku.search.player_specs import PlayerSpec
from gomoku.play.textplay import play_text
from tests.boards import BLACK_WINS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_match(black="human", white="human", seed=0):
    return Match(Board(6, 6, 4), {1: PlayerSpec.parse(black), 2: PlayerSpec.parse(white)}, seed=seed)


def drive(match, lines, **kwargs):
    out = io.StringIO()
    code = play_text(match, io.StringIO("".join(line + "\n" for line in lines)), out, **kwargs)
    return code, out.getvalue()


def test_a_game_played_to_the_end_shows_the_result():
    match = make_match()
    code, out = drive(match, BLACK_WINS)
    assert code == 0
    assert match.board.winner == 1
    assert "Black (human) wins." in out
    assert "Winning line: a1 b2 c3 d4" in out
    assert out.rstrip().endswith("End of input: goodbye.")


def test_bad_input_gets_a_message_and_changes_nothing():
    match = make_match()
    bad = ["", "   ", "hello", "z9", "9,9", "a0", "b 2 3", "save a b c", "c3", "c3", "2,2"]
    code, out = drive(match, bad)
    assert code == 0
    assert match.board.history == [match.board.parse_move("c3")]  # only the one good move
    assert "Type a move like" in out
    assert "cannot read 'hello' as a move" in out
    assert "z9 is off the board: columns a to f, rows 1 to 6" in out
    assert "9,9 is off the board" in out
    assert "a0 is off the board" in out
    assert "c3 is taken: pick an empty point." in out  # "2,2" is c3 too


def test_commands_undo_new_swap_save_help(tmp_path):
    match = make_match()
    path = tmp_path / "saved.json"
    code, out = drive(match, ["help", "a1", "b1", "undo", "board", f"save {path}", "swap", "new", "quit",
                              "a2"])
    assert code == 0
    assert "Commands:" in out
    assert "Took back b1." in out  # two humans: undo takes back one move
    assert load_game(str(path)).moves == [0]
    assert "Swapped sides" in out and "New game." in out and out.rstrip().endswith("Goodbye.")
    assert match.board.history == []  # quit came before a2


def test_after_the_game_moves_are_refused_but_undo_works():
    match = make_match()
    code, out = drive(match, BLACK_WINS + ["", "e5", "undo"])
    assert out.count("The game is over (Black (human) wins)") == 2  # the empty line and e5
    assert "Type a move like" not in out
    assert "Took back d4." in out
    assert match.board.winner is None and len(match.board.history) == 6


def test_against_pure_mcts_undo_takes_back_the_reply_too():
    match = make_match(white="pure:20")
    code, out = drive(match, ["c3", "undo"])
    assert "White (pure MCTS 20) is thinking" in out and "White plays" in out
    assert "Took back c3, " in out
    assert match.board.history == []


def test_two_ais_play_a_whole_game_without_input():
    match = make_match(black="pure:20", white="pure:20", seed=3)
    code, out = drive(match, [])
    assert code == 0 and match.board.game_over
    assert match.status() in out


def test_unreadable_save_path_is_a_message(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    match = make_match()
    code, out = drive(match, ["a1", f"save {blocker}/x.json"])
    assert code == 0 and "Could not save" in out


def test_play_script_text_mode_through_stdin(tmp_path):
    script = "c3\nnonsense\nc3\nundo\nd4\nquit\n"
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "play.py"), "--text", "--size", "7x7", "--n-in-row", "4",
         "--playouts", "20", "--seed", "1"],
        cwd=tmp_path, input=script, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "White (pure MCTS 20) is thinking" in result.stdout
    assert "cannot read 'nonsense'" in result.stdout
    assert "Goodbye." in result.stdout and result.stderr == ""


def test_no_display_falls_back_to_the_terminal(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "play.py"), "--black", "human", "--white", "human",
         "--size", "6x6", "--n-in-row", "4"],
        cwd=tmp_path, input="", capture_output=True, text=True, timeout=60, env=env)
    if sys.platform.startswith("linux"):
        assert result.returncode == 0, result.stderr
        assert "No display" in result.stdout and "End of input" in result.stdout


def test_ctrl_c_during_the_ai_search_stops_between_playouts_not_inside_the_evaluator():
    # With a net the evaluator is a Paddle call, where a KeyboardInterrupt comes out as a
    # SystemError or hangs the process; the signal must wait for the end of that call.
    import signal

    import pytest

    match = make_match(black="pure:50")
    player = match.players[1]
    rollouts = player.evaluator
    calls = {"started": 0, "finished": 0}

    class SignalledEvaluator:
        def evaluate(self, boards):
            calls["started"] += 1
            if calls["started"] == 5:
                signal.raise_signal(signal.SIGINT)  # the user's Ctrl-C, in the middle of a call
            result = rollouts.evaluate(boards)
            calls["finished"] += 1
            return result

    player.evaluator = SignalledEvaluator()
    before = signal.getsignal(signal.SIGINT)  # Python's handler, or SIG_IGN under nohup
    with pytest.raises(KeyboardInterrupt):  # play.py turns it into "Interrupted.", exit code 130
        drive(match, [])
    assert calls == {"started": 5, "finished": 5}
    assert match.board.history == []
    assert signal.getsignal(signal.SIGINT) is before


# ------------------------------------------------------------------- rules
# On 9x9 under renju these moves leave Black to move with e5 a double three (f5 g5 across,
# e6 e7 up); White's stones sit harmlessly on row 1.
RENJU_DOUBLE_THREE = ["f5", "a1", "g5", "c1", "e6", "e1", "e7", "g1"]


def renju_match(black="human", white="human"):
    return Match(Board(9, 9, 5, rule="renju"), {1: PlayerSpec.parse(black), 2: PlayerSpec.parse(white)}, seed=0)


def test_a_forbidden_move_is_refused_with_its_reason_and_the_prompt_asks_again(tmp_path):
    match = renju_match()
    path = tmp_path / "renju.json"
    code, out = drive(match, RENJU_DOUBLE_THREE + ["e5", "d4", f"save {path}"])
    board = match.board
    assert code == 0
    assert out.startswith("Gomoku Zero: 9x9 board, 5 in a row, renju.")
    assert "e5 is forbidden for Black under renju (double three): pick another point." in out
    assert board.history == [board.parse_move(m) for m in RENJU_DOUBLE_THREE + ["d4"]]  # e5 changed nothing
    after_refusal = out.split("pick another point.", 1)[1]
    assert after_refusal.startswith("\nBlack (X) to move > d4")  # asked again, and d4 was played
    # Before e5 was typed the board marked it and the line under the board named it.
    drawing = out.split("White plays g1.", 1)[1]
    assert " 5 . . . . # X X . ." in drawing
    assert "#: forbidden for Black under renju: e5 (double three)" in drawing
    assert load_game(str(path)).rule == "renju"  # the saved game keeps its rule


def test_forbidden_points_are_not_marked_for_an_ai_black_or_under_freestyle():
    match = renju_match(black="heuristic:1")
    code, out = drive(match, ["a9"])  # White's first move after the heuristic's opening
    assert code == 0 and "#" not in out
    freestyle = Match(Board(9, 9, 5), {1: PlayerSpec("human"), 2: PlayerSpec("human")})
    code, out = drive(freestyle, RENJU_DOUBLE_THREE + ["e5"])
    assert freestyle.board.cells[freestyle.board.parse_move("e5")] == 1  # freestyle: e5 is a move
    assert "#" not in out and "renju" not in out


def _save_model(path, rule):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    PolicyValueModel(NetSpec(9, 9, 5, rule=rule), device="cpu").save(str(path))
    return str(path)


def test_play_takes_the_models_rule_and_refuses_a_model_of_another_rule(tmp_path, capsys):
    from gomoku.play.cli import main
    from gomoku.play.match import setup_match

    freestyle = _save_model(tmp_path / "freestyle.npz", "freestyle")
    renju = _save_model(tmp_path / "renju.npz", "renju")
    assert setup_match(model=renju, playouts=5, device="cpu").board.rule == "renju"
    assert setup_match(model=freestyle, playouts=5, device="cpu").board.rule == "freestyle"
    assert setup_match(size=(9, 9), rule="standard").board.rule == "standard"
    assert setup_match(size=(9, 9)).board.rule == "freestyle"
    code = main(["--model", freestyle, "--rule", "renju", "--text", "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "a model trained for freestyle, but this game is played under renju" in err
    code = main(["--model", renju, "--black", "az", "--white", f"az:{freestyle}:5", "--text", "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 1 and "a model trained for freestyle, but this game is played under renju" in err
    code = main(["--size", "6x6", "--n-in-row", "4", "--rule", "renju", "--text"])
    assert code == 1 and "renju is played with five in a row" in capsys.readouterr().err


def test_a_loaded_game_keeps_its_rule(tmp_path):
    import pytest

    from gomoku.game.gamefile import GameRecord, save_game
    from gomoku.play.match import setup_match

    board = Board(9, 9, 5, rule="renju")
    for label in RENJU_DOUBLE_THREE:
        board.do_move(board.parse_move(label))
    path = str(tmp_path / "g.json")
    save_game(path, GameRecord.from_board(board, {1: "human", 2: "human"}))
    match = setup_match(load=path)
    assert match.board.rule == "renju" and match.board.forbidden_moves() == [board.parse_move("e5")]
    assert setup_match(load=path, rule="renju").board.rule == "renju"
    with pytest.raises(ValueError, match="cannot change a loaded game's rule"):
        setup_match(load=path, rule="freestyle")


def test_play_script_renju_text_mode_through_stdin(tmp_path):
    script = "\n".join(RENJU_DOUBLE_THREE + ["e5", "quit"]) + "\n"
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "play.py"), "--text", "--size", "9x9", "--rule", "renju",
         "--black", "human", "--white", "human"],
        cwd=tmp_path, input=script, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "9x9 board, 5 in a row, renju" in result.stdout
    assert "e5 is forbidden for Black under renju (double three)" in result.stdout
    assert "Goodbye." in result.stdout and result.stderr == ""


def test_hint_and_analyze_print_the_ais_view_and_play_nothing():
    match = make_match(white="pure:60")
    code, out = drive(match, ["c3", "hint", "analyze", "quit"])
    assert code == 0 and len(match.board.history) == 2  # c3 and the AI's reply only
    assert "Hint: play " in out and "Black's win rate " in out
    assert " #  move  visits  share  win rate  prior" in out
    assert "Black would play " in out
    # The analysed board numbers the top moves on empty points.
    table = out[out.index("analyze"):]
    assert "\n 6 " in table and " 1 " in table


def test_hint_between_two_humans_asks_the_first_ai_offered_and_refuses_after_the_game():
    match = make_match()  # human against human: the choices offer pure MCTS first
    match.choices = [PlayerSpec.parse("human"), PlayerSpec.parse("pure:30")]
    code, out = drive(match, ["hint"] + BLACK_WINS + ["hint"])
    assert "pure MCTS 30 is thinking" in out and "Hint: play " in out
    assert out.count("Hint: play ") == 1
    assert "The game is over" in out
