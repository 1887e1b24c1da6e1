"""The replay buffer: a FIFO of the last training positions (SPEC section 6, step 3)."""

from __future__ import annotations

import numpy as np


class ReplayBuffer:
    """A FIFO of the last ``capacity`` training positions, kept as ring arrays.

    Planes are stored as uint8 (they are 0/1), move probabilities and outcomes as float32.
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

    def sample(self, n: int, rng: np.random.Generator):
        rows = rng.choice(self.count, size=n, replace=False)
        return self.planes[rows].astype(np.float32), self.pis[rows], self.zs[rows]

    def state(self) -> dict:
        order = (self.head - self.count + np.arange(self.count)) % self.capacity  # oldest first
        return {"planes": self.planes[order], "pis": self.pis[order], "zs": self.zs[order]}

    def load_state(self, state: dict) -> None:
        self.count = self.head = 0
        self.extend(state["planes"], state["pis"], state["zs"])
