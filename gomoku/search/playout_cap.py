"""Playout cap randomisation (KataGo, Wu 2019), as the PUCT and the Gumbel players both do it.

With probability ``p_full`` a move gets the full search (``n_playout`` playouts) and is
recorded for training; otherwise it gets a fast search of ``n_fast`` playouts, is played,
and is not recorded. ``p_full = 1`` turns it off. The default and the check of these
settings live here so that the players and the training configuration share them.
"""

from __future__ import annotations

N_FAST = 100
"""playouts of a fast search (KataGo: 100 against 600 full)"""


def check_playout_cap(n_playout: int, p_full: float, n_fast: int) -> None:
    """Raises ValueError unless both searches have at least one playout and ``0 < p_full <= 1``."""
    if n_playout < 1 or n_fast < 1:
        raise ValueError(f"n_playout and n_fast must be at least 1, got {n_playout} and {n_fast}")
    if not 0.0 < p_full <= 1.0:
        raise ValueError(f"p_full must be in (0, 1], got {p_full}")
