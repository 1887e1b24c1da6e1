"""Games in lockstep on the compiled core: the trees in arrays, one kernel call per step.

``lockstep.Lockstep`` hands a game here when every player in it can run on the core
(``supported``: ``backend.choose``): a PUCT or Gumbel tree player with a net evaluator of
input version 1 or 2, with or without the threat searches, under any rule but caro. The
players are driven through the search protocol's player hooks only (``protocol``). They keep
what happens once a move in Python: their random draws (playout cap, Gumbel, noise,
move sampling), the move choice and the training target, read from a copy of the root
(``CoreTrees.root_view``), and the root's threat searches (``root_threats.analyse_root``, the
reference's Python, which shares the VCF cache of the player's tree with the kernels).
Everything between two moves runs in the kernels.

A step: one call backs up every pending leaf with last step's net output and runs each
mover's playouts up to its next leaf; Python then serves the searches that finished a
move or a phase of sequential halving; a second call runs those to their next leaf; the
net evaluates the new leaves of each evaluator in one batch.
"""

from __future__ import annotations

import numpy as np

from gomoku.game.features import input_channels
from gomoku.search.backend import CORE, board_reason, choose
from gomoku.search.core import layout as k
from gomoku.search.core.root_threats import analyse_root
from gomoku.search.core.single import core_ready
from gomoku.search.core.trees import UNLIMITED, CoreTrees


def supported(board, players) -> bool:
    """Whether the compiled core can play this game with these players (``backend.choose`` for each)."""
    return not board_reason(board) and all(
        choose(board, getattr(p, "evaluator", None), getattr(p, "root_search", None))[0] == CORE
        for p in players.values())


class _Group:
    """The games of one board geometry and rule: their trees and the step's buffers."""

    def __init__(self, board, pools: tuple = (0, 0)):
        core_ready()  # the kernels: loaded, or compiled once per machine while other processes wait
        self.trees = CoreTrees(board.width, board.height, board.n_in_row, board.rule, nodes=pools[0], edges=pools[1])
        self.slots = []
        self.channels = 4
        self.out = np.zeros((0, 4, board.size), np.float32)
        self.priors = np.zeros((0, board.size), np.float32)
        self.values = np.zeros(0, np.float32)
        self.shape = (board.height, board.width)

    def buffers(self, rows: int) -> None:
        if self.out.shape[0] < rows or self.out.shape[1] < self.channels:
            size = self.out.shape[2]
            rows = max(rows, self.out.shape[0])
            self.out = np.zeros((rows, self.channels, size), np.float32)
            priors = np.zeros((rows, size), np.float32)
            values = np.zeros(rows, np.float32)
            priors[:len(self.priors)], values[:len(self.values)] = self.priors, self.values
            self.priors, self.values = priors, values


class CoreGames:
    """The compiled half of a ``Lockstep``: its slots whose games run on the core.

    ``choose(slot, player)`` is the lockstep's once-a-move Python: the move, its recording
    and the game's end; it returns True when the game is over.
    """

    def __init__(self, choose, pools: tuple = (0, 0)):
        self._choose = choose
        self._pools = pools  # the first sizes of each geometry's node and edge pools (0: ``CoreTrees``'s)
        self.groups: dict[tuple, _Group] = {}

    def __len__(self) -> int:
        return sum(len(g.slots) for g in self.groups.values())

    def add(self, slot) -> None:
        """Starts searches for the slot's players on its board."""
        board = slot.board
        key = (board.width, board.height, board.n_in_row, board.rule)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group(board, self._pools)
        slot.searches = {}
        for player in {id(p): p for p in slot.players.values()}.values():
            inputs = player.evaluator.input_version
            group.channels = max(group.channels, input_channels(inputs))
            slot.searches[id(player)] = group.trees.add_tree(board, player.search_tree, inputs)
        slot.playouts = {s: 0 for s in slot.searches.values()}
        group.slots.append(slot)

    def remove(self, slot) -> None:
        for group in self.groups.values():
            if slot in group.slots:
                group.slots.remove(slot)
                for s in slot.searches.values():
                    group.trees.remove(s)

    def reset_searches(self) -> None:
        """Drops every tree (after the weights changed): each search starts its move afresh."""
        for group in self.groups.values():
            for slot in group.slots:
                for player in {id(p): p for p in slot.players.values()}.values():
                    player.reset()
                    group.trees.drop_pending(slot.searches[id(player)])
                    group.trees.reset(slot.searches[id(player)])

    def step(self, stats) -> list:
        """One step of every game on the core; returns the slots whose games ended."""
        ended = []
        for group in list(self.groups.values()):
            if group.slots:
                ended.extend(self._step_group(group, stats))
        return ended

    def _step_group(self, group: _Group, stats) -> list:
        trees = group.trees
        group.buffers(2 * len(group.slots))
        todo = [(slot, slot.players[slot.board.current_player]) for slot in group.slots]
        ended = []
        rows = 0
        while todo:
            trees.make_room(len(todo))
            ids = np.array([slot.searches[id(p)] for slot, p in todo], np.int64)
            rows += trees.step(ids, group.priors, group.values, group.out, rows)
            again = []
            for slot, player in todo:
                s = slot.searches[id(player)]
                self._count(slot, player, s, trees, stats)
                if trees.state(s) == k.READY:
                    stats.moves += 1
                    if self._move(slot, player, s, trees):
                        ended.append(slot)
                        self.remove(slot)
                        continue
                    player = slot.players[slot.board.current_player]
                    s = slot.searches[id(player)]
                if trees.state(s) == k.IDLE:
                    self._start(player, s, trees)
                if trees.state(s) == k.NEED_QUEUE:
                    self._queue(player, s, trees)
                if trees.state(s) == k.RUN:
                    again.append((slot, player))
            todo = again
        if rows:
            self._evaluate(group, rows)
        return ended

    @staticmethod
    def _count(slot, player, s, trees, stats) -> None:
        done = trees.playouts(s)
        new = done - slot.playouts[s]
        slot.playouts[s] = done
        player.playouts_run += new
        stats.playouts += new

    def _move(self, slot, player, s, trees) -> bool:
        """The search of ``player`` is done: the player chooses from a copy of its root."""
        player.take_root(trees.root_view(s), trees.done(s))
        move, over = self._choose(slot, player)
        if move is None:
            return True  # the player gave the game up
        for p in {id(p): p for p in slot.players.values()}.values():
            trees.play(slot.searches[id(p)], move, p.keeps_tree)
        return over

    @staticmethod
    def _start(player, s, trees) -> None:
        tree = player.search_tree
        if tree.threats:
            player.prepare_root()  # the root's VCT budgets may depend on the move's full or fast search
            analyse_root(trees, s, tree.threat_solver)
        if player.root_search == "gumbel":
            trees.start_move(s, UNLIMITED)  # the root's evaluation comes first; the budget is drawn after it
        else:
            budget = player.budget()  # draws the move's full or fast search, and its forced_k
            trees.start_move(s, budget, tree.forced_k)

    @staticmethod
    def _queue(player, s, trees) -> None:
        """The next phase of a Gumbel search's sequential halving, planned by its player."""
        trees.set_queue(s, *player.next_phase_on(trees.root_view(s, children=False), trees.done(s)))

    @staticmethod
    def _evaluate(group: _Group, rows: int) -> None:
        """The net's priors and values for the rows written this step, one call per evaluator
        (through the evaluator's cache of positions, where it keeps one)."""
        trees = group.trees
        by_evaluator: dict[int, tuple] = {}
        for slot in group.slots:
            player = slot.players[slot.board.current_player]
            s = slot.searches[id(player)]
            if trees.state(s) == k.PENDING:
                evaluator = player.evaluator
                by_evaluator.setdefault(id(evaluator), (evaluator, []))[1].append((trees.sint[s, k.S_ROW], s))
        height, width = group.shape
        for evaluator, pending in by_evaluator.values():
            pending.sort()
            index = np.array([row for row, _ in pending], np.int64)
            channels = input_channels(evaluator.input_version)
            whole = len(index) == rows and index[-1] == rows - 1
            planes = group.out[:rows] if whole else group.out[index]
            if channels < planes.shape[1]:
                planes = np.ascontiguousarray(planes[:, :channels])
            planes = planes.reshape(len(index), channels, height, width)
            if evaluator.cache_size:
                keys = [trees.cache_key(s) for _, s in pending]
                group.priors[index], group.values[index] = evaluator.predict_keyed(keys, planes)
            else:
                group.priors[index], group.values[index] = evaluator.predict_planes(planes)

