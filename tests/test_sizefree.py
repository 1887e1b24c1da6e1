"""The size-free net: one weight file for every board size, and training on several sizes."""

import io
import json
import os

import numpy as np

from gomoku.search.recipe import SelfPlayRecipe
import pytest

from gomoku.actors.actors import InlineActors
from gomoku.actors.tasks import SelfPlaySettings
from gomoku.net.inference import InferencePredictor
from gomoku.net.modelfile import ModelFileError, read_model_file
from gomoku.net.policy_value import PolicyValueModel
from gomoku.net.spec import NetSpec
from gomoku.play.arena.run import run_arena
from gomoku.play.arena.settings import ArenaError, ArenaSettings, resolve_geometry
from gomoku.play.engine.brain import EngineOptions, PbrainEngine
from gomoku.play.match import setup_match
from gomoku.search.player_specs import PlayerSpec
from gomoku.train.checkpoint import read_checkpoint
from gomoku.train.config import TrainConfig
from gomoku.train.pipeline import TrainPipeline
from gomoku.train.replay import ReplayBuffer, SizedReplayBuffer
from tests.helpers import random_planes

SMALL = NetSpec(9, 9, 5, "sizefree", 1, 8, ((9, 9),))


@pytest.fixture(scope="module")
def trained_9x9(tmp_path_factory):
    """A size-free model after a few Adam steps on 9x9 positions, saved."""
    rng = np.random.default_rng(0)
    model = PolicyValueModel(SMALL, device="cpu")
    planes = random_planes(16, 9, 9, rng)
    empty = 1.0 - planes[:, 0] - planes[:, 1]
    pis = (empty / empty.sum(axis=(1, 2), keepdims=True)).reshape(16, -1)
    for _ in range(3):
        model.train_step(planes, pis, rng.choice([-1.0, 1.0], 16).astype(np.float32), 1e-3)
    path = str(tmp_path_factory.mktemp("sizefree") / "sizefree.npz")
    model.save(path)
    return path


def test_model_file_round_trip_records_size_free_and_trained_sizes(trained_9x9):
    spec, weights = read_model_file(trained_9x9)
    assert spec == SMALL and spec.size_free and spec.trained_sizes == ((9, 9),)
    import zipfile

    with zipfile.ZipFile(trained_9x9) as z:
        meta = json.loads(np.load(z.open("__meta__.npy")).item())
    assert meta["size_free"] is True and meta["trained_sizes"] == [[9, 9]] and meta["arch"] == "sizefree"
    model = PolicyValueModel.load(trained_9x9, device="cpu")
    for name, value in model.weights().items():
        assert np.array_equal(value, weights[name])


def test_a_fixed_size_file_keeps_its_old_meta(tmp_path):
    path = str(tmp_path / "fixed.npz")
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(path)
    import zipfile

    with zipfile.ZipFile(path) as z:
        meta = json.loads(np.load(z.open("__meta__.npy")).item())
    assert "trained_sizes" not in meta and "size_free" not in meta
    assert read_model_file(path)[0] == NetSpec(6, 6, 4)


@pytest.mark.parametrize("size", [6, 9, 15])
def test_forward_on_any_size_gives_probabilities_over_the_empty_cells(size):
    model = PolicyValueModel(NetSpec(9, 9, 5, "sizefree", 1, 8), device="cpu")
    planes = random_planes(5, size, size, np.random.default_rng(size))
    occupied = (planes[:, 0] + planes[:, 1]).reshape(5, -1) > 0
    for log_p, value in (model.predict_dygraph(planes), model.predict(planes)):
        assert log_p.shape == (5, size * size) and value.shape == (5,)
        p = np.exp(log_p)
        assert np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
        assert p[occupied].max() < 1e-12
        assert np.all(np.abs(value) <= 1.0)


def test_one_predictor_serves_two_sizes(tmp_path):
    model = PolicyValueModel(NetSpec(9, 9, 5, "sizefree", 2, 8), device="cpu")
    model.export_inference(str(tmp_path))
    predictor = InferencePredictor(str(tmp_path), "cpu")
    rng = np.random.default_rng(1)
    for size in (9, 15, 9):
        planes = random_planes(4, size, size, rng)
        log_p, value = predictor.run(planes)
        ref_log_p, ref_value = model.predict_dygraph(planes)
        empty = (planes[:, 0] + planes[:, 1]).reshape(4, -1) == 0
        assert log_p.shape == (4, size * size)
        assert np.allclose(log_p[empty], ref_log_p[empty], atol=1e-4)
        assert np.allclose(value, ref_value, atol=1e-5)


def test_boards_a_model_refuses_are_named(tmp_path, trained_9x9):
    fixed = str(tmp_path / "fixed.npz")
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(fixed)
    with pytest.raises(ModelFileError, match=r"6x6, 4 in a row.*7x7, 4 in a row"):
        PolicyValueModel.load(fixed, device="cpu", expect=NetSpec(7, 7, 4))
    with pytest.raises(ModelFileError, match=r"size-free model for 5 in a row.*11x11, 4 in a row"):
        PolicyValueModel.load(trained_9x9, device="cpu", expect=NetSpec(11, 11, 4))
    assert PolicyValueModel.load(trained_9x9, device="cpu", expect=NetSpec(13, 11, 5)).spec.size_free


def test_arena_geometry_of_a_size_free_model(tmp_path, trained_9x9):
    az = PlayerSpec("az", trained_9x9, 4)
    assert resolve_geometry([az, PlayerSpec("pure", playouts=5)]) == (9, 9, 5)
    assert resolve_geometry([az, PlayerSpec("pure", playouts=5)], (15, 15)) == (15, 15, 5)
    with pytest.raises(ArenaError, match="size-free model for 5 in a row"):
        resolve_geometry([az], (9, 9), 4)
    fixed = str(tmp_path / "fixed.npz")
    PolicyValueModel(NetSpec(11, 11, 5), device="cpu").save(fixed)
    assert resolve_geometry([az, PlayerSpec("az", fixed, 4)]) == (11, 11, 5)  # the fixed one sets it


@pytest.mark.parametrize("size", [11, 15])
def test_a_model_trained_on_9x9_plays_larger_boards_in_the_arena(trained_9x9, size):
    settings = ArenaSettings(f"az:{trained_9x9}:6", "pure:6", games=2, size=(size, size), workers=1,
                             parallel=2, device="cpu")
    result = run_arena(settings)
    assert result.geometry == (size, size, 5) and result.total.games == 2
    assert all(len(g.moves) >= 9 for g in result.games)  # five in a row takes at least 9 stones


def test_a_model_trained_on_9x9_plays_15x15_in_a_match(trained_9x9):
    match = setup_match(model=trained_9x9, playouts=4, first="ai", size=(15, 15), seed=0, device="cpu")
    assert (match.board.width, match.board.height, match.board.n_in_row) == (15, 15, 5)
    move = match.ai_to_move.get_action(match.board)
    match.play(move)
    assert match.board.history == [move]
    with pytest.raises(ValueError, match="size-free model for 5 in a row"):
        setup_match(model=trained_9x9, n_in_row=4, device="cpu")
    assert setup_match(model=trained_9x9, device="cpu").board.width == 9  # its largest trained size


def test_the_engine_plays_any_size_with_a_size_free_model(trained_9x9):
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(model=trained_9x9, device="cpu", max_playouts=8), out)
    for line in ("START 15", "BEGIN", "START 11", "BEGIN"):
        engine.handle(line)
    answers = [line for line in out.getvalue().splitlines() if not line.startswith("MESSAGE")]
    assert answers[0] == "OK" and answers[2] == "OK"
    for answer, size in ((answers[1], 15), (answers[3], 11)):
        x, y = map(int, answer.split(","))
        assert 0 <= x < size and 0 <= y < size
    engine.handle("START 4")
    assert out.getvalue().splitlines()[-1].startswith("ERROR")


def test_sized_replay_buffer_draws_each_batch_from_one_size():
    rng = np.random.default_rng(0)
    buffer = SizedReplayBuffer(50, [(6, 6), (7, 7)])
    for size, z in ((6, 1.0), (7, -1.0), (6, 1.0)):
        n = 20
        buffer.extend(np.ones((n, 4, size, size), np.uint8), np.full((n, size * size), 1.0 / size ** 2, np.float32),
                      np.full(n, z, np.float32))
    assert len(buffer.buffers[(6, 6)]) == 40 and len(buffer.buffers[(7, 7)]) == 20 and len(buffer) == 60
    seen = set()
    for _ in range(30):
        planes, pis, zs = buffer.sample(10, rng)
        seen.add(planes.shape[-1])
        assert pis.shape == (10, planes.shape[-1] ** 2) and len(set(zs)) == 1  # one size a batch
    assert seen == {6, 7}
    assert buffer.sample(10, rng, sizes=[(7, 7)])[0].shape[-1] == 7
    assert not buffer.can_sample(20, [(7, 7)]) and buffer.can_sample(20)
    with pytest.raises(ValueError, match="8x8 board"):
        buffer.extend(np.zeros((1, 4, 8, 8), np.uint8), np.zeros((1, 64), np.float32), np.zeros(1, np.float32))
    again = SizedReplayBuffer(50, [(6, 6), (7, 7)])
    again.load_state(buffer.state())
    assert {s: len(b) for s, b in again.buffers.items()} == {(6, 6): 40, (7, 7): 20}


def test_a_one_size_buffer_keeps_the_old_checkpoint_format():
    old = ReplayBuffer(10, (4, 6, 6), 36)
    old.extend(np.ones((3, 4, 6, 6), np.uint8), np.zeros((3, 36), np.float32), np.arange(3, dtype=np.float32))
    sized = SizedReplayBuffer(10, [(6, 6)])
    sized.load_state(old.state())
    assert set(sized.state()) == {"planes", "pis", "zs"}
    assert np.array_equal(sized.state()["zs"], [0, 1, 2])


def test_task_runner_keeps_a_self_play_stream_per_board():
    actors = InlineActors()
    actors.publish(PolicyValueModel(NetSpec(6, 6, 4, "sizefree", 1, 8), device="cpu"))
    settings = {n: SelfPlaySettings((n, n, 4), 2, SelfPlayRecipe(n_playout=4)) for n in (6, 7)}
    actors.self_play(1, settings[6], 0)
    stream_6 = actors._runner.streams[(6, 6, 4)].stream
    games, _ = actors.self_play(1, settings[7], 0)
    assert games[0].width == 7
    actors.self_play(1, settings[6], 0)
    assert actors._runner.streams[(6, 6, 4)].stream is stream_6 and stream_6._next == 2


def tiny_multi_size(**overrides):
    base = dict(n_in_row=4, arch="sizefree", sizefree_blocks=1, sizefree_filters=8, sizes="6,7",
                n_playout=6, games_per_iter=2, batch_size=16, buffer_size=3000, updates_per_iter=1, epochs=1,
                check_freq=3, eval_games=2, gate_games=2, pure_playout_start=10, workers=1, parallel_games=2, device="cpu")
    base.update(overrides)
    return TrainConfig(**base)


def test_only_a_size_free_net_trains_on_several_sizes():
    with pytest.raises(ValueError, match="only a size-free net"):
        tiny_multi_size(arch="conv3").validate()
    with pytest.raises(ValueError, match="cannot read"):
        tiny_multi_size(sizes="6,seven").validate()


def test_a_multi_size_run_stops_and_resumes_with_its_buffers_and_schedule(tmp_path):
    run = str(tmp_path / "run")
    pipeline = TrainPipeline(tiny_multi_size(game_batch_num=4), run, log=lambda s: None)
    pipeline.run(iterations=2)
    state = read_checkpoint(os.path.join(run, "checkpoint.pkl"))
    assert set(state["buffer"]["by_size"]) == {"6x6", "7x7"}
    lengths = {k: len(v["zs"]) for k, v in state["buffer"]["by_size"].items()}
    assert min(lengths.values()) > 0

    again = TrainPipeline.resume(run, log=lambda s: None)
    assert again.iteration == 2
    assert {f"{w}x{h}": len(b) for (w, h), b in again.buffer.buffers.items()} == lengths
    with pytest.raises(ValueError, match="cannot change sizes"):
        TrainPipeline.resume(run, log=lambda s: None, sizes="6,8")
    again.run()
    with open(os.path.join(run, "metrics.jsonl")) as f:
        records = [json.loads(line) for line in f]
    boards = [r["board"] for r in records if r["event"] == "iteration"]
    assert boards == ["6x6", "7x7", "6x6", "7x7"]  # mixed: the sizes take turns, across the resume
    evaluation = next(r for r in records if r["event"] == "evaluation")
    assert evaluation["iteration"] == 3
    after = read_checkpoint(os.path.join(run, "checkpoint.pkl"))
    for key, n in lengths.items():  # the old positions stayed, oldest first
        assert np.array_equal(after["buffer"]["by_size"][key]["pis"][:n], state["buffer"]["by_size"][key]["pis"])
    spec, _ = read_model_file(os.path.join(run, "current_model.npz"))
    assert spec.size_free and spec.trained_sizes == ((6, 6), (7, 7)) and (spec.width, spec.height) == (7, 7)


def test_a_curriculum_goes_from_small_to_large_boards(tmp_path):
    config = tiny_multi_size(size_schedule="curriculum", stage_iters=2, sizes="7,6")
    assert [config.size_of_iteration(i) for i in range(5)] == [(6, 6), (6, 6), (7, 7), (7, 7), (7, 7)]
    assert config.sizes_in_play(1) == [(6, 6)] and config.sizes_in_play(2) == [(7, 7)]
    assert config.sizes_played(1) == [(6, 6)] and config.sizes_played(3) == [(6, 6), (7, 7)]
    pipeline = TrainPipeline(config, str(tmp_path / "run"), log=lambda s: None)
    pipeline.run(iterations=1)
    assert pipeline.model.spec.trained_sizes == ((6, 6),)
    assert pipeline.largest_in_play() == (6, 6)


def test_the_spec_after_an_iteration_names_the_sizes_played_so_far():
    config = TrainConfig(width=8, height=8, n_in_row=4, arch="sizefree", sizes="6,8",
                         size_schedule="curriculum", stage_iters=2)
    early = config.model_spec(1)
    assert early.size_free and early.trained_sizes == ((6, 6),) and (early.width, early.height) == (6, 6)
    late = config.model_spec(3)
    assert late.trained_sizes == ((6, 6), (8, 8)) and (late.width, late.height) == (8, 8)
    # a run started from a model trained on 9x9 keeps naming 9x9, and 9x9 is its largest board
    resumed = config.model_spec(1, earlier_sizes=((9, 9),))
    assert resumed.trained_sizes == ((6, 6), (9, 9)) and (resumed.width, resumed.height) == (9, 9)
    fixed = TrainConfig(width=6, height=6, n_in_row=4, arch="conv3").model_spec(5)
    assert not fixed.size_free and (fixed.width, fixed.height) == (6, 6)


def test_the_default_recipe_trains_a_size_free_net_and_configs_without_an_arch_train_conv3():
    assert TrainConfig().arch == "sizefree" and NetSpec.for_config(TrainConfig()).size_free
    old = TrainConfig().to_dict()
    del old["arch"]  # a checkpoint's config without the field
    assert TrainConfig.from_dict(old).arch == "conv3"
    old["arch"] = "reference"  # the conv3 net's other name, in checkpoints and on the command line
    assert TrainConfig.from_dict(old).arch == "conv3" and TrainConfig(arch="reference").validate().arch == "conv3"
    assert TrainConfig.from_dict(TrainConfig(arch="sizefree").to_dict()).arch == "sizefree"
