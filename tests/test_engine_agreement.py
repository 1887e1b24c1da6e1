"""scripts/engine_agreement.py: a model's agreement with an engine's moves and results."""

import json
import math
import os
import sys

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.game.gamefile import GameRecord

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import engine_agreement  # noqa: E402

pytestmark = pytest.mark.timeout(120)

# 6x6, four in a row. Black's four on the first row wins; the second game is a different
# continuation of the same two-stone opening, so its first two positions after the opening repeat
# the first game's; the third game's first position after the opening repeats too.
GAMES = [(["a1", "a2", "b1", "b2", "c1", "c2", "d1"], 1),
         (["a1", "a2", "b1", "f6", "c1", "e6", "d1"], 1),
         (["a1", "a2", "f1", "b2", "e1", "c2", "f3", "d2"], 2)]


def games_file(path, games=GAMES, rule="freestyle"):
    lines = []
    for labels, result in games:
        board = Board(6, 6, 4, rule=rule)
        moves = [board.parse_move(label) for label in labels]
        line = GameRecord(6, 6, 4, moves, 1, {1: "engine:x", 2: "engine:y"}, result, rule).to_json()
        line["opening"] = labels[:2]
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_positions_after_the_opening_each_once_with_the_result_for_the_player_to_move(tmp_path):
    positions = engine_agreement.read_positions(games_file(tmp_path / "g.jsonl"))
    # 5 + 5 + 6 positions after the two opening stones, 3 of them repeats, scored with their first move
    assert len(positions.boards) == 5 + 3 + 5
    assert positions.games == [0] * 5 + [1] * 3 + [2] * 5
    first = positions.boards[0]
    assert first.current_player == 1 and positions.moves[0] == first.parse_move("b1")
    assert positions.results[:5] == [1, -1, 1, -1, 1]  # Black to move won, White to move lost
    assert positions.results[-5:] == [1, -1, 1, -1, 1]  # White won the third game: White to move first
    assert positions.geometry == (6, 6, 4) and positions.rule == "freestyle"


def test_an_oracle_scores_full_marks_and_a_uniform_net_the_legal_moves_count(tmp_path):
    positions = engine_agreement.read_positions(games_file(tmp_path / "g.jsonl"))
    index = {id(board): i for i, board in enumerate(positions.boards)}

    def oracle(boards):
        priors = np.zeros((len(boards), 36), np.float32)
        values = np.zeros(len(boards), np.float32)
        for row, board in enumerate(boards):
            i = index[id(board)]
            priors[row, positions.moves[i]] = 1.0
            values[row] = positions.results[i]
        return priors, values

    best = engine_agreement.score(positions, oracle, batch=4)
    assert best.top1.all() and best.top3.all() and best.loss.max() < 1e-9 and best.value_error.max() == 0

    def uniform(boards):  # illegal moves get prior too: the score keeps the legal ones
        return np.ones((len(boards), 36), np.float32), np.zeros(len(boards), np.float32)

    flat = engine_agreement.score(positions, uniform)
    legal = [len(board.legal_moves()) for board in positions.boards]
    assert flat.loss == pytest.approx([math.log(n) for n in legal])
    assert flat.value_error.mean() == pytest.approx(1.0)
    mean, half = engine_agreement.paired_difference(flat.top1, best.top1, np.array(positions.games))
    assert mean == pytest.approx(1 - flat.top1.mean()) and half >= 0


def test_the_paired_difference_counts_games_not_positions():
    first = np.array([0, 0, 0, 0, 1, 1])
    later = np.array([1, 1, 1, 1, 1, 1])
    games = np.array([0, 0, 0, 0, 1, 1])
    mean, half = engine_agreement.paired_difference(first, later, games)
    # game 0 gains 4, game 1 gains 0: deviations 4 - 6 * 4/6 = 0.667 and -1.333... around the mean
    per_game = np.array([4 - 4 * 4 / 6, 0 - 2 * 4 / 6])
    assert mean == pytest.approx(4 / 6)
    assert half == pytest.approx(1.96 * math.sqrt(2 * (per_game ** 2).sum()) / 6)


def test_the_command_prints_the_table_and_refuses_a_model_for_another_rule(tmp_path, capsys):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    games = games_file(tmp_path / "g.jsonl")
    for name, rule in (("free.npz", "freestyle"), ("std.npz", "standard")):
        PolicyValueModel(NetSpec(6, 6, 4, "sizefree", 1, 8, ((6, 6),), rule=rule), device="cpu").save(
            str(tmp_path / name))
    out = tmp_path / "scores.json"
    assert engine_agreement.main([games, f"a={tmp_path / 'free.npz'}", str(tmp_path / "free.npz"),
                                  "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("13 positions from 3 games in ")
    assert "| a | " in text and "| free.npz | " in text and "+0.0 (+0.0 to +0.0)" in text
    scores = json.loads(out.read_text())["scores"]
    assert [row["model"] for row in scores] == ["a", "free.npz"] and scores[0]["agree"] == scores[1]["agree"]
    assert engine_agreement.main([games, str(tmp_path / "std.npz")]) == 2
    assert "trained for standard, but this game is played under freestyle" in capsys.readouterr().err
    assert engine_agreement.main([games, str(tmp_path / "missing.npz")]) == 2
    assert engine_agreement.main([str(tmp_path / "none.jsonl"), str(tmp_path / "free.npz")]) == 2
    assert "none.jsonl" in capsys.readouterr().err
