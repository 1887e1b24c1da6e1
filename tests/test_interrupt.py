import signal

import pytest

from gomoku import interrupt
from gomoku.board import Board
from gomoku.mcts import MCTSPlayer
from gomoku.rollout import RolloutEvaluator
from gomoku.selfplay import run_games


def test_a_deferred_signal_is_only_recorded_until_a_check():
    with interrupt.deferred():
        signal.raise_signal(signal.SIGINT)  # no KeyboardInterrupt here, where Paddle might be running
        assert interrupt.requested()
        with pytest.raises(KeyboardInterrupt):
            interrupt.check()
    assert not interrupt.requested()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_is_deferred_too_and_its_handler_restored():
    before = signal.getsignal(signal.SIGTERM)
    with interrupt.deferred():
        signal.raise_signal(signal.SIGTERM)
        assert interrupt.requested()
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_second_signal_raises_at_once():
    with interrupt.deferred():
        signal.raise_signal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)


def test_interruptible_blocks_raise_at_once_and_only_inside():
    with interrupt.deferred():
        with pytest.raises(KeyboardInterrupt):
            with interrupt.interruptible():
                signal.raise_signal(signal.SIGINT)
    with interrupt.deferred():
        with interrupt.interruptible():
            pass
        signal.raise_signal(signal.SIGINT)  # outside the block: recorded, not raised
        assert interrupt.requested()


def test_games_in_lockstep_stop_at_the_step_after_a_request():
    calls = {"n": 0, "at_signal": None}

    class SignallingEvaluator(RolloutEvaluator):
        def evaluate(self, boards):
            calls["n"] += 1
            if calls["n"] == 5:
                signal.raise_signal(signal.SIGINT)  # Ctrl-C while the "net" is running
                calls["at_signal"] = calls["n"]
            return super().evaluate(boards)

    evaluator = SignallingEvaluator(0)

    def new_game(i):
        player = MCTSPlayer(evaluator, c_puct=5.0, n_playout=20, seed=i)
        return Board(6, 6, 4), {1: player, 2: player}

    with interrupt.deferred():
        with pytest.raises(KeyboardInterrupt):
            run_games(2, new_game, parallel=2)
    assert calls["at_signal"] == 5 and calls["n"] == 5  # the evaluator call finished; no step after it
