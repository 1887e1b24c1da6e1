import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")),
                                reason="the exact solver needs a C compiler")


def solve(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "exact_solver", "solve_openings.py"), *args],
                          capture_output=True, text=True, timeout=120)


def test_tic_tac_toe_is_a_draw_and_an_edge_reply_loses():
    empty = solve("--position", "", "--size", "3x3", "--n-in-row", "3", "--plies", "9")
    assert empty.returncode == 0, empty.stderr
    assert "Black to move not decided within 9 plies" in empty.stdout  # 9 plies fill the board: a draw
    edge = solve("--position", "b2,b1", "--size", "3x3", "--n-in-row", "3", "--plies", "9")
    assert "Black to move wins within 5 plies" in edge.stdout


def test_an_open_three_loses_for_the_side_that_must_block_it():
    # Black c3 d3 e3 with b3 and f3 free; White (to move) can block only one end.
    result = solve("--position", "c3,a1,d3,a6,e3", "--plies", "5")
    assert "White to move loses within 3 plies" in result.stdout, result.stdout + result.stderr


def test_openings_come_from_an_arena_games_file(tmp_path):
    games = tmp_path / "games.jsonl"
    lines = [{"width": 6, "height": 6, "n_in_row": 4, "opening": opening}
             for opening in (["e3", "c4"], ["e3", "c4"], ["b2", "c2"])]
    games.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = solve(str(games), "--plies", "7")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("Black to move wins within 7 plies") == 2
    assert "2 of 2 openings are forced wins for the side to move" in result.stdout


def test_bad_input_is_a_clear_error(tmp_path):
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path / "no_moves.jsonl").write_text('{"width": 6, "height": 6, "n_in_row": 4, "opening": []}\n')
    (tmp_path / "wrong_result.jsonl").write_text(json.dumps({  # c3 d3 e3 is no win at four in a row
        "format": "gomoku-zero-game/1", "width": 6, "height": 6, "n_in_row": 4, "moves": ["c3", "a1", "d3", "a6", "e3"],
        "opening": [], "players": {}, "result": 1}) + "\n")
    for args, message in [((str(tmp_path / "bad.jsonl"),), "is not an arena games file"),
                          ((str(tmp_path / "no_moves.jsonl"), "--missed-wins"), "is not an arena game"),
                          ((str(tmp_path / "wrong_result.jsonl"), "--missed-wins"), "its moves give an unfinished game"),
                          (("--position", "c3,c3"), "occupied"),
                          (("--position", "", "--size", "9x9"), "more than the solver's 64 cells")]:
        result = solve(*args)
        assert result.returncode == 1 and message in result.stderr, result.stderr


def test_missed_wins_lists_the_forced_wins_of_a_side_that_did_not_win(tmp_path):
    # After c3 a1 d3 a6 Black wins within 3 plies (e3 makes an open three); after e3 f6 it
    # can complete four at once. Playing f1 there leaves the game unfinished, both wins
    # missed; playing f3 wins it, and no win is missed.
    start = ["c3", "a1", "d3", "a6", "e3", "f6"]
    players = {"1": "az:black.npz:400", "2": "pure:5000"}
    for last, result, missed in [("f1", None, 2), ("f3", 1, 0)]:
        moves = start + [last]
        games = tmp_path / f"games{result}.jsonl"
        games.write_text(json.dumps({"format": "gomoku-zero-game/1", "width": 6, "height": 6, "n_in_row": 4,
                                     "start_player": 1, "moves": moves, "opening": moves[:2],
                                     "players": players, "result": result, "game": 0}) + "\n")
        scan = solve(str(games), "--missed-wins", "--plies", "3")
        assert scan.returncode == 0, scan.stderr
        assert "5 positions in 1 games; 2 were forced wins within 3 plies" in scan.stdout, scan.stdout
        lines = [line for line in scan.stdout.splitlines() if "could force a win" in line]
        assert len(lines) == missed
        if missed:
            assert lines[0].strip() == "move 5: Black (az:black.npz:400) could force a win within 3 plies and played e3"
            assert "move 7: Black" in lines[1] and "played f1" in lines[1]
            assert "missed (that side did not win the game): 2 by az:black.npz:400" in scan.stdout
        else:
            assert "missed (that side did not win the game): none" in scan.stdout
    hurried = solve(str(games), "--missed-wins", "--plies", "3", "--seconds", "0.000001")  # no solve finishes
    assert "5 positions in 1 games (5 not finished in 1e-06 s); 0 were forced wins" in hurried.stdout, hurried.stdout
    assert "--missed-wins needs an arena games file" in solve("--missed-wins", "--position", "").stderr
