"""The engine's timed search: one move's playouts against its deadline, and the watchdog that answers
when the search is stuck past it.

A manager forfeits a late answer, and a machine that is not idle makes any single step slow
now and then: a playout ten times its usual length, a net call held back by another process,
the root's threat searches. Three layers keep the answer in time:

* the stop rule (``PlayoutTimer``): the search stops when the slowest playout of the last half
  minute, not only the last one, would end past the deadline (keeping back at most half the
  move's time); a slow playout is mostly time the machine held the process back, so this keeps
  room for the next such stall, whether it comes during the search or after it;
* an adaptive margin (``PlayoutTimer.extra``): a move whose search still ended past its soft
  deadline adds that overrun to the margin of the moves after it (halved at every move);
* the watchdog (``Watchdog``): a thread armed for every search with a hard deadline between
  the soft deadline and the turn's limit; if the search has not ended by then, it answers the
  search's best move so far (the most visited root move, the prior's favourite before any
  visit) or, before the root is expanded, a quick move computed before the search started
  (``quick_move``). The search thread finishes its playout and the engine plays the answered
  move: the search itself stays sequential, one playout at a time.

``stamped_lines`` reads the manager's lines on a thread of their own and stamps each with its
arrival time, so that a move's clock starts when its command arrived, even if the engine was
still busy with the last one.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections import deque
from typing import Callable, Iterator, Optional, TextIO

import numpy as np

from gomoku.game.board import Board
from gomoku.play.engine.protocol import MIN_PLAYOUTS
from gomoku.search.heuristic import HeuristicPlayer
from gomoku.search.protocol import SearchBackend

RECENT_SECONDS = 30.0
"""how long the stop rule remembers a playout's time: it keeps back the slowest of the playouts
of the last half minute (a stall of the machine is seldom alone)"""
RESERVE_SHARE = 0.5
"""the time kept back for the next playout takes at most this share of a move's time"""
EXTRA_MARGIN_SHARE = 0.25
"""the adaptive margin takes at most this share of a move's time"""
EXTRA_MARGIN_DECAY = 0.5
"""the adaptive margin left after a move that ended in time"""


# ----------------------------------------------------------------- the stop rule
class PlayoutTimer:
    """Remembers how long recent playouts took and how far recent searches overran, for the stop rule.

    A playout's time on a busy machine is mostly the time its process waited for a core: the
    slowest playout of the last ``recent`` seconds (of the engine's clock) measures how long the
    machine may hold the engine back, during a playout or after the search.
    """

    def __init__(self, recent: float = RECENT_SECONDS):
        self.recent = recent
        self._slowest: deque = deque()  # (when, seconds), the seconds falling: the window's maximum first
        self.extra = 0.0
        """seconds added to the margin: the recent overrun of the soft deadline, halved every move"""

    def reserve(self, now: float) -> float:
        """Seconds kept for the next playout: the slowest of the playouts of the last ``recent`` seconds."""
        slowest = self._slowest
        while slowest and slowest[0][0] < now - self.recent:
            slowest.popleft()
        return slowest[0][1] if slowest else 0.0

    def record(self, seconds: float, now: float) -> None:
        """A playout that ended at ``now`` took ``seconds``."""
        slowest = self._slowest
        while slowest and slowest[-1][1] <= seconds:
            slowest.pop()  # a faster playout before a slower one can never be the window's maximum
        slowest.append((now, seconds))

    def soft_deadline(self, started: float, budget: float) -> float:
        """The moment the search should end: ``budget`` seconds after ``started`` less the adaptive
        margin (at most ``EXTRA_MARGIN_SHARE`` of the budget)."""
        return started + budget - min(self.extra, EXTRA_MARGIN_SHARE * budget)

    def ended(self, overrun: float) -> None:
        """A move's search ended ``overrun`` seconds past its soft deadline (negative: in time)."""
        self.extra = max(overrun, self.extra * EXTRA_MARGIN_DECAY, 0.0)


# ------------------------------------------------------------------ the watchdog
WATCHDOG_MAX_WAIT_S = 7 * 24 * 3600.0
"""a deadline further away than this (a week) is no deadline: the watchdog is not armed"""


class Watchdog:
    """Answers a move for a search stuck past its hard deadline.

    ``arm`` before the search starts, ``disarm`` once it has ended: ``disarm`` returns the move
    the watchdog answered, or None if it did not fire (and then it never will). Firing and
    disarming hold one lock, so exactly one of the two threads answers.

    Args:
        answer: writes the reply for a move (called on the watchdog's thread, under the lock).
        clock: the engine's clock, monotonic seconds; the watchdog waits in real time, so it is
            only for the real clock (``time.monotonic``).
    """

    def __init__(self, answer: Callable[[int], None], clock: Callable[[], float] = time.monotonic):
        self._answer = answer
        self._clock = clock
        self._lock = threading.Lock()
        self._timer: Optional[threading.Timer] = None
        self._pick: Optional[Callable[[], int]] = None
        self._armed: Optional[object] = None  # this search's token: a timer of an earlier search must not fire
        self.fired: Optional[int] = None
        self.fired_at = 0.0

    def arm(self, deadline: float, pick: Callable[[], int]) -> None:
        """Answers ``pick()`` at ``deadline`` (on the engine's clock) unless disarmed before."""
        token = object()
        with self._lock:
            self._pick, self.fired, self._armed = pick, None, token
        wait = max(0.0, deadline - self._clock())
        if wait > WATCHDOG_MAX_WAIT_S:
            return  # no real deadline (an unlimited clock): a wait that long overflows the timer's clock
        self._timer = threading.Timer(wait, self._fire, (token,))
        self._timer.daemon = True
        self._timer.start()

    def _fire(self, token: object) -> None:
        with self._lock:
            # A timer cancelled while it waited for the lock may find the next search armed: not its own.
            if self._pick is None or token is not self._armed:
                return
            pick, self._pick = self._pick, None
            move = pick()
            self._answer(move)
            self.fired, self.fired_at = move, self._clock()

    def disarm(self) -> Optional[int]:
        """Stops the watchdog; returns the move it answered, or None."""
        with self._lock:
            self._pick = self._armed = None
            fired, self.fired = self.fired, None  # told once: a later disarm without an arm gets None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return fired

    def held(self):
        """The lock: hold it to write a reply that must not cross the watchdog's."""
        return self._lock


def quick_move(board: Board) -> int:
    """A legal move in a millisecond or so, for the watchdog before the search has expanded the
    root: a five, else a block of the opponent's five, else the heuristic's level-1 move, else
    the empty cell nearest the centre."""
    try:
        mine, theirs = board.completing_cells()
        blocks = [int(m) for m in theirs if not board.is_forbidden(int(m))]
        if len(mine) or blocks:
            return int(mine[0]) if len(mine) else blocks[0]
        move = int(HeuristicPlayer(1).get_action(board))
        board.check_move(move)
        return move
    except Exception:
        legal = np.asarray(board.legal_moves())
        rows, cols = np.divmod(legal, board.width)
        return int(legal[np.argmin((rows - (board.height - 1) / 2) ** 2 + (cols - (board.width - 1) / 2) ** 2)])


def best_so_far(tree, early: int) -> int:
    """The move a search in progress would play now, read from another thread: the root's most
    visited move (``TreeNode.best_index``), the prior's favourite before any visit, or ``early``
    while the root is not expanded. ``tree`` is the search's backend (``search.protocol``): only the
    root's arrays are read (a copy of them on the core, whose move is checked against the
    position, as the kernels may be writing the root meanwhile), never the board."""
    try:
        root = tree.root()
        moves, visits, priors = root.moves, root.child_N, root.child_P
        if moves is None or visits is None or priors is None or len(moves) != len(visits):
            return early
        if root.win < 0 and not visits.any():
            lost = root.lost if root.lost is not None and not root.lost.all() else None
            move = int(moves[int(np.argmax(priors if lost is None else np.where(lost, -1.0, priors)))])
        else:
            move = int(moves[root.best_index()])
    except Exception:  # a root half-way through its expansion
        return early
    playable = getattr(tree, "playable", None)
    return move if playable is None or playable(move) else early


# ------------------------------------------------------------------- the search
def timed_search(tree: SearchBackend, board: Board, evaluator, clock: Callable[[], float], started: float,
                 budget: float, timer: PlayoutTimer, most_new: Optional[int] = None,
                 most_tree: Optional[int] = None) -> tuple[int, float]:
    """Playouts until the soft deadline (``PlayoutTimer``), a playout cap, the tree's size limit or a
    proven root; returns the playouts run and the moment the last one ended.

    ``tree`` is a backend of the search protocol (``search.protocol``): the Python tree or the
    compiled core, which leaves a copy of its root in its reference tree.

    Args:
        started: when the move's command arrived (``clock``'s seconds).
        budget: seconds the move may search after ``started``, the margin already taken off.
        most_new: stop after this many playouts (None: no cap).
        most_tree: stop once the root has this many visits (None: no limit).
    """
    deadline = timer.soft_deadline(started, budget)
    most_reserve = RESERVE_SHARE * budget
    most_new = max(MIN_PLAYOUTS, most_new or sys.maxsize)
    most_tree = most_tree or sys.maxsize
    tree.start_move(board, evaluator)  # the tree kept from the last move, if it stands on this position
    root_state = tree.root_state  # the root's (expanded, proven, N), read every playout

    fresh = not root_state()[0]  # the first playout expands the root (and runs its threat searches)
    last = now = clock()

    def enough(playouts: int) -> bool:
        # Stop when the next playout, if it takes as long as the slowest recent one, would end past the
        # deadline, or once the in-tree solver (--solve) has proven the root won or lost: more playouts
        # change nothing. A root kept from the last move may be proven but not yet expanded: the first
        # playout expands it, so that the decision has the moves and their priors to choose from.
        nonlocal last, now
        now = clock()
        if playouts > 1 or playouts == 1 and not fresh:
            timer.record(now - last, now)
        last = now
        expanded, proven, visits = root_state()
        if not expanded:
            return False
        return proven != 0 or playouts >= MIN_PLAYOUTS and (
            now + min(timer.reserve(now), most_reserve) >= deadline or playouts >= most_new
            or visits >= most_tree)

    playouts = tree.run(enough)
    timer.ended(now - deadline)
    return playouts, now


# ------------------------------------------------------- the timed Gumbel search
PLAN_SHARE = 0.85
"""a Gumbel search plans this share of the simulations the move's time holds at the recent rate (a
plan cut short by the deadline leaves candidates unequally searched); time left once they are done
goes to more simulations of the last two candidates, until the deadline"""


class SimulationRate:
    """Seconds a simulation of the Gumbel search took on recent moves (by rounds, the root's
    expansion apart), for planning the next move's budget; None before the first move."""

    def __init__(self):
        self.seconds: Optional[float] = None

    def update(self, simulations: int, seconds: float) -> None:
        if simulations > 0:
            now = seconds / simulations
            self.seconds = now if self.seconds is None else 0.5 * (self.seconds + now)


def gumbel_timed_search(player, board: Board, clock: Callable[[], float], started: float, budget: float,
                        timer: PlayoutTimer, rate: SimulationRate,
                        most: Optional[int] = None) -> tuple[int, float]:
    """One move of ``player`` (a ``gumbel.GumbelPlayer`` with its evaluator) against the clock, a round of
    ``search_round`` (one net call, on the backend ``begin`` picked) at a time; returns the simulations
    run and the moment the last round ended. Its ``choose`` then gives the move.

    Sequential halving needs its budget before it starts: after the root's expansion the budget
    is ``PLAN_SHARE`` of what the time to the soft deadline holds at ``rate`` (the root's own
    evaluation time at the first move), at most ``most``. A round of simulations (one net call)
    starts only if the slowest recent round would still end before the deadline, as a playout of
    ``timed_search`` does; a plan the time cannot hold ends early, with the candidates still in
    the running, and time left after the plan goes on over the last two.
    """
    deadline = timer.soft_deadline(started, budget)
    most_reserve = RESERVE_SHARE * budget
    most = max(MIN_PLAYOUTS, most or sys.maxsize)
    player.reset()
    player.begin(board)
    player.n_playout = most
    simulations, planned, searching = 0, False, 0.0
    now = clock()
    while True:
        round_start = now
        if planned and (simulations >= MIN_PLAYOUTS and now + min(timer.reserve(now), most_reserve) >= deadline
                        or player.backend.root_state()[1] != 0):
            break
        leaves = player.search_round()
        if not leaves:  # the plan is done (after the root's round), and the check above says a round has time
            if player.n_playout >= most:
                break
            # More simulations of the last two candidates, a round of two at a time, until the deadline,
            # at this move's own rate.
            per = max(searching / max(simulations, 1), 1e-6)
            player.n_playout = min(most, player.n_playout + max(2, int((deadline - now) / per)))
            continue
        now = clock()
        if not planned:  # the root is expanded: plan the simulations from the time left
            per = rate.seconds if rate.seconds is not None else now - round_start
            player.n_playout = max(MIN_PLAYOUTS, min(most, int(PLAN_SHARE * max(0.0, deadline - now) / max(per, 1e-6))))
            planned = True
        else:
            # Only the rounds of simulations set the time kept back for the next one: the root's
            # expansion (its threat searches, a new tree) happens once a move and is no measure of
            # a round.
            timer.record(now - round_start, now)
            simulations += leaves
            searching += now - round_start
    player.take_root(player.backend.root(), player.done)
    rate.update(simulations, searching)
    timer.ended(now - deadline)
    return simulations, now


# ------------------------------------------------------------------- the input
def stamped_lines(stream: TextIO, clock: Callable[[], float] = time.monotonic) -> Iterator[tuple[str, float]]:
    """The lines of ``stream``, each with the moment it arrived, read on a thread of their own
    (so a line that comes while the engine is busy is stamped when it came, not when it is read)."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        try:
            for line in iter(stream.readline, ""):
                lines.put((line, clock()))
        finally:
            lines.put(None)

    def stamped() -> Iterator[tuple[str, float]]:
        while True:
            item = lines.get()
            if item is None:
                return
            yield item

    threading.Thread(target=read, name="stdin", daemon=True).start()  # at once, not at the first line asked for
    return stamped()
