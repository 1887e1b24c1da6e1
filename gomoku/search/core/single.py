"""One game's search on the compiled core, for the searches of play time.

``CoreSearch`` runs the search of one ``mcts.MCTS`` tree (PUCT, its options and its threat
solver) on ``trees.CoreTrees``, one playout at a time: ``search(board, evaluator, stop)``
keeps the contract of ``mcts.search`` (``stop(playouts_done)`` is asked before every playout,
and the board is left as it was), so a clock, a playout budget or a cancel flag ends it
between playouts. Each leaf goes to the player's ``NetEvaluator`` alone (batch 1, through
its cache of positions, as ``games.CoreGames`` does); the root's threat searches run before
the move's first playout (``root_threats.analyse_root``, as ``CoreGames`` does). The tree is
kept between moves: ``advance(move)`` keeps the subtree under a move (tree reuse), ``reset``
drops it, and a search asked about a position its tree does not stand on starts afresh.

After a search the reference tree's root is a copy of the core's (``CoreTrees.root_view``),
so that the reference code decides the move, the root value and the statistics exactly as
over its own tree. ``root`` copies the root at any time (the window's analysis), and
``best_so_far`` answers the root's most visited move for a watchdog on another thread.

``core_ready`` says whether the kernels are compiled in this process; the first call loads
them from numba's cache (half a second or so) or compiles them into it, one process of the
machine at a time (``cache.compile_lock``: another process that compiles them meanwhile is waited
for, and its work loaded), or, with ``background``, has another process
compile them (about a minute of CPU) while the caller goes on with the reference search, and
loads them once it is done.
"""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Callable, Optional

import numpy as np

from gomoku import interrupt
from gomoku.game.board import Board
from gomoku.game.features import input_channels
from gomoku.processes import start_python
from gomoku.search.core import layout as k
from gomoku.search.core.cache import cached, compile_lock
from gomoku.search.core.planes import CORE_INPUTS
from gomoku.search.core.root_threats import analyse_root
from gomoku.search.core.trees import CoreTrees
from gomoku.search.mcts import MCTS
from gomoku.search.tree import TreeNode


class CoreSearch:
    """The search of the reference tree ``tree`` on the compiled core: the protocol's core backend
    (``protocol``; see the module docstring).

    ``tree`` (an ``mcts.MCTS`` or ``gumbel.GumbelTree``) gives the options (c_puct, fpu or Gumbel's
    constants, the solver, the threat searches, ``forced_k`` at the moment a search starts) and the
    threat solver, whose VCF cache the core shares; it gets a copy of the core's root after every ``run``.
    """

    name = "core"

    def __init__(self, tree: MCTS):
        self.tree = tree
        self.gumbel = tree.kind == "gumbel"
        self.trees: Optional[CoreTrees] = None
        self.s = -1  # the search's id in ``trees``; -1: none yet
        self._key: Optional[tuple] = None  # the geometry and rule of ``trees``
        self._analysed = False  # the root's threat searches have run for the present root
        self._follows = False  # the search's board follows the game: searched since the last reset
        self._empty: Optional[np.ndarray] = None  # the root position's empty cells, for ``playable``
        self._evaluator = None
        self._priors = self._values = self._out = None
        self.playouts = 0  # playouts over the search's life

    # ------------------------------------------------------------ the position
    def start_move(self, board: Board, evaluator) -> None:
        """Puts the search on ``board``: keeps the tree if it stands on this position, else a fresh one."""
        key = (board.width, board.height, board.n_in_row, board.rule)
        inputs = evaluator.input_version
        self._evaluator = evaluator
        if self.trees is None or self._key != key:
            self.trees, self._key, self.s = CoreTrees(board.width, board.height, board.n_in_row, board.rule), key, -1
            self._buffers(1)
        trees, s = self.trees, self.s
        if s < 0 or trees.sint[s, k.S_INPUTS] != inputs or not self._stands_on(board):
            if s >= 0:
                trees.remove(s)
            self.s = trees.add_tree(board, self.tree, inputs)
            self._analysed = False
        self._follows = True
        self._empty = np.asarray(board.cells) == 0

    prepare = start_move

    def _buffers(self, rows: int) -> None:
        if self._priors is None or len(self._priors) < rows:
            size = self.trees.size
            self._priors = np.zeros((rows, size), np.float32)
            self._values = np.zeros(rows, np.float32)
            self._out = np.zeros((rows, max(map(input_channels, CORE_INPUTS)), size), np.float32)

    def _stands_on(self, board: Board) -> bool:
        trees, s = self.trees, self.s
        hlen = int(trees.sint[s, k.S_HLEN])
        return (hlen == len(board.history) and int(trees.sint[s, k.S_CUR]) == board.current_player
                and np.array_equal(trees.hist[s, :hlen], board.history)
                and np.array_equal(trees.cells[s], board.cells))

    def advance(self, move: int) -> None:
        """``move`` was played: keeps the subtree under it as the root (PUCT; Gumbel starts afresh).
        A search that does not follow the game (reset since its last search, its game over, or the
        point taken on its board) is dropped instead: the next search starts afresh."""
        trees, s = self.trees, self.s
        if s < 0:
            return
        if (not self._follows or trees.sint[s, k.S_WINNER] != k.NO_WINNER or not 0 <= move < trees.size
                or trees.cells[s, move] != 0):
            self._drop()
            return
        trees.play(s, move, not self.gumbel)
        self._analysed = False

    def reset(self) -> None:
        """Drops the tree; the board no longer follows the game (the next search starts afresh)."""
        if self.s >= 0:
            self.trees.reset(self.s)
            self._analysed = False
            self._follows = False

    def _drop(self) -> None:
        self.trees.remove(self.s)
        self.s = -1
        self._analysed = self._follows = False

    # ------------------------------------------------------------ the search
    def _analyse(self) -> None:
        """The root's threat searches, once for each root, before its first playout."""
        if self.tree.threats and not self._analysed:
            analyse_root(self.trees, self.s, self.tree.threat_solver)
        self._analysed = True

    def search(self, board: Board, evaluator, stop: Callable[[int], bool]) -> int:
        """``start_move`` then ``run``."""
        self.start_move(board, evaluator)
        return self.run(stop)

    def run(self, stop: Callable[[int], bool]) -> int:
        """``mcts.search`` on the core: playouts one at a time until ``stop(playouts_done)`` is true;
        returns the playouts run. The reference tree's root is then a copy of the core's."""
        trees, s = self.trees, self.s
        done = 0
        try:
            while True:
                interrupt.check()
                if stop(done):
                    return done
                if done == 0:
                    self._analyse()
                    trees.start_move(s, 1, self.tree.forced_k)
                else:
                    trees.sint[s, k.S_BUDGET] = done + 1
                    trees.sint[s, k.S_STATE] = k.RUN
                self._steps(np.array([s], np.int64))
                done += 1
                self.playouts += 1
        finally:
            trees.drop_pending(s)  # an exception between the descent and the backup: the board back at the root
            self.tree.root = self.root()

    def expand_root(self) -> None:
        """The root's evaluation (after its threat searches), if it is not expanded."""
        if not self.root_state()[0]:
            self._analyse()
            self.trees.start_move(self.s, 0)
            try:
                self._steps(np.array([self.s], np.int64))
            finally:
                self.trees.drop_pending(self.s)
            self.playouts += 1

    def simulate(self, children) -> int:
        """One simulation into each root child of ``children``, on lanes that share the root (their
        subtrees are disjoint); the leaves go to the net in one call, then back up in order."""
        trees = self.trees
        trees.make_room(len(children))
        lanes = trees.open_lanes(self.s, children)
        try:
            self._buffers(len(lanes))
            self._steps(lanes)
        finally:
            trees.close_lanes(lanes)
        self.playouts += len(lanes)
        return len(lanes)

    def _steps(self, ids: np.ndarray) -> None:
        """Runs the searches ``ids`` until each is ``READY``: to their leaves, the net, the backups."""
        trees = self.trees
        while True:
            trees.make_room(len(ids))
            rows = trees.step(ids, self._priors, self._values, self._out, 0)
            if rows:
                self._evaluate([s for s in ids if trees.state(s) == k.PENDING], rows)
            if all(trees.state(s) == k.READY for s in ids):
                return

    def _evaluate(self, pending: list, rows: int) -> None:
        trees, evaluator = self.trees, self._evaluator
        pending.sort(key=lambda s: trees.sint[s, k.S_ROW])
        channels = input_channels(evaluator.input_version)
        planes = self._out[:rows, :channels].reshape(rows, channels, trees.height, trees.width)
        if evaluator.cache_size:
            priors, values = evaluator.predict_keyed([trees.cache_key(s) for s in pending], planes)
        else:
            priors, values = evaluator.predict_planes(np.ascontiguousarray(planes))
        self._priors[:rows], self._values[:rows] = priors, values

    # ------------------------------------------------------------ the root
    def root(self, children: bool = True) -> TreeNode:
        """A copy of the root (``CoreTrees.root_view``); a fresh node before any search."""
        if self.s < 0:
            return type(self.tree.root)()
        return self.trees.root_view(self.s, children)

    def root_state(self) -> tuple[bool, int, int]:
        """The root's ``(expanded, proven, N)`` without copying it (for a stop rule asked every playout)."""
        if self.s < 0:
            return False, 0, 0
        trees = self.trees
        root = trees.sint[self.s, k.S_ROOT]
        return (bool(trees.nodei[root, k.N_FIRST] >= 0), int(trees.nodei[root, k.N_PROVEN]),
                int(trees.nodef[root, k.N_VISITS]))

    def playable(self, move: int) -> bool:
        """Whether ``move`` is an empty point of the position last searched (a check for a move
        read from the tree by another thread while the search runs)."""
        empty = self._empty
        return empty is not None and 0 <= move < len(empty) and bool(empty[move])


# ---------------------------------------------------------------- compiling the kernels
_lock = threading.Lock()
_state = {"ready": False, "started": False, "compiler": None}
"""compiled in this process; a compile or a load started; the process compiling the kernels"""


class _Uniform:
    """Uniform priors and a zero value, for the warm-up."""

    input_version = 2
    version = 0

    def predict(self, planes):
        size = planes.shape[2] * planes.shape[3]
        return np.full((len(planes), size), -np.log(size), np.float32), np.zeros(len(planes), np.float32)


def _warm_up() -> None:
    """A few playouts of a search with every option on: compiles (or loads) every kernel it calls.
    Should it fail, the core stays off in this process (the reference search plays)."""
    from gomoku.search.evaluator import NetEvaluator

    try:
        board = Board(9, 9, 5)
        for move in (40, 41, 31, 49):
            board.play(move)
        CoreSearch(MCTS(fpu=0.25, threats=True)).search(board, NetEvaluator(_Uniform()), lambda done: done >= 8)
        _state["ready"] = True
    except Exception:  # the core is an accelerator: without it the reference search plays
        traceback.print_exc(file=sys.stderr)
        print("the search core failed to start: the Python search plays", file=sys.stderr, flush=True)


def _compile_or_load(announce: bool = True) -> None:
    """Loads the kernels from numba's cache, or compiles them into it, holding the machine's compile
    lock: a process that finds another one compiling waits for it, then loads its work. Only the
    process that compiles says so (``announce``). A fresh cache is loaded without the lock."""
    if cached():
        _warm_up()
        return
    with compile_lock():
        if announce and not cached():
            print("compiling the search core (about a minute of CPU, once: it is cached for later starts) ...",
                  file=sys.stderr, flush=True)
        _warm_up()


def _load() -> None:
    _warm_up()
    if _state["ready"]:
        print("the search core is loaded: the searches run on it from now on", file=sys.stderr, flush=True)


def compile_into_cache() -> int:
    """The work of the process that ``core_ready(background=True)`` starts: loads the kernels from
    numba's cache or compiles them into it, without announcing the compile; its exit status, 0 once
    they are ready."""
    _compile_or_load(announce=False)
    return 0 if _state["ready"] else 1


def _compile_elsewhere():
    """A process that compiles the kernels into numba's cache (``compile_into_cache``; its output
    kept off this process's stdout, which may be a protocol's); it dies with this process."""
    return start_python("gomoku.search.core.single:compile_into_cache")


def core_ready(background: bool = False) -> bool:
    """Whether the kernels are compiled in this process. If not, the first call compiles them, or
    loads them from numba's cache, at once; with ``background`` and nothing cached, it starts a
    process that compiles them into the cache (False meanwhile: a compile on a thread here would
    hold the interpreter's lock for seconds at a time), and a thread that waits for that process
    (reaping it as it ends) loads them (False until it is done)."""
    if _state["ready"]:
        return True
    with _lock:
        if not _state["started"]:
            _state["started"] = True
            if background and not cached():
                print("compiling the search core in another process (about a minute of CPU, once: it is cached "
                      "for later starts); the Python search plays meanwhile", file=sys.stderr, flush=True)
                compiler = _state["compiler"] = _compile_elsewhere()
                threading.Thread(target=_load_when_compiled, args=(compiler,), name="core-compile",
                                 daemon=True).start()
            else:
                _compile_or_load()
    return _state["ready"]


def _load_when_compiled(compiler) -> None:
    if compiler.wait() == 0:
        _load()
    else:
        print("the search core failed to compile: the Python search plays", file=sys.stderr, flush=True)
