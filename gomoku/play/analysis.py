"""What the AI thinks of a position, for the window and the terminal to show.

An ``Analysis`` is a plain record of one search's root: the candidate moves with
their visits, mean values and priors, the root's value, and (for a player with a
policy net) the net's priors over the whole board and its value. Values are in
[-1, 1] for the side to move at the root; ``Analysis.win_rate`` and
``Candidate.win_rate`` turn them into win rates, ``(v + 1) / 2``.

``snapshot(player, board)`` is the one place that reads a search tree
(``MCTSPlayer.live_root()``, the compiled core's root copied or the Python tree's,
``GumbelPlayer.tree.root``); it copies the root's small
arrays and checks that they agree, so a caller gets a consistent record or None.
``search_with_analysis`` runs a player's search and calls it between playouts, in
the searching thread itself, so another thread (the window's drawing loop) only ever
sees finished ``Analysis`` records, never the tree. ``SearchTask`` runs it in a daemon
thread on a copy of the board, for the window's AI moves and hints.

``advisor(match)`` builds the player that gives hints and analyses: the AI in one of the
seats, else the first AI the match offers. It is a fresh player (a fresh tree, the spec's
budget) seeded from the position (``position_seed``), so the terminal's ``hint`` and
``analyze`` and the window's H run one and the same search of a position: the same move and
the same table, however often they are asked. ``analysis_text`` and ``hint_text`` write an
analysis for the terminal; the chosen move is always in its table (``Analysis.top``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from gomoku.game.board import Board
from gomoku.game.gamefile import COLOUR_NAMES
from gomoku.search.evaluator import NetEvaluator
from gomoku.search.mcts import SearchStopped
from gomoku.search.tree import legal_moves

SNAPSHOT_SECONDS = 0.1  # how often a running search reports its root
TOP_MOVES = 8  # candidates shown on the board and in the terminal


def _empty() -> np.ndarray:
    return np.zeros(0)


@dataclass(frozen=True)
class Candidate:
    """One of the search's candidate moves: its visits, their share of the root's, its win rate and prior."""

    move: int
    visits: int
    share: float
    win_rate: float  # for the side to move at the root, if it plays this move
    prior: float


@dataclass(frozen=True)
class Analysis:
    """The AI's view of one position (see the module docstring); arrays are copies, owned by the record."""

    player: int  # the side to move in the analysed position
    history: tuple  # the moves that lead to it: identifies the position
    moves: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    visits: np.ndarray = field(default_factory=_empty)
    q: np.ndarray = field(default_factory=_empty)  # mean value of each move for ``player``
    priors: np.ndarray = field(default_factory=_empty)  # the search's prior of each move
    root_value: Optional[float] = None  # the search's value for ``player``; None before a playout
    policy: Optional[np.ndarray] = None  # the net's priors over every point (legal moves only), if a net
    net_value: Optional[float] = None  # the net's value for ``player``, if a net
    move: Optional[int] = None  # the move the AI chose, once the search has ended
    proven: int = 0  # the solver's result for ``player``: 1 a proven win, -1 a proven loss, 0 not known

    @property
    def playouts(self) -> int:
        return int(self.visits.sum())

    @property
    def value(self) -> Optional[float]:
        """A proven result's value, else the search's, else the net's, else None."""
        if self.proven:
            return float(np.sign(self.proven))
        return self.root_value if self.root_value is not None else self.net_value

    def win_rate(self, player: Optional[int] = None) -> Optional[float]:
        """The chance that ``player`` (default: the side to move) wins, as the AI sees it; None if unknown."""
        value = self.value
        if value is None:
            return None
        rate = (max(-1.0, min(1.0, value)) + 1.0) / 2.0
        return rate if player in (None, self.player) else 1.0 - rate

    def top(self, k: int = TOP_MOVES) -> list[Candidate]:
        """The ``k`` most visited moves, most visited first (moves with no visit are left out).

        Once the search has ended its chosen ``move`` comes first, then the others: a search may
        choose a move that is not the most visited (Gumbel's score, often between two moves of
        equal visits; a move that wins at once), and the table and the board must show the move
        the hint names as the first candidate.
        """
        total = self.visits.sum()
        if total <= 0 or k < 1:
            return []
        order = [int(i) for i in np.argsort(-self.visits, kind="stable") if self.visits[i] > 0]
        chosen = [int(i) for i in np.flatnonzero(self.moves == self.move)] if self.move is not None else []
        order = (chosen[:1] + [i for i in order if i not in chosen[:1]])[:k]
        return [Candidate(int(self.moves[i]), int(self.visits[i]), float(self.visits[i] / total),
                          (float(np.clip(self.q[i], -1.0, 1.0)) + 1.0) / 2.0, float(self.priors[i]))
                for i in order]

    def best(self) -> Optional[int]:
        """The chosen move once the search ended, else the most visited one so far (None: no visit yet)."""
        if self.move is not None:
            return self.move
        top = self.top(1)
        return top[0].move if top else None


def snapshot(player, board: Board) -> Optional[Analysis]:
    """The root statistics of ``player``'s search of ``board``, copied; None if there are none.

    Call it between playouts (``search_with_analysis`` does), when the tree is whole and
    ``board`` is back at the root's position. Should the root change under it, the copies
    disagree in length, or an array is missing, it returns None rather than a mixed record.
    This is the only function that knows where a player keeps its tree.
    """
    live = getattr(player, "live_root", None)  # ``MCTSPlayer``: a copy of the core's root while it searches there
    tree = getattr(player, "mcts", None) or getattr(player, "tree", None)
    root = live() if live is not None else getattr(tree, "root", None)
    if root is None:
        return None
    arrays = (root.moves, root.child_N, root.child_Q, root.child_P)
    if any(a is None for a in arrays):
        return None
    moves, visits, q, priors = (np.array(a, copy=True) for a in arrays)
    if not len(moves) == len(visits) == len(q) == len(priors):
        return None
    total = float(visits.sum())
    value = float(visits @ q / total) if total > 0 else None
    return Analysis(board.current_player, tuple(board.history), moves.astype(np.int64),
                    visits.astype(np.float64), q.astype(np.float64), priors.astype(np.float64), value,
                    proven=int(getattr(root, "proven", 0) or 0))


def net_evaluator(player) -> Optional[NetEvaluator]:
    """The player's policy-value net (its evaluator), or None for pure MCTS, the heuristic or a human."""
    evaluator = getattr(player, "evaluator", None)
    return evaluator if isinstance(evaluator, NetEvaluator) else None


def policy_of(evaluator, board: Board) -> tuple[np.ndarray, float]:
    """The net's priors over every point of ``board`` (0 off the legal moves, summing to 1) and its value."""
    priors, values = evaluator.evaluate([board])
    policy = np.zeros(board.size)
    legal = legal_moves(board)
    if len(legal):
        p = np.asarray(priors[0], dtype=np.float64)[legal]
        policy[legal] = p / p.sum() if p.sum() > 0 else 1.0 / len(legal)
    return policy, float(values[0])


def search_with_analysis(player, board: Board, stop: Optional[Callable[[], bool]] = None,
                         report: Optional[Callable[[Analysis], None]] = None,
                         every: float = SNAPSHOT_SECONDS) -> Analysis:
    """Runs ``player.get_action(board)`` and returns the search's final ``Analysis``, its ``move`` set.

    A player with a net first gets the net's view of ``board`` (the search's first playout
    finds it in the evaluator's cache). Every ``every`` seconds between playouts ``report``
    receives a snapshot, taken in this thread.

    Raises:
        SearchStopped: ``stop`` ended the search (see ``MCTSPlayer.get_action``).
    """
    evaluator = net_evaluator(player)
    policy, net_value = policy_of(evaluator, board) if evaluator is not None else (None, None)
    last = time.monotonic()

    def check() -> bool:
        nonlocal last
        if report is not None and time.monotonic() - last >= every:
            last = time.monotonic()
            shot = snapshot(player, board)
            if shot is not None:
                report(dataclasses.replace(shot, policy=policy, net_value=net_value))
        return stop is not None and stop()

    move = player.get_action(board, stop=check)
    final = snapshot(player, board) or Analysis(board.current_player, tuple(board.history))
    return dataclasses.replace(final, policy=policy, net_value=net_value, move=int(move))


def position_seed(board: Board, base: Optional[int] = None) -> int:
    """A seed that names the position: the board, its rule and its moves, and ``base`` (the match's
    ``--seed``, None without one). The same position gives the same seed in every process."""
    key = repr((board.width, board.height, board.n_in_row, str(board.rule),
                tuple(int(m) for m in board.history), base))
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def advisor(match):
    """A fresh player for a hint or an analysis of ``match.board``: the AI of the side to move, else
    of the other side, else the first AI among the match's choices (the model when one is offered);
    None if there is none. Its seed comes from the position (``position_seed``) and its tree is new,
    so its search of a position is the same each time it is asked."""
    board = match.board
    seed = position_seed(board, match.seed)
    for side in (board.current_player, 3 - board.current_player):
        if not match.is_human(side):
            return match.build_player(match.specs[side], seed=seed)
    for spec in match.choices:
        if spec.entry.ai:
            return match.build_player(spec, seed=seed)
    return None


# ------------------------------------------------------------------ text
def percent(x: float) -> str:
    return f"{100 * x:.0f}%"


def marked_board(board: Board, marks: dict[int, str]) -> str:
    """``board.to_text()`` with a character on each of the empty points in ``marks``."""
    lines = board.to_text().split("\n")
    for move, mark in marks.items():
        row, col = board.location(move)
        index = board.height - 1 - row
        at = 3 + 2 * col
        lines[index] = lines[index][:at] + mark + lines[index][at + 1:]
    return "\n".join(lines)


def hint_text(analysis: Analysis, board: Board, name: str) -> str:
    """``Hint: play d4. Black's win rate 62% after 400 visits of AlphaZero 400.``"""
    side = COLOUR_NAMES[analysis.player]
    rate = analysis.win_rate()
    text = f"Hint: play {board.move_to_label(analysis.best())}."
    if rate is not None:
        text += f" {side}'s win rate {percent(rate)}"
        text += f" after {analysis.playouts} visits of {name}." if analysis.playouts else f" ({name})."
    return text


def analysis_text(analysis: Analysis, board: Board, name: str) -> str:
    """The board with the top moves numbered, the win rate, and a table of the candidates."""
    side = COLOUR_NAMES[analysis.player]
    top = analysis.top(9)
    lines = [marked_board(board, {c.move: str(i + 1) for i, c in enumerate(top)})]
    rate = analysis.win_rate()
    if rate is not None:
        source = "proven by the solver" if analysis.proven else \
            f"after {analysis.playouts} visits" if analysis.root_value is not None else "the net's value"
        net = f"; the net alone says {percent((analysis.net_value + 1) / 2)}" \
            if analysis.root_value is not None and analysis.net_value is not None else ""
        lines.append(f"{name}: {side}'s win rate {percent(rate)} ({source}{net}).")
    if top:
        lines.append(" #  move  visits  share  win rate  prior")
        for i, c in enumerate(top):
            chosen = "  <- chosen" if c.move == analysis.move else ""
            lines.append(f"{i + 1:>2}  {board.move_to_label(c.move):<4}  {c.visits:>6}  {percent(c.share):>5}"
                         f"  {percent(c.win_rate):>8}  {percent(c.prior):>5}{chosen}")
    if analysis.policy is not None:
        order = np.argsort(-analysis.policy, kind="stable")[:5]
        lines.append("Policy net's favourites: " + ", ".join(
            f"{board.move_to_label(int(m))} {percent(analysis.policy[m])}" for m in order if analysis.policy[m] > 0))
    if analysis.best() is not None:
        lines.append(f"{side} would play {board.move_to_label(analysis.best())}.")
    return "\n".join(lines)


class SearchTask:
    """One AI move (or a hint), searched in a daemon thread on a copy of the board.

    ``analysis`` is the search's latest ``analysis.Analysis``, replaced whole between
    playouts by the searching thread; the final one carries the chosen ``move``.

    Args:
        player: an AI player (``next_leaf`` / ``receive`` / ``choose`` / ``reset``).
        board: the position; it is copied, so the window may keep drawing the original.
        generation: the window's game generation when the search started.
    """

    def __init__(self, player, board: Board, generation: int):
        self.player = player
        self.board = board.copy()
        self.generation = generation
        self.move: Optional[int] = None
        self.analysis: Optional[Analysis] = None  # the latest snapshot of the search, replaced whole
        self.error: Optional[BaseException] = None
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gomoku-search", daemon=True)

    def start(self) -> "SearchTask":
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    @property
    def progress(self) -> float:
        return 1.0 if self.done else min(1.0, max(0.0, float(self.player.progress)))

    def cancel(self, wait: float = 2.0) -> None:
        """Stops the search after its current playout (waiting up to ``wait`` seconds)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(wait)

    def wait(self, timeout: Optional[float] = None) -> bool:
        return self._finished.wait(timeout)

    def _run(self) -> None:
        try:
            def seen(analysis: Analysis) -> None:
                self.analysis = analysis

            final = search_with_analysis(self.player, self.board, stop=self._stop.is_set, report=seen)
            self.analysis, self.move = final, final.move
        except SearchStopped:
            pass  # cancelled: the player has already forgotten the half-done search
        except Exception as exc:  # shown in the window: a failed search must not kill it
            self.error = exc
        finally:
            self._finished.set()
