"""Stops of the engine and of play.py: SIGTERM is quiet at any moment (before, during and after
Paddle's import and the model's load) and takes the process's temporary folders with it; the
folders of a process killed with SIGKILL are swept by the next one, and only those.

A few signals at a few moments: ``scripts/stop_check.py`` sends twenty of each, spread over the
first ten seconds. Every process gets a temporary folder of its own (``TMPDIR``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from gomoku import tempdirs
from gomoku.net.policy_value import INFER_PREFIX
from gomoku.actors.workers import EXPORT_PREFIX
from scripts.stop_check import ENGINE, ENGINE_INPUT, PLAY, PLAY_INPUT, infer_folders, stop_once, sweep_on_start


def test_the_folders_of_a_process_that_died_are_swept_and_no_others(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(30)  # a pid that no process has now (reaped)
    here = tempdirs.pid_namespace()
    for prefix in (EXPORT_PREFIX, INFER_PREFIX):
        dead = tmp_path / f"{prefix}{here}-{gone.pid}-abc"
        (dead / "weights-1").mkdir(parents=True)
        alive = tmp_path / f"{prefix}{here}-{os.getppid()}-def"  # another live process's
        alive.mkdir()
        elsewhere = tmp_path / f"{prefix}1{here}-{gone.pid}-ghi"  # another pid namespace's: its pids mean nothing here
        elsewhere.mkdir()
        other = tmp_path / f"{prefix}xyz"  # not a name this code makes
        other.mkdir()
        assert tempdirs.sweep(prefix, str(tmp_path)) == [dead.name]
        assert not dead.exists() and alive.exists() and elsewhere.exists() and other.exists()


def test_a_process_removes_its_own_folders_and_only_those(tmp_path, monkeypatch):
    monkeypatch.setattr(tempdirs, "_used", set())
    mine = tempdirs.make("gomoku-test-", str(tmp_path))
    with tempdirs.folder("gomoku-test-") as inside:
        assert os.path.isdir(inside)
    assert not os.path.exists(inside)
    others = tmp_path / f"gomoku-test-{tempdirs.pid_namespace()}-{os.getppid()}-x"
    others.mkdir()
    tempdirs.remove_own(str(tmp_path))
    assert not os.path.exists(mine) and others.exists()


# A signal a second after the start lands in the imports; two and a half seconds, in Paddle's
# import or the model's load on an idle machine, later on a busy one; after the first answer,
# in a search. Whatever the moment turns out to be, the stop must be quiet and clean.
@pytest.mark.timeout(400)
@pytest.mark.parametrize("delay", [1.0, 2.5, "answered"])
def test_sigterm_stops_the_engine_quietly_and_leaves_no_folder(tmp_path, delay):
    if delay == "answered":  # after the model's load: the signal lands in the search of BEGIN
        proc = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=dict(os.environ, TMPDIR=str(tmp_path)))
        proc.stdin.write("START 15\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith("MESSAGE") and proc.stdout.readline().strip() == "OK"
        proc.stdin.write("INFO timeout_turn 3000\nBEGIN\n")
        proc.stdin.flush()
        proc.send_signal(signal.SIGTERM)
        _, errors = proc.communicate(timeout=120)
        assert proc.returncode == -signal.SIGTERM and "FatalError" not in errors and "Traceback" not in errors, errors
        assert infer_folders(str(tmp_path)) == []
        return
    stop = stop_once(ENGINE, ENGINE_INPUT, delay, signal.SIGTERM, str(tmp_path))
    assert not stop.loud and not stop.hung, stop.output
    assert stop.returncode == -signal.SIGTERM and stop.left == []


@pytest.mark.timeout(400)
def test_sigterm_stops_play_py_quietly_and_leaves_no_folder(tmp_path):
    stop = stop_once(PLAY, PLAY_INPUT, 3.0, signal.SIGTERM, str(tmp_path))
    assert not stop.loud and not stop.hung, stop.output
    # ended by the signal, or (a stop that came while the AI searched) exiting 128 + 15 without a word
    assert stop.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM) and stop.left == []
    assert "Interrupted" not in stop.output


@pytest.mark.timeout(400)
def test_the_next_start_sweeps_the_folder_of_an_engine_killed_while_it_loaded(tmp_path):
    # A folder as a SIGKILL during the model's export leaves it: named for a process now gone.
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(30)
    left = tmp_path / f"{INFER_PREFIX}{tempdirs.pid_namespace()}-{gone.pid}-abc"
    left.mkdir()
    (left / "model.pdiparams").write_bytes(b"\0" * 1000)
    assert sweep_on_start(str(tmp_path)) == 1 and infer_folders(str(tmp_path)) == []
