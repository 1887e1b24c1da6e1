"""The brain's moves: how ``PbrainEngine`` searches a position against the clock and answers it.

``MoveMaker`` is a part of ``brain.PbrainEngine`` kept in a module of its own: it plays
the move for a position (a five at once, the heuristic, or the timed search of
``move_search`` with its watchdog), keeps or drops the search tree between moves,
and answers a legal move even when the search fails.
"""

from __future__ import annotations

import gc
import sys
import traceback

import numpy as np

from gomoku.game.board import DRAW, Board
from gomoku.play.engine.move_search import best_so_far, gumbel_timed_search, quick_move, timed_search
from gomoku.play.engine.protocol import OPPONENT, OWN, ProtocolError
from gomoku.search.backend import CORE, open_search
from gomoku.search.heuristic import HeuristicPlayer

WARM_UP_SIMULATIONS = 64
"""the Gumbel search at START: enough for every phase of sequential halving (rounds of 16, 8, 4
and 2 leaves with the default 16 candidates)"""


class MoveMaker:
    """The moves of ``brain.PbrainEngine`` (a mixin: it uses the engine's position, tree, clock,
    time control, evaluator, watchdog and ``_reply``)."""

    def _move(self, started: float) -> None:
        """Searches the position, plays the move found and answers it."""
        position = self.position
        board = position.to_board(self.n_in_row, self.rule)
        if board.game_over:
            if board.winner == DRAW:
                raise ProtocolError("the game is over: the board is full")
            who = "the engine" if board.winner == board.current_player else "the opponent"
            raise ProtocolError(f"the game is over: {who} has {self.n_in_row} in a row")
        self._keep_or_forget_tree()
        self._answered = None
        notes = []
        try:
            move, note = self._choose(board, started)
            board.check_move(move)  # the search returns legal moves; anything else is a bug to survive
            if self.options.messages:
                notes.append(note)
        except Exception as exc:
            # A legal request gets a legal move whatever went wrong: a move that loses on the
            # board is better than an answer that loses the game on the spot.
            traceback.print_exc(file=sys.stderr)
            self._forget_tree()
            board = position.to_board(self.n_in_row, self.rule)
            if self._answered is not None:
                move, how = self._answered, f"{position.label(self._answered)}, the watchdog's answer"
            else:
                move, how = self._fallback_move(board)
            self.time.spend(self._clock() - started)
            notes.append(f"the search failed ({type(exc).__name__}: {exc}); played {how}")
        position.add(move, OWN)
        if self._answered is None:
            self._reply(position.label(move), notes)
        else:  # the watchdog has answered this move already: its notes go with the next reply
            self._pending.extend(notes)
        self._advance(move)  # after the reply: dropping the other subtrees takes time too
        self._tree_stones = tuple(position.stones)
        gc.collect()

    def _choose(self, board: Board, started: float) -> tuple[int, str]:
        """The move for ``board`` and a note on how it was found."""
        position = self.position
        wins = board.winning_moves()
        if wins:
            # A move that completes a line is always right: play it without spending the clock.
            move = wins[0]
            self.time.spend(self._clock() - started)
            return move, f"{position.label(move)} wins at once (no search)"
        if self._heuristic is not None:
            move = self._heuristic.get_action(board)
            elapsed = self._clock() - started
            self.time.spend(elapsed)
            return move, f"heuristic level {self._heuristic.level}: {position.label(move)} in {elapsed:.3f} s"
        # No garbage collection while the clock runs: a collection can stall one playout
        # past the deadline. The tree has no reference cycles (TreeNode holds no parent),
        # so reference counting frees it; the cycle collector runs once the reply is out.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._search(board, started)
        finally:
            if collecting:
                gc.enable()

    def _fallback_move(self, board: Board) -> tuple[int, str]:
        """A legal move without the search, and what chose it: a five, a block of the opponent's
        five, the policy net's best move (with a model), the heuristic's, or the empty cell
        nearest the centre, each tried in turn should the one before it fail too."""
        position = self.position
        try:
            mine, theirs = board.completing_cells()
            # Under renju a cell that blocks White's five may be forbidden for Black.
            blocks = [int(m) for m in theirs if not board.is_forbidden(int(m))]
            if len(mine) or blocks:
                move = int(mine[0]) if len(mine) else blocks[0]
                return move, f"{position.label(move)}, {'a five' if len(mine) else 'a block'}"
            if self._model_spec is not None:
                priors, _ = self._evaluator.evaluate([board])
                legal = np.asarray(board.legal_moves())
                move = int(legal[np.argmax(priors[0][legal])])
                return move, f"{position.label(move)}, the policy net's best move"
        except Exception:
            traceback.print_exc(file=sys.stderr)
        try:
            move = int(HeuristicPlayer(1).get_action(board))
            board.check_move(move)
            return move, f"{position.label(move)}, the heuristic's move (level 1)"
        except Exception:
            traceback.print_exc(file=sys.stderr)
        legal = np.asarray(board.legal_moves())
        rows, cols = np.divmod(legal, board.width)
        move = int(legal[np.argmin((rows - (board.height - 1) / 2) ** 2 + (cols - (board.width - 1) / 2) ** 2)])
        return move, f"{position.label(move)}, the empty cell nearest the centre"

    # ------------------------------------------------------------ search
    def _warm_up_gumbel(self, evaluator, spec) -> None:
        """A short Gumbel search of the model's board, at START. The net's first call at each batch
        size a round can have, and the core's first calls, take far longer than later ones; paid
        here, they neither slow the first move nor stand for a round's time in the time the timed
        search keeps back (the slowest round of the last half minute)."""
        gumbel = self._gumbel
        board = Board(spec.width, spec.height, spec.n_in_row, rule=spec.rule)
        board.play(board.size // 2)
        gumbel.evaluator = evaluator
        planned = gumbel.n_playout
        gumbel.n_playout = WARM_UP_SIMULATIONS
        try:
            gumbel.get_action(board)
        finally:
            gumbel.n_playout = planned
            gumbel.reset()

    def _search(self, board: Board, started: float) -> tuple[int, str]:
        """Playouts until the move's deadline (``move_search.timed_search``, or ``gumbel_timed_search``
        for ``--root-search gumbel`` with a model), the watchdog armed for a search that overruns it;
        returns the search's move (``MCTS.best_move``, Gumbel's ``choose``), or the one the watchdog
        answered, and a note."""
        gumbel = self._gumbel if self._model_spec is not None else None
        if gumbel is not None:
            gumbel.evaluator = self._evaluator  # its backend (the core where it supports the net) is chosen as it begins
            gumbel.reset()  # until then the watchdog reads a fresh root (and answers the quick move)
            search, mcts = None, gumbel.tree
        else:  # the core's backend leaves a copy of its root in ``mcts`` after the search
            search, mcts = self._search_backend(board), self.mcts
        empty = self.position.empty_cells
        watchdog = self._watchdog
        hard = self.time.hard_seconds(empty)
        armed = watchdog is not None and hard is not None
        if armed:
            early = quick_move(board)
            self._move_started = started
            watchdog.arm(started + hard, lambda: best_so_far(search or gumbel.backend, early))
        try:
            if gumbel is not None:
                caps = [c for c in (self.options.max_playouts, self.time.tree_limit(board.size)) if c]
                playouts, now = gumbel_timed_search(gumbel, board, self._clock, started, self.time.move_seconds(empty),
                                                    self._timer, self._rate, min(caps, default=None))
            else:
                playouts, now = timed_search(search, board, self._evaluator, self._clock, started,
                                             self.time.move_seconds(empty), self._timer, self.options.max_playouts,
                                             self.time.tree_limit(board.size))
        finally:
            if armed:
                self._answered = watchdog.disarm()
        root = mcts.root  # after a search on the core, a copy of its root
        elapsed = now - started
        if self._answered is not None:
            move = self._answered
            how = f"the watchdog answered at {watchdog.fired_at - started:.2f} s: "
            self.time.spend(watchdog.fired_at - started)  # the manager's clock stopped at the answer
        else:
            # A proven root plays the solver's line (``best_move``); else Gumbel's best candidate.
            move = mcts.best_move(board) if gumbel is None or root.proven else gumbel.choose(board).move
            how = "Gumbel: " if gumbel is not None else ""
            self.time.spend(elapsed)
        where = np.flatnonzero(root.moves == move) if root.expanded else []
        if len(where):
            best = int(where[0])
            value = {1: "won by force", -1: "lost by force"}.get(root.proven, f"value {root.child_Q[best]:+.2f}")
            found = f"{int(root.child_N[best])} visits, {value}"
        else:
            found = "not searched"
        note = (f"{how}{playouts} playouts in {elapsed:.2f} s (tree {root.N}); "
                f"{self.position.label(move)}: {found}")
        return move, note

    def _watchdog_answer(self, move: int) -> None:
        """The watchdog's reply for a search past its hard deadline (on the watchdog's thread)."""
        note = f"the search ran past its deadline: the watchdog answered at {self._clock() - self._move_started:.2f} s"
        self._reply(self.position.label(move), [note] if self.options.messages else [])

    def _keep_or_forget_tree(self) -> None:
        """Keeps the subtree of the opponent's reply to our last move, else starts afresh."""
        stones = tuple(self.position.stones)
        known = self._tree_stones
        if (known is not None and len(stones) == len(known) + 1 and stones[:-1] == known
                and stones[-1][1] == OPPONENT):
            self._advance(stones[-1][0])
        else:
            self._reset_trees()
        self._tree_stones = stones

    def _forget_tree(self) -> None:
        self._reset_trees()
        self._tree_stones = None

    def _search_backend(self, board: Board):
        """The PUCT search's backend for ``board`` (``backend.open_search``): the compiled core where it
        supports the evaluator and the rule and its kernels are ready, else the Python tree."""
        backend = open_search(self.mcts, board, self._evaluator, self._core)
        on_core = backend.name == CORE
        if self._on_core and not on_core:
            self.mcts.reset()  # it holds a copy of the core's root, not a tree to go on with
        self._on_core = on_core
        if on_core:
            self._core = backend
        return backend

    def _advance(self, move: int) -> None:
        """Tree reuse: both trees keep the subtree under ``move`` (the core's, where it has one)."""
        self.mcts.advance(move)
        if self._core is not None:
            self._core.advance(move)

    def _reset_trees(self) -> None:
        self.mcts.reset()
        if self._gumbel is not None:
            self._gumbel.reset()
        if self._core is not None:
            self._core.reset()
