"""The engine's answers in time when a step of the search is slow: the stop rule, the adaptive margin,
the watchdog and the stamped input lines of ``gomoku.play.engine.move_search``.

The engines here run in-process on the real clock with slow evaluators (a playout ten times its
usual length, one stuck for seconds). Their turns are 2 s with a 500 ms margin, and an answer
may come ``LOAD_SLACK_S`` past the turn: a machine busy with other work holds a process back.
Without the watchdog the stuck search would not answer before the test stops waiting (20 s). The timing of real games is measured by the soak
(docs/experiments.md), not asserted here.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.play.engine.brain import EngineOptions, PbrainEngine
from gomoku.play.engine.move_search import PlayoutTimer, Watchdog, best_so_far, quick_move, stamped_lines
from gomoku.play.engine.protocol import TimeControl
from gomoku.search.mcts import MCTS
from gomoku.search.tree_search import TreeSearch
from tests.helpers import LOAD_SLACK_S, SlowEvaluator, StampedOut, begin_while_stuck

TURN_MS, MARGIN_MS = 2000, 500
LIMIT = TURN_MS / 1000


def started_engine(evaluator_options: dict) -> tuple[PbrainEngine, StampedOut, SlowEvaluator]:
    out = StampedOut()
    engine = PbrainEngine(EngineOptions(n_in_row=4, seed=0, margin_ms=MARGIN_MS), out)
    for line in ("START 8", f"INFO timeout_turn {TURN_MS}"):
        engine.handle(line)
    assert out.reply()[0] == "OK"
    slow = SlowEvaluator(engine._evaluator, **evaluator_options)
    engine._evaluator = slow
    return engine, out, slow


def free_cell(engine: PbrainEngine) -> str:
    taken = {move for move, _ in engine.position.stones}
    return next(f"{c % 8},{c // 8}" for c in range(64) if c not in taken)


@pytest.mark.timeout(120)
def test_playouts_ten_times_slower_than_usual_do_not_make_the_answers_late():
    engine, out, slow = started_engine({"usual": 0.005, "every": 7})
    for command in ("BEGIN", "TURN", "TURN"):
        if command == "TURN":
            command = f"TURN {free_cell(engine)}"
        sent = time.monotonic()
        engine.handle(command, arrived=sent)
        move, at, messages = out.reply()
        assert at - sent < LIMIT + LOAD_SLACK_S, f"{command} answered {move} after {at - sent:.3f} s"
        assert engine.position.stones[-1][0] == engine.position.move_of(*map(int, move.split(",")))
    assert slow.calls > 30
    # The stop rule keeps back the slowest recent playout, the ten-times-slow one (50 ms or more).
    assert engine._timer.reserve(time.monotonic()) >= 0.05


@pytest.mark.timeout(120)
def test_the_watchdog_answers_for_a_search_stuck_in_one_playout():
    # Stuck in the fourth net call: the root's and two playouts' come first, within the hard
    # deadline even on a machine that runs this process a tenth of the time.
    engine, out, slow = started_engine({"usual": 0.002, "every": 1000, "stuck_at": 4})
    move, seconds, stuck = begin_while_stuck(engine, out, slow)
    assert stuck  # answered while the playout is stuck
    assert seconds < LIMIT + LOAD_SLACK_S, f"the watchdog answered after {seconds:.3f} s"
    hard = TimeControl(TURN_MS, margin_ms=MARGIN_MS).hard_seconds(64)
    assert seconds >= hard - 0.01  # not before its hard deadline
    x, y = map(int, move.split(","))
    assert engine.position.stones == [(engine.position.move_of(x, y), 1)]  # the answered move is the one played
    assert out.lines.empty()  # and answered once
    # The game goes on; the next reply carries the note of the watchdog's answer.
    engine.handle(f"TURN {free_cell(engine)}")
    reply, _, messages = out.reply()
    assert any("the watchdog answered" in m for m in messages)
    assert engine.position.move_of(*map(int, reply.split(","))) == engine.position.stones[-1][0]


def test_the_watchdog_stays_quiet_when_disarmed_in_time():
    answered = []
    watchdog = Watchdog(answered.append)
    watchdog.arm(time.monotonic() + 1.0, lambda: 7)  # a second to disarm it, even on a busy machine
    assert watchdog.disarm() is None
    time.sleep(1.5)  # past the time it was armed for
    assert answered == [] and watchdog.disarm() is None
    watchdog.arm(time.monotonic(), lambda: 5)
    deadline = time.monotonic() + 10
    while not answered and time.monotonic() < deadline:
        time.sleep(0.01)
    assert answered == [5] and watchdog.disarm() == 5
    assert watchdog.disarm() is None  # told once: a search with no watchdog armed must not get it


def test_an_unlimited_clock_arms_no_watchdog_thread():
    # A deadline 2**31 ms away (a manager's unlimited time_left) overflows a timer's wait: no
    # thread may be started for it, and none may die with an error.
    errors = []
    hook, threading.excepthook = threading.excepthook, errors.append
    try:
        watchdog = Watchdog(lambda move: None)
        before = threading.active_count()
        watchdog.arm(time.monotonic() + 2147483647 / 1000 * 1e6, lambda: 3)
        assert threading.active_count() == before
        assert watchdog.disarm() is None
    finally:
        threading.excepthook = hook
    assert errors == []


def test_the_stop_rule_keeps_back_the_slowest_recent_playout_and_the_margin_adapts():
    timer = PlayoutTimer(recent=10.0)
    assert timer.reserve(0.0) == 0.0
    for when, step in ((1.0, 0.01), (2.0, 0.1), (3.0, 0.01), (4.0, 0.02)):
        timer.record(step, when)
    assert timer.reserve(5.0) == 0.1
    assert timer.reserve(12.5) == 0.02  # the slow one has left the window of 10 s
    assert timer.reserve(20.0) == 0.0
    assert timer.soft_deadline(10.0, 0.8) == 10.8
    timer.ended(0.05)  # the search ended 50 ms past its deadline: the next ones end 50 ms earlier
    assert timer.soft_deadline(10.0, 0.8) == pytest.approx(10.75)
    timer.ended(-0.2)  # in time: the extra margin halves
    assert timer.extra == pytest.approx(0.025)
    timer.ended(5.0)
    assert timer.soft_deadline(0.0, 0.8) == pytest.approx(0.6)  # at most a quarter of the move's time


def test_the_hard_deadline_lies_between_the_soft_one_and_the_limit():
    tc = TimeControl(timeout_turn=1000, margin_ms=100, margin_share=0.05)
    assert tc.move_seconds(100) == pytest.approx(0.85)
    assert tc.hard_seconds(100) == pytest.approx(0.925)
    tc.timeout_turn = 0
    assert tc.hard_seconds(100) is None


def test_the_best_move_so_far_is_read_from_the_root_alone():
    board = Board(6, 6, 4)
    mcts = MCTS(5.0)
    search = TreeSearch(mcts)
    assert best_so_far(search, early=3) == 3  # the root is not expanded yet
    priors = np.zeros(36)
    priors[14] = 0.9
    priors[21] = 0.1
    mcts.root.expand(np.arange(36), priors)
    assert best_so_far(search, early=3) == 14  # no visit yet: the prior's favourite
    mcts.root.child_N[21] = 5
    assert best_so_far(search, early=3) == 21
    move = quick_move(board)
    board.check_move(move)


def test_input_lines_are_stamped_when_they_arrive():
    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as stream, os.fdopen(write_end, "w") as writer:
        lines = stamped_lines(stream)
        before = time.monotonic()
        writer.write("TURN 1,1\nEND\n")
        writer.flush()
        time.sleep(1.0)  # the engine is busy: the lines wait
        reading = time.monotonic()
        first, at = next(lines)
        assert first == "TURN 1,1\n" and before <= at < reading
        writer.close()
        assert next(lines)[0] == "END\n"
        assert list(lines) == []
