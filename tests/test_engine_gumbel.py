"""The engine's Gumbel search (``--root-search gumbel``): its budget planned from the clock, its
rounds stopped by the deadline, its move one of the candidates, and the engine answering with it."""

from __future__ import annotations

import io

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.play.engine.brain import EngineOptions, PbrainEngine
from gomoku.play.engine.cli import engine_options
from gomoku.play.engine.move_search import PLAN_SHARE, PlayoutTimer, SimulationRate, gumbel_timed_search
from gomoku.search.evaluator import NetEvaluator
from gomoku.search.gumbel import GumbelPlayer
from tests.helpers import LOAD_SLACK_S, FakeClock, FakeNet, SlowEvaluator, StampedOut, begin_while_stuck, converse

pytestmark = pytest.mark.timeout(120)


def _player(size=9, seed=0):
    return GumbelPlayer(NetEvaluator(FakeNet(size * size, seed)), seed=seed)


def _timed(player, clock, budget, rate, most=None):
    board = Board(9, 9, 5)
    board.play(40)
    sims, _ = gumbel_timed_search(player, board, clock, 0.0, budget, PlayoutTimer(), rate, most)
    return board, sims


def test_the_plan_fits_the_time_and_a_second_move_plans_from_the_rate_measured():
    rate = SimulationRate()
    player = _player()
    clock = FakeClock(0.001)  # every reading a millisecond: a round costs two or three readings
    board, sims = _timed(player, clock, 0.4, rate)
    assert sims >= 16 and clock.now <= 0.4 + 0.01  # many rounds, and no round began past the deadline
    assert rate.seconds is not None and rate.seconds > 0
    move = player.choose(board).move
    assert move in board.legal_moves()
    # Planned from the measured rate, the next move's budget holds about PLAN_SHARE of the time at that rate,
    # and the time left over goes to more simulations of the last two candidates.
    seconds = rate.seconds
    clock = FakeClock(0.001)
    board, sims = _timed(player, clock, 0.4, rate)
    assert sims >= PLAN_SHARE * 0.2 / seconds
    assert 0.38 <= clock.now <= 0.41  # the time the plan left went to the last two candidates, to the deadline
    assert player.choose(board).move in board.legal_moves()


def test_at_most_the_cap_and_a_cap_below_the_plan_ends_the_search_early():
    player = _player()
    clock = FakeClock(0.0001)
    _, sims = _timed(player, clock, 10.0, SimulationRate(), most=24)
    assert sims <= 24 and clock.now < 1.0


def test_a_plan_the_time_cannot_hold_ends_at_the_deadline_with_a_candidate_still_running():
    rate = SimulationRate()
    rate.seconds = 1e-6  # a rate far too optimistic: the plan is huge
    player = _player()
    clock = FakeClock(0.002)
    board, sims = _timed(player, clock, 0.3, rate)
    assert 2 <= sims < 10_000 and clock.now <= 0.3 + 0.02
    result = player.choose(board)
    assert result.move in board.legal_moves()


def test_the_command_line_and_the_player_spec_give_the_gumbel_search(tmp_path):
    assert engine_options(["--model", "m.npz", "--root-search", "gumbel"]).root_search == "gumbel"
    assert engine_options(["--player", "gumbel:m.npz"]).root_search == "gumbel"
    assert engine_options(["--player", "gumbel:m.npz"]).model == "m.npz"
    assert engine_options(["--model", "m.npz"]).root_search == "gumbel"  # the default: the stronger at 1 s a move
    assert engine_options(["--model", "m.npz", "--root-search", "puct"]).root_search == "puct"
    assert engine_options([]).root_search == "gumbel"  # the shipped models, as a manager starts the engine
    # a player spec says its search, as it does in play.py and the arena
    assert engine_options(["--player", "az:m.npz"]).root_search == "puct"
    assert engine_options(["--player", "az:m.npz", "--root-search", "gumbel"]).root_search == "puct"


def test_the_engine_answers_with_the_gumbel_search_and_says_so(tmp_path):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    path = tmp_path / "random_6x6.npz"
    PolicyValueModel(NetSpec(6, 6, 4), device="cpu").save(str(path))
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(model=str(path), device="cpu", root_search="gumbel", seed=0, max_playouts=40),
                          out, FakeClock(0.001))
    converse(engine, out, "START 6", "INFO timeout_turn 2000")
    lines = converse(engine, out, "BEGIN")
    assert lines[0].startswith("MESSAGE Gumbel: ") and "playouts" in lines[0]
    x, y = map(int, lines[-1].split(","))
    assert 0 <= x < 6 and 0 <= y < 6
    for _ in range(3):  # a few more moves: each answer is a free cell
        taken = {move for move, _ in engine.position.stones}
        reply = next(f"{c % 6},{c // 6}" for c in range(36) if c not in taken)
        lines = converse(engine, out, f"TURN {reply}")
        x, y = map(int, lines[-1].split(","))
        assert engine.position.stones[-1][0] == y * 6 + x
    # A five to complete is played at once, without a search.
    lines = converse(engine, out, "BOARD", "0,0,1", "1,0,1", "2,0,1", "5,5,2", "4,4,2", "3,5,2", "DONE")
    assert lines[-1] == "3,0"
    assert np.isfinite(engine._rate.seconds)


@pytest.mark.timeout(120)
def test_the_watchdog_answers_for_a_gumbel_search_stuck_in_one_net_call(tmp_path):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    path = tmp_path / "random_8x8.npz"
    PolicyValueModel(NetSpec(8, 8, 5), device="cpu").save(str(path))
    out = StampedOut()
    engine = PbrainEngine(EngineOptions(model=str(path), device="cpu", root_search="gumbel", seed=0,
                                        margin_ms=500), out)
    for line in ("START 8", "INFO timeout_turn 2000"):
        engine.handle(line)
    assert out.reply()[0] == "OK"
    slow = SlowEvaluator(engine._evaluator, usual=0.002, every=1000, stuck_at=6)
    engine._evaluator = slow
    move, seconds, stuck = begin_while_stuck(engine, out, slow)
    assert stuck  # answered while the net call is stuck
    assert seconds < 2.0 + LOAD_SLACK_S, f"the watchdog answered after {seconds:.3f} s"
    x, y = map(int, move.split(","))
    assert engine.position.stones == [(engine.position.move_of(x, y), 1)]  # the answered move is the one played
