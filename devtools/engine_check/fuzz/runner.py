"""The fuzz run: sequences sent to fresh engines, every answer checked, failures shrunk, a report."""

from __future__ import annotations

import gc
import math
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from gomoku.play.engine.brain import EngineOptions, PbrainEngine
from devtools.engine_check.fuzz.check import (ABOUT, ERROR, FAILURES, MOVE, OK, PLAIN_SIDE, WALL_FACTOR, Due,
                                                 Manager, Rules, short, split_command)
from devtools.engine_check.fuzz.scenario import Scenario
from devtools.engine_check.fuzz.targets import InProcessTarget, ProcessTarget
from gomoku.search.heuristic import DEFAULT_LEVEL
from gomoku.search.options import SEARCH_PRESETS, SearchOptions


# --------------------------------------------------------------------- the fuzz
@dataclass
class FuzzConfig:
    """Which engine the fuzz runs, how, and how hard it pushes."""

    engine: str = "pure"
    """pure (MCTS with random rollouts), heuristic or model"""
    model: Optional[str] = None
    """the model file for ``engine="model"``"""
    level: int = DEFAULT_LEVEL
    """the heuristic's level"""
    n_in_row: int = 5
    """for pure and heuristic; a model brings its own"""
    max_playouts: int = 8
    """playouts per move, few, so that every move is quick whatever the clock says"""
    search: SearchOptions = SEARCH_PRESETS["sharp"]
    """the search options (the engine's command line plays the sharp preset)"""
    device: str = "cpu"
    process: bool = False
    """talk to a ``python -m gomoku.play.engine`` child process instead of an engine in this process"""
    hang_s: Optional[float] = None
    """the most one answer may take: CPU time in this process (None: 5 s), wall time from a process
    (None: 15 s, as a busy machine may hold a process back for seconds)"""
    start_s: float = 20.0
    """the most the first START may take (it loads the model) and, for a process, its first answer"""
    sequence_s: float = 60.0
    """the most a whole sequence may take"""
    restart_every: Optional[int] = None
    """sequences per engine before a fresh one (None: 1 in this process without a model, else 25)"""
    hostile_share: float = 0.08
    """the share of a game's steps that send a hostile line"""
    skip: frozenset = frozenset()
    """hostile categories to leave out (see ``HOSTILE``)"""
    max_side: int = PLAIN_SIDE
    """the largest side of the boards games start on"""
    engine_class: type = PbrainEngine
    """the engine class in this process (tests pass broken subclasses)"""
    engine_command: Optional[list[str]] = None
    """the engine process's command line; None runs ``python -m gomoku.play.engine`` with the options above"""
    clock: Callable[[], float] = time.monotonic
    """the engine's clock in this process"""

    @property
    def answer_s(self) -> float:
        """``hang_s`` or its default."""
        return self.hang_s if self.hang_s is not None else 15.0 if self.process else 5.0

    def rules(self) -> Rules:
        if self.engine != "model":
            return Rules(self.n_in_row)
        from gomoku.net.modelfile import read_model_spec

        spec = read_model_spec(self.model)
        return Rules(spec.n_in_row, None if spec.size_free else (spec.width, spec.height))

    def options(self, seed: int) -> EngineOptions:
        return EngineOptions(model=self.model if self.engine == "model" else None,
                             heuristic=self.level if self.engine == "heuristic" else None,
                             n_in_row=self.n_in_row, device=self.device, max_playouts=self.max_playouts,
                             seed=seed, search=self.search)

    def command(self, seed: int) -> list[str]:
        if self.engine_command is not None:
            return list(self.engine_command)
        who = {"pure": ["--pure"], "heuristic": ["--heuristic", str(self.level)],
               "model": ["--model", str(self.model)]}[self.engine]
        return [sys.executable, "-m", "gomoku.play.engine", *who, "--n-in-row", str(self.n_in_row),
                "--device", self.device, "--max-playouts", str(self.max_playouts), "--seed", str(seed),
                "--search", "plain", *self.search.flags().split()]

    @property
    def lifetime(self) -> int:
        if self.restart_every is not None:
            return max(1, self.restart_every)
        return 1 if self.engine != "model" and not self.process else 25

    def describe(self) -> str:
        what = {"pure": f"pure MCTS, {self.max_playouts} playouts", "heuristic": f"heuristic level {self.level}",
                "model": f"model {self.model}, {self.max_playouts} playouts"}[self.engine]
        where = "a python -m gomoku.play.engine process" if self.process else "this process"
        return f"{what}, in {where}"


@dataclass
class Failure:
    """One sequence's first failure."""

    kind: str
    sequence: int
    detail: str
    lines: list[str]
    """every line the engine was sent since it started, the failing one last"""
    engine_seed: int
    repro: Optional[list[str]] = None
    """a shorter list of lines that fails the same way on a fresh engine (in this process)"""

    @property
    def word(self) -> str:
        """The failing line's command word (a data line's first field), for the report's tally."""
        text = self.lines[-1].strip() if self.lines else ""
        return split_command(text)[0].encode("unicode_escape").decode()[:20] if text else "(empty line)"

    def describe(self) -> str:
        lines = self.repro if self.repro is not None else self.lines[-20:]
        head = "repro on a fresh engine" if self.repro is not None else "last lines sent"
        return "\n".join([f"[{self.kind}] sequence {self.sequence}: {self.detail}", f"  {head}:",
                          *(f"    {short(line, 100)}" for line in lines)])


@dataclass
class Report:
    """The figures of a fuzz run."""

    description: str
    sequences: int = 0
    commands: int = 0
    """lines sent, data lines and empty lines included"""
    answers: int = 0
    """answers checked"""
    seen: Counter = field(default_factory=Counter)
    """right answers by kind: move, OK, ERROR, UNKNOWN, ABOUT"""
    failures: Counter = field(default_factory=Counter)
    """failing sequences by failure kind"""
    failing: Counter = field(default_factory=Counter)
    """failing sequences by (kind, the failing line's command word)"""
    examples: list[Failure] = field(default_factory=list)
    """the first failures of each kind"""
    slowest_move: tuple[float, str] = (0.0, "")
    slowest_other: tuple[float, str] = (0.0, "")
    seconds: float = 0.0

    @property
    def failed(self) -> int:
        return sum(self.failures.values())

    def table(self) -> str:
        kinds = ", ".join(f"{kind} {self.failures[kind]}" for kind in FAILURES if self.failures[kind])
        rows = [("engine", self.description), ("sequences", str(self.sequences)),
                ("commands sent", str(self.commands)),
                ("answers checked", f"{self.answers} ({', '.join(f'{k} {n}' for k, n in self.seen.most_common())})"),
                ("failures", f"{self.failed}" + (f" ({kinds})" if kinds else "")),
                ("failing lines", "; ".join(
                    f"{kind}: " + ", ".join(f"{word} {n}" for (k, word), n in self.failing.most_common() if k == kind)
                    for kind in FAILURES if self.failures[kind]) or "none"),
                ("hangs", str(self.failures["hang"])),
                ("slowest answer", f"{self.slowest_move[0]:.3f} s to a move command ({short(self.slowest_move[1])})"),
                ("slowest other", f"{self.slowest_other[0]:.3f} s ({short(self.slowest_other[1])})"),
                ("seconds", f"{self.seconds:.1f}")]
        return "\n".join(f"{name:<16} {value}" for name, value in rows)


class Fuzz:
    """Runs seeded scenarios against engines and checks every answer (see the module docstring).

    An engine serves ``config.lifetime`` sequences, then a fresh one starts; it
    is also thrown away after END and after any failure. The checker's
    ``Manager`` lives as long as its engine, so a sequence may begin in the
    game the last one left.
    """

    def __init__(self, config: FuzzConfig):
        self.config = config
        self.rules = config.rules()
        self._target = None
        self._manager: Optional[Manager] = None
        self._sent: list[str] = []  # lines sent to the current engine
        self._served = 0  # sequences the current engine has served
        self._engine_seed = 0
        self._warm = False  # the current engine has answered a START with OK (and so loaded its model)

    # ----------------------------------------------------------- running
    def run(self, sequences: int, seed: int = 0, keep: int = 3, shrink_s: float = 0.0,
            max_failures: Optional[int] = None, progress: Optional[Callable[[Report, int], None]] = None,
            shrink_replays: Optional[int] = None) -> Report:
        """Runs ``sequences`` sequences, or fewer once ``max_failures`` of them have failed.

        Keeps ``keep`` examples of each failure kind; ``shrink_s`` (in this process
        only) is the time each of them may take to shrink to a short repro, ``shrink_replays``
        the replays (either one alone shrinks; both: whichever runs out first). Replays make a
        shrink that ends the same way on a loaded machine as on an idle one.
        """
        report = Report(self.config.describe())
        started = time.perf_counter()
        # The engine runs a full garbage collection after every move. Frozen, the objects
        # this process held before the run (the interpreter's, numpy's, a test session's)
        # are not walked each time: without it the collections took most of the run.
        gc.freeze()
        try:
            for index in range(sequences):
                failure = self._sequence(index, seed, report)
                report.sequences += 1
                if failure is not None:
                    report.failures[failure.kind] += 1
                    report.failing[failure.kind, failure.word] += 1
                    if sum(f.kind == failure.kind for f in report.examples) < keep:
                        report.examples.append(failure)
                if progress is not None:
                    progress(report, index + 1)
                if max_failures is not None and report.failed >= max_failures:
                    break
        finally:
            self._discard()
            gc.unfreeze()
        report.seconds = time.perf_counter() - started  # the shrinking below not included
        if (shrink_s > 0 or shrink_replays) and not self.config.process:
            for failure in report.examples:
                failure.repro = self.shrink(failure, shrink_s or None, shrink_replays)
        return report

    def _new_target(self, engine_seed: int):
        config = self.config
        if config.process:
            return ProcessTarget(config.command(engine_seed), config.start_s)
        options = config.options(engine_seed)
        return InProcessTarget(lambda out: config.engine_class(options, out, config.clock))

    def _discard(self, kill: bool = False) -> None:
        if self._target is not None:
            self._target.close(kill)
        self._target = None

    def _sequence(self, index: int, seed: int, report: Report) -> Optional[Failure]:
        config = self.config
        if self._target is None or self._served >= config.lifetime:
            self._discard()
            self._engine_seed = seed * 1_000_003 + index
            self._target = self._new_target(self._engine_seed)
            self._manager = Manager(self.rules)
            self._sent, self._served, self._warm = [], 0, False
        self._served += 1
        manager = self._manager
        scenario = Scenario(random.Random(f"{seed}/{index}"), manager, self.rules, config.hostile_share, config.skip,
                            config.max_side)
        started = time.perf_counter()
        lines = scenario.lines()
        if config.process:  # ABOUT at the end: an answer too many shows as ABOUT's answer
            lines = _then(lines, manager, "ABOUT")
        for line in lines:
            self._sent.append(line)
            problem = self._step(self._target, manager, line, report)
            if problem is None and time.perf_counter() - started > config.sequence_s:
                problem = "hang", f"the sequence took over {config.sequence_s:g} s"
            if problem is not None:
                failure = Failure(problem[0], index, problem[1], list(self._sent), self._engine_seed)
                self._discard(kill=True)
                return failure
        if manager.ended:
            self._discard()
        return None

    def _limit(self, dues: list[Due]) -> float:
        """The time an answer may take: the first START of an engine may load its model."""
        if not self._warm and any(d.size is not None and OK in d.kinds and ERROR not in d.kinds for d in dues):
            return self.config.start_s
        return self.config.answer_s

    def _step(self, target, manager: Manager, line: str, report: Optional[Report]) -> Optional[tuple[str, str]]:
        """Sends one line, checks what came back; returns ``(kind, detail)`` of a failure or None."""
        dues = manager.feed(line)
        limit = self._limit(dues)
        exchange = target.exchange(line, dues, manager.ended, limit)
        if report is not None:
            report.commands += 1
            if exchange.answers:
                slowest = "slowest_move" if any(MOVE in d.kinds for d in dues) else "slowest_other"
                if exchange.seconds > getattr(report, slowest)[0]:
                    setattr(report, slowest, (exchange.seconds, line))
        problem = exchange.problem
        if problem is None and len(exchange.answers) != len(dues):
            problem = "count", (f"{short(line)} got {len(exchange.answers)} answers {exchange.answers[:3]}, "
                                f"{len(dues)} due")
        for due, answer in zip(dues, exchange.answers):
            if problem is not None:
                break
            if report is not None:
                report.answers += 1
            problem = manager.accept(due, answer)
            if problem is None:
                if report is not None:
                    report.seen["move" if MOVE in due.kinds else ABOUT if ABOUT in due.kinds
                                else answer.split(" ", 1)[0]] += 1
                if answer == OK and due.size is not None:
                    self._warm = True
        if problem is None:
            if exchange.cpu is None and exchange.seconds > limit:
                problem = "hang", f"{short(line)} took {exchange.seconds:.1f} s (limit {limit:g} s)"
            elif exchange.cpu is not None and (exchange.cpu > limit or exchange.seconds > WALL_FACTOR * limit):
                problem = "hang", (f"{short(line)} took {exchange.seconds:.1f} s, {exchange.cpu:.1f} s of CPU "
                                   f"(limit {limit:g} s)")
        if problem is not None and problem[0] == "crash" and exchange.stderr:
            problem = problem[0], f"{problem[1]}\n  stderr: {exchange.stderr}"
        return problem

    # ------------------------------------------------------- shrinking
    def replay(self, lines: list[str], engine_seed: int) -> Optional[tuple[str, int]]:
        """Sends ``lines`` to a fresh engine; returns ``(failure kind, index of the failing line)`` or None."""
        target = self._new_target(engine_seed)
        manager = Manager(self.rules)
        warm, self._warm = self._warm, False
        try:
            for index, line in enumerate(lines):
                problem = self._step(target, manager, line, None)
                if problem is not None:
                    return problem[0], index
            return None
        finally:
            self._warm = warm
            target.close(kill=True)

    def shrink(self, failure: Failure, budget_s: Optional[float] = 30.0,
               replays: Optional[int] = None) -> Optional[list[str]]:
        """A short list of lines that fails like ``failure`` on a fresh engine, found within ``budget_s``
        seconds and ``replays`` replays (None: no such limit).

        The failing line alone first, then with the last START before it, then
        chunks of lines taken out while the failure stays (delta debugging).
        None if the lines do not fail the same way again on a fresh engine.
        """
        deadline = math.inf if budget_s is None else time.monotonic() + budget_s
        left = math.inf if replays is None else replays

        def fails(candidate: list[str]) -> Optional[list[str]]:
            nonlocal left
            if not candidate or time.monotonic() > deadline or left <= 0:
                return None
            left -= 1
            result = self.replay(candidate, failure.engine_seed)
            return candidate[:result[1] + 1] if result is not None and result[0] == failure.kind else None

        lines = fails(failure.lines)
        if lines is None:
            return None
        starts = [line for line in lines[:-1] if split_command(line.strip() or "x")[0] in ("START", "RECTSTART")]
        for candidate in ([lines[-1]], starts[-1:] + [lines[-1]]):
            found = fails(candidate) if len(candidate) < len(lines) else None
            if found is not None:
                lines = found
                break
        chunks = 2
        while len(lines) > 1 and time.monotonic() < deadline and left > 0:
            size = math.ceil(len(lines) / chunks)
            for start in range(0, len(lines), size):
                found = fails(lines[:start] + lines[start + size:])
                if found is not None:
                    lines = found
                    chunks = max(2, chunks - 1)
                    break
            else:
                if size == 1:
                    break
                chunks = min(len(lines), chunks * 2)
        return lines


def _then(lines: Iterator[str], manager: Manager, last: str) -> Iterator[str]:
    """``lines``, then ``last`` unless the engine was sent END."""
    yield from lines
    if not manager.ended:
        yield last
