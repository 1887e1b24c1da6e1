"""gomoku/processes.py starts every process of the package: no other module imports subprocess,
makes a multiprocessing process or pool, or calls os's fork, spawn, exec, system or popen (read
from the source). What it starts waits for no input, keeps its output where it is told, and is
killed when it will not end."""

import ast
import signal
import sys
from pathlib import Path

import pytest

from gomoku.processes import start_command, start_python, wait_or_kill
from tests.helpers import ROOT

STARTER = "gomoku/processes.py"
MODULES = ("subprocess", "pty", "multiprocessing.pool", "concurrent.futures.process")
"""modules whose import alone means starting processes"""
MAKERS = {"Popen", "Process", "Pool", "ProcessPoolExecutor"}
"""names that make a process when called (``ctx.Process``, ``mp.get_context("spawn").Process``,
``Process`` imported from multiprocessing)"""
OS_STARTS = ("fork", "spawn", "posix_spawn", "exec", "system", "popen")
"""os's functions that start a process or replace this one (prefixes: forkpty, spawnv, execvp, ...)"""
# Ray starts processes of its own (actors/ray_actors.py, through ray.init, and its actors' .remote()):
# those are Ray's business, started and stopped by its own code, and not counted here.


def _starts(module: str, name: str = "") -> bool:
    """Whether importing ``module`` (or ``name`` from it) is a way of starting a process."""
    if any(module == m or module.startswith(m + ".") for m in MODULES):
        return True
    return name in MAKERS or (module == "os" and name.startswith(OS_STARTS))


def process_starts(source: str) -> list[str]:
    """The lines and texts of one module's ways of starting a process."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if _starts(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [f"{node.lineno}: from {node.module} import {a.name}" for a in node.names
                      if _starts(node.module, a.name)]
        elif isinstance(node, ast.Attribute):
            on_os = isinstance(node.value, ast.Name) and node.value.id == "os"
            if node.attr in MAKERS or (on_os and node.attr.startswith(OS_STARTS)):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MAKERS:
            found.append(f"{node.lineno}: {node.func.id}(...)")
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def test_only_the_processes_module_starts_processes():
    hits = []
    for path in sorted(Path(ROOT, "gomoku").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        if where != STARTER:
            hits += [f"{where}:{hit}" for hit in process_starts(path.read_text())]
    assert not hits, "processes started outside gomoku/processes.py:\n" + "\n".join(hits)
    assert process_starts(Path(ROOT, STARTER).read_text())  # the scan sees the module that does start them


def test_the_scan_finds_each_way_of_starting_a_process():
    source = ("import subprocess\n"
              "from subprocess import run\n"
              "import multiprocessing as mp\n"
              "from multiprocessing import Process\n"
              "import os\n"
              "mp.get_context('spawn').Process(target=f)\n"
              "Process(target=f)\n"
              "os.fork()\n"
              "os.spawnv(os.P_NOWAIT, 'x', ['x'])\n"
              "os.system('x')\n"
              "mp.connection.wait([])\n"
              "ray.init()\n")
    assert [hit.split(":")[0] for hit in process_starts(source)] == ["1", "2", "4", "6", "7", "8", "9", "10"]


def test_a_python_child_runs_a_function_its_stdout_kept_off_ours(tmp_path, monkeypatch, capfd):
    (tmp_path / "child_probe.py").write_text("import sys\n"
                                             "def run():\n"
                                             "    print('to stdout')\n"
                                             "    print('to stderr', file=sys.stderr)\n"
                                             "    return 3\n"
                                             "if __name__ == '__main__':\n"
                                             "    raise SystemExit(run() + 1)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert start_python("child_probe:run").wait(60) == 3
    assert start_python("child_probe").wait(60) == 4  # a module, as python -m runs it
    out, err = capfd.readouterr()
    assert "to stdout" not in out and err.count("to stderr") == 2
    with pytest.raises(ValueError):
        start_python("child_probe:run(); import os")


def test_an_outside_command_speaks_over_pipes_and_one_that_will_not_end_is_killed():
    echo = start_command([sys.executable, "-c", "print(input().upper(), flush=True); input()"])
    echo.stdin.write("hello\n")
    echo.stdin.flush()
    assert echo.stdout.readline() == "HELLO\n"
    wait_or_kill(echo, 0.2)  # waits for its second line: killed
    assert echo.returncode == -signal.SIGKILL
    for stream in (echo.stdin, echo.stdout):
        stream.close()
