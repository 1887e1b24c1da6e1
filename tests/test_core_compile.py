"""The search core compiles once per machine: the lock around numba's cache (gomoku/search/core/cache.py)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from gomoku.search.core import cache as core_cache
from gomoku.search.core.jit import available

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not available,
                                reason="flock and /proc; numba")


def _holder(cache: str) -> subprocess.Popen:
    """A process that takes the compile lock of the cache in ``cache`` and keeps it until killed;
    returns once it holds it."""
    code = ("import sys, time\n"
            "from gomoku.search.core import cache as core_cache\n"
            f"core_cache.cache_dir = lambda: {os.path.join(cache, 'core')!r}\n"
            "with core_cache.compile_lock() as held:\n"
            "    print(held, flush=True)\n"
            "    time.sleep(300)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout.readline().strip() == "True"
    return proc


def test_a_process_waits_for_the_one_that_compiles_and_a_dead_holder_frees_the_lock(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(core_cache, "cache_dir", lambda: str(tmp_path / "core"))
    holder = _holder(str(tmp_path))
    try:
        assert open(tmp_path / "core" / core_cache.LOCK_NAME).read() == str(holder.pid)
        # A wait that runs out says so and goes on without the lock (it would compile too).
        started = time.monotonic()
        with core_cache.compile_lock(wait_s=0.6, poll_s=0.05) as held:
            assert held is False
        assert time.monotonic() - started >= 0.6
        err = capsys.readouterr().err.splitlines()
        # the holder is no sibling of this process: the wait is announced, once
        assert err[0] == f"process {holder.pid} is compiling the search core (once per machine): waiting for it"
        assert err[1].startswith(f"stopped waiting for process {holder.pid}, which compiles the search core into ")
        assert err[1].endswith("s): compiling it here too") and "(after " in err[1] and len(err) == 2
        # A holder that uses no CPU (stuck, here asleep) is not waited for past stall_s.
        with core_cache.compile_lock(wait_s=60, poll_s=0.05, stall_s=0.5) as held:
            assert held is False
        assert "(it used no CPU for " in capsys.readouterr().err
        # A holder that dies (kill -9: no clean-up of its own) leaves the lock free at once.
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(30)
        started = time.monotonic()
        with core_cache.compile_lock(wait_s=30, poll_s=0.05) as held:
            assert held is True
            assert open(tmp_path / "core" / core_cache.LOCK_NAME).read() == str(os.getpid())
        assert time.monotonic() - started < 10
        assert capsys.readouterr().err == ""
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.wait(30)


def test_the_lock_goes_to_the_temporary_folder_where_the_cache_cannot_be_written(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setattr(core_cache, "cache_dir", lambda: str(blocked / "core"))  # under a file: no folder there
    monkeypatch.setattr(core_cache.tempfile, "gettempdir", lambda: str(tmp_path))
    with core_cache.compile_lock(wait_s=1) as held:
        assert held is True
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(core_cache.LOCK_NAME)]


def test_two_processes_that_start_together_compile_the_core_once(tmp_path):
    # A cold cache of its own (NUMBA_CACHE_DIR): two processes load the core at once, as a trainer's
    # two workers do; one compiles and says so, the other waits for it without a word, and loads it.
    code = ("import sys, time\n"
            "from gomoku.search.core.single import _state, core_ready\n"
            "started = time.monotonic()\n"
            "core_ready()\n"
            "print(_state['ready'], round(time.monotonic() - started, 1), flush=True)\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(2)]
    results = [proc.communicate(timeout=1500) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), results
    assert all(out.split()[0] == "True" for out, _ in results), results
    said = [line for _, err in results for line in err.splitlines() if "search core" in line]
    # Only a process that finds no fresh cache once it holds the lock says it compiles: the other
    # found the first one's work when the lock came to it.
    assert said == ["compiling the search core (about a minute of CPU, once: it is cached for later starts) ..."], results


def test_the_cache_is_fresh_when_every_compiled_module_has_an_index_newer_than_its_source(tmp_path):
    from gomoku.search.core.cache import cached

    folder, sources = tmp_path / "cache", tmp_path / "core"
    folder.mkdir()
    sources.mkdir()

    def touch(path, when):
        path.write_text("")
        os.utime(path, (when, when))

    touch(sources / "descent.py", 100)
    touch(sources / "root_threats.py", 300)
    touch(sources / "layout.py", 500)  # no kernels of its own: no index to compare
    assert not cached(str(folder), str(sources))  # nothing compiled yet
    touch(folder / "descent.step-103.py311.nbi", 200)
    touch(folder / "root_threats.root-145.py311.nbi", 400)
    touch(folder / "root_threats.defences-100.py311.nbi", 250)  # a kernel the warm-up left alone
    touch(folder / "roots.root-145.py311.nbi", 50)  # a module that is gone
    assert cached(str(folder), str(sources))
    touch(sources / "root_threats.py", 450)  # a source changed after its kernels were compiled
    assert not cached(str(folder), str(sources))
