"""The text mode, driven through text streams in-process and through stdin in a subprocess."""

import io
import os
import subprocess
import sys

from gomoku.game.board import Board
from gomoku.play.match import Match
from gomoku.game.gamefile import load_game
from gomoku.search.players import PlayerSpec
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
        [sys.executable, os.path.join(ROOT, "play.py"), "--text", "--size", "6x6", "--n-in-row", "4",
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
