"""Self-play games in progress across a stop: a stream's snapshot, restored, plays on exactly as the
stream would after a switch of weights, and the learner keeps and hands out the snapshots."""

import pickle

import numpy as np
import pytest

from gomoku.search.core import core_enabled
from gomoku.search.evaluator import NetEvaluator
from gomoku.search.recipe import SelfPlayRecipe
from gomoku.actors.selfplay import GameByGame, SelfPlayStream
from gomoku.actors.stream_state import SavedStreams, pack_planes, unpack_planes
from gomoku.actors.tasks import SelfPlaySettings
from tests.helpers import FakeNet
from tests.helpers import HashEvaluator

RECIPES = {
    "puct-cap": SelfPlayRecipe(n_playout=12, p_full=0.5, n_fast=4, forced_k=2.0),
    "gumbel": SelfPlayRecipe(n_playout=8, root_search="gumbel", gumbel_m=4),
}


def _evaluator(compiled, seed):
    return NetEvaluator(FakeNet(36, seed=seed), cache_size=0) if compiled else HashEvaluator()


def _stream(evaluator, recipe, compiled, parallel=4):
    return SelfPlayStream(evaluator, (6, 6, 4), parallel, recipe, seed=5, opening_stones=2, compiled=compiled)


def _same_games(a, b):
    assert [g.index for g in a] == [g.index for g in b]
    for x, y in zip(a, b):
        assert x.moves == y.moves and x.winner == y.winner, f"game {x.index} differs"
        assert np.array_equal(x.planes, y.planes) and np.array_equal(x.pis, y.pis)
        assert np.array_equal(x.to_move, y.to_move) and np.array_equal(x.root_values, y.root_values)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.skipif(
    not core_enabled(), reason="the compiled core is off"))], ids=["reference", "core"])
@pytest.mark.parametrize("recipe", list(RECIPES), ids=list(RECIPES))
def test_a_restored_stream_plays_on_as_the_stream_does_after_a_switch_of_weights(recipe, compiled):
    recipe = RECIPES[recipe]
    live = _stream(_evaluator(compiled, 0), recipe, compiled)
    live.collect(3)
    steps = iter(range(25))  # play ahead a while: some games finish early, the others stop mid-search
    live.play_ahead(3, keep_playing=lambda: next(steps, None) is not None)
    snapshot = pickle.loads(pickle.dumps(live.snapshot()))  # as the pipe and the checkpoint carry it
    assert snapshot["next"] == 3 and snapshot["playing"]
    assert any(g["moves"] and g["pis"] is not None for g in snapshot["playing"])

    live.set_evaluator(_evaluator(compiled, 1))  # the uninterrupted run: new weights
    restored = _stream(_evaluator(compiled, 1), recipe, compiled)  # the resumed run
    restored.restore(snapshot)
    assert [s.board.history for s in restored.lockstep.slots] == [s.board.history for s in live.lockstep.slots]
    for _ in range(2):
        _same_games(live.collect(4)[0], restored.collect(4)[0])


def test_a_restored_stream_with_fewer_games_in_lockstep_plays_the_same_games():
    recipe = RECIPES["puct-cap"]
    live = _stream(HashEvaluator(), recipe, False, parallel=5)
    live.collect(2)
    snapshot = live.snapshot()
    live.set_evaluator(HashEvaluator())
    narrow = _stream(HashEvaluator(), recipe, False, parallel=2)  # games do not depend on parallel
    narrow.restore(snapshot)
    assert len(narrow.lockstep.slots) == len(snapshot["playing"]) > 2  # the games in progress all go on ...
    _same_games(live.collect(8)[0], narrow.collect(8)[0])
    assert len(narrow.lockstep.slots) <= 2  # ... and new ones open only below the new parallel


@pytest.mark.parametrize("recipe", list(RECIPES), ids=list(RECIPES))
def test_one_game_at_a_time_goes_on_with_a_lockstep_streams_games_in_progress(recipe):
    # A run resumed with one game at a time: the in-process actor restores a lockstep stream's
    # snapshot into a GameByGame, which hands out the held games first and then new ones.
    recipe = RECIPES[recipe]
    live = _stream(HashEvaluator(), recipe, False)
    live.collect(3)
    steps = iter(range(25))
    live.play_ahead(3, keep_playing=lambda: next(steps, None) is not None)
    snapshot = pickle.loads(pickle.dumps(live.snapshot()))
    held = sorted(g["index"] for g in snapshot["playing"] + snapshot["finished"])
    assert snapshot["playing"] and held

    by_game = GameByGame(HashEvaluator(), SelfPlaySettings((6, 6, 4), 1, recipe, opening_stones=2), seed=5)
    by_game.restore(snapshot)
    games = by_game.collect(len(held))[0] + by_game.collect(2)[0]
    assert [g.index for g in games] == held + [snapshot["started"], snapshot["started"] + 1]
    assert by_game.snapshot() == {"seed": 5, "next": snapshot["started"] + 2, "started": snapshot["started"] + 2,
                                  "finished": [], "playing": []}
    narrow = _stream(HashEvaluator(), recipe, False, parallel=1)  # the lockstep stream, restored alike
    narrow.restore(snapshot)
    _same_games(games, sorted(narrow.collect(len(games))[0], key=lambda g: g.index))


def test_a_snapshot_is_a_copy_and_restores_only_into_a_new_stream_of_its_seed():
    live = _stream(HashEvaluator(), RECIPES["puct-cap"], False)
    live.collect(1)
    snapshot = live.snapshot()
    moves = [list(g["moves"]) for g in snapshot["playing"]]
    live.collect(3)  # the live games go on; the snapshot stays as it was
    assert [g["moves"] for g in snapshot["playing"]] == moves
    with pytest.raises(ValueError):
        live.restore(snapshot)
    other = SelfPlayStream(HashEvaluator(), (6, 6, 4), 4, RECIPES["puct-cap"], seed=6)
    with pytest.raises(ValueError):
        other.restore(snapshot)


def test_planes_are_kept_as_bits_exactly_and_other_values_as_they_are():
    rng = np.random.default_rng(0)
    binary = (rng.random((7, 4, 6, 5)) < 0.3).astype(np.float32)
    packed = pack_planes(binary)
    assert isinstance(packed, dict) and len(pickle.dumps(packed)) < binary.nbytes / 8 + 200
    back = unpack_planes(packed)
    assert back.dtype == np.float32 and np.array_equal(back, binary)
    fractional = binary * 0.5
    assert pack_planes(fractional) is fractional


def _settings(parallel=4, n_playout=12):
    return SelfPlaySettings((6, 6, 4), parallel, SelfPlayRecipe(n_playout=n_playout))


def _snap(seed, next_index, playing=2):
    return {"seed": seed, "next": next_index, "started": next_index + playing, "finished": [],
            "playing": [{}] * playing}


def test_saved_streams_hand_out_once_by_actor_and_say_what_goes_on():
    saved = SavedStreams()
    shape = (6, 6, 4)
    games, stats = saved.keep(shape, _settings(), ["g"], "s", [_snap(1, 4), _snap(2, 4), _snap(3, 4)])
    assert (games, stats) == (["g"], "s")
    assert saved.hand_out(shape, _settings(), 3, print) is None  # not resumed: the actors hold their streams

    lines = []
    resumed = SavedStreams()
    resumed.load_state(pickle.loads(pickle.dumps(saved.state())))
    kept = resumed.hand_out(shape, _settings(parallel=8), 2, lines.append)
    assert [s["seed"] for s in kept] == [1, 2]
    assert "4 games in progress of 2 stream(s)" in lines[0] and "2 of 1 more stream(s) start over" in lines[0]
    assert "up to 8 in lockstep (were 4)" in lines[0]
    assert resumed.hand_out(shape, _settings(parallel=8), 2, lines.append) is None  # once only
    assert resumed.hand_out((8, 8, 5), _settings(), 2, lines.append) is None and len(lines) == 1

    changed = SavedStreams()
    changed.load_state(saved.state())
    assert changed.hand_out(shape, _settings(n_playout=20), 3, lines.append) is None
    assert "changed since the stop" in lines[-1]

    old = SavedStreams()
    old.load_state(None)  # a checkpoint from before snapshots
    assert old.hand_out(shape, _settings(), 3, lines.append) is None and "predates" in lines[-1]


def test_saved_streams_keep_idle_actors_streams_and_each_stream_once():
    saved = SavedStreams()
    shape = (6, 6, 4)
    saved.keep(shape, _settings(), [], None, [_snap(1, 4), _snap(2, 4), _snap(3, 4)])
    saved.keep(shape, _settings(), [], None, [_snap(1, 6)])  # one game: actors 1 and 2 had no task
    assert [(s["seed"], s["next"]) for s in saved.by_shape[shape][1]] == [(1, 6), (2, 4), (3, 4)]
    # actor 2 lost with its node, its share played again by actor 0: that stream twice, kept as it
    # stood last; actor 1 lost with its games: none
    saved.keep(shape, _settings(), [], None, [_snap(1, 9), None, _snap(1, 8)])
    assert [(s["seed"], s["next"]) for s in saved.by_shape[shape][1]] == [(1, 9)]
    saved.keep(shape, _settings(n_playout=20), [], None, [_snap(7, 2)])  # other settings: the old ones go
    assert [s["seed"] for s in saved.by_shape[shape][1]] == [7]
