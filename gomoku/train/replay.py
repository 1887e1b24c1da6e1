"""The replay buffer: a FIFO of the last training positions (docs/algorithm.md, section 6, steps 2 and 3), one per board size,
and the window of its newest positions that updates draw from (``replay_window``)."""

from __future__ import annotations

import numpy as np


def replay_window(generated: int, capacity: int, floor: int, alpha: float = 0.75, beta: float = 0.4) -> int:
    """How many of the newest positions updates draw from, once ``generated`` positions have
    been made: all of them up to ``floor``, then a window that grows sublinearly with the data,
    ``floor * (1 + beta * ((generated / floor) ** alpha - 1) / alpha)`` (KataGo's rule, with its
    alpha 0.75 and beta 0.4), at most ``capacity`` (the buffer's size). ``floor`` 0: the whole
    buffer, a plain FIFO.

    A fixed small window trains the net on the last few hundred games again and again; a window
    that grows keeps older games in play as the run produces more, and a young run's few games
    still leave it quickly.
    """
    if floor <= 0 or generated <= floor:
        return capacity if floor <= 0 else min(capacity, max(generated, 1))
    grown = floor * (1.0 + beta * ((generated / floor) ** alpha - 1.0) / alpha)
    return int(min(capacity, grown))


class ReplayBuffer:
    """A FIFO of the last ``capacity`` training positions, kept as ring arrays.

    Planes are stored as uint8 (they are 0/1 in every input version), move
    probabilities and outcomes as float32.
    """

    def __init__(self, capacity: int, planes_shape: tuple, n_moves: int):
        self.capacity = capacity
        self.planes = np.zeros((capacity, *planes_shape), dtype=np.uint8)
        self.pis = np.zeros((capacity, n_moves), dtype=np.float32)
        self.zs = np.zeros(capacity, dtype=np.float32)
        self.count = 0  # filled rows
        self.head = 0  # next row to write

    def __len__(self) -> int:
        return self.count

    def extend(self, planes: np.ndarray, pis: np.ndarray, zs: np.ndarray) -> None:
        if len(planes) > self.capacity:  # only the newest fit
            planes, pis, zs = planes[-self.capacity:], pis[-self.capacity:], zs[-self.capacity:]
        rows = (self.head + np.arange(len(planes))) % self.capacity
        self.planes[rows] = planes
        self.pis[rows] = pis
        self.zs[rows] = zs
        self.head = int((self.head + len(planes)) % self.capacity)
        self.count = min(self.capacity, self.count + len(planes))

    def sample(self, n: int, rng: np.random.Generator, newest: int = 0):
        """``n`` distinct rows drawn from the newest ``newest`` (0: from all the buffer holds)."""
        window = self.count if newest <= 0 else min(self.count, max(n, newest))
        back = rng.choice(window, size=n, replace=False)  # 0 is the newest row
        rows = (self.head - 1 - back) % self.capacity
        return self.planes[rows].astype(np.float32), self.pis[rows], self.zs[rows]

    def clear(self) -> None:
        self.count = self.head = 0

    def state(self) -> dict:
        order = (self.head - self.count + np.arange(self.count)) % self.capacity  # oldest first
        return {"planes": self.planes[order], "pis": self.pis[order], "zs": self.zs[order]}

    def load_state(self, state: dict) -> None:
        self.clear()
        self.extend(state["planes"], state["pis"], state["zs"])


class SizedReplayBuffer:
    """One FIFO (``ReplayBuffer``) per board size, so that a mini-batch comes from one size.

    Each size keeps its last ``capacity`` positions. A batch is drawn from one
    size, chosen with probability proportional to the positions it holds among
    the sizes asked for that hold more than a batch.

    Args:
        capacity: positions kept per board size.
        sizes: the ``(width, height)`` boards the buffer takes.
        channels: the planes of a position (those of the net's input version,
            ``gomoku.game.features.input_channels``).
    """

    def __init__(self, capacity: int, sizes, channels: int = 4):
        self.capacity = capacity
        self.channels = channels
        self.buffers = {tuple(s): ReplayBuffer(capacity, (channels, s[1], s[0]), s[0] * s[1]) for s in sizes}

    def __len__(self) -> int:
        return sum(len(b) for b in self.buffers.values())

    def _buffer_for(self, planes: np.ndarray) -> ReplayBuffer:
        if planes.shape[1] != self.channels:
            raise ValueError(f"positions of {planes.shape[1]} planes, but the buffer holds {self.channels} "
                             f"(the planes of another input version)")
        height, width = planes.shape[-2:]
        if (width, height) not in self.buffers:
            raise ValueError(f"positions of a {width}x{height} board, but the buffer holds "
                             f"{', '.join(f'{w}x{h}' for w, h in self.buffers)}")
        return self.buffers[(width, height)]

    def extend(self, planes: np.ndarray, pis: np.ndarray, zs: np.ndarray) -> None:
        """Adds positions, all of one board size (the planes' last two axes)."""
        self._buffer_for(planes).extend(planes, pis, zs)

    def can_sample(self, n: int, sizes=None) -> bool:
        """True when one of ``sizes`` (default: all) holds more than ``n`` positions."""
        return bool(self._ready(n, sizes))

    def _ready(self, n: int, sizes) -> list:
        wanted = self.buffers if sizes is None else [tuple(s) for s in sizes]
        return [s for s in wanted if s in self.buffers and len(self.buffers[s]) > n]

    def sample(self, n: int, rng: np.random.Generator, sizes=None, newest: int = 0):
        """``(planes, pis, zs)`` of ``n`` positions of one board size.

        Args:
            n: positions.
            rng: the random source.
            sizes: the ``(width, height)`` boards to draw from (default: all).
            newest: draw from each size's newest this many positions (0: all it holds).

        Raises:
            ValueError: none of them holds more than ``n`` positions.
        """
        ready = self._ready(n, sizes)
        if not ready:
            raise ValueError(f"no board size holds more than {n} positions yet")
        counts = np.array([len(self.buffers[s]) for s in ready], dtype=np.float64)
        size = ready[int(rng.choice(len(ready), p=counts / counts.sum()))] if len(ready) > 1 else ready[0]
        return self.buffers[size].sample(n, rng, newest)

    def state(self) -> dict:
        """A single size's state is a plain ``ReplayBuffer``'s (as checkpoints always held it)."""
        if len(self.buffers) == 1:
            return next(iter(self.buffers.values())).state()
        return {"by_size": {f"{w}x{h}": b.state() for (w, h), b in self.buffers.items()}}

    def load_state(self, state: dict) -> None:
        """Restores ``state()``; a plain ``ReplayBuffer`` state goes to the size of its planes."""
        for buffer in self.buffers.values():
            buffer.clear()
        parts = state["by_size"].values() if "by_size" in state else [state]
        for part in parts:
            if len(part["zs"]):
                self.extend(part["planes"], part["pis"], part["zs"])
