"""The engines the fuzz talks to: one in this process under a CPU limit, or a real process."""

from __future__ import annotations

import contextlib
import io
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, TextIO

from gomoku.play.engine.brain import PbrainEngine
from devtools.engine_check.fuzz.check import Due, short
from gomoku.play.engine_process import EngineProcess


# ------------------------------------------------------------------ engines
class Hung(BaseException):
    """Raised into a command that has spent its CPU time. A BaseException, so that the
    engine's catch-all for Exception (its ``ERROR internal error``) lets it through."""


@contextlib.contextmanager
def cpu_limit(seconds: float) -> Iterator[None]:
    """Interrupts the block with ``Hung`` once this process has spent ``seconds`` of CPU in it.

    CPU time rather than wall time, because a busy machine slows a command down
    without making it hang, and because pytest-timeout keeps SIGALRM for itself.
    Signals reach only the main thread: elsewhere the block runs unguarded.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    armed = [True]

    def interrupt(signum, frame):
        if armed[0]:
            raise Hung(f"still running after {seconds:g} s of CPU")

    previous = signal.signal(signal.SIGPROF, interrupt)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous if previous is not None else signal.SIG_DFL)


@dataclass
class Exchange:
    """What one line brought back from the engine."""

    answers: list[str]
    """the answer lines, MESSAGE and DEBUG lines left out"""
    seconds: float
    """from sending the line to its last answer, wall time"""
    problem: Optional[tuple[str, str]] = None
    """a failure the transport itself saw (crash, hang, end) as (kind, detail)"""
    stderr: str = ""
    """the last lines the engine wrote to stderr (a traceback), for crash reports"""
    cpu: Optional[float] = None
    """in this process, the CPU time the line took (None: only the wall time is known)"""


class InProcessTarget:
    """A ``PbrainEngine`` in this process, fed with ``handle``; its output is read back after each line.

    Args:
        engine: makes the engine, given the stream it must write to.
    """

    def __init__(self, engine: Callable[[TextIO], PbrainEngine]):
        self.out = io.StringIO()
        self.engine = engine(self.out)

    def exchange(self, line: str, dues: list[Due], ended: bool, limit: float) -> Exchange:
        errors = io.StringIO()
        problem = None
        running = True
        started, cpu = time.perf_counter(), time.process_time()
        try:
            with contextlib.redirect_stderr(errors), cpu_limit(limit):
                running = self.engine.handle(line)
        except Hung as exc:
            problem = "hang", f"{short(line)}: {exc}"
        except Exception as exc:  # the engine must answer ERROR instead
            problem = "crash", f"handle({short(line)}) raised {type(exc).__name__}: {exc}"
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        text = self.out.getvalue()
        self.out.seek(0)
        self.out.truncate()
        answers = [a for a in text.split("\n")[:-1] if not a.startswith(("MESSAGE", "DEBUG"))]
        if problem is None and running == ended:
            problem = "end", (f"{short(line)}: the engine went on after END" if ended
                              else f"{short(line)}: the engine stopped without END")
        return Exchange(answers, seconds, problem, "\n".join(errors.getvalue().strip().splitlines()[-3:]), cpu)

    def close(self, kill: bool = False) -> None:
        pass


class ProcessTarget:
    """A real engine process, spoken to through ``EngineProcess``: hangs and deaths show.

    Args:
        command: the engine's command line.
        start_s: how long its first answer may take (the interpreter starts meanwhile).
    """

    def __init__(self, command: list[str], start_s: float):
        self.stderr = tempfile.TemporaryFile(mode="a+")  # appends: the child shares the file's offset
        self.engine = EngineProcess(command, "engine", [], self.stderr)
        self.start_s = start_s
        self.fresh = True

    def exchange(self, line: str, dues: list[Due], ended: bool, limit: float) -> Exchange:
        answers: list[str] = []
        seconds = 0.0
        self.engine.transcript.clear()  # the fuzz keeps its own
        try:
            self.engine.send(line)
        except OSError as exc:  # a closed pipe: it is dead
            return Exchange(answers, seconds, ("crash", f"{short(line)} could not be sent: {exc}"), self._tail())
        for _ in dues:
            timeout = self.start_s if self.fresh else limit
            try:
                answer, latency = self.engine.reply(timeout)
            except TimeoutError:
                return Exchange(answers, timeout, ("hang", f"no answer to {short(line)} within {timeout:g} s"))
            except EOFError:
                return Exchange(answers, seconds, ("crash", f"the engine died at {short(line)}"), self._tail())
            self.fresh = False
            answers.append(answer)
            seconds = max(seconds, latency)
        if ended:
            try:
                code = self.engine.proc.wait(limit)
            except subprocess.TimeoutExpired:
                return Exchange(answers, seconds, ("end", f"still running {limit:g} s after END"))
            if code != 0:
                return Exchange(answers, seconds, ("end", f"exit status {code} after END"), self._tail())
            try:
                extra, _ = self.engine.reply(limit)
                return Exchange(answers, seconds, ("end", f"{extra!r} written after END"))
            except (EOFError, TimeoutError):
                pass
        return Exchange(answers, seconds)

    def _tail(self) -> str:
        self.stderr.flush()
        self.stderr.seek(0)
        return "\n".join(self.stderr.read().strip().splitlines()[-3:])

    def close(self, kill: bool = False) -> None:
        """Ends the process with END, or kills it (it may be hung), and closes its pipes."""
        proc = self.engine.proc
        if kill and proc.poll() is None:
            proc.kill()
            proc.wait()
        self.engine.close()  # END, and a kill if it does not exit
        self.stderr.close()
