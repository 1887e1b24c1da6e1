"""The protocol fuzz (``devtools.engine_check.fuzz``): the engine answers seeded random sequences as the protocol says.

A few hundred sequences run against the engine in this process (pure MCTS and
the heuristic), a few dozen against a real ``python -m gomoku.play.engine`` process,
every hostile category included. Boards are at most 12x12 and searches 4
playouts, so that the file runs in well under a minute. Two inputs that once
hung or crashed the engine (a board 100,000,000 rows high, coordinates of
thousands of digits) are rare among the random lines, so they are sent on
their own as well. The checker is shown to fail where it must: engines broken
on purpose (an illegal move, an exception, an answer too many or too few, a
hang, a process that dies) are each caught as their kind of failure.
"""

from __future__ import annotations

import random
import re
import sys
import textwrap

import pytest

from gomoku.play.engine.brain import PbrainEngine
from devtools.engine_check.fuzz.check import Manager, Rules
from devtools.engine_check.fuzz.runner import Fuzz, FuzzConfig
from devtools.engine_check.fuzz.scenario import LONG_DIGITS, Scenario

SEED = 20240601
SMALL = dict(max_playouts=4, max_side=12)
# The shrinking below is bounded by replays, not seconds, so that a loaded machine shrinks as far
# as an idle one (these shrinks take 2 to 14 replays).
SHRINK_REPLAYS = 100


def describe(report) -> str:
    return report.table() + "".join("\n\n" + failure.describe() for failure in report.examples)


# ------------------------------------------------------------ clean runs
@pytest.mark.timeout(240)
def test_pure_mcts_in_process_answers_every_sequence_as_the_protocol_says():
    report = Fuzz(FuzzConfig(engine="pure", **SMALL)).run(200, SEED)
    assert report.failed == 0, describe(report)
    assert report.sequences == 200
    # The sequences really played games and really tried the error paths.
    assert report.seen["move"] > 1000 and report.seen["OK"] > 200
    assert report.seen["ERROR"] > 100 and report.seen["UNKNOWN"] > 10 and report.seen["ABOUT"] > 0


@pytest.mark.timeout(240)
def test_the_heuristic_in_process_answers_every_sequence_as_the_protocol_says():
    report = Fuzz(FuzzConfig(engine="heuristic", max_side=10)).run(30, SEED + 1)
    assert report.failed == 0, describe(report)
    assert report.seen["move"] > 150


@pytest.mark.timeout(400)
def test_an_engine_process_answers_every_sequence_as_the_protocol_says():
    report = Fuzz(FuzzConfig(engine="pure", process=True, restart_every=12, start_s=60.0, **SMALL)).run(24, SEED + 2)
    assert report.failed == 0, describe(report)
    assert report.seen["move"] > 100 and report.seen["ABOUT"] > 15  # every sequence without END ends with ABOUT


@pytest.mark.timeout(10)
def test_the_same_seed_sends_the_same_lines():
    def lines(seed: int) -> list[str]:
        manager = Manager(Rules())
        manager.size = (9, 9)
        return [line for index in range(20)
                for line in Scenario(random.Random(f"{seed}/{index}"), manager, Rules()).lines()]

    assert lines(1) == lines(1) != lines(2)


def kinds(manager: Manager, line: str) -> list[tuple[str, ...]]:
    return [due.kinds for due in manager.feed(line)]


@pytest.mark.timeout(10)
def test_the_manager_knows_what_each_line_is_due():
    manager = Manager(Rules(n_in_row=4))
    assert kinds(manager, "BEGIN") == [("ERROR",)]  # no game yet
    assert kinds(manager, "INFO timeout_turn 100") == []
    assert kinds(manager, "start 3") == [("ERROR",)]  # no line of 4 fits
    assert kinds(manager, "RECTSTART 30,6") == [("OK", "ERROR")]  # the engine decides
    (due,) = manager.feed("START\t6")
    assert due.kinds == ("OK",) and manager.accept(due, "OK") is None and manager.size == (6, 6)
    (due,) = manager.feed("TURN 2,2")
    assert due.kinds == ("MOVE",)
    assert manager.accept(due, "2,2")[0] == "illegal"  # the opponent's stone is there
    assert manager.accept(due, "6,0")[0] == "illegal"  # off the board
    assert manager.accept(due, "ERROR no")[0] == "wrong"
    assert manager.accept(due, "ERROR internal error: KeyError")[0] == "crash"
    assert manager.accept(due, "3,3") is None and manager.stones == {(2, 2): 2, (3, 3): 1}
    assert kinds(manager, "TURN 3,3") == [("ERROR",)]  # occupied: nothing changes
    assert kinds(manager, "TAKEBACK 0,0") == [("ERROR",)]
    assert kinds(manager, "TAKEBACK 3 , 3") == [("OK",)] and manager.stones == {(2, 2): 2}
    # A BOARD cut short by a command: ERROR for the block, then the command's own answer.
    assert kinds(manager, "BOARD") == [] and kinds(manager, "0,0,1") == [] and kinds(manager, "info x 1") == []
    assert kinds(manager, "ABOUT") == [("ERROR",), ("ABOUT",)] and manager.stones == {(2, 2): 2}
    # Three of the opponent's in a column, then its TURN makes four: the stone stays, the engine has no move.
    assert kinds(manager, "BOARD") + kinds(manager, "0,1,2") + kinds(manager, "0,2,2") == []
    assert kinds(manager, "0,3,2") + kinds(manager, "DONE") == [("MOVE",)]
    (due,) = manager.feed("TURN 0,0")
    assert manager.accept(due, "5,5") == ("wrong", "'TURN 0,0' answered '5,5' where ERROR was due")
    assert manager.stones == {(0, 1): 2, (0, 2): 2, (0, 3): 2, (0, 0): 2}
    assert kinds(manager, "SWAP2BOARD") + kinds(manager, "DONE") == [("UNKNOWN", "ERROR")]
    assert kinds(manager, "FOO") == [("UNKNOWN",)] and kinds(manager, "   ") == []
    assert kinds(manager, "END") == [] and manager.ended


# ------------------------------------------------------ rare hostile lines
@pytest.mark.timeout(30)
@pytest.mark.parametrize("line", ["RECTSTART 5,100000000", "RECTSTART 20,2147483647", "RECTSTART 5,99999999"])
def test_a_board_too_high_to_build_is_refused_at_once(line):
    # A board only limited in width would be built cell by cell: no answer, 200 MB more memory a second.
    fuzz = Fuzz(FuzzConfig(engine="pure", hang_s=1.0))
    assert fuzz.replay([line, "START 9", "BEGIN"], 0) is None


@pytest.mark.timeout(30)
@pytest.mark.parametrize("lines", [
    ["START 9", f"TURN 1,{LONG_DIGITS}"],
    ["START 9", f"TAKEBACK {LONG_DIGITS},1"],
    [f"RECTSTART {LONG_DIGITS},5"],
    ["START 9", "BOARD", f"{LONG_DIGITS},1,1", "DONE"],
], ids=["turn", "takeback", "rectstart", "board"])
def test_coordinates_of_thousands_of_digits_get_a_plain_error(lines):
    # Python's int() refuses more than 4300 digits with a ValueError of its own, not the engine's ERROR.
    assert Fuzz(FuzzConfig(engine="pure")).replay(lines, 0) is None


# ---------------------------------------------- the checker catches faults
class Rewriting:
    """An output stream that passes each written line through ``rewrite`` (None drops it)."""

    def __init__(self, out, rewrite):
        self.out = out
        self.rewrite = rewrite

    def write(self, text: str) -> int:
        for line in text.splitlines():
            new = self.rewrite(line)
            if new is not None:
                self.out.write(new + "\n")
        return len(text)

    def flush(self) -> None:
        self.out.flush()


def rewriting_engine(rewrite):
    class Broken(PbrainEngine):
        def __init__(self, options, out, clock):
            super().__init__(options, Rewriting(out, rewrite), clock)
    return Broken


class RaisingEngine(PbrainEngine):
    def handle(self, line: str) -> bool:
        if line.strip().upper().startswith("TAKEBACK"):
            raise RuntimeError("broken on purpose")
        return super().handle(line)


class InfoAnsweringEngine(PbrainEngine):
    def __init__(self, options, out, clock):
        super().__init__(options, out, clock)
        self.sink = out

    def handle(self, line: str) -> bool:
        if line.strip().upper().startswith("INFO"):
            self.sink.write("OK\n")
        return super().handle(line)


class HangingEngine(PbrainEngine):
    def handle(self, line: str) -> bool:
        if line.strip().upper() == "RESTART":
            while True:
                pass
        return super().handle(line)


class EndlessEngine(PbrainEngine):
    def handle(self, line: str) -> bool:
        super().handle(line)
        return True  # never stops, not even after END


MOVE = re.compile(r"\d+,\d+")
BROKEN = {
    "illegal": rewriting_engine(lambda line: "0,0" if MOVE.fullmatch(line) else line),
    "wrong": rewriting_engine(lambda line: "5,5" if line.startswith("ERROR") else line),
    "count": rewriting_engine(lambda line: None if line.startswith("name=") else line),
    "crash": rewriting_engine(lambda line: "ERROR internal error: KeyError: 3" if line.startswith("UNKNOWN")
                              else line),
}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_the_checker_catches_a_broken_answer(kind):
    report = Fuzz(FuzzConfig(engine="pure", engine_class=BROKEN[kind], **SMALL)).run(40, SEED, max_failures=1)
    assert report.failures[kind] > 0, describe(report)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("engine, kind", [(RaisingEngine, "crash"), (InfoAnsweringEngine, "count"),
                                          (EndlessEngine, "end"), (HangingEngine, "hang")],
                         ids=["raises", "answers-info", "ignores-end", "hangs"])
def test_the_checker_catches_a_broken_engine(engine, kind):
    # A short limit only where the engine hangs: elsewhere a line that a loaded machine stalls for
    # 4 x 0.5 s of wall time would count as a hang, and the shrinking's replay would then fail
    # another way than the failure it shrinks.
    hang_s = 0.5 if kind == "hang" else None
    report = Fuzz(FuzzConfig(engine="pure", engine_class=engine, hang_s=hang_s, **SMALL)).run(
        40, SEED, keep=1, shrink_replays=SHRINK_REPLAYS, max_failures=2)
    assert report.failures[kind] > 0 and report.examples, describe(report)
    failure = report.examples[0]
    assert failure.kind == kind and failure.repro is not None
    assert len(failure.repro) <= 3, failure.describe()  # shrunk to the line that fails, and a START


@pytest.mark.timeout(240)
def test_an_illegal_move_is_shrunk_to_a_short_repro():
    report = Fuzz(FuzzConfig(engine="pure", engine_class=BROKEN["illegal"], **SMALL)).run(
        20, SEED, keep=1, shrink_replays=SHRINK_REPLAYS)
    failure = report.examples[0]
    assert failure.kind == "illegal" and failure.repro is not None and len(failure.repro) <= 4, failure.describe()
    assert Fuzz(FuzzConfig(engine="pure", engine_class=BROKEN["illegal"])).replay(failure.repro, 0)[0] == "illegal"


BROKEN_PROCESS = textwrap.dedent("""
    import os, sys, time
    from gomoku.play.engine.brain import EngineOptions, PbrainEngine
    engine = PbrainEngine(EngineOptions(max_playouts=4, seed=0), sys.stdout)
    for line in sys.stdin:
        word = line.strip().upper()
        if word.startswith("TAKEBACK"):
            os._exit(3)  # dies
        if word == "RESTART":
            time.sleep(60)  # hangs
        if not engine.handle(line):
            break
""")


@pytest.mark.timeout(240)
def test_the_checker_catches_a_process_that_dies_or_hangs():
    # The broken process hangs for 60 s: a 5 s limit catches it, and a busy machine does not make
    # a sound line take that long (nor a restarted process's START 60 s).
    config = FuzzConfig(engine="pure", process=True, hang_s=5.0, start_s=60.0, restart_every=5,
                        engine_command=[sys.executable, "-c", BROKEN_PROCESS], **SMALL)
    report = Fuzz(config).run(30, SEED, max_failures=4)
    assert report.failures["crash"] > 0 and report.failures["hang"] > 0, describe(report)
