"""``pbrain-gomokuzero --check``: what the engine will play, said before a tournament (gomoku/play/engine/check.py)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Stands for a machine where the project was installed without its Paddle extra (as in test_commands).
WITHOUT_PADDLE = ("import importlib.util, runpy, sys\n"
                  "real = importlib.util.find_spec\n"
                  "importlib.util.find_spec = lambda name, *a: None if name == 'paddle' else real(name, *a)\n"
                  "sys.modules['paddle'] = None\n")


def _check(*args: str, paddle: bool = True) -> subprocess.CompletedProcess:
    code = (("" if paddle else WITHOUT_PADDLE) + "import runpy, sys\n"
            f"sys.argv = {['pbrain-gomokuzero', '--check', *args]!r}\n"
            "runpy.run_module('gomoku.play.engine', run_name='__main__')\n")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=200,
                          stdin=subprocess.DEVNULL)


@pytest.mark.timeout(300)
def test_the_check_names_the_model_of_every_shipped_board_and_rule():
    proc = _check()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("pbrain-gomokuzero ") and lines[1].startswith("search core: ")
    assert lines[-1].startswith("ok")
    for board in ("8x8", "9x9", "11x11", "15x15"):
        for rule in ("freestyle", "standard", "renju", "caro"):
            line, = [x for x in lines if x.startswith(f"{board} {rule}: ")]
            assert "inference" in line and "search" in line, line
    assert "15x15 renju: gomoku_15x15_renju.npz, Gumbel root search" in proc.stdout
    assert "15x15 freestyle: gomoku_15x15_5.npz" in proc.stdout and "8x8 freestyle: gomoku_8x8_5.npz" in proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.timeout(300)
def test_the_check_of_one_model_says_its_board_search_and_precision():
    proc = _check("--model", "models/gomoku_6x6_4.npz", "--root-search", "puct", "--precision", "fp32")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("gomoku_6x6_4.npz: the 6x6 board only, 4 in a row, trained for freestyle; PUCT on the "
            in proc.stdout) and "fp32 inference" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "ok"


@pytest.mark.timeout(300)
def test_the_check_fails_without_a_usable_model(tmp_path):
    # Paddle missing: the engine would play pure MCTS on every board, so the check fails, and says why.
    proc = _check(paddle=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cannot be used: PaddlePaddle is not installed: pip install" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("FAILED: 3 shipped model(s) cannot be used")
    assert "8x8 freestyle: pure MCTS with random rollouts: gomoku_8x8_5.npz cannot be used" in proc.stdout
    assert "Traceback" not in proc.stderr
    # A file that is not a model.
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a model")
    proc = _check("--model", str(bad))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "model bad.npz: cannot be used: " in proc.stdout
    assert proc.stdout.splitlines()[-1] == f"FAILED: the engine cannot play {bad}: it answers START with ERROR"
    # A player without a model needs none.
    proc = _check("--heuristic", "2")
    assert proc.returncode == 0 and "the heuristic, level 2" in proc.stdout, proc.stdout + proc.stderr
