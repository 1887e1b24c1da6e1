"""Input versions: the threat planes of version 2, their VCF planes, and the nets that take them."""

import json

import numpy as np
import pytest

from gomoku.game import features
from gomoku.game.board import Board
from gomoku.game.features import (INPUT_CHANNELS, OPPONENT_VCF, OWN_VCF, PLANE_NAMES, check_input_version,
                                  has_vcf, input_channels, planes)
from gomoku.game.line_board import LineBoard
from gomoku.game.symmetry import augment, symmetries
from gomoku.game.vcf import find_vcf
from gomoku.search.heuristic import choose_move

from tests.boards import load_board
from tests.helpers import trained

OWN = {"five": 4, "four": 5, "open four": 6, "open three": 7}
THEIRS = {name: plane + 4 for name, plane in OWN.items()}


def marked(board, plane: np.ndarray) -> set:
    """The labels (like 'e5') of the cells a plane marks."""
    return {board.move_to_label(m) for m in np.flatnonzero(plane.reshape(-1))}


def threat_sets(board) -> dict:
    """Each spatial threat plane of version 2 as a set of labels, keyed ('own'|'theirs', name)."""
    p = planes(board, 2)
    return {(side, name): marked(board, p[plane])
            for side, table in (("own", OWN), ("theirs", THEIRS)) for name, plane in table.items()}


def constant(plane: np.ndarray) -> bool:
    """The value of a constant plane (checked to be constant)."""
    assert plane.min() == plane.max()
    return bool(plane.max())


POSITION = """
. . . . . . . . .
. . . . . . . . .
. . X X X . . . .
. . . . . . . . .
. O . O O . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
X X X X . . . . .
"""
X_PLANES = {
    "five": {"e1"}, "four": {"e1", "f1", "a7", "b7", "f7", "g7"}, "open four": {"b7", "f7"}, "open three": set(),
}
O_PLANES = {"five": set(), "four": {"a5", "c5", "f5"}, "open four": {"c5"}, "open three": {"f5", "g5"}}


@pytest.mark.parametrize("to_move", [1, 2])
def test_threat_planes_of_a_drawn_position_from_either_side(to_move):
    board = load_board(POSITION, to_move=to_move)
    found = threat_sets(board)
    own, theirs = (X_PLANES, O_PLANES) if to_move == 1 else (O_PLANES, X_PLANES)
    for name in OWN:
        assert found[("own", name)] == own[name], name
        assert found[("theirs", name)] == theirs[name], name
    p = planes(board, 2)
    assert p.shape == (14, 9, 9) and p.dtype == np.float32
    assert np.array_equal(p[:4], board.planes())  # version 1's planes come first
    # X's four on the first row is closed by the edge: a four (e1 wins), never an open four.
    # X's five at e1 is a VCF for X; O, were it to move, must block e1 first, with no four there.
    assert constant(p[OWN_VCF]) == (to_move == 1)
    assert constant(p[OPPONENT_VCF]) == (to_move == 2)


def test_a_broken_three_and_a_three_against_the_edge():
    board = load_board("""
. . . . . . . . .
. . . . . . X . X
. . . . . . . . .
. . . . . . . . .
. . X . X . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . O O
""", to_move=1)
    found = threat_sets(board)
    # c5 and e5: b5 makes XX.X, d5 XXX, f5 X.XX, each with an empty cell at both ends.
    # g8 and i8 against the edge: a three there can never become an open four.
    assert found[("own", "open three")] == {"b5", "d5", "f5"}
    assert found[("own", "four")] == found[("own", "open four")] == found[("own", "five")] == set()
    assert found[("theirs", "open three")] == set()  # O's h1 i1 lie against the edge
    p = planes(board, 2)
    assert not constant(p[OWN_VCF]) and not constant(p[OPPONENT_VCF])


DOUBLE_FOUR = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
O X X X . . . . .
. . . . X . . . .
. . . . X . . . .
. . . . X . . . .
. . . . O . . . .
"""


def test_vcf_planes():
    board = load_board(DOUBLE_FOUR, to_move=1)
    found = threat_sets(board)
    # e5 makes two closed fours at once (five cells f5 and e6): no open four, no five, a VCF
    assert "e5" in found[("own", "four")] and not found[("own", "open four")] and not found[("own", "five")]
    p = planes(board, 2)
    assert constant(p[OWN_VCF]) and not constant(p[OPPONENT_VCF])
    # seen from O, to move: X's VCF is the opponent's
    board.current_player = 2
    p = planes(board, 2)
    assert not constant(p[OWN_VCF]) and constant(p[OPPONENT_VCF])
    # an O stone on e5 takes the double four away
    board.cells[board.parse_move("e5")] = 2
    board.current_player = 1
    assert not constant(planes(board, 2)[OWN_VCF])


def test_vcf_agrees_with_the_heuristic_search_on_played_positions():
    rng = np.random.default_rng(3)
    found = 0
    for _ in range(3):
        board = Board(11, 11, 5)
        while not board.game_over:
            p = planes(board, 2)
            tb = LineBoard(board)
            for plane, player in ((OWN_VCF, board.current_player), (OPPONENT_VCF, board.opponent)):
                expected = find_vcf(tb, player, budget=20000) is not None
                assert constant(p[plane]) == expected, (board.history, plane)
                found += expected
            board.play(choose_move(board, 0, rng))
    assert found > 10


def _reference_planes(board) -> np.ndarray:
    """The spatial threat planes cell by cell, straight from their definitions (slow)."""
    n, width, height = board.n_in_row, board.width, board.height
    out = np.zeros((8, height, width), dtype=np.float32)
    for index, side in enumerate((board.current_player, board.opponent)):
        for cell in (m for m in range(board.size) if board.cells[m] == 0):
            row, col = board.location(cell)
            stones = board.cells.copy()
            stones[cell] = side
            for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                for length in (n, n + 1):
                    for start in range(-length + 1, 1):
                        window = [(row + (start + k) * d_row, col + (start + k) * d_col) for k in range(length)]
                        if not all(0 <= r < height and 0 <= c < width for r, c in window):
                            continue
                        content = [stones[r * width + c] for r, c in window]
                        mine, other = content.count(side), content.count(3 - side)
                        if length == n:
                            if mine == n and other == 0:
                                out[4 * index, row, col] = 1
                            if mine == n - 1 and other == 0:
                                out[4 * index + 1, row, col] = 1
                        elif content[0] == content[-1] == 0 and 0 < -start < length - 1:
                            middle = content[1:-1]
                            if middle.count(side) == n - 1:
                                out[4 * index + 2, row, col] = 1
                            if middle.count(side) == n - 2 and middle.count(0) == 1:
                                out[4 * index + 3, row, col] = 1
    return out


def random_board(width, height, n_in_row, stones, rng) -> Board:
    """A board of ``stones`` random stones (played alternately; stops if someone wins)."""
    board = Board(width, height, n_in_row, start_player=int(rng.integers(1, 3)))
    for move in rng.permutation(width * height)[:stones]:
        board.play(int(move))
        if board.game_over:
            board.undo()
            break
    return board


@pytest.mark.parametrize("width,height,n_in_row", [(6, 6, 4), (9, 9, 5), (7, 12, 5), (15, 15, 5), (20, 11, 5)])
def test_threat_planes_match_their_definition_on_any_board(width, height, n_in_row):
    rng = np.random.default_rng(width * height)
    for stones in (0, 6, width * height // 3, width * height // 2):
        board = random_board(width, height, n_in_row, stones, rng)
        p = planes(board, 2)
        assert p.shape == (14, height, width)
        np.testing.assert_array_equal(p[4:12], _reference_planes(board), err_msg=board.to_text())


@pytest.mark.parametrize("width,height", [(9, 9), (7, 10)])
def test_planes_turn_with_the_board_and_augmentation_keeps_them(width, height, monkeypatch):
    # A VCF search that runs out of nodes answers "no", and where it does depends on the order
    # it tries the fours in: with nodes enough for every search, no answer depends on it.
    monkeypatch.setattr(features, "VCF_NODES", 100_000)
    rng = np.random.default_rng(7)
    boards = [random_board(width, height, 5, k, rng) for k in (5, 15, 25, 30)]
    stacked = np.stack([planes(b, 2) for b in boards])
    pis = rng.dirichlet(np.ones(width * height), len(boards)).astype(np.float32)
    augmented, _, _ = augment(stacked, pis, np.zeros(len(boards), np.float32))
    for k, sym in enumerate(symmetries(width, height)):
        perm = sym.move_permutation(width, height)
        for i, board in enumerate(boards):
            turned = Board(*sym.apply(np.zeros((height, width))).shape[::-1], 5, board.start_player)
            for move in board.history:
                turned.play(int(perm[move]))
            expected = planes(turned, 2)
            np.testing.assert_array_equal(sym.apply(stacked[i]), expected)
            np.testing.assert_array_equal(augmented[k * len(boards) + i], expected)


def test_version_one_is_board_planes_and_versions_are_checked():
    rng = np.random.default_rng(1)
    board = random_board(8, 8, 5, 20, rng)
    np.testing.assert_array_equal(planes(board), board.planes())
    np.testing.assert_array_equal(planes(board, 1), board.planes())
    assert input_channels(1) == 4 and input_channels(2) == 14 == len(PLANE_NAMES[2])
    assert set(INPUT_CHANNELS) == set(PLANE_NAMES)
    for bad in (0, 3, True, "2"):
        with pytest.raises(ValueError, match="input version"):
            check_input_version(bad)


@pytest.mark.parametrize("rule", ["freestyle", "standard", "renju"])
def test_the_batched_planes_are_each_boards_planes(rule):
    rng = np.random.default_rng(3)
    boards = []
    for stones in range(0, 60, 3):
        board = Board(15, 15, 5, rule=rule)
        while len(board.history) < stones and not board.game_over:
            board.do_move(int(rng.choice(board.legal_moves())))
        boards.append(board)
    for version in (1, 2):
        one_by_one = np.zeros((len(boards), INPUT_CHANNELS[version], 225), np.float32)
        for row, board in enumerate(boards):
            features.fill_planes(board, one_by_one[row], version)
        batched = np.zeros_like(one_by_one)
        features.fill_planes_batch(boards, b"".join(bytes(b.cells) for b in boards), batched, version)
        assert np.array_equal(batched, one_by_one)
        assert one_by_one[:, 4:].any() if version == 2 else True  # some threat planes are set


def test_has_vcf_reads_any_side_of_a_stone_array():
    board = load_board(DOUBLE_FOUR, to_move=1)
    stones = board.stones()
    assert has_vcf(stones, 1, 9, 9, 5) and not has_vcf(stones, 2, 9, 9, 5)
    assert not has_vcf(stones, 1, 9, 9, 5, budget=0)  # no budget: no answer but "no"


# ------------------------------------------------------------------ nets, files, training
def test_model_files_record_the_input_version_and_old_files_read_as_version_one(tmp_path):
    from gomoku.net.modelfile import ModelFileError, read_model_file, save_model_file
    from gomoku.net.spec import NetSpec

    v1 = NetSpec(9, 9, 5, "sizefree", 1, 8, ((9, 9),))
    v2 = NetSpec(9, 9, 5, "sizefree", 1, 8, ((9, 9),), inputs=2)
    weights = {"w": np.zeros(3, np.float32)}
    for spec in (v1, v2):
        path = str(tmp_path / f"v{spec.inputs}.npz")
        save_model_file(path, spec, weights)
        with np.load(path) as data:
            meta = json.loads(str(data["__meta__"]))
        assert meta.get("inputs") == (None if spec.inputs == 1 else 2)  # version 1 files read as before
        assert read_model_file(path)[0] == spec
    shipped, _ = read_model_file("models/gomoku_8x8_5.npz")  # written before input versions
    assert shipped.inputs == 1 and shipped.channels == 4
    path = str(tmp_path / "v9.npz")
    with np.load(str(tmp_path / "v2.npz")) as data:
        meta = json.loads(str(data["__meta__"]))
    np.savez(path, w=weights["w"], __meta__=np.array(json.dumps({**meta, "inputs": 9})))
    with pytest.raises(ModelFileError, match="input version"):
        read_model_file(path)


def _boards(rng, count=12, width=9, height=9):
    return [random_board(width, height, 5, int(rng.integers(0, 40)), rng) for _ in range(count)]


@pytest.mark.parametrize("arch", ["sizefree", "conv3"])
def test_a_carried_over_net_plays_exactly_as_before(arch):
    from gomoku.net.grow import carry_inputs
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec
    from gomoku.search.evaluator import NetEvaluator

    rng = np.random.default_rng(5)
    old = trained(NetSpec(9, 9, 5, arch, 2 if arch == "sizefree" else 0, 8, ((9, 9),) if arch == "sizefree" else ()),
                   rng)
    spec, weights = carry_inputs(old.spec, old.weights(), 2)
    assert spec == NetSpec(**{**old.spec.__dict__, "inputs": 2}) and spec.channels == 14
    new = PolicyValueModel(spec, device="cpu")
    new.set_weights(weights)
    assert not weights["conv1.weight"][:, 4:].any()
    boards = [b for b in _boards(rng) if not b.game_over]
    v1 = np.stack([planes(b, 1) for b in boards])
    v2 = np.stack([planes(b, 2) for b in boards])
    assert v2[:, 4:12].any()  # the positions have threats: the new planes are not all zero
    for predict in ("predict_dygraph", "predict"):  # the dygraph net and the exported predictor
        log_p, value = getattr(old, predict)(v1)
        new_log_p, new_value = getattr(new, predict)(v2)
        np.testing.assert_allclose(np.exp(new_log_p), np.exp(log_p), atol=1e-5)
        np.testing.assert_allclose(new_value, value, atol=1e-5)
    # the evaluators build each net's own planes
    assert NetEvaluator(old).input_version == 1 and NetEvaluator(new).input_version == 2
    priors, values = NetEvaluator(old).evaluate(boards)
    new_priors, new_values = NetEvaluator(new).evaluate(boards)
    np.testing.assert_allclose(new_priors, priors, atol=1e-5)
    np.testing.assert_allclose(new_values, values, atol=1e-5)
    with pytest.raises(ValueError, match="later input version"):
        carry_inputs(spec, weights, 1)


def test_an_exported_net_says_its_input_version(tmp_path):
    from gomoku.net.inference import INPUT_VERSION_FILE, InferencePredictor
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec
    from gomoku.search.evaluator import NetEvaluator
    from gomoku.actors.runner import load_evaluator

    for inputs in (1, 2):
        model = PolicyValueModel(NetSpec(9, 9, 5, "sizefree", 1, 8, inputs=inputs), device="cpu")
        directory = tmp_path / str(inputs)
        directory.mkdir()
        model.export_inference(str(directory))
        evaluator = load_evaluator(str(directory), "cpu", 1)  # what a worker process plays with
        assert evaluator.input_version == inputs
        boards = [random_board(11, 7, 5, 12, np.random.default_rng(inputs))]  # a size-free net: any board
        priors, _ = evaluator.evaluate(boards)
        np.testing.assert_allclose(priors, NetEvaluator(model).evaluate(boards)[0], atol=1e-5)
    (directory / INPUT_VERSION_FILE).unlink()  # exported before input versions
    assert InferencePredictor(str(directory)).input_version == 1


def test_self_play_records_the_planes_of_its_net_and_the_buffer_keeps_them():
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec
    from gomoku.search.evaluator import NetEvaluator
    from gomoku.train.replay import SizedReplayBuffer
    from gomoku.actors.selfplay import self_play_games, training_arrays

    model = PolicyValueModel(NetSpec(6, 6, 4, "sizefree", 1, 8, inputs=2), device="cpu")
    games, _ = self_play_games(NetEvaluator(model), (6, 6, 4), 2, 2, n_playout=8, c_puct=5.0, seed=0)
    for game in games:
        assert game.planes.shape == (len(game.to_move), 14, 6, 6)
        board = Board(6, 6, 4, game.start_player)
        for move, recorded in zip(game.moves, game.planes):
            np.testing.assert_array_equal(recorded, planes(board, 2))
            board.play(move)
    buffer = SizedReplayBuffer(100, [(6, 6)], channels=14)
    arrays = training_arrays(games)
    buffer.extend(*augment(*arrays))
    assert buffer.sample(8, np.random.default_rng(0))[0].shape == (8, 14, 6, 6)
    with pytest.raises(ValueError, match="4 planes"):
        SizedReplayBuffer(100, [(6, 6)], channels=14).extend(arrays[0][:, :4], arrays[1], arrays[2])


def test_a_run_trains_version_two_from_scratch_and_from_a_carried_over_model(tmp_path):
    from gomoku.net.modelfile import read_model_file
    from gomoku.train.pipeline import TrainPipeline

    from tests.helpers import tiny_config

    config = tiny_config(arch="sizefree", sizefree_blocks=1, sizefree_filters=8, check_freq=100)
    lines = []
    fresh = TrainPipeline(config.__class__(**{**config.__dict__, "inputs": 2, "check_freq": 2}),
                          str(tmp_path / "fresh"), log=lines.append)
    for _ in range(2):  # the second iteration updates the net from the buffer, then evaluates it
        record = fresh.run_iteration()
    assert "loss" in record and fresh.buffer.channels == 14
    assert any("eval vs pure MCTS" in line for line in lines)
    assert read_model_file(str(tmp_path / "fresh" / "current_model.npz"))[0].inputs == 2
    resumed = TrainPipeline.resume(str(tmp_path / "fresh"), log=lambda s: None)
    assert resumed.model.spec.inputs == 2 and len(resumed.buffer) == len(fresh.buffer)
    with pytest.raises(ValueError, match="inputs"):
        TrainPipeline.resume(str(tmp_path / "fresh"), log=lambda s: None, inputs=1)

    v1 = TrainPipeline(config, str(tmp_path / "v1"), log=lambda s: None)
    v1.run_iteration()
    old_model = str(tmp_path / "v1" / "current_model.npz")
    lines = []
    carried = TrainPipeline(config.__class__(**{**config.__dict__, "inputs": 2}), str(tmp_path / "carried"),
                            log=lines.append, init_model=old_model)
    assert carried.model.spec.inputs == 2 and carried.config.inputs == 2 and carried.buffer.channels == 14
    assert any("input version 2" in line for line in lines)
    boards = [b for b in _boards(np.random.default_rng(2), 8, 6, 6) if not b.game_over]
    log_p, value = v1.model.predict_dygraph(np.stack([planes(b, 1) for b in boards]))
    new_log_p, new_value = carried.model.predict_dygraph(np.stack([planes(b, 2) for b in boards]))
    np.testing.assert_allclose(np.exp(new_log_p), np.exp(log_p), atol=1e-5)
    np.testing.assert_allclose(new_value, value, atol=1e-5)
    carried.run_iteration()
    carried.run_iteration()
    assert read_model_file(str(tmp_path / "carried" / "current_model.npz"))[0].inputs == 2


def test_train_py_refuses_an_earlier_input_version_than_the_models(tmp_path, capsys):
    import train
    from gomoku.net.modelfile import save_model_file
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    spec = NetSpec(6, 6, 4, "sizefree", 1, 8, ((6, 6),), inputs=2)
    path = str(tmp_path / "v2.npz")
    save_model_file(path, spec, PolicyValueModel(spec, device="cpu").weights())
    with pytest.raises(SystemExit):
        train.main(["--preset", "6x6x4", "--init-model", path, "--inputs", "1", "--run-dir", str(tmp_path / "r")])
    assert "cannot go back to an earlier one" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(["--preset", "6x6x4", "--inputs", "3"])
    assert "invalid choice" in capsys.readouterr().err


def test_a_version_two_net_grows_and_the_config_checks_its_version():
    from dataclasses import replace

    from gomoku.net.grow import check_growable, grow_weights
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    from tests.helpers import tiny_config

    rng = np.random.default_rng(4)
    small = trained(NetSpec(9, 9, 5, "sizefree", 1, 8, ((9, 9),), inputs=2), rng)
    large_spec = replace(small.spec, res_blocks=2, res_filters=12)
    large = PolicyValueModel(large_spec, device="cpu")
    large.set_weights(grow_weights(small.spec, small.weights(), large_spec, large.weights()))
    v2 = np.stack([planes(b, 2) for b in _boards(rng, 6) if not b.game_over])
    for got, expected in zip(large.predict_dygraph(v2), small.predict_dygraph(v2)):
        np.testing.assert_allclose(got, expected, atol=1e-5)
    with pytest.raises(ValueError, match="input version"):
        check_growable(small.spec, replace(large_spec, inputs=1))
    assert tiny_config(inputs=2).validate().inputs == 2
    with pytest.raises(ValueError, match="input version"):
        tiny_config(inputs=3).validate()
