"""``pbrain-gomokuzero --check``: what the engine will play, told before a tournament rather than found
out in one.

A manager's engine must never forfeit, so the engine plays on without a model it cannot use (pure
MCTS, with a ``MESSAGE`` line that a manager may not show). ``check`` says ahead of time, for each
board the shipped models were trained on and each rule (or for ``--model``), which model the engine
will play, its search and its inference precision, and whether the search core's compiled kernels
are in numba's cache; it loads every model it names, as ``START`` would, and builds its predictor.
It returns 1 when a model the engine would play cannot be used (Paddle is missing, the file is
unreadable or not a model), or no model fits at all; else 0.
"""

from __future__ import annotations

import os
from typing import Optional, TextIO

from gomoku import __version__
from gomoku.game.board import Board
from gomoku.game.rules import RULES, rule_of
from gomoku.play.engine.brain import EngineOptions


def core_line(options: EngineOptions) -> str:
    """The search core's state: whether the engine's search uses it, and whether its kernels are
    compiled already."""
    from gomoku.search.core import core_enabled
    from gomoku.search.core.jit import available

    if not available:
        return "search core: off (numba is not installed): every search runs on the Python tree"
    if not core_enabled():
        return "search core: off (GOMOKU_CORE=off): every search runs on the Python tree"
    from gomoku.search.core.cache import cache_dir, cached

    state = (f"compiled, in numba's cache ({cache_dir()})" if cached()
             else f"not compiled yet (no fresh copy in numba's cache, {cache_dir()})")
    if options.heuristic is not None or (options.model is None and not options.shipped):
        return f"search core: {state}; not used by this player"
    if options.root_search == "gumbel":
        return f"search core: {state}; not used by the Gumbel root search (--root-search puct uses it)"
    if cached():
        return f"search core: {state}: START loads it in a second or so"
    return (f"search core: {state}: the first START has another process compile it (about a minute of CPU, "
            f"once per machine) while the Python search plays")


def search_words(options: EngineOptions, rule: str) -> str:
    """The search a model plays under ``rule``: Gumbel's root search or PUCT, on the core or the Python tree."""
    from gomoku.search.core import core_enabled

    extras = options.search.words()
    extras = f" ({', '.join(extras)})" if extras else ""
    if options.root_search == "gumbel":
        return f"Gumbel root search on the Python tree{extras}"
    on_core = core_enabled() and rule_of(rule).flanked_wins
    return f"PUCT on the {'compiled core' if on_core else 'Python tree'}{extras}"


class _Models:
    """Loads each model once, as ``START`` does (the predictor built by one evaluation); remembers
    what each gave: ``(precision, None)`` or ``(None, why it cannot be used)``."""

    def __init__(self, options: EngineOptions, out: TextIO):
        self.options = options
        self.out = out
        self.seen: dict = {}

    def get(self, path: str) -> tuple[Optional[str], Optional[str]]:
        if path not in self.seen:
            self.seen[path] = self._load(path)
            precision, problem = self.seen[path]
            name = os.path.basename(path)
            if problem is None:
                self.out.write(f"model {name}: loads ({path}), {precision} inference\n")
            else:
                self.out.write(f"model {name}: cannot be used: {problem}\n")
        return self.seen[path]

    def _load(self, path: str) -> tuple[Optional[str], Optional[str]]:
        try:
            from gomoku.net.policy_value import PolicyValueModel
            from gomoku.search.evaluator import NetEvaluator

            model = PolicyValueModel.load(path, device=self.options.device, threads=self.options.threads,
                                          precision=self.options.precision)
            spec = model.spec
            NetEvaluator(model).evaluate([Board(spec.width, spec.height, spec.n_in_row)])
        except Exception as exc:  # PaddleMissingError, ModelFileError, Paddle's own: the engine cannot play it
            return None, str(exc) or type(exc).__name__
        return model.precision, None


def check(options: EngineOptions, out: TextIO) -> int:
    """Writes what the engine will play (see the module docstring); returns the exit code."""
    out.write(f"pbrain-gomokuzero {__version__} --check\n")
    out.write(core_line(options) + "\n")
    if options.model is None and not options.shipped:
        if options.heuristic is not None:
            out.write(f"every board and rule: the heuristic, level {options.heuristic} ({options.n_in_row} in a row): "
                      f"no model needed\n")
        else:
            out.write(f"every board and rule: pure MCTS with random rollouts ({options.n_in_row} in a row): "
                      f"no model needed\n")
        out.write("ok\n")
        return 0
    models = _Models(options, out)
    if options.model is not None:
        return _check_model(options, models, out)
    return _check_shipped(options, models, out)


def _check_model(options: EngineOptions, models: _Models, out: TextIO) -> int:
    from gomoku.net.modelfile import read_model_spec
    from gomoku.net.shipped import trained_boards

    precision, problem = models.get(options.model)
    if problem is not None:
        out.write(f"FAILED: the engine cannot play {options.model}: it answers START with ERROR\n")
        return 1
    spec = read_model_spec(options.model)
    boards = ", ".join(f"{w}x{h}" for w, h in trained_boards(spec))
    where = f"any board (trained on {boards})" if spec.size_free else f"the {boards} board only"
    out.write(f"{os.path.basename(options.model)}: {where}, {spec.n_in_row} in a row, trained for {spec.rule}; "
              f"{search_words(options, spec.rule)}, {precision} inference\n")
    out.write("ok\n")
    return 0


def _check_shipped(options: EngineOptions, models: _Models, out: TextIO) -> int:
    from gomoku.net.shipped import MODELS_DIR, nearest_shipped_model, shipped_models, trained_boards

    n = options.n_in_row
    boards = sorted({board for _, net in shipped_models() if net.n_in_row == n for board in trained_boards(net)},
                    key=lambda b: (b[0] * b[1], b))
    if not boards:
        out.write(f"FAILED: no shipped model plays {n} in a row (in {MODELS_DIR}): the engine plays pure MCTS "
                  f"on every board\n")
        return 1
    failed = []
    for width, height in boards:
        for rule in RULES:
            path = nearest_shipped_model(width, height, n, rule)
            what = f"{width}x{height} {rule}:"
            if path is None:  # not reached while a size-free model is shipped
                out.write(f"{what} pure MCTS with random rollouts (no shipped model fits)\n")
                continue
            precision, problem = models.get(path)
            name = os.path.basename(path)
            if problem is not None:
                failed.append(name)
                out.write(f"{what} pure MCTS with random rollouts: {name} cannot be used\n")
            else:
                out.write(f"{what} {name}, {search_words(options, rule)}, {precision} inference\n")
    if failed:
        out.write(f"FAILED: {len(set(failed))} shipped model(s) cannot be used "
                  f"({', '.join(sorted(set(failed)))}): the engine would play pure MCTS in their place\n")
        return 1
    size_free = any(net.size_free and net.n_in_row == n for _, net in shipped_models())
    out.write(f"ok: every board listed has its model ({n} in a row)"
              + ("; another board plays the size-free model of its rule (freestyle's where none has it)\n"
                 if size_free else "; another board plays pure MCTS\n"))
    return 0
