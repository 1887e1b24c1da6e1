import signal

import pytest

from gomoku import interrupt
from gomoku.game.board import Board
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.rollout import RolloutEvaluator
from gomoku.search.lockstep import run_games


def test_a_deferred_signal_is_only_recorded_until_a_check():
    before = signal.getsignal(signal.SIGINT)  # Python's handler, or SIG_IGN under nohup
    with interrupt.deferred():
        signal.raise_signal(signal.SIGINT)  # no KeyboardInterrupt here, where Paddle might be running
        assert interrupt.requested()
        with pytest.raises(KeyboardInterrupt):
            interrupt.check()
    assert not interrupt.requested()
    assert signal.getsignal(signal.SIGINT) is before


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


def test_a_ctrl_c_during_the_trainers_exit_prints_no_traceback(tmp_path):
    # `timeout -s INT` signals the trainer and then its process group: the second SIGINT can
    # arrive after the run has returned, while the interpreter runs its exit handlers.
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = (
        "import atexit, os, runpy, signal, sys\n"
        "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))  # runs last, at exit\n"
        f"sys.argv = ['train.py', '--resume', {str(tmp_path / 'no-run')!r}]\n"
        f"runpy.run_path({os.path.join(root, 'train.py')!r}, run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root,
                          timeout=120)
    assert done.returncode == 2, done.stderr  # the missing checkpoint's error, not a signal
    assert "checkpoint" in done.stderr
    assert "KeyboardInterrupt" not in done.stderr
