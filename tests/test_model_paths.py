"""Which model a user gets: run directories, files that are not models, the default from anywhere."""

import io
import os
import subprocess
import sys

import pytest

from gomoku.game.gamefile import GameRecord, save_game
from gomoku.net.modelfile import ModelFileError, find_model, read_model_file, read_model_spec
from gomoku.net.shipped import DEFAULT_MODEL, PROJECT_ROOT
from gomoku.play.match import setup_match

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def save_random_model(path, seed=0):
    import paddle

    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    paddle.seed(seed)
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(str(path))
    return str(path)


@pytest.fixture(scope="module")
def model_6x6(tmp_path_factory):
    return save_random_model(tmp_path_factory.mktemp("model") / "random_6x6.npz")


def play(*args, cwd, stdin="quit\n"):
    return subprocess.run([sys.executable, os.path.join(ROOT, "play.py"), "--text", *args],
                          cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)


def test_a_run_directory_gives_its_best_model_else_its_current_one(tmp_path, model_6x6):
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(ModelFileError, match="holds no model yet"):
        find_model(str(run))
    (run / "checkpoint.pkl").write_bytes(b"\x80\x04not a model")
    with pytest.raises(ModelFileError, match=f"training checkpoint.*--model {run}"):
        find_model(str(run / "checkpoint.pkl"))
    (run / "current_model.npz").write_bytes(open(model_6x6, "rb").read())
    assert find_model(str(run)) == str(run / "current_model.npz")
    (run / "best_model.npz").write_bytes(open(model_6x6, "rb").read())
    assert find_model(str(run)) == str(run / "best_model.npz")
    assert find_model(model_6x6) == model_6x6


def test_a_spec_reads_alone_and_play_reads_the_model_once(tmp_path, model_6x6, monkeypatch):
    from gomoku.net import modelfile, policy_value
    from gomoku.play import match

    spec, weights = read_model_file(model_6x6)
    assert read_model_spec(model_6x6) == spec and weights
    for bad in (tmp_path, tmp_path / "none.npz"):
        with pytest.raises(ModelFileError):
            read_model_spec(str(bad))
    run = tmp_path / "run"
    run.mkdir()
    (run / "best_model.npz").write_bytes(open(model_6x6, "rb").read())
    calls = []

    def counted(name, function):
        def call(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)
        return call

    monkeypatch.setattr(match, "find_model", counted("find", modelfile.find_model))
    monkeypatch.setattr(match, "read_model_spec", counted("spec", modelfile.read_model_spec))
    monkeypatch.setattr(policy_value, "read_model_file", counted("whole", modelfile.read_model_file))
    game = setup_match(model=str(run), white="policy", device="cpu", precision="fp32")
    assert game.notes == [f"playing {run / 'best_model.npz'}"]
    assert sorted(calls) == ["find", "spec", "whole"]  # the weights are read by the one player that plays them


def test_play_py_plays_a_run_directory_and_says_which_model(tmp_path, model_6x6):
    run = tmp_path / "run"
    run.mkdir()
    (run / "current_model.npz").write_bytes(open(model_6x6, "rb").read())
    result = play("--model", str(run), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"playing {run / 'current_model.npz'}" in result.stdout
    assert "Gumbel" in result.stdout  # the model, with the default search

    refused = play("--model", str(run / "checkpoint.pkl"), cwd=tmp_path)
    assert refused.returncode == 1
    assert "no model file" in refused.stderr  # no checkpoint there: the plain message

    (run / "checkpoint.pkl").write_bytes(b"\x80\x04pickle")
    refused = play("--model", str(run / "checkpoint.pkl"), cwd=tmp_path)
    assert refused.returncode == 1 and f"play the run with --model {run}" in refused.stderr


def test_a_file_that_is_not_a_model_says_what_was_expected(tmp_path):
    bad = tmp_path / "not-a-model.npz"
    bad.write_text("hello\n")
    with pytest.raises(ModelFileError, match="not a model file: expected a Gomoku Zero model"):
        read_model_file(str(bad))

    result = play("--model", str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert "not a model file: expected" in result.stderr and "allow_pickle" not in result.stderr

    trained = subprocess.run([sys.executable, "train.py", "--init-model", str(bad), "--run-dir",
                              str(tmp_path / "run"), "--iterations", "1"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert trained.returncode == 2
    assert "not a model file: expected" in trained.stderr and "allow_pickle" not in trained.stderr


def test_the_engine_start_names_what_it_expected(tmp_path):
    from gomoku.play.engine.brain import EngineOptions, PbrainEngine
    from gomoku.play.engine.protocol import ProtocolError

    bad = tmp_path / "not-a-model.npz"
    bad.write_text("hello\n")
    engine = PbrainEngine(EngineOptions(model=str(bad), device="cpu"), out=io.StringIO())
    with pytest.raises(ProtocolError, match="not a model file: expected") as info:
        engine._load_model()
    assert "allow_pickle" not in str(info.value)


def test_the_default_model_is_found_from_another_directory(tmp_path):
    assert DEFAULT_MODEL.startswith(PROJECT_ROOT) and os.path.isabs(DEFAULT_MODEL)
    assert os.path.isfile(DEFAULT_MODEL), "the shipped model is part of the repository"
    result = play(cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no trained model" not in result.stderr + result.stdout
    assert "Goodbye." in result.stdout


def test_model_replaces_the_model_of_a_loaded_games_ai_seat(tmp_path, model_6x6):
    other = save_random_model(tmp_path / "other.npz", seed=1)
    game = tmp_path / "game.json"
    record = GameRecord(width=6, height=6, n_in_row=4, moves=[14],
                        players={1: "human", 2: f"az:{model_6x6}:30"})
    save_game(str(game), record)
    assert setup_match(load=str(game), device="cpu").specs[2].model == model_6x6
    match = setup_match(load=str(game), model=other, device="cpu")
    assert match.specs[2].model == other and match.specs[2].playouts == 30
    assert match.specs[1].kind == "human"


def test_a_rule_alone_plays_its_shipped_model_or_pure_mcts_with_a_note():
    renju = setup_match(rule="renju", device="cpu")
    assert (renju.board.width, renju.board.height, renju.board.rule) == (15, 15, "renju")
    assert renju.specs[2].kind == "gumbel" and renju.specs[2].model.endswith("gomoku_15x15_renju.npz")
    assert renju.notes == []
    standard = setup_match(rule="standard", device="cpu")
    assert (standard.board.width, standard.board.rule) == (8, "standard") and standard.specs[2].kind == "pure"
    assert standard.notes == ["no shipped model plays standard: the AI is pure MCTS (--model names one)"]
    freestyle = setup_match(rule="freestyle", device="cpu")
    assert freestyle.specs[2].model == DEFAULT_MODEL and freestyle.notes == []
