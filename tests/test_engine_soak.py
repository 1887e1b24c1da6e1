"""The engine soak (``devtools.engine_check.soak``): its settings generator, its table, a short soak and Ctrl-C.

The games are few and small (9x9, which the shipped size-free model plays) and
the model engines are capped at 30 playouts with 10 s turns, so every answer
comes seconds before its limit even on a busy machine (a load of 20 on 2 cores made one 30-playout
answer take 3.4 s): these tests look for
faults and broken games, not for tight timing (the engine's deadline
arithmetic is tested on a fake clock in ``test_engine``).
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from gomoku.game.board import Board
from gomoku.game.openings import opening_area
from devtools.engine_check.referee import FAULTS, run_match
from devtools.engine_check.soak import main
from devtools.engine_check.soak_report import format_table
from devtools.engine_check.soak_run import PAIRINGS, Engines, SoakError, SoakRun, draw_settings, run_soak

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "gomoku_15x15_5.npz"


def children_of(pid: int) -> list[int]:
    """The pids of the processes whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (a zombie has exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ------------------------------------------------------------------ settings
@pytest.mark.timeout(30)
def test_settings_are_reproducible_from_the_seed():
    assert draw_settings(40, seed=7) == draw_settings(40, seed=7)
    assert draw_settings(40, seed=7) != draw_settings(40, seed=8)
    assert [g.game for g in draw_settings(40, seed=7)] == list(range(40))
    assert draw_settings(6, seed=7) == draw_settings(200, seed=7)[:6]  # a short trial plays the long run's first games


@pytest.mark.timeout(30)
def test_boards_and_pairings_go_round_so_colours_are_balanced():
    games = draw_settings(200, seed=0)
    boards = Counter(g.board for g in games)
    assert boards["20x20"] >= 50 and boards["20x20"] + boards["15x15"] == 200
    pairings = Counter(g.pairing for g in games)
    assert set(pairings) == set(PAIRINGS)
    # The model plays Black against the heuristic as often as White, give or take the last, partial block.
    assert abs(pairings["model-heuristic"] - pairings["heuristic-model"]) <= 2
    # Every block of 6 games (2 boards x 3 pairings) holds each combination once: short runs see them all.
    for n in (6, 12):
        combos = Counter((g.board, g.pairing) for g in draw_settings(n, seed=3))
        assert len(combos) == 6 and set(combos.values()) == {n // 6}
    assert {g.board for g in draw_settings(5, seed=1, boards=[(9, 9)])} == {"9x9"}
    assert {g.pairing for g in draw_settings(5, seed=1, pairings=["model-model"])} == {"model-model"}


@pytest.mark.timeout(30)
def test_drawn_settings_stay_in_their_ranges():
    games = draw_settings(300, seed=5, max_playouts=200)
    for g in games:
        assert 1000 <= g.timeout_turn_ms <= 5000 and g.timeout_turn_ms % 100 == 0
        assert g.timeout_match_ms == 0 or 20000 <= g.timeout_match_ms <= 60000
        assert g.max_playouts in (None, 200)
        assert len(g.opening) in (0, 2, 4)
        assert set(g.opening) <= set(opening_area(g.width, g.height))
        board = Board.from_moves(g.width, g.height, 5, list(g.opening))  # legal, Black to move
        assert not board.game_over and len(board.history) % 2 == 0
    assert {len(g.opening) for g in games} == {0, 2, 4}
    # The shares are the chances of a timed game, of BOARD every turn and of an uncapped model engine.
    for share, count in ((0.3, sum(1 for g in games if g.timeout_match_ms)),
                         (0.3, sum(1 for g in games if g.board_each_turn)),
                         (0.2, sum(1 for g in games if g.max_playouts is None))):
        assert share / 2 < count / len(games) < share * 1.5
    assert len({g.timeout_turn_ms for g in games}) > 20

    fixed = draw_settings(20, seed=5, timeouts_ms=(3000, 3000), uncapped_share=0.0, timed_share=1.0,
                          match_ms=(30000, 30000), board_share=0.0, max_playouts=30)
    assert all((g.timeout_turn_ms, g.timeout_match_ms, g.max_playouts, g.board_each_turn)
               == (3000, 30000, 30, False) for g in fixed)
    assert all(g.max_playouts is None for g in draw_settings(20, seed=5, uncapped_share=1.0))
    assert all(g.max_playouts is None for g in draw_settings(20, seed=5, max_playouts=None))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("bad", [dict(opening_stones=[1]), dict(timeouts_ms=(2000, 1000)),
                                 dict(timeouts_ms=(0, 1000)), dict(timeouts_ms=(1010, 1090)),
                                 dict(timed_share=1.5), dict(pairings=["model-pure"]),
                                 dict(boards=[(4, 4)]), dict(boards=[]), dict(max_playouts=0),
                                 dict(seed=-1)])
def test_settings_that_cannot_work_are_refused(bad):
    with pytest.raises(SoakError):
        draw_settings(10, **{"seed": 0, **bad})


@pytest.mark.timeout(30)
def test_bad_flags_are_refused(capsys):
    for argv in (["--timeouts", "5,a"], ["--uncapped-share", "2"], ["--boards", "15,2x"],
                 ["--model", str(MODEL), "--openings", "3"], ["--games", "3"],
                 ["--model", "missing.npz"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2, argv
    assert "error" in capsys.readouterr().err


@pytest.mark.timeout(30)
def test_engine_commands_follow_the_pairing_and_the_cap():
    engines = Engines("m.npz", heuristic_level=4, python="python")
    game = draw_settings(1, seed=0, pairings=["heuristic-model"], max_playouts=30, uncapped_share=0.0)[0]
    black, white = engines.commands(game)
    assert black == ["python", "-m", "gomoku.play.engine", "--heuristic", "4", "--seed", str(game.seed)]
    assert white == ["python", "-m", "gomoku.play.engine", "--model", "m.npz", "--max-playouts", "30"]
    uncapped = replace(game, pairing="model-model", max_playouts=None)
    assert engines.commands(uncapped) == (["python", "-m", "gomoku.play.engine", "--model", "m.npz"],) * 2
    tuned = Engines("m.npz", device="cpu", margin_ms=200, python="python")
    assert tuned.command("model", uncapped)[-4:] == ["--device", "cpu", "--margin-ms", "200"]


# --------------------------------------------------------------------- table
def record(game: int, pairing: str, winner, latencies, limits, faults=None, board=(15, 15), max_playouts=200):
    black, white = PAIRINGS[pairing]
    return dict(game=game, width=board[0], height=board[1], board=f"{board[0]}x{board[1]}", pairing=pairing,
                black=black, white=white, opening=[], timeout_turn_ms=1000, timeout_match_ms=0,
                board_each_turn=False, max_playouts=max_playouts, seed=0, winner=winner,
                result={1: "Black", 2: "White", 0: "draw"}.get(winner), reason="test",
                moves=list(range(len(latencies))), faults={k: (faults or {}).get(k, 0) for k in FAULTS},
                latencies=latencies, limits=limits, seconds=10.0, stderr=None,
                transcript=[f"line {i}" for i in range(20)] if faults else None)


@pytest.mark.timeout(30)
def test_the_table_counts_results_faults_and_the_slowest_answers(tmp_path):
    records = [record(0, "model-heuristic", 1, [0.5, 0.01, 0.9], [1.0, 1.0, 1.0]),
               record(1, "heuristic-model", 1, [0.02, 1.7, 0.03], [2.0, 2.0, 2.0], board=(20, 20)),
               record(2, "model-model", 2, [0.2, 0.95, 0.1, 1.2], [1.0, 1.0, 1.0, 1.0],
                      faults={"late": 1}, max_playouts=None)]
    table = format_table(SoakRun(records, seconds=30.0))
    lines = table.splitlines()
    assert "faults: ERROR 0, not a move 0, illegal move 0, late 1, hang 0, crash 0; total 1" in lines
    row = next(line for line in lines if line.startswith("all     all"))
    assert row.split()[2:] == ["3", "3.3", "10.0", "2", "1", "0"]  # games, stones, s/game, Black, White, draws
    answers = lines[next(i for i, line in enumerate(lines) if line.startswith("answers by")) + 1:]
    by = {line[:18].strip(): line[18:].split() for line in answers[:answers.index("")]}
    # Columns: answers, the slowest, its limit, its game, the largest latency/limit, its game. Black gives
    # a game's answers 0, 2, 4...: the capped model's are 0.5 and 0.9 s of 1 s in game 0, 1.7 s of 2 s in game 1.
    assert by["model (capped)"] == ["3", "1.700s", "2.000s", "1", "0.900", "0"]
    assert by["model (uncapped)"] == ["4", "1.200s", "1.000s", "2", "1.200", "2"]
    assert by["heuristic"] == ["3", "0.030s", "2.000s", "1", "0.015", "1"]
    assert by["all"] == ["10", "1.700s", "2.000s", "1", "1.200", "2"]
    assert "line 19" in table and "line 7" not in table  # the faulted game's transcript, its last lines

    path = tmp_path / "soak.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["--table", str(path)]) == 1
    path.write_text("".join(json.dumps(r) + "\n" for r in records[:2]))
    assert main(["--table", str(path)]) == 0


# --------------------------------------------------------------------- games
@pytest.fixture
def engines_find_the_package(monkeypatch):
    """Engines run as ``python -m gomoku.play.engine``: make the package importable from any folder."""
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + path if path else ""))


@pytest.mark.timeout(400)
def test_a_short_soak_plays_complete_games_without_a_fault(tmp_path, engines_find_the_package):
    # One game of each pairing on 9x9, with openings, a match clock and BOARD every turn among them.
    drawn = draw_settings(3, seed=11, boards=[(9, 9)], timeouts_ms=(10000, 10000), max_playouts=30,
                          uncapped_share=0.0)
    by_pairing = {g.pairing: g for g in drawn}
    games = [replace(by_pairing["model-heuristic"], game=0, opening=(40, 41, 31, 49), board_each_turn=False,
                     timeout_match_ms=180000),
             replace(by_pairing["heuristic-model"], game=1, opening=(40, 30), board_each_turn=True,
                     timeout_match_ms=0),
             replace(by_pairing["model-model"], game=2, opening=(), board_each_turn=False,
                     timeout_match_ms=120000)]
    out = io.StringIO()
    lines = []
    # Two games at a time, as a long soak plays them: the records come in the order the games end.
    run = run_soak(games, Engines(str(MODEL)), workers=2, out=out, stderr_dir=str(tmp_path), log=lines.append)
    assert not run.interrupted and len(run.records) == 3 and len(lines) == 3
    assert [json.loads(line) for line in out.getvalue().splitlines()] == run.records
    for game, rec in zip(games, sorted(run.records, key=lambda r: r["game"])):
        assert rec["game"] == game.game
        assert not any(rec["faults"].values()), (rec["reason"], rec["transcript"][-10:])
        assert rec["winner"] in (0, 1, 2), rec["reason"]
        assert rec["moves"][:len(game.opening)] == list(game.opening)
        board = Board.from_moves(9, 9, 5, rec["moves"])  # every stone legal
        assert board.game_over and board.winner == rec["winner"]
        assert rec["answers"] == len(rec["moves"]) - len(game.opening) == len(rec["latencies"])
        assert all(latency < limit for latency, limit in zip(rec["latencies"], rec["limits"]))
        assert rec["slowest"] == max(rec["latencies"]) and rec["worst_ratio"] < 1
        model_commands = [c for c in rec["commands"] if "--model" in c]
        assert model_commands and all(c[-2:] == ["--max-playouts", "30"] for c in model_commands)
        assert os.path.exists(rec["stderr"])
    assert "total 0" in format_table(run)


@pytest.mark.timeout(180)
def test_both_engines_are_told_the_opening(engines_find_the_package):
    heuristic = [sys.executable, "-m", "gomoku.play.engine", "--heuristic", "1", "--seed", "0"]
    opening = [40, 30]  # Black on 4,4, White on 3,3
    result = run_match((heuristic, heuristic), 9, 9, timeout_turn_ms=3000, stderr=subprocess.DEVNULL,
                       opening=opening, board_each_turn=False)
    for name in ("[1]", "[2]"):
        sent = [line.split(" > ", 1)[1] for line in result.transcript if line.startswith(f"{name} > ")]
        first = next(i for i, line in enumerate(sent) if line in ("BEGIN", "BOARD") or line.startswith("TURN"))
        assert sent[first] == "BOARD", f"{name}'s first move request: {sent[first]}"
        cells = {line for line in sent[first + 1:sent.index("DONE", first)]}
        assert {c.rsplit(",", 1)[0] for c in cells} >= {"4,4", "3,3"}


@pytest.mark.timeout(180)
def test_ctrl_c_stops_the_soak_and_leaves_no_engine(tmp_path):
    # An uncapped model against the heuristic with 5 s turns: the game is under way when the signal comes.
    command = [sys.executable, "-m", "devtools.engine_check.soak", "--games", "3", "--model", str(MODEL), "--size", "9",
               "--timeouts", "5000,5000", "--uncapped-share", "1", "--pairings", "model-heuristic",
               "--out", str(tmp_path / "soak.jsonl"), "--stderr-dir", str(tmp_path)]
    # A shell without job control starts background commands with SIGINT ignored: undo that for the soak.
    soak = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 40
        engines: list[int] = []
        while len(engines) < 2 and time.monotonic() < deadline and soak.poll() is None:
            time.sleep(0.2)
            engines = children_of(soak.pid)
        assert len(engines) == 2, "the soak did not start its two engines"
        time.sleep(1.0)
        soak.send_signal(signal.SIGINT)  # to the soak only: the engines must be stopped by it
        output, _ = soak.communicate(timeout=30)
    finally:
        if soak.poll() is None:
            soak.kill()
            soak.wait()
    assert soak.returncode == 130, output
    assert "interrupted" in output
    assert not [pid for pid in engines if alive(pid)]
    assert (tmp_path / "soak.jsonl").read_text() == ""  # the game under way was dropped
