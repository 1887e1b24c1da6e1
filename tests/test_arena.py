"""The arena: score, interval and Elo maths, paired openings, real runs in- and out-of-process, bad input."""

import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, replace

import numpy as np
import pytest

from gomoku.play.arena import report as arena_report, run as arena
from gomoku.play.arena.run import run_arena
from gomoku.play.arena.report import elo_difference, format_elo, wilson_interval
from gomoku.play.arena.settings import ArenaSettings
from gomoku.actors.tasks import Tally
from gomoku.game.openings import OpeningError, make_openings, opening_area
from gomoku.game.board import Board
from gomoku.game.gamefile import GameRecord

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY_BOARD = dict(size=(6, 6), n_in_row=4)


@pytest.fixture(scope="module")
def model_6x6(tmp_path_factory):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    path = tmp_path_factory.mktemp("models") / "random_6x6_4.npz"
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(str(path))
    return str(path)


# ------------------------------------------------------------------ maths
def test_wilson_interval_matches_known_values():
    # 8 wins in 10 games: the textbook Wilson interval is 0.490 to 0.943.
    low, high = wilson_interval(0.8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    low, high = wilson_interval(0.5, 4)
    assert low == pytest.approx(0.1500, abs=1e-4) and high == pytest.approx(0.8500, abs=1e-4)


def test_wilson_interval_keeps_a_width_at_the_edges():
    z2 = 1.959963984540054 ** 2
    low, high = wilson_interval(1.0, 40)
    assert high == 1.0 and low == pytest.approx(40 / (40 + z2))
    low, high = wilson_interval(0.0, 40)
    assert low == 0.0 and high == pytest.approx(z2 / (40 + z2))
    assert wilson_interval(0.3, 0) == (0.0, 1.0)
    for score in np.linspace(0, 1, 11):
        low, high = wilson_interval(score, 25)
        assert 0.0 <= low <= score <= high <= 1.0


def test_elo_difference():
    assert elo_difference(0.5) == pytest.approx(0.0)
    assert elo_difference(0.75) == pytest.approx(400 * math.log10(3))  # 190.8
    assert elo_difference(0.9) == pytest.approx(400 * math.log10(9))
    assert elo_difference(0.25) == pytest.approx(-elo_difference(0.75))
    assert elo_difference(1.0) == math.inf and elo_difference(0.0) == -math.inf
    assert [format_elo(v) for v in (190.85, -35.2, -0.4, math.inf, -math.inf)] == [
        "+191", "-35", "+0", "+inf", "-inf"]


def test_elo_text_for_shutouts_gives_a_bound():
    low, high = wilson_interval(1.0, 40)
    text = arena_report._elo_text(1.0, low, high)
    assert text.startswith("> +407 ") and "lower bound" in text  # 40/40: low = 40 / (40 + z^2)
    low, high = wilson_interval(0.0, 40)
    assert arena_report._elo_text(0.0, low, high).startswith("< -407 ")
    assert arena_report._elo_text(0.75, 0.6, 0.9) == "+191  (95% CI +70 to +382)"


def test_tally():
    tally = Tally()
    for points in (1.0, 1.0, 0.5, 0.0):
        tally.add(points)
    assert (tally.games, tally.wins, tally.draws, tally.losses) == (4, 2, 1, 1)
    assert tally.score == pytest.approx(0.625)
    assert math.isnan(Tally().score) and Tally().to_json()["score"] is None


# --------------------------------------------------------------- openings
def test_openings_are_central_seeded_and_distinct_up_to_symmetry():
    area = set(opening_area(6, 6))
    assert area == {r * 6 + c for r in range(1, 5) for c in range(1, 5)}
    first = make_openings(12, 6, 6, 4, 2, np.random.default_rng(3))
    again = make_openings(12, 6, 6, 4, 2, np.random.default_rng(3))
    assert first == again
    assert all(len(o) == 2 and len(set(o)) == 2 and set(o) <= area for o in first)

    from gomoku.game.symmetry import symmetries

    perms = [s.move_permutation(6, 6) for s in symmetries(6, 6)]
    keys = {min((int(p[o[0]]), int(p[o[1]])) for p in perms) for o in first}
    assert len(keys) == len(first)


def test_openings_that_cannot_work_are_refused():
    with pytest.raises(OpeningError, match="enough to win"):
        make_openings(1, 6, 6, 4, 7, np.random.default_rng(0))
    with pytest.raises(OpeningError, match="does not fit"):
        make_openings(1, 4, 4, 4, 4, np.random.default_rng(0))  # a 4x4 board has 4 central cells
    assert make_openings(3, 6, 6, 4, 0, np.random.default_rng(0)) == [[], [], []]


# -------------------------------------------------------------- real runs
def test_arena_in_process_pairs_openings_with_colours_swapped():
    settings = ArenaSettings("pure:20", "pure:20", games=4, workers=1, seed=5, **TINY_BOARD)
    result = run_arena(settings)
    games = result.games
    assert [g.index for g in games] == [0, 1, 2, 3]
    assert result.geometry == (6, 6, 4)
    for k in range(2):
        even, odd = games[2 * k], games[2 * k + 1]
        assert even.opening == odd.opening and len(even.opening) == 2
        assert (even.a_colour, odd.a_colour) == (1, 2)
    assert games[0].opening != games[2].opening
    for game in games:
        assert game.moves[:2] == game.opening
        board = Board.from_moves(6, 6, 4, game.moves)
        assert board.winner == game.winner
    total = result.total
    assert total.games == 4 and result.as_black.games == 2 and result.as_white.games == 2
    assert total.wins + total.draws + total.losses == 4

    again = run_arena(settings)
    assert [g.moves for g in again.games] == [g.moves for g in games]

    report = arena_report.format_report(result)
    assert "A as Black" in report and "A as White" in report and "Elo of A - B" in report
    summary = result.summary()
    json.dumps(summary)  # no infinities or other non-JSON values
    assert summary["a_as_black"]["games"] == 2 and summary["games"] == 4
    assert asdict(settings.search).items() <= summary.items()  # every search option, by its name


@pytest.mark.parametrize("spec", ["az:{model}:12", "policy:{model}"])
def test_model_against_pure_mcts(model_6x6, spec):
    a = spec.format(model=model_6x6)
    result = run_arena(ArenaSettings(a, "pure:12", games=2, workers=1, device="cpu"))
    assert result.geometry == (6, 6, 4)  # from the model, no flags needed
    assert len(result.games) == 2 and all(g.winner in (0, 1, 2) for g in result.games)
    lines = result.game_lines()
    assert lines[0]["players"] == {"1": a, "2": "pure:12"}
    assert lines[1]["players"] == {"1": "pure:12", "2": a}


def test_arena_script_with_two_workers(tmp_path):
    out, summary_path = tmp_path / "games.jsonl", tmp_path / "summary.json"
    proc = subprocess.run(
        [sys.executable, "-m", "gomoku.play.arena", "--a", "pure:10", "--b", "pure:30", "--size", "6x6",
         "--n-in-row", "4", "--games", "4", "--workers", "2", "--seed", "1",
         "--out", str(out), "--json", str(summary_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "A as Black" in proc.stdout and "score of A" in proc.stdout
    summary = json.loads(summary_path.read_text())
    assert summary["workers"] == 2 and summary["games"] == 4
    assert summary["a"] == "pure:10" and summary["board"] == {"width": 6, "height": 6, "n_in_row": 4}
    assert summary["total"]["games"] == 4
    assert summary["score_low"] <= summary["score"] <= summary["score_high"]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["game"] for line in lines] == [0, 1, 2, 3]
    assert lines[0]["opening"] == lines[1]["opening"] == lines[0]["moves"][:2]
    assert lines[0]["colours"] == {"A": "black", "B": "white"}
    assert lines[1]["colours"] == {"A": "white", "B": "black"}
    for line in lines:
        record = GameRecord.from_json(line)  # the record part replays as a saved game
        assert record.result == line["result"]
        expected = "draw" if line["result"] == 0 else ("A" if line["colours"]["A"] == (
            "black" if line["result"] == 1 else "white") else "B")
        assert line["winner"] == expected


def test_games_are_logged_and_kept_as_they_end_and_a_stop_keeps_them(tmp_path):
    """With no progress bar (not a terminal) each game gets a log line as it ends, and the games
    file gets it in ``PATH.partial``; a stop after the second game keeps both, and ``finish``
    writes them to ``PATH`` in order."""
    path = str(tmp_path / "games.jsonl")
    games_file = arena_report.GamesFile(path)
    lines = []

    def stop_after_two(result, game):
        games_file.add(result, game)
        if len(result.games) == 2:
            raise KeyboardInterrupt

    settings = ArenaSettings("pure:20", "pure:20", games=6, workers=1, parallel=1, seed=3, **TINY_BOARD)
    with pytest.raises(arena.ArenaInterrupted) as stopped:
        run_arena(settings, log=lines.append, progress_stream=io.StringIO(), on_game=stop_after_two)
    result = stopped.value.result
    assert [g.index for g in result.games] == [0, 1]
    ended = [line for line in lines if line.startswith("game ")]
    assert ended[0].startswith("game 1: A (Black)") and ended[1].startswith("game 2: A (White)"), lines
    assert ended[1].endswith("of 2 (4 to play)")
    assert [json.loads(line)["game"] for line in open(games_file.partial)] == [0, 1]
    games_file.finish(result)
    assert [line["game"] for line in arena_report.read_games(path)] == [0, 1]
    assert not os.path.exists(games_file.partial)

    whole, seen = [], []
    result = run_arena(replace(settings, parallel=3), log=whole.append, progress_stream=io.StringIO(),
                       on_game=lambda so_far, game: seen.append(game.index))
    assert sorted(seen) == [0, 1, 2, 3, 4, 5] and len(result.games) == 6
    assert len([line for line in whole if line.startswith("game ")]) == 6


# -------------------------------------------------------------- bad input
def run_main(capsys, *args):
    code = arena.main(list(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


def test_unknown_player_is_a_clear_error(capsys):
    code, err = run_main(capsys, "--a", "alphabeta:3", "--b", "pure:10", "--workers", "1")
    assert code == 2 and "unknown player 'alphabeta:3'" in err
    code, err = run_main(capsys, "--a", "human", "--b", "pure:10", "--workers", "1")
    assert code == 2 and "AI players only" in err
    code, err = run_main(capsys, "--a", "az", "--b", "pure:10", "--workers", "1")
    assert code == 2 and "needs a model file" in err
    code, err = run_main(capsys, "--a", "pure:0", "--b", "pure:10", "--workers", "1")
    assert code == 2 and "positive integer" in err


def test_models_for_different_boards_are_refused(capsys, tmp_path, model_6x6):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    other = str(tmp_path / "random_8x8_5.npz")
    PolicyValueModel(NetSpec(8, 8, 5), device="cpu").save(other)
    code, err = run_main(capsys, "--a", f"az:{model_6x6}:10", "--b", f"policy:{other}", "--workers", "1")
    assert code == 2 and "different boards" in err and "6x6, 4 in a row" in err and "8x8, 5 in a row" in err
    code, err = run_main(capsys, "--a", f"az:{model_6x6}:10", "--b", "pure", "--size", "8x8", "--workers", "1")
    assert code == 2 and "plays 6x6, 4 in a row" in err
    code, err = run_main(capsys, "--a", f"az:{tmp_path}/missing.npz", "--b", "pure", "--workers", "1")
    assert code == 2 and "no model file" in err


def test_bad_opening_from_the_command_line(capsys):
    code, err = run_main(capsys, "--a", "pure:5", "--b", "pure:5", "--size", "6x6", "--n-in-row", "4",
                         "--opening-stones", "9", "--workers", "1")
    assert code == 2 and "--opening-stones 9" in err


def test_script_exit_code_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "gomoku.play.arena", "--a", "nonsense", "--b", "pure"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "unknown player" in proc.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_stops_the_arena_with_a_short_message(workers):
    proc = subprocess.Popen([sys.executable, "-m", "gomoku.play.arena", "--a", "pure:3000", "--b", "pure:3000",
                             "--size", "8", "--n-in-row", "5", "--games", "2", "--workers", workers],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr.readline().startswith("2 games on 8x8, 5 in a row: pure:3000 against pure:3000")
    time.sleep(1)  # into the games
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Interrupted after 0 of 2 games." in err and "Traceback" not in err


@pytest.mark.parametrize("command", [
    ["-m", "gomoku.play.arena"], ["play.py"], ["scripts/exact_solver/solve_openings.py"], ["-m", "gomoku.train.plot"],
    ["-m", "gomoku.train.bench"], ["train.py"], ["-m", "gomoku.play.engine"]])
def test_every_entry_point_writes_its_defaults_alike(command):
    out = subprocess.run([sys.executable, *command, "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())  # argparse wraps lines anywhere
    assert "(default" in text
    assert re.findall(r"\(default [^:]", text) == []  # "(default: 40)", never "(default 40)"


def test_one_model_in_two_precisions_gets_an_evaluator_for_each(model_6x6, monkeypatch):
    from gomoku.net.policy_value import PolicyValueModel

    loaded = []

    def load(path, **kwargs):
        loaded.append(kwargs["precision"])
        return real(path, **kwargs)

    real = PolicyValueModel.load
    monkeypatch.setattr(PolicyValueModel, "load", staticmethod(load))
    spec = f"az:{model_6x6}:8"
    result = run_arena(ArenaSettings(spec, spec, games=2, workers=1, device="cpu", precision="fp32",
                                     precision_b="auto"))
    assert sorted(loaded) == ["auto", "fp32"] and result.spec_b.precision == "auto"
    assert (result.summary()["precision"], result.summary()["precision_b"]) == ("fp32", "auto")
    loaded.clear()
    run_arena(ArenaSettings(spec, spec, games=2, workers=1, device="cpu", precision="fp32", precision_b="fp32"))
    assert loaded == ["fp32"]  # one precision: both seats share one evaluator
