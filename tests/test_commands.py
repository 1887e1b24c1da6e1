"""The commands as a user meets them: one line, never a traceback, without Paddle, on an early
Ctrl-C, and on SIGTERM (gomoku/commands.py, gomoku/net/backend.py)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import blocked_signals

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Stands for a machine where the project was installed without its Paddle extra.
WITHOUT_PADDLE = ("import importlib.util, runpy, sys\n"
                  "real = importlib.util.find_spec\n"
                  "importlib.util.find_spec = lambda name, *a: None if name == 'paddle' else real(name, *a)\n"
                  "sys.modules['paddle'] = None\n")


def _without_paddle(script: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    code = WITHOUT_PADDLE + f"sys.argv = {[script, *args]!r}\nrunpy.run_path({script!r}, run_name='__main__')\n"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, timeout=100)


def _command(name: str) -> str:
    """A script that runs ``gomoku.commands.name`` as the installed command does (pip's scripts
    guard the call, so that a worker process that imports the script starts no second command)."""
    return f"import sys\nfrom gomoku.commands import {name}\nif __name__ == '__main__':\n    sys.exit({name}())\n"


@pytest.mark.timeout(300)
def test_without_paddle_every_command_says_how_to_install_it_in_one_line(tmp_path):
    for script, args in (("play.py", ["--size", "15x15", "--text"]), ("train.py", ["--iterations", "1"])):
        proc = _without_paddle(script, *args, "--run-dir", str(tmp_path / "run")) if script == "train.py" \
            else _without_paddle(script, *args)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip().splitlines() == [
            f"{script}: " + proc.stderr.strip().split(": ", 1)[1]], proc.stderr
        assert "PaddlePaddle is not installed: pip install" in proc.stderr
    arena = tmp_path / "gomoku-arena"
    arena.write_text(_command("arena"))
    proc = _without_paddle(str(arena), "--a", "az:models/gomoku_6x6_4.npz:5", "--b", "pure:5", "--games", "2")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("gomoku-arena: PaddlePaddle is not installed")


@pytest.mark.timeout(300)
def test_without_paddle_the_engine_answers_start_without_a_traceback(tmp_path):
    engine = tmp_path / "pbrain-gomokuzero"
    engine.write_text(_command("engine"))
    shipped = _without_paddle(str(engine), stdin="START 15\nEND\n")
    assert shipped.returncode == 0 and "Traceback" not in shipped.stderr, shipped.stderr
    lines = shipped.stdout.splitlines()
    assert lines[-1] == "OK" and "pure MCTS" in lines[0] and "PaddlePaddle is not installed" in lines[0]
    chosen = _without_paddle(str(engine), "--model", "models/gomoku_15x15_5.npz", stdin="START 15\nEND\n")
    assert "Traceback" not in chosen.stderr, chosen.stderr
    assert chosen.stdout.splitlines() == [
        "ERROR cannot use the model: " + chosen.stdout.split("ERROR cannot use the model: ", 1)[1].strip()]
    assert "PaddlePaddle is not installed" in chosen.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.timeout(300)
@pytest.mark.parametrize("later", [0.0, 0.5])
def test_ctrl_c_while_the_trainer_starts_is_one_line(tmp_path, later):
    # The moment the trainer imports its modules (gomoku.commands blocks SIGINT meanwhile), or a
    # little later: before, Ctrl-C there printed a KeyboardInterrupt traceback of 18 lines, or
    # Paddle's "ImportError: initialization failed".
    # As from a terminal: a test run started in the background by a shell ignores SIGINT, and a
    # child would inherit that (then no Ctrl-C reaches it and the trainer runs on).
    proc = subprocess.Popen([sys.executable, "train.py", "--preset", "6x6x4", "--workers", "1",
                             "--run-dir", str(tmp_path / "run")], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 100
    while time.monotonic() < deadline and proc.poll() is None and not blocked_signals(proc.pid) & (1 << (signal.SIGINT - 1)):
        time.sleep(0.005)
    time.sleep(later)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=200)
    assert proc.returncode == 130, err
    assert err.strip() == "train.py: interrupted"


@pytest.mark.timeout(300)
def test_sigterm_ends_the_engine_quietly():
    # Paddle's own SIGTERM handler printed a "FatalError: Termination signal" report of 10 lines.
    proc = subprocess.Popen([sys.executable, "-m", "gomoku.play.engine", "--model", "models/gomoku_6x6_4.npz"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    proc.stdin.write("START 6\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        assert line, "the engine ended before OK"
        if line.strip() == "OK":
            break
    proc.terminate()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM
    assert "FatalError" not in out + err and "Traceback" not in out + err, out + err


@pytest.mark.timeout(300)
def test_sigterm_ends_play_quietly():
    proc = subprocess.Popen([sys.executable, "play.py", "--text", "--model", "models/gomoku_6x6_4.npz"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = b""
    while not seen.endswith(b"> "):  # the prompt for the human's move: the model is loaded
        chunk = os.read(proc.stdout.fileno(), 1)
        assert chunk, f"play.py ended before its prompt: {seen[-300:]!r}"
        seen += chunk
    proc.terminate()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM
    assert b"FatalError" not in out + err and b"Traceback" not in out + err, out + err
