"""The Match that play.py drives (undo, seats, status), setup_match, and play.py's setup errors."""

import os
import subprocess
import sys

import pytest

from gomoku.game.board import Board, IllegalMoveError
from gomoku.net.shipped import shipped_model_for
from gomoku.play.match import Match, MissingModelError, setup_match
from gomoku.game.gamefile import GameRecord, save_game
from gomoku.search.options import SearchOptions
from gomoku.search.player_specs import PlayerSpec
from tests.boards import BLACK_WINS, board_after

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def human_match(labels=(), white="human"):
    board = board_after(labels)
    return Match(board, {1: PlayerSpec("human"), 2: PlayerSpec.parse(white)}, seed=0)


# ------------------------------------------------------------------ match
def test_undo_takes_back_the_human_move_and_the_reply():
    match = human_match(white="pure:20")
    match.play(match.board.parse_move("c3"))
    match.play(match.ai_to_move.get_action(match.board))
    assert match.undo()[-1] == match.board.parse_move("c3")
    assert match.board.history == [] and match.human_to_move


def test_undo_after_a_win_takes_back_the_winning_move():
    match = human_match(BLACK_WINS)
    assert match.board.winner == 1
    assert match.undo() == [match.board.parse_move("d4")]
    assert match.board.winner is None and match.board.current_player == 1


def test_undo_needs_a_human_move():
    board = Board(6, 6, 4)
    match = Match(board, {1: PlayerSpec.parse("pure:20"), 2: PlayerSpec("human")})
    with pytest.raises(IllegalMoveError):
        match.undo()
    board.do_move(0)  # the AI's opening
    with pytest.raises(IllegalMoveError, match="no move of yours"):
        match.undo()
    assert board.history == [0]


def test_undo_with_two_ais_takes_back_one_move():
    board = board_after(["a1", "b1", "c1"])
    match = Match(board, {1: PlayerSpec.parse("pure:20"), 2: PlayerSpec.parse("pure:20")})
    assert match.undo() == [board.move_at(0, 2)]
    assert len(board.history) == 2


def test_swap_cycle_and_status():
    match = human_match(white="pure:20")
    assert match.status() == "Black (human) to move"
    match.swap_sides()
    assert match.specs[1].kind == "pure" and match.is_human(2)
    assert match.ai_to_move is match.players[1]
    assert [c.kind for c in match.choices] == ["human", "pure", "heuristic"]  # no model: no az, no policy
    assert match.cycle_seat(1).kind == "heuristic"
    assert match.cycle_seat(1).kind == "human"
    assert match.cycle_seat(1).kind == "pure"
    finished = human_match(BLACK_WINS)
    assert finished.status() == "Black (human) wins"
    assert finished.record().players == {1: "human", 2: "human"}


# ------------------------------------------------------------------ setup
def test_setup_without_the_default_model_says_how_to_train_one(tmp_path, monkeypatch):
    from gomoku.net import shipped

    monkeypatch.setattr(shipped, "DEFAULT_MODEL", str(tmp_path / "models" / "gomoku_8x8_5.npz"))
    with pytest.raises(MissingModelError, match=r"python train.py.*python play.py --model runs/<name>"):
        setup_match()


def test_setup_for_a_board_without_a_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    match = setup_match(size=(7, 7), n_in_row=4, playouts=30, first="ai")  # no shipped model for it
    assert (match.board.width, match.board.height, match.board.n_in_row) == (7, 7, 4)
    assert str(match.specs[1]) == "pure MCTS 30" and match.is_human(2)
    match = setup_match(black="pure:20", white="pure:10")
    assert match.board.width == 8 and match.specs[2].playouts == 10
    with pytest.raises(ValueError, match="unknown player"):
        setup_match(black="robot", size=(6, 6), n_in_row=4)


def test_a_board_with_a_shipped_model_gets_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for size, n_in_row, name in (((6, 6), 4, "gomoku_6x6_4.npz"), ((15, 15), None, "gomoku_15x15_5.npz")):
        match = setup_match(size=size, n_in_row=n_in_row, playouts=30, device="cpu")
        assert match.specs[2].kind == "gumbel" and os.path.basename(match.specs[2].model) == name
        assert (match.board.width, match.board.height) == size
    match = setup_match(size=(15, 15), rule="renju", playouts=30, device="cpu")  # play.py --rule renju --size 15x15
    assert os.path.basename(match.specs[2].model) == "gomoku_15x15_renju.npz" and match.board.rule == "renju"
    assert shipped_model_for(15, 15, 5, "standard") is None  # no standard model is shipped
    assert shipped_model_for(12, 12, 5) is None  # the size-free model did not train on 12x12


def test_setup_continues_a_loaded_game(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = str(tmp_path / "g.json")
    save_game(path, GameRecord.from_board(board_after(BLACK_WINS[:3]), {1: "pure:20", 2: "human"}))
    match = setup_match(load=path)
    assert len(match.board.history) == 3 and match.specs[1].kind == "pure" and match.is_human(2)
    match = setup_match(load=path, white="pure:30")
    assert match.specs[2].playouts == 30
    with pytest.raises(ValueError, match="cannot change a loaded game"):
        setup_match(load=path, size=(8, 8))


def test_setup_reads_the_board_from_the_model(tmp_path, monkeypatch):
    from gomoku.net.modelfile import ModelFileError
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    monkeypatch.chdir(tmp_path)
    model = str(tmp_path / "m.npz")
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(model)
    match = setup_match(model=model, playouts=20, device="cpu")
    assert (match.board.width, match.board.n_in_row) == (6, 4)
    assert str(match.specs[2]) == "Gumbel 20"
    assert [c.kind for c in match.choices] == ["human", "az", "gumbel", "pure", "policy", "heuristic"]
    assert str(setup_match(model=model, playouts=20, device="cpu", root_search="puct").specs[2]) == "AlphaZero 20"
    with pytest.raises(ValueError, match="games without a model"):
        setup_match(model=model, size=(8, 8), device="cpu")
    watched = setup_match(model=model, black="pure:20", white="human", device="cpu")
    assert watched.board.width == 6  # the model sets the board even before anyone plays it
    assert [c.kind for c in watched.choices] == ["human", "az", "gumbel", "pure", "policy", "heuristic"]
    options = SearchOptions(fpu=0.25, win_check=True)
    sharp = setup_match(model=model, playouts=20, device="cpu", search=options, root_search="puct")
    assert str(sharp.specs[2]) == "AlphaZero 20 (fpu 0.25, win check)"
    gumbel = setup_match(model=model, playouts=20, device="cpu", search=options)
    assert str(gumbel.specs[2]) == "Gumbel 20 (win check)"  # the options Gumbel's search takes
    assert sharp.choices[1].search == options  # a side switched to az gets them too
    search = sharp.players[2].mcts
    assert search.win_check and search.fpu == 0.25 and not search.solve
    solver = setup_match(model=model, playouts=20, device="cpu", search=SearchOptions(solve=True), root_search="puct")
    assert str(solver.specs[2]) == "AlphaZero 20 (solver)" and solver.players[2].mcts.solve
    path = str(tmp_path / "big.json")
    save_game(path, GameRecord.from_board(Board(8, 8, 5), {1: "human", 2: f"az:{model}:20"}))
    with pytest.raises(ModelFileError, match="this board is 8x8"):
        setup_match(load=path, device="cpu")


# ---------------------------------------------------------- the script
def run_play(*args, cwd=ROOT):
    return subprocess.run([sys.executable, os.path.join(ROOT, "play.py"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, input="")


def test_play_script_errors_are_one_clear_line(tmp_path):
    for args in (["--black", "robot", "--size", "6x6"], ["--load", str(tmp_path / "nope.json")],
                 ["--model", str(tmp_path / "nope.npz")]):
        result = run_play("--text", *args, cwd=tmp_path)
        assert result.returncode == 1, args
        assert result.stderr.startswith("play.py: error:") and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    bad_flag = run_play("--size", "big")
    assert bad_flag.returncode == 2 and "not a board size" in bad_flag.stderr


def test_a_board_size_flag_says_what_range_a_side_has():
    import argparse

    from gomoku.util import board_size_arg

    assert board_size_arg("9x7") == (9, 7) and board_size_arg("15") == (15, 15) and board_size_arg("26x1") == (26, 1)
    for text, why in (("0x0", "is too small"), ("8x0", "is too small"), ("27x8", "is too large"), ("big", "is not a board size")):
        with pytest.raises(argparse.ArgumentTypeError) as caught:
            board_size_arg(text)
        assert f"{text!r} {why}" in str(caught.value)
        assert "each side from 1 to 26 points and no shorter than the stones in a row (--n-in-row)" in str(caught.value)
