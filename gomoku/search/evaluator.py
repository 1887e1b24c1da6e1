"""The evaluator that makes the search AlphaZero: the net's priors and value, with a cache.

Evaluators return ``(priors, values)`` for a list of boards (see
``mcts.Evaluator``). ``NetEvaluator`` asks anything with
``predict(planes) -> (log_probs, values)``: a ``PolicyValueModel`` or a bare
``InferencePredictor``. Its cache is tied to the model's ``version``: when the
weights change, the cached evaluations are dropped before the next lookup.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from gomoku.game.board import Board
from gomoku.game.features import fill_planes_batch, input_channels


class NetEvaluator:
    """Evaluates boards with the model for MCTS, with a cache of recent positions.

    Transpositions (the same stones reached by different move orders, with the
    same last move) and positions shared by parallel games are evaluated once.
    The planes are those of the model's input version (``input_version``, 1 for
    a model that does not say; ``gomoku.game.features``): every plane of every
    version is a function of the stones, the last move and the player to move,
    the cache's key.

    Args:
        model: anything with ``predict(planes) -> (log_probs, values)``.
        cache_size: positions to remember; 0 turns the cache off.
    """

    def __init__(self, model, cache_size: int = 100_000):
        self.model = model
        self.cache_size = cache_size
        self._cache: dict = {}
        self._version = getattr(model, "version", 0)
        self.calls = 0
        self.positions = 0
        self.hits = 0

    @property
    def input_version(self) -> int:
        """The input version of the model's planes: what a recorded training position must hold."""
        return getattr(self.model, "input_version", 1)

    def clear_cache(self) -> None:
        """Forgets every cached position (a benchmark's measurements start alike)."""
        self._cache.clear()

    def _check_version(self) -> None:
        version = getattr(self.model, "version", 0)
        if version != self._version:
            self._cache.clear()
            self._version = version

    def predict_planes(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The net's priors and values for a batch of planes ``(B, C, H, W)``, without the cache
        (the compiled core writes its leaves' planes itself)."""
        log_p, value = self.model.predict(planes)
        self.calls += 1
        self.positions += len(planes)
        return np.exp(log_p), value

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        self._check_version()
        n = len(boards)
        size = boards[0].size
        priors = np.empty((n, size), dtype=np.float32)
        values = np.empty(n, dtype=np.float32)
        # The rule is part of the key: the threat planes of input version 2 depend on it.
        keys = [(bytes(b.cells), b.history[-1] if b.history else -1, b.current_player, b.rule) for b in boards]
        todo = self._lookup(keys, priors, values)
        if todo:
            first = boards[0]
            version = self.input_version
            channels = input_channels(version)
            planes = np.zeros((len(todo), channels, size), dtype=np.float32)
            fill_planes_batch([boards[i] for i in todo], b"".join([keys[i][0] for i in todo]), planes, version)
            p, value = self.predict_planes(planes.reshape(len(todo), channels, first.height, first.width))
            self._keep(keys, todo, p, value, priors, values)
        return priors, values

    def predict_keyed(self, keys: list, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``predict_planes`` through the cache: ``keys`` are the positions' cache keys (as
        ``evaluate`` makes them), ``planes`` all their planes; only the positions not cached
        go to the net."""
        if not self.cache_size:
            return self.predict_planes(planes)
        self._check_version()
        n = len(keys)
        priors = np.empty((n, planes.shape[2] * planes.shape[3]), dtype=np.float32)
        values = np.empty(n, dtype=np.float32)
        todo = self._lookup(keys, priors, values)
        if todo:
            p, value = self.predict_planes(planes if len(todo) == n else planes[todo])
            self._keep(keys, todo, p, value, priors, values)
        return priors, values

    def _lookup(self, keys: list, priors: np.ndarray, values: np.ndarray) -> list:
        """Fills the cached rows; returns the others' indices."""
        todo = []
        for i, key in enumerate(keys):
            hit = self._cache.get(key) if self.cache_size else None
            if hit is None:
                todo.append(i)
            else:
                priors[i], values[i] = hit
        self.hits += len(keys) - len(todo)
        return todo

    def _keep(self, keys: list, todo: list, p: np.ndarray, value: np.ndarray, priors: np.ndarray,
              values: np.ndarray) -> None:
        """The net's rows for ``todo`` into ``priors``/``values`` and the cache."""
        if self.cache_size and len(self._cache) + len(todo) > self.cache_size:
            self._cache.clear()
        for row, i in enumerate(todo):
            priors[i] = p[row]
            values[i] = value[row]
            if self.cache_size:
                self._cache[keys[i]] = (p[row], value[row])
