"""Self-play streams across a stop: their snapshots in plain data, and the learner's copy of them.

A stream's snapshot (``selfplay.SelfPlayStream.snapshot``) holds what a switch of weights
leaves of it: each game in progress as its moves, its recorded positions and its player's
random state; the finished games it holds back; its seed and counters. The trees are not
kept (a switch drops them), nor the evaluator. Every input plane is 0 or 1, so planes are
kept as bits (``np.packbits``), which makes a recorded position about 310 bytes on 8x8 and
1.3 KB on 15x15 with input version 2's 14 planes, most of it the policy target (float32);
planes with other values would be kept as they are.

``SavedStreams`` is the learner's side: the latest snapshot of every actor's stream, by board
shape, with the settings they were played by, written into the checkpoint and handed back to
the actors at the first self-play of each board shape after a resume.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Callable, Optional

import numpy as np

from gomoku.search.lockstep import FinishedGame


def pack_planes(planes: np.ndarray):
    """``planes`` as bits when every value is 0 or 1 (``unpack_planes`` gives them back exactly)."""
    if planes.size and np.array_equal(planes, planes.astype(bool)):
        return {"bits": np.packbits(planes.astype(bool)), "shape": planes.shape, "dtype": planes.dtype.str}
    return planes


def unpack_planes(packed) -> np.ndarray:
    if isinstance(packed, dict):
        count = int(np.prod(packed["shape"]))
        return np.unpackbits(packed["bits"], count=count).reshape(packed["shape"]).astype(packed["dtype"])
    return packed


def game_state(game: FinishedGame) -> dict:
    """A finished game in plain data (its planes as bits)."""
    state = {f.name: getattr(game, f.name) for f in fields(FinishedGame)}
    state["planes"] = pack_planes(game.planes)
    return state


def game_from_state(state: dict) -> FinishedGame:
    return FinishedGame(**{**state, "planes": unpack_planes(state["planes"])})


def slot_state(slot) -> dict:
    """A self-play game in progress (one player on both sides) in plain data, copied."""
    player = slot.players[1]
    recorded = len(slot.pis)
    return {"index": slot.index, "start_player": slot.board.start_player, "moves": list(slot.board.history),
            "rng": player.rng.bit_generator.state,
            "planes": pack_planes(np.stack(slot.planes)) if recorded else None,
            "pis": np.stack(slot.pis) if recorded else None,
            "to_move": list(slot.to_move), "root_values": list(slot.root_values)}


def fill_slot(slot, state: dict) -> None:
    """Gives a slot the recorded positions of its game in progress (``slot_state``)."""
    if state["pis"] is not None:
        slot.planes = list(unpack_planes(state["planes"]))
        slot.pis = list(state["pis"])
    slot.to_move = list(state["to_move"])
    slot.root_values = list(state["root_values"])


def with_recorded(game: FinishedGame, state: dict) -> FinishedGame:
    """A game that went on from a game in progress (``slot_state``), with the positions recorded
    before it first: the game as a lockstep slot filled by ``fill_slot`` would finish it."""
    if state["pis"] is not None:
        game.planes = np.concatenate([unpack_planes(state["planes"]), game.planes])
        game.pis = np.concatenate([state["pis"], game.pis])
    game.to_move = np.concatenate([np.asarray(state["to_move"], dtype=np.int8), game.to_move])
    game.root_values = np.concatenate([np.asarray(state["root_values"], dtype=np.float32), game.root_values])
    return game


def _in_progress(snapshots: list) -> int:
    return sum(len(s["playing"]) for s in snapshots)


class SavedStreams:
    """The latest snapshot of each actor's self-play stream, by board shape (see the module docstring).

    ``keep`` takes the snapshots that come back with each self-play batch; ``hand_out`` gives
    them to the first batch of their board shape after a resume, once, by actor: actor ``k``
    restores snapshot ``k``. With fewer actors than snapshots the games of the extra streams
    start over; with more, the extra actors start new streams. A stream's games do not depend
    on ``parallel`` (see ``SelfPlayStream``), so a resume with another number of games in
    lockstep goes on with the games in progress too; one whose other self-play settings
    changed (playouts, openings, ...) starts over. The settings are kept as a plain dict.
    """

    def __init__(self):
        self.by_shape: dict[tuple, tuple] = {}  # shape -> (settings as a dict, [snapshot of actor k])
        self._pending: set = set()  # after a resume: the shapes whose snapshots are still to hand out
        self._note = False  # after a resume from a checkpoint without snapshots: say so once

    def state(self) -> dict:
        return {"version": 1, "by_shape": self.by_shape}

    def load_state(self, state: Optional[dict]) -> None:
        """After a resume; ``state`` None (a checkpoint from before snapshots) keeps nothing."""
        self.by_shape = dict(state["by_shape"]) if state else {}
        self._pending = set(self.by_shape)
        self._note = state is None

    def keep(self, shape: tuple, settings, games, stats, snapshots) -> tuple:
        """Keeps a batch's snapshots and returns ``(games, stats)``.

        ``snapshots[k]`` is actor ``k``'s stream (None: the actor was lost with its games); an
        actor without a task in the batch (fewer games than actors) keeps its earlier one. A
        Ray share played again by another actor brings back that actor's stream twice: a
        stream (its seed) is kept once, as it stood last, so that no two actors restore it.
        """
        shape, now = tuple(shape), asdict(settings)
        saved, held = self.by_shape.get(shape, (None, []))
        held = list(held) if saved == now else []
        held += [None] * (len(snapshots) - len(held))
        held[:len(snapshots)] = snapshots
        latest: dict[int, dict] = {}
        for snapshot in held:
            if snapshot is not None and snapshot["next"] >= latest.get(snapshot["seed"], snapshot)["next"]:
                latest[snapshot["seed"]] = snapshot
        self.by_shape[shape] = (now, list(latest.values()))
        return games, stats

    def hand_out(self, shape: tuple, settings, actors: int, log: Callable[[str], None]) -> Optional[list]:
        """The snapshots the next batch on ``shape`` restores (None when there is nothing to go on
        with), with a line in the log at the first batch of each shape after a resume."""
        shape = tuple(shape)
        if self._note:
            self._note = False
            log("  the checkpoint holds no self-play games in progress (it predates them): new games start")
        if shape not in self._pending:
            return None
        self._pending.discard(shape)
        board = f"{shape[0]}x{shape[1]}"
        saved, snapshots = self.by_shape[shape]
        now = asdict(settings)
        if {**saved, "parallel": 0} != {**now, "parallel": 0}:
            log(f"  the self-play settings on {board} changed since the stop: its "
                f"{_in_progress(snapshots)} games in progress start over")
            return None
        kept, dropped = snapshots[:actors], snapshots[actors:]
        line = (f"  self-play on {board} goes on with the {_in_progress(kept)} games in progress of "
                f"{len(kept)} stream(s)")
        if dropped:
            line += f"; the {_in_progress(dropped)} of {len(dropped)} more stream(s) start over (fewer actors now)"
        if saved["parallel"] != now["parallel"]:
            line += f"; new games open up to {now['parallel']} in lockstep (were {saved['parallel']})"
        log(line)
        return kept
