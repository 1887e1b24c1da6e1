"""The rule through training and matches: model files record it, the arena refuses a model on
another rule, self-play plays by it, and a run carries a freestyle model over to renju."""

import json
import os

import numpy as np

from gomoku.search.recipe import SelfPlayRecipe
import pytest

from gomoku.game.board import Board
from gomoku.net.modelfile import ModelFileError, read_model_file, save_model_file
from gomoku.net.spec import NetSpec
from gomoku.play.arena.run import run_arena
from gomoku.play.arena.settings import ArenaError, ArenaSettings, resolve_rule
from gomoku.search.player_specs import PlayerSpec
from gomoku.train.config import TrainConfig

pytestmark = pytest.mark.timeout(240)


def tiny_model(path, rule="freestyle", width=6, n_in_row=4):
    from gomoku.net.policy_value import PolicyValueModel

    spec = NetSpec(width, width, n_in_row, "sizefree", 1, 8, ((width, width),), rule=rule)
    model = PolicyValueModel(spec, device="cpu")
    model.save(str(path))
    return str(path)


def test_model_files_record_the_rule_and_old_files_read_as_freestyle(tmp_path):
    spec = NetSpec(15, 15, 5, rule="renju")
    save_model_file(str(tmp_path / "r.npz"), spec, {"w": np.zeros(2, np.float32)})
    assert read_model_file(str(tmp_path / "r.npz"))[0].rule == "renju"
    save_model_file(str(tmp_path / "f.npz"), NetSpec(15, 15, 5), {"w": np.zeros(2, np.float32)})
    with np.load(str(tmp_path / "f.npz")) as data:
        assert "rule" not in json.loads(str(data["__meta__"]))  # a freestyle file reads as before
    assert read_model_file(str(tmp_path / "f.npz"))[0].rule == "freestyle"
    assert NetSpec(rule="renju", n_in_row=5).rule_mismatch("freestyle") == \
        "a model trained for renju, but this game is played under freestyle"
    with pytest.raises(ValueError, match="renju is played with five"):
        NetSpec(n_in_row=4, rule="renju")


def test_a_model_file_with_an_unknown_rule_is_refused(tmp_path):
    path = str(tmp_path / "x.npz")
    meta = {"format": "gomoku-zero-model/1", "width": 8, "height": 8, "n_in_row": 5, "arch": "conv3",
            "res_blocks": 0, "res_filters": 64, "rule": "connect6"}
    np.savez(path, __meta__=np.array(json.dumps(meta)))
    with pytest.raises(ModelFileError, match="unknown rule 'connect6'"):
        read_model_file(path)


def test_the_training_config_checks_its_rule():
    TrainConfig(width=15, height=15, rule="renju").validate()
    with pytest.raises(ValueError, match="unknown rule"):
        TrainConfig(rule="gomoku").validate()
    with pytest.raises(ValueError, match="renju is played with five"):
        TrainConfig(width=6, height=6, n_in_row=4, rule="renju").validate()


def test_the_arena_takes_the_models_rule_and_refuses_another(tmp_path):
    renju = tiny_model(tmp_path / "renju.npz", "renju", 9, 5)
    free = tiny_model(tmp_path / "free.npz", "freestyle", 9, 5)
    spec = PlayerSpec.parse(f"az:{renju}:4")
    assert resolve_rule([spec]) == "renju"
    assert resolve_rule([PlayerSpec.parse("pure:4")]) == "freestyle"
    with pytest.raises(ArenaError, match="trained for renju, but this game is played under standard"):
        resolve_rule([spec], "standard")
    with pytest.raises(ArenaError, match="different rules"):
        resolve_rule([spec, PlayerSpec.parse(f"az:{free}:4")])
    with pytest.raises(ArenaError, match="unknown rule"):
        resolve_rule([], "connect6")


def test_arena_games_under_renju_and_standard_follow_the_rule():
    for rule in ("renju", "standard"):
        result = run_arena(ArenaSettings("heuristic:1", "pure:30", games=2, size=(9, 9), n_in_row=5,
                                         workers=1, rule=rule))
        assert result.summary()["rule"] == rule
        for game in result.games:
            board = Board(9, 9, 5, rule=rule)
            for move in game.moves:
                board.do_move(move)  # refuses a forbidden point, and a move after the end
            assert board.winner == game.winner


def test_self_play_under_renju_opens_with_black_and_plays_legal_moves():
    from gomoku.actors.selfplay import SelfPlayStream
    from tests.helpers import HashEvaluator

    stream = SelfPlayStream(HashEvaluator(), (9, 9, 5), 4, SelfPlayRecipe(n_playout=8), 1,
                            rule="renju")
    games, _ = stream.collect(4)
    for game in games:
        assert game.start_player == 1
        board = Board(9, 9, 5, rule="renju")
        for move in game.moves:
            board.do_move(move)
        assert board.winner == game.winner


def test_a_run_carries_a_freestyle_model_over_to_renju(tmp_path):
    from gomoku.train.pipeline import TrainPipeline

    free = tiny_model(tmp_path / "free.npz", "freestyle", 9, 5)
    lines = []
    config = TrainConfig(width=9, height=9, n_in_row=5, rule="renju", arch="sizefree", sizefree_blocks=1,
                         sizefree_filters=8, n_playout=8, games_per_iter=2, batch_size=16, buffer_size=500,
                         updates_per_iter=1, epochs=1, check_freq=1000, workers=1, device="cpu")
    run = str(tmp_path / "run")
    pipeline = TrainPipeline(config, run, log=lines.append, init_model=free)
    assert any("trained for freestyle: this run trains it for renju" in line for line in lines)
    pipeline.run(iterations=1)
    assert any(line.startswith(f"run {run}: 9x9, 5 in a row, renju, 8 playouts") for line in lines)
    assert read_model_file(os.path.join(run, "current_model.npz"))[0].rule == "renju"
    start = json.loads(open(os.path.join(run, "metrics.jsonl")).readline())
    assert start["rule_from"] == "freestyle"
    with pytest.raises(ValueError, match="cannot change rule"):
        TrainPipeline.resume(run, log=lambda s: None, rule="freestyle")
