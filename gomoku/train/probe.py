"""The probe: how often a net picks a strong engine's move, and how well its value foresees its games.

A match against a strong engine costs tens of minutes for a score within about +-0.15. The probe
costs seconds: it reads engine-against-engine games (``gomoku-arena --out`` with two ``engine:``
seats; docs/engines.md) and scores the net alone, without search, on every position after each
game's opening. The engine's move there is the policy's target; the game's result for the player
to move (1 won, -1 lost, 0 drawn) is the value's. A position reached twice (the same stones, the
same player to move) counts once, with its first move.

Per position it records whether the net's most likely legal move is the engine's (*agreement*; a
tie counts against it), whether the engine's move is among its three most likely, the
cross-entropy of the engine's move (nats) and the value's squared error. Agreement with an engine
is not strength, but a net that learns better moves should agree more, and as the positions stay
the same from model to model, a difference of a point or two between two nets stands out of the
noise (``paired_difference``).

The trainer measures its net on a probe after every iteration (``TrainConfig.probe_games``);
``scripts/engine_agreement.py`` compares model files.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from gomoku.game.board import Board
from gomoku.game.features import fill_planes_batch, input_channels
from gomoku.game.gamefile import GameFileError, GameRecord, read_game_lines
from gomoku.game.openings import DATA_DIR
from gomoku.game.rules import BLACK

SHIPPED = "rapfi"
"""``--probe-games rapfi``: the probe that ships for the run's board and rule (``shipped_probe``)"""
SHIPPED_FILE = "probe_rapfi_{width}x{height}_{n_in_row}_{rule}.jsonl"
"""in gomoku/data: Rapfi at 100,000 nodes against itself at 50,000 (docs/engines.md has the command)"""


@dataclass
class Scores:
    """Per position: the net's first choice is the engine's move (``top1``), the engine's move is
    among its first three (``top3``), the cross-entropy of the engine's move (``loss``), the
    value's squared error (``value_error``)."""

    top1: np.ndarray
    top3: np.ndarray
    loss: np.ndarray
    value_error: np.ndarray

    def summary(self) -> dict:
        """The means, as the trainer's metrics record them."""
        return {"probe_agree": round(float(self.top1.mean()), 4), "probe_top3": round(float(self.top3.mean()), 4),
                "probe_loss": round(float(self.loss.mean()), 4),
                "probe_value": round(float(self.value_error.mean()), 4)}


@dataclass
class Probe:
    """The test positions of a games file, in the games' order."""

    path: str
    geometry: tuple = ()  # (width, height, n_in_row)
    rule: str = ""
    boards: list = field(default_factory=list)
    moves: list = field(default_factory=list)  # the engine's move at each board
    results: list = field(default_factory=list)  # +1 the player to move won, -1 lost, 0 a draw
    games: list = field(default_factory=list)  # the index of each position's game
    _planes: dict = field(default_factory=dict, repr=False)  # input version -> uint8 planes (N, C, H, W)
    _legal: np.ndarray | None = field(default=None, repr=False)  # (N, size) bool, computed once

    def __len__(self) -> int:
        return len(self.boards)

    def black_to_move(self) -> np.ndarray:
        return np.array([board.current_player == BLACK for board in self.boards])

    def fit_problem(self, spec) -> str | None:
        """Why a net of ``spec`` (a ``NetSpec``) cannot be scored here, or None."""
        problem = spec.board_mismatch(*self.geometry) or spec.rule_mismatch(self.rule)
        return f"the probe {self.path} is for {self.board_name()}: the net is {problem}" if problem else None

    def board_name(self) -> str:
        width, height, n_in_row = self.geometry
        return f"{width}x{height}, {n_in_row} in a row, {self.rule}"

    def planes(self, version: int) -> np.ndarray:
        """The net's input planes of every position for input ``version``, computed once (they are 0 or 1)."""
        if version not in self._planes:
            width, height, _ = self.geometry
            out = np.zeros((len(self), input_channels(version), width * height), dtype=np.float32)
            for start in range(0, len(self), 512):
                boards = self.boards[start:start + 512]
                fill_planes_batch(boards, b"".join(bytes(b.cells) for b in boards), out[start:start + 512], version)
            self._planes[version] = out.reshape(len(self), -1, height, width).astype(np.uint8)
        return self._planes[version]

    def score(self, predict, version: int, batch: int = 256) -> Scores:
        """Scores ``predict(planes (B, C, H, W) float32) -> (log_probs (B, H*W), values (B,))``, a net
        of input ``version``. The policy is renormalized over each position's legal moves."""
        planes = self.planes(version)
        n = len(self)
        size = planes.shape[2] * planes.shape[3]
        log_p, values = np.empty((n, size)), np.empty(n)
        for start in range(0, n, batch):
            lp, v = predict(planes[start:start + batch].astype(np.float32))
            log_p[start:start + batch], values[start:start + batch] = lp, v
        if self._legal is None:
            self._legal = np.zeros((n, size), bool)
            for i, board in enumerate(self.boards):
                self._legal[i, board.legal_moves()] = True
        legal = self._legal
        p = np.where(legal, np.exp(log_p - log_p.max(axis=1, keepdims=True)), 0.0)
        p /= p.sum(axis=1, keepdims=True)
        chosen = p[np.arange(n), self.moves]
        rank = (p >= chosen[:, None]).sum(axis=1) - 1  # a move as likely as the engine's ranks ahead of it
        return Scores(rank == 0, rank < 3, -np.log(np.maximum(chosen, 1e-12)),
                      (values - np.asarray(self.results, dtype=float)) ** 2)

    def measure(self, model) -> dict:
        """``Scores.summary`` of a ``PolicyValueModel`` (or anything with ``predict`` and ``input_version``)."""
        return self.score(model.predict, model.input_version).summary()


def probe_path(name: str, width: int, height: int, n_in_row: int, rule: str) -> str:
    """The file ``--probe-games NAME`` means: ``rapfi`` the probe that ships for the board and rule,
    anything else a path.

    Raises:
        ValueError: ``rapfi`` for a board and rule the project ships no probe for.
    """
    if name != SHIPPED:
        return name
    path = os.path.join(DATA_DIR, SHIPPED_FILE.format(width=width, height=height, n_in_row=n_in_row, rule=rule))
    if not os.path.isfile(path):
        shipped = sorted(f for f in os.listdir(DATA_DIR) if f.startswith("probe_"))
        raise ValueError(f"no probe ships for {width}x{height}, {n_in_row} in a row, {rule} (gomoku/data has: "
                         f"{', '.join(shipped) or 'none'}); docs/engines.md says how to make one")
    return path


def read_probe(path: str) -> Probe:
    """The probe of an arena games file.

    Raises:
        ValueError: the file is missing or malformed, its games are for several boards or rules,
            a game cannot be replayed, or no position follows an opening.
    """
    lines = read_game_lines(path)  # a GameFileError is a ValueError
    probe = Probe(path)
    seen = set()
    for number, line in enumerate(lines):
        try:
            record = GameRecord.from_json(line)
            record.replay()
        except GameFileError as exc:
            raise ValueError(f"{path}: game {number + 1}: {exc}") from None
        geometry = (record.width, record.height, record.n_in_row)
        if probe.geometry and (geometry, record.rule) != (probe.geometry, probe.rule):
            raise ValueError(f"{path}: game {number + 1} is for another board or rule than the first game")
        probe.geometry, probe.rule = geometry, record.rule
        board = Board(record.width, record.height, record.n_in_row, record.start_player, record.rule)
        opening = len(line.get("opening", []))
        for ply, move in enumerate(record.moves):
            if ply >= opening:
                key = (bytes(board.cells), board.current_player)
                if key not in seen:
                    seen.add(key)
                    probe.boards.append(board.copy())
                    probe.moves.append(move)
                    probe.results.append(0 if record.result == 0 else 1 if record.result == board.current_player
                                         else -1)
                    probe.games.append(number)
            board.do_move(move)
    if not probe.boards:
        raise ValueError(f"{path}: no position after an opening to score")
    return probe


def load_probe(config, spec) -> Probe:
    """The probe ``config.probe_games`` names (a ``TrainConfig``), once it fits the net of ``spec``.

    Raises:
        ValueError: it cannot be read, or it is for another board or rule than the run's net.
    """
    width, height = config.board_sizes()[-1]
    probe = read_probe(probe_path(config.probe_games, width, height, config.n_in_row, config.rule))
    problem = probe.fit_problem(spec)
    if problem:
        raise ValueError(f"--probe-games: {problem}")
    return probe


def paired_difference(first: np.ndarray, later: np.ndarray, games) -> tuple[float, float]:
    """The mean of ``later - first`` over the positions and its 95% half-width, each game's
    positions one sample (the cluster-robust standard error of a mean: the positions of one game
    are not independent)."""
    diff = np.asarray(later, dtype=float) - np.asarray(first, dtype=float)
    games = np.asarray(games)
    n = len(diff)
    mean = diff.mean()
    per_game = np.array([(diff[games == g] - mean).sum() for g in np.unique(games)])
    k = len(per_game)
    if k < 2:
        return mean, float("nan")
    return mean, 1.96 * math.sqrt(k / (k - 1) * (per_game ** 2).sum()) / n
