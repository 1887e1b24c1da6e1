"""The probe (gomoku.train.probe) and scripts/engine_agreement.py: a net against an engine's moves and results."""

import json
import math
import os
import sys

import numpy as np
import pytest

from gomoku.train.probe import paired_difference, read_probe
from tests.helpers import probe_games_file as games_file, tiny_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import engine_agreement  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def test_positions_after_the_opening_each_once_with_the_result_for_the_player_to_move(tmp_path):
    # tests.helpers.PROBE_GAMES: the second game repeats the first's first two positions after the
    # opening, and the third the first position
    probe = read_probe(games_file(tmp_path / "g.jsonl"))
    # 5 + 5 + 6 positions after the two opening stones, 3 of them repeats, scored with their first move
    assert len(probe) == 5 + 3 + 5
    assert probe.games == [0] * 5 + [1] * 3 + [2] * 5
    first = probe.boards[0]
    assert first.current_player == 1 and probe.moves[0] == first.parse_move("b1")
    assert probe.results[:5] == [1, -1, 1, -1, 1]  # Black to move won, White to move lost
    assert probe.results[-5:] == [1, -1, 1, -1, 1]  # White won the third game: White to move first
    assert probe.geometry == (6, 6, 4) and probe.rule == "freestyle"
    assert list(probe.black_to_move()[:3]) == [True, False, True]


def test_an_oracle_scores_full_marks_and_a_uniform_net_the_legal_moves_count(tmp_path):
    probe = read_probe(games_file(tmp_path / "g.jsonl"))
    planes = probe.planes(1)
    assert planes.shape == (len(probe), 4, 6, 6) and planes.dtype == np.uint8
    served = []

    def oracle(batch):  # the engine's move and the result, in the positions' order
        rows = range(len(served), len(served) + len(batch))
        served.extend(rows)
        log_p = np.full((len(batch), 36), -50.0)
        log_p[np.arange(len(batch)), [probe.moves[i] for i in rows]] = 0.0
        return log_p, np.array([probe.results[i] for i in rows], dtype=np.float32)

    best = probe.score(oracle, 1, batch=4)
    assert best.top1.all() and best.top3.all() and best.loss.max() < 1e-9 and best.value_error.max() == 0
    assert best.summary() == {"probe_agree": 1.0, "probe_top3": 1.0, "probe_loss": 0.0, "probe_value": 0.0}

    def uniform(batch):  # illegal moves get the same prior too: the score keeps the legal ones
        return np.zeros((len(batch), 36)), np.zeros(len(batch))

    flat = probe.score(uniform, 1)
    legal = [len(board.legal_moves()) for board in probe.boards]
    assert flat.loss == pytest.approx([math.log(n) for n in legal])
    assert flat.value_error.mean() == pytest.approx(1.0)
    assert not flat.top3.any()  # a tie counts against the engine's move
    mean, half = paired_difference(flat.loss, best.loss, probe.games)
    assert mean == pytest.approx(-flat.loss.mean()) and half > 0


def test_the_paired_difference_counts_games_not_positions():
    first = np.array([0, 0, 0, 0, 1, 1])
    later = np.array([1, 1, 1, 1, 1, 1])
    mean, half = paired_difference(first, later, [0, 0, 0, 0, 1, 1])
    per_game = np.array([4 - 4 * 4 / 6, 0 - 2 * 4 / 6])  # each game's gain less its share of the mean
    assert mean == pytest.approx(4 / 6)
    assert half == pytest.approx(1.96 * math.sqrt(2 * (per_game ** 2).sum()) / 6)


def test_a_probe_that_cannot_be_read_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="none.jsonl"):
        read_probe(str(tmp_path / "none.jsonl"))
    bad = tmp_path / "bad.jsonl"
    line = json.loads(open(games_file(tmp_path / "g.jsonl")).readline())
    line["moves"] = [1, 1]
    bad.write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match="bad.jsonl: game 1: move 2 cannot be played"):
        read_probe(str(bad))


def test_the_command_prints_the_table_and_refuses_a_model_for_another_rule(tmp_path, capsys):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    games = games_file(tmp_path / "g.jsonl")
    for name, rule in (("free.npz", "freestyle"), ("std.npz", "standard")):
        PolicyValueModel(NetSpec(6, 6, 4, "sizefree", 1, 8, ((6, 6),), inputs=2, rule=rule), device="cpu").save(
            str(tmp_path / name))
    out = tmp_path / "scores.json"
    assert engine_agreement.main([games, f"a={tmp_path / 'free.npz'}", str(tmp_path / "free.npz"),
                                  "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("13 positions from 3 games in ")
    assert "| a | " in text and "| free.npz | " in text and "+0.0 (+0.0 to +0.0)" in text
    scores = json.loads(out.read_text())["scores"]
    assert [row["model"] for row in scores] == ["a", "free.npz"]
    assert scores[0]["probe_agree"] == scores[1]["probe_agree"] and scores[0]["positions"] == 13
    # the players' search on a sample of the positions: a second table, and the JSON keeps it
    assert engine_agreement.main([games, f"a={tmp_path / 'free.npz'}", f"b={tmp_path / 'free.npz'}",
                                  "--search-playouts", "4", "--search-positions", "5", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| model | agree with 4 playouts of search (5 positions) | agree - first |" in text
    assert "| b | " in text.split("playouts of search")[1] and "+0.0 (+0.0 to +0.0)" in text.split("search")[1]
    scores = json.loads(out.read_text())["scores"]
    assert scores[0]["search_positions"] == 5 and scores[0]["search_agree"] == scores[1]["search_agree"]
    assert engine_agreement.main([games, str(tmp_path / "std.npz")]) == 2
    assert "trained for standard, but this game is played under freestyle" in capsys.readouterr().err
    assert engine_agreement.main([games, str(tmp_path / "missing.npz")]) == 2
    assert engine_agreement.main([str(tmp_path / "none.jsonl"), str(tmp_path / "free.npz")]) == 2
    assert "none.jsonl" in capsys.readouterr().err


def test_a_run_logs_its_probe_every_iteration_and_refuses_one_for_another_rule(tmp_path):
    from gomoku.train.pipeline import TrainPipeline
    from gomoku.train.plot import read_metrics, render

    probe = games_file(tmp_path / "probe.jsonl")
    run = str(tmp_path / "run")
    lines = []
    TrainPipeline(tiny_config(probe_games=probe, check_freq=100), run, log=lines.append).run(iterations=2)
    records = [json.loads(line) for line in open(os.path.join(run, "metrics.jsonl"))]
    iterations = [r for r in records if r.get("event") == "iteration"]
    assert len(iterations) == 2 and all(0 <= r["probe_agree"] <= r["probe_top3"] <= 1 for r in iterations)
    assert all(r["probe_loss"] > 0 and r["probe_value"] >= 0 for r in iterations)
    assert sum(" agree " in line and line.rstrip().endswith("s]") for line in lines) == 2
    render(read_metrics(run))  # the agreement's curve shares the evaluations' panel
    # on resume the probe may change or go; one for another rule is refused before anything runs
    again = TrainPipeline.resume(run, log=lambda s: None, probe_games="")
    assert again.probe is None
    with pytest.raises(ValueError, match="--probe-games: the probe .* is for 6x6, 4 in a row, standard"):
        TrainPipeline.resume(run, log=lambda s: None, probe_games=games_file(tmp_path / "std.jsonl", rule="standard"))
    with pytest.raises(ValueError, match="no probe ships for 6x6, 4 in a row, freestyle .*probe_rapfi_15x15_5_"):
        TrainPipeline.resume(run, log=lambda s: None, probe_games="rapfi")


def test_rapfi_names_the_probe_of_the_first_models_board_and_rule(tmp_path, capsys):
    renju = os.path.join(ROOT, "models", "gomoku_15x15_renju.npz")
    assert engine_agreement.shipped_or_path("rapfi", renju).endswith("probe_rapfi_15x15_5_renju.jsonl")
    assert engine_agreement.shipped_or_path("games.jsonl", renju) == "games.jsonl"
    small = os.path.join(ROOT, "models", "gomoku_8x8_5.npz")
    assert engine_agreement.main(["rapfi", small]) == 2
    assert "no probe ships for 8x8, 5 in a row, freestyle" in capsys.readouterr().err


def test_the_shipped_probes_read_and_fit_the_shipped_15x15_models():
    from gomoku.net.modelfile import read_model_spec
    from gomoku.train.probe import probe_path

    for rule, model in (("freestyle", "gomoku_15x15_5.npz"), ("renju", "gomoku_15x15_renju.npz")):
        probe = read_probe(probe_path("rapfi", 15, 15, 5, rule))
        assert probe.geometry == (15, 15, 5) and probe.rule == rule and len(probe) > 2000
        assert probe.fit_problem(read_model_spec(os.path.join(ROOT, "models", model))) is None


def test_buffer_updates_scores_the_probe_as_updates_go_and_leaves_the_run_alone(tmp_path, capsys):
    from gomoku.train.pipeline import TrainPipeline

    from oneoffs import buffer_updates

    probe = games_file(tmp_path / "probe.jsonl")
    run = str(tmp_path / "run")
    TrainPipeline(tiny_config(check_freq=100), run, log=lambda s: None).run(iterations=1)
    before = {name: os.path.getmtime(os.path.join(run, name)) for name in os.listdir(run)}
    assert buffer_updates.main([run, "--probe", probe, "--updates", "3", "--every", "2"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [row.split(" | ")[0] for row in rows] == ["| 0", "| 2", "| 3"]  # before, every 2, and the last
    assert {name: os.path.getmtime(os.path.join(run, name)) for name in os.listdir(run)} == before
    # a larger net and another step size, from the same checkpoint
    assert buffer_updates.main([run, "--probe", probe, "--updates", "1", "--grow", "5x40", "--lr-multiplier", "0.5",
                                "--kl-targ", "0.01"]) == 0
    assert "net 5x40, lr x0.500, KL target 0.01;" in capsys.readouterr().out
    assert {name: os.path.getmtime(os.path.join(run, name)) for name in os.listdir(run)} == before
    assert buffer_updates.main([run, "--probe", probe, "--grow", "1x8"]) == 2
    assert "--grow 1x8: a net can grow but not shrink" in capsys.readouterr().err
    assert buffer_updates.main([str(tmp_path / "none")]) == 2
    assert "checkpoint" in capsys.readouterr().err
