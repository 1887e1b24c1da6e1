"""A referee for Gomocup engines: plays two engine processes against each other, as a manager does.

``python -m devtools.engine_check.referee "ENGINE 1" "ENGINE 2"`` starts both engines,
plays one game through the protocol that ``engine`` speaks, checks every answer
with ``board.Board`` and prints the transcript. ``run_match`` is the same game
as a function, for the soak (``devtools.engine_check.soak``) and the tests.

The referee talks the way managers do:

* ``START`` (or ``RECTSTART``), then ``INFO timeout_turn``, ``timeout_match``,
  ``time_left`` and ``rule`` (the rule's ``protocol`` number: 0 freestyle, 1 standard, 4 renju,
  8 caro);
* the first move with ``BEGIN``, or, after opening stones the referee placed
  itself, with a ``BOARD`` block;
* each later move with ``TURN x,y``, or with a whole ``BOARD`` block every turn
  (``board_each_turn``), as some managers send it;
* in a timed match (``timeout_match_ms > 0``) an ``INFO time_left`` before
  every move, counting down the engine's own clock.

An engine loses a game by answering late (after ``timeout_turn``, or after the
time it had left), with ``ERROR``, with something that is not a move, with an
illegal move, or with nothing at all (the referee waits a few seconds past the
limit, then calls it a hang). Each of these is counted in ``MatchResult.faults``,
so that a soak can tell a lost game from a misbehaving engine.

The referee's board follows the game's rule (``gomoku.game.rules``): under standard
an overline does not end the game; under caro a five between two stones of the other
engine does not end it either; under renju the first engine is Black, and a
Black move on a forbidden point is an illegal move that loses at once (counted as
``illegal``, its reason ``forbidden move: double three`` and the like).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass, field
from typing import Optional, Sequence

from gomoku.game.board import DRAW, Board, IllegalMoveError
from gomoku.game.rules import FREESTYLE, RULES, check_rule, rules_help
from gomoku.play.engine.protocol import UNLIMITED_MS, ProtocolError, parse_pair
from gomoku.play.engine_process import HANG_GRACE_S, EngineProcess, board_block
from gomoku.util import DefaultsHelpFormatter

FAULTS = ("error", "not_a_move", "illegal", "late", "hang", "crash")


@dataclass
class MatchResult:
    """A refereed game between two engine processes."""

    winner: Optional[int]
    """1 the first engine (it opens), 2 the second, 0 a draw, None the game could not start"""
    reason: str
    moves: list[int]
    """every stone in order, the opening's included"""
    latencies: list[float]
    """seconds from sending each move command to the answer"""
    limits: list[float] = field(default_factory=list)
    """the time each of those answers was allowed"""
    transcript: list[str] = field(default_factory=list)
    faults: dict = field(default_factory=dict)
    """``{fault: count}`` over ``FAULTS``; a game ends at its first fault"""

    @property
    def slowest(self) -> float:
        return max(self.latencies, default=0.0)


def run_match(commands: tuple[list[str], list[str]], width: int, height: int, n_in_row: int = 5,
              timeout_turn_ms: int = 1000, start_timeout: float = 120.0, stderr=None,
              opening: Sequence[int] = (), timeout_match_ms: int = 0,
              board_each_turn: bool = False, rule: str = FREESTYLE) -> MatchResult:
    """Plays one game between two engines through the protocol, like a manager.

    The first engine moves first (Black): with ``BEGIN`` on an empty board, or with
    a ``BOARD`` block after an opening. Each answer then goes to the other engine.
    Both engines are told the rule (``INFO rule``), and every answer is checked by it.

    Args:
        commands: the two engines' command lines, the first to move first.
        width, height: the board (``START`` when square, else ``RECTSTART``).
        n_in_row: the rule the referee applies.
        timeout_turn_ms: time per move, sent as ``INFO timeout_turn``.
        start_timeout: seconds an engine may take to answer ``START`` (model loading).
        stderr: where the engines' stderr goes.
        opening: stones placed by the referee before the engines play, alternating from
            Black; an even count leaves Black (the first engine) to move.
        timeout_match_ms: each engine's time for the whole game (0: unlimited), counted
            down and sent as ``INFO time_left`` before every move.
        board_each_turn: send every move request as a whole ``BOARD`` block.
        rule: a rule's name (``gomoku.game.rules.RULES``).

    Raises:
        ValueError: an opening that does not leave Black to move or breaks the rule, or a
            rule that cannot be played with ``n_in_row``.
    """
    if len(opening) % 2:
        raise ValueError("an opening must leave Black to move: give it an even number of stones")
    transcript: list[str] = []
    referee = Board(width, height, n_in_row, rule=rule)
    for move in opening:
        referee.do_move(int(move))  # raises for an opening that is not a legal, unfinished game
    engines = [EngineProcess(list(cmd), f"[{i + 1}]", transcript, stderr)
               for i, cmd in enumerate(commands)]
    latencies: list[float] = []
    limits: list[float] = []
    faults = dict.fromkeys(FAULTS, 0)
    time_left = [timeout_match_ms, timeout_match_ms]

    def result(winner: Optional[int], reason: str, fault: Optional[str] = None) -> MatchResult:
        if fault is not None:
            faults[fault] += 1
        return MatchResult(winner, reason, list(referee.history), latencies, limits, transcript, faults)

    start = f"START {width}" if width == height else f"RECTSTART {width},{height}"
    try:
        for engine in engines:
            try:
                engine.send(start)
                answer, _ = engine.reply(start_timeout)
            except (TimeoutError, EOFError, OSError) as exc:  # OSError: it exited before START came
                return result(None, f"{engine.name} did not start: {exc}",
                              "hang" if isinstance(exc, TimeoutError) else "crash")
            if answer != "OK":
                return result(None, f"{engine.name} refused {start}: {answer}")
            engine.send(f"INFO timeout_turn {timeout_turn_ms}", f"INFO timeout_match {timeout_match_ms}",
                        f"INFO time_left {timeout_match_ms or UNLIMITED_MS}", f"INFO rule {referee.rule.protocol}")
        while not referee.game_over:
            side = referee.current_player - 1
            engine = engines[side]
            limit_ms = timeout_turn_ms if not timeout_match_ms else min(timeout_turn_ms, time_left[side])
            # After an opening, each engine's first request is a BOARD block: neither has seen the
            # referee's stones, and White's first turn comes one stone after Black's.
            if board_each_turn or (opening and len(referee.history) - len(opening) < 2):
                command = board_block(referee, referee.current_player, width)
            elif referee.history:
                y, x = referee.location(referee.last_move)
                command = [f"TURN {x},{y}"]
            else:
                command = ["BEGIN"]
            if timeout_match_ms:
                command = [f"INFO time_left {time_left[side]}"] + command
            try:
                engine.send(*command)
            except OSError as exc:  # it exited after its last answer: its pipe is closed
                return result(2 - side, f"{engine.name} lost: it is gone ({exc})", "crash")
            limit = limit_ms / 1000.0
            try:
                answer, latency = engine.reply(limit + HANG_GRACE_S)
            except TimeoutError as exc:
                return result(2 - side, f"{engine.name} lost: {exc}", "hang")
            except EOFError as exc:
                return result(2 - side, f"{engine.name} lost: {exc}", "crash")
            latencies.append(latency)
            limits.append(limit)
            if timeout_match_ms:
                time_left[side] -= int(latency * 1000)
            if answer.upper().startswith("ERROR"):
                return result(2 - side, f"{engine.name} lost: it answered {answer!r}", "error")
            try:
                x, y = parse_pair(answer, "x,y")
            except ProtocolError as exc:
                return result(2 - side, f"{engine.name} lost: {exc}", "not_a_move")
            try:
                move = referee.move_at(y, x)
                forbidden = referee.forbidden_reason(move)  # None but for Black under renju
                if forbidden is None:
                    referee.do_move(move)
            except (IllegalMoveError, ValueError) as exc:
                return result(2 - side, f"{engine.name} lost: illegal move {answer!r} ({exc})", "illegal")
            if forbidden is not None:
                return result(2 - side, f"{engine.name} lost: forbidden move: {forbidden} at {answer!r}",
                              "illegal")
            if latency > limit:
                return result(2 - side, f"{engine.name} lost on time ({latency:.3f} s of {limit:.3f} s)", "late")
        if referee.winner == DRAW:
            if len(referee.history) < referee.size:  # renju: Black has only forbidden points left
                return result(0, "draw: every empty point is forbidden for Black")
            return result(0, "draw: the board is full")
        winner = referee.winner  # the referee's player 1 is the first engine
        line = "exactly " if referee.rule.exact[winner] else ""
        return result(winner, f"{engines[winner - 1].name} has {line}{n_in_row} in a row")
    finally:
        for engine in engines:
            engine.close()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.engine_check.referee",
        description="Play one game between two engine commands through the Gomocup protocol "
                    "and print the transcript.",
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument("first", help="command line of the engine that moves first, e.g. "
                                      "'pbrain-gomokuzero --model best_model.npz'")
    parser.add_argument("second", help="command line of the other engine")
    parser.add_argument("--size", type=int, default=15, help="board width")
    parser.add_argument("--height", type=int, help="board height (default: --size)")
    parser.add_argument("--n-in-row", type=int, default=5, help="stones in a row that win")
    parser.add_argument("--rule", choices=RULES, default=FREESTYLE,
                        help=f"{rules_help()}. Under renju the first engine is Black. Sent to both engines "
                             "as INFO rule")
    parser.add_argument("--timeout-turn", type=int, default=1000, help="milliseconds per move")
    parser.add_argument("--timeout-match", type=int, default=0,
                        help="milliseconds per engine for the whole game, sent with time_left (0: none)")
    parser.add_argument("--board-each-turn", action="store_true",
                        help="send every move request as a BOARD block instead of TURN")
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_rule(args.rule, args.n_in_row)
    except ValueError as exc:
        parser.error(str(exc))
    result = run_match((shlex.split(args.first), shlex.split(args.second)), args.size,
                       args.height or args.size, args.n_in_row, args.timeout_turn,
                       timeout_match_ms=args.timeout_match, board_each_turn=args.board_each_turn,
                       rule=args.rule)
    print("\n".join(result.transcript))
    print(f"result: {result.reason}; {len(result.moves)} moves, slowest answer {result.slowest:.3f} s")
    return 0 if result.winner is not None else 1


if __name__ == "__main__":
    sys.exit(main())
