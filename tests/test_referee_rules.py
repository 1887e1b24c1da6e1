"""The referee under the rules: it tells both engines the rule (caro too), checks every move by
it, and calls a forbidden Black move under renju a fault."""

import os
import subprocess
import sys
import textwrap

import pytest

from gomoku.game.board import Board
from devtools.engine_check.referee import FAULTS, main, run_match

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# On 9x9 under renju these stones leave Black to move with e5 (4,4) a double three
# (f5 g5 across, e6 e7 up); White's stones sit harmlessly on row 1.
DOUBLE_THREE_OPENING = ["f5", "a1", "g5", "c1", "e6", "e1", "e7", "g1"]

# An engine that answers 4,4 (e5) to every move request, whatever the position.
STUBBORN_ENGINE = textwrap.dedent("""\
    import sys

    for line in sys.stdin:
        word = line.split()[0].upper() if line.split() else ""
        if word in ("START", "RECTSTART"):
            print("OK", flush=True)
        elif word == "BOARD":
            for data in sys.stdin:
                if data.strip().upper() == "DONE":
                    break
            print("4,4", flush=True)
        elif word in ("BEGIN", "TURN"):
            print("4,4", flush=True)
        elif word == "END":
            break
    """)


@pytest.fixture
def engines_find_the_package(monkeypatch):
    """Engines run as ``python -m gomoku.play.engine``: make the package importable from any folder."""
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", ROOT + (os.pathsep + path if path else ""))


def heuristic(seed: int, level: int = 1) -> list[str]:
    return [sys.executable, "-m", "gomoku.play.engine", "--heuristic", str(level), "--seed", str(seed)]


def sent(result, name: str) -> list[str]:
    return [line.split(" > ", 1)[1] for line in result.transcript if line.startswith(f"{name} > ")]


def check_game(result, width: int, height: int, rule: str) -> Board:
    """Asserts a fault-free game with a result, and replays it under the rule (every move checked)."""
    assert not any(result.faults.values()), (result.reason, result.transcript[-12:])
    assert result.winner in (0, 1, 2), result.reason
    board = Board.from_moves(width, height, 5, result.moves, rule=rule)
    assert board.game_over and board.winner == result.winner, result.reason
    return board


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seeds", [(1, 2), (3, 4), (5, 6)])
def test_renju_games_between_two_engines_have_no_fault_and_no_forbidden_move(seeds, engines_find_the_package):
    result = run_match((heuristic(seeds[0]), heuristic(seeds[1])), 15, 15, timeout_turn_ms=5000,
                       stderr=subprocess.DEVNULL, rule="renju")
    for name in ("[1]", "[2]"):
        assert "INFO rule 4" in sent(result, name)
    assert "BEGIN" in sent(result, "[1]")  # the first engine is Black
    assert "BEGIN" not in sent(result, "[2]")
    board = check_game(result, 15, 15, "renju")
    # Replaying checked each Black move against the forbidden points; check them once more by hand.
    replay = Board(15, 15, 5, rule="renju")
    for move in result.moves:
        assert replay.forbidden_reason(move) is None
        replay.do_move(move)
    if board.winner == 1:
        assert result.reason == "[1] has exactly 5 in a row"


@pytest.mark.timeout(240)
def test_a_standard_game_between_two_engines(engines_find_the_package):
    result = run_match((heuristic(7), heuristic(8)), 9, 9, timeout_turn_ms=5000, stderr=subprocess.DEVNULL,
                       rule="standard")
    assert all("INFO rule 1" in sent(result, name) for name in ("[1]", "[2]"))
    board = check_game(result, 9, 9, "standard")
    if board.winner:
        assert result.reason.endswith("has exactly 5 in a row")


@pytest.mark.timeout(120)
def test_a_caro_game_between_two_engines(engines_find_the_package):
    result = run_match((heuristic(11), heuristic(12)), 9, 9, timeout_turn_ms=5000, stderr=subprocess.DEVNULL,
                       rule="caro")
    assert all("INFO rule 8" in sent(result, name) for name in ("[1]", "[2]"))
    check_game(result, 9, 9, "caro")


@pytest.mark.timeout(120)
def test_freestyle_is_still_told_as_rule_0(engines_find_the_package):
    result = run_match((heuristic(9), heuristic(10)), 9, 9, timeout_turn_ms=5000, stderr=subprocess.DEVNULL)
    assert all("INFO rule 0" in sent(result, name) for name in ("[1]", "[2]"))
    check_game(result, 9, 9, "freestyle")


@pytest.mark.timeout(60)
def test_a_forbidden_black_move_is_a_fault_that_loses(tmp_path):
    script = tmp_path / "stubborn.py"
    script.write_text(STUBBORN_ENGINE)
    stubborn = [sys.executable, str(script)]
    board = Board(9, 9, 5, rule="renju")
    opening = [board.parse_move(label) for label in DOUBLE_THREE_OPENING]
    result = run_match((stubborn, stubborn), 9, 9, timeout_turn_ms=5000, opening=opening, rule="renju")
    assert result.winner == 2
    assert result.reason == "[1] lost: forbidden move: double three at '4,4'"
    assert result.faults == {**dict.fromkeys(FAULTS, 0), "illegal": 1}
    assert result.moves == opening  # the forbidden stone is not on the referee's board
    assert sent(result, "[1]")[sent(result, "[1]").index("BOARD") - 1] == "INFO rule 4"
    # Under freestyle the same point is an ordinary move: the fault is White's, on the taken cell.
    freestyle = run_match((stubborn, stubborn), 9, 9, timeout_turn_ms=5000, opening=opening)
    assert freestyle.moves == opening + [board.parse_move("e5")]
    assert freestyle.winner == 1 and "illegal move '4,4'" in freestyle.reason


def test_the_cli_refuses_renju_without_five_in_a_row(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["x", "y", "--rule", "renju", "--n-in-row", "4"])
    assert exit_info.value.code == 2
    assert "renju is played with five in a row" in capsys.readouterr().err
