"""Helpers shared by the test modules: stand-in evaluators, tiny configs and nets, drawn boards
under a rule, an engine's conversation and clock, and the window's clicks and keys.

Test modules import from here (and from ``tests.boards``), never from one another. Positions
drawn as ASCII live in ``tests.boards``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import queue
import threading
import time
from contextlib import contextmanager

import numpy as np

from gomoku.game.board import Board
from gomoku.game.gamefile import GameRecord
from gomoku.game.rules import RENJU

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LOAD_SLACK_S = 1.5
"""added to every wall-clock limit on an answer: how long a machine busy with other work (a load
of 4 to 9 on 2 cores) may hold a process back beyond what it was asked. A limit that an answer
misses by more than this is a real fault: an engine that ignores its turn takes its default 5 s,
one that ignores an instant move 30 s. The engine's deadline arithmetic itself is tested exactly
on a fake clock; the wall-clock latencies of real games are the soak's figures, not asserted."""

# train.py's flags for a run of a few seconds on a 6x6 board, four in a row.
TINY = ["--preset", "6x6x4", "--n-playout", "12", "--games-per-iter", "2", "--batch-size", "32",
        "--buffer-size", "2000", "--updates-per-iter", "1", "--epochs", "2", "--check-freq", "2",
        "--eval-games", "2", "--gate-games", "2", "--pure-playout-start", "20", "--workers", "1", "--device", "cpu"]


# ------------------------------------------------------------ evaluators that stand in for the net
class HashEvaluator:
    """A deterministic stand-in for the net: priors and value from a hash of the position."""

    def __init__(self):
        self.batches = []

    def evaluate(self, boards):
        self.batches.append(len(boards))
        priors, values = [], []
        for b in boards:
            seed = int.from_bytes(hashlib.sha256(bytes(b.cells) + bytes([b.current_player])).digest()[:8], "little")
            rng = np.random.default_rng(seed)
            priors.append(rng.dirichlet(np.ones(b.size)))
            values.append(rng.uniform(-1, 1))
        return np.array(priors), np.array(values)


class FlatEvaluator:
    """Uniform priors and value 0 everywhere: the net knows nothing, so whatever is found, the solver found."""

    def __init__(self):
        self.calls = 0

    def evaluate(self, boards):
        self.calls += len(boards)
        return np.full((len(boards), boards[0].size), 1.0 / boards[0].size), np.zeros(len(boards))


def train_in_process(capsys, *args) -> tuple[int, str]:
    """train.py's command line run in this process (its usage errors need no process of their
    own): the exit code, and what it wrote to stderr (read through pytest's ``capsys``)."""
    from gomoku.train.cli import main

    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


# ------------------------------------------------------------ tiny configs and nets
def tiny_config(**overrides):
    """A ``TrainConfig`` for a run of a few seconds on a 6x6 board, four in a row."""
    from gomoku.train.config import TrainConfig

    base = dict(width=6, height=6, n_in_row=4, n_playout=12, games_per_iter=2, batch_size=32,
                buffer_size=600, updates_per_iter=1, epochs=2, check_freq=2, eval_games=2, gate_games=2,
                pure_playout_start=20, workers=1, device="cpu")
    base.update(overrides)
    return TrainConfig(**base)


def tiny_self_play():
    """Self-play settings for 6x6 games, four in a row, with 8 playouts a move."""
    from gomoku.search.recipe import SelfPlayRecipe
    from gomoku.actors.tasks import SelfPlaySettings

    return SelfPlaySettings((6, 6, 4), 4, SelfPlayRecipe(n_playout=8))


def tiny_model():
    """An untrained net for 6x6 boards, four in a row."""
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    return PolicyValueModel(NetSpec(6, 6, 4), device="cpu")


def trained(spec, rng):
    """A net of ``spec`` whose every weight, batch-norm statistic included, is away from its initial value."""
    from gomoku.net.policy_value import PolicyValueModel

    model = PolicyValueModel(spec, device="cpu")
    weights = {k: (v + rng.normal(0, 0.3, v.shape)).astype(np.float32) for k, v in model.weights().items()}
    for name in weights:
        if name.endswith("_variance"):
            weights[name] = np.abs(weights[name]) + 0.5
    model.set_weights(weights)
    return model


def random_planes(n, width, height, rng):
    """Planes of real positions: some stones of each side, the player to move's first."""
    planes = np.zeros((n, 4, height, width), dtype=np.float32)
    for i in range(n):
        board = Board(width, height, min(5, width, height))
        for move in rng.choice(width * height, size=int(rng.integers(0, 8)), replace=False):
            board.do_move(int(move))
            if board.game_over:
                break
        board.fill_planes(planes[i].reshape(4, -1))
    return planes


# ------------------------------------------------------------ boards drawn under a rule
def drawn(text: str, rule: str = RENJU, to_move: int = 1, n_in_row: int = 5):
    """The board drawn in ``text`` under ``rule`` with ``to_move`` next, and the marked cells by letter.

    ``X`` is Black, ``O`` White, ``.`` empty; any other letter names an empty cell (returned in
    the marks). The top line is the top row.
    """
    rows = [line.strip() for line in text.strip().splitlines()]
    height, width = len(rows), len(rows[0])
    assert all(len(line) == width for line in rows), "ragged drawing"
    board = Board(width, height, n_in_row, rule=rule)
    stones = {1: [], 2: []}
    marks = {}
    for i, line in enumerate(rows):
        row = height - 1 - i
        for col, mark in enumerate(line):
            move = row * width + col
            if mark in "XO":
                player = 1 if mark == "X" else 2
                board.cells[move] = player
                stones[player].append(move)
            elif mark != ".":
                marks[mark] = move
    board.history = stones[1] + stones[2]
    board.current_player = to_move
    return board, marks


# ------------------------------------------------------------ the engine in-process
def converse(engine, out: io.StringIO, *lines: str) -> list[str]:
    """Feeds lines to an in-process engine (``PbrainEngine``) and returns what it wrote meanwhile."""
    before = len(out.getvalue().splitlines())
    for line in lines:
        engine.handle(line)
    return out.getvalue().splitlines()[before:]


def blocked_signals(pid: int) -> int:
    """The signals the main thread of process ``pid`` blocks, as a mask (Linux: /proc)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigBlk:"):
                return int(line.split()[1], 16)
    return 0


class FakeClock:
    """Time that moves on by ``step`` seconds at every reading."""

    def __init__(self, step: float):
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


# ------------------------------------------------------------ the window (SDL's dummy video driver)
@contextmanager
def window_opener(tmp_path):
    """``open_(match, **kwargs)``: the match's window, saving its games under ``tmp_path``, its AI
    with no delay and no events queued; every window opened is closed, and pygame with them, on exit."""
    import pygame

    from gomoku.play.ui import open_window

    windows = []

    def open_(match, **kwargs):
        window = open_window(match, save_dir=str(tmp_path / "games"), ai_delay=0, **kwargs)
        pygame.event.clear()
        windows.append(window)
        return window

    try:
        yield open_
    finally:
        for window in windows:
            window.quit()
        pygame.quit()


def click(window, pos):
    import pygame

    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    window.process_events()


def click_move(window, label):
    click(window, window.pixel_of(window.match.board.parse_move(label)))


def press(window, key):
    import pygame

    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode=""))
    window.process_events()


def settle(window, timeout=30.0):
    """Runs the window's AI until it is a human's turn or the game is over."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        window.update()
        if window.task is None and window.match.ai_to_move is None:
            return
        if window.task is not None:
            window.task.wait(0.05)
    raise AssertionError("the AI did not finish in time")


# ------------------------------------------------------------ the compiled search core
GUMBEL_PI_TOLERANCE = 1e-5  # Gumbel's targets: compiled exp and log differ from NumPy's in the last bits


class FakeNet:
    """A fixed random linear policy and value over the planes, in float32, row by row."""

    input_version = 1
    version = 0

    def __init__(self, size, seed=0, channels=4):
        rng = np.random.default_rng(seed)
        self.w = (rng.normal(size=(channels * size, size)) * 0.3).astype(np.float32)
        self.v = (rng.normal(size=(channels * size,)) * 0.05).astype(np.float32)

    def predict(self, planes):
        x = planes.reshape(len(planes), -1)
        rows = [x[i:i + 1] @ self.w for i in range(len(x))]  # row by row: no batch effects
        logits = np.concatenate(rows)
        logits -= logits.max(axis=1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        values = np.array([np.tanh(float(x[i] @ self.v)) for i in range(len(x))], np.float32)
        return log_p.astype(np.float32), values


def assert_same_games(reference, compiled, pi_tolerance=0.0):
    """The two runs played the same games, move for move, with the same targets and costs
    (policy targets and root values to ``pi_tolerance`` when it is not 0)."""
    (games_a, stats_a), (games_b, stats_b) = reference, compiled
    assert [g.index for g in games_a] == [g.index for g in games_b]
    for a, b in zip(games_a, games_b):
        assert a.moves == b.moves, f"game {a.index} differs"
        assert a.winner == b.winner
        assert np.array_equal(a.to_move, b.to_move)
        assert np.array_equal(a.planes, b.planes)
        if pi_tolerance:
            assert np.abs(a.pis - b.pis).max() <= pi_tolerance
            assert np.allclose(a.root_values, b.root_values, atol=pi_tolerance)
        else:
            assert np.array_equal(a.pis, b.pis), f"game {a.index}: policy targets differ"
            assert np.array_equal(a.root_values, b.root_values)
    assert stats_a.playouts == stats_b.playouts
    assert stats_a.moves == stats_b.moves


# ------------------------------------------------------------ engines against a clock
class StampedOut:
    """An engine's output: every line with the moment it was written."""

    def __init__(self):
        self.lines: queue.Queue = queue.Queue()
        self._part = ""

    def write(self, text: str) -> None:
        self._part += text
        while "\n" in self._part:
            line, self._part = self._part.split("\n", 1)
            self.lines.put((line, time.monotonic()))

    def flush(self) -> None:
        pass

    def reply(self, timeout: float = 20.0) -> tuple[str, float, list[str]]:
        """The next line that is not a MESSAGE, when it was written, and the MESSAGE lines before it."""
        messages = []
        while True:
            line, at = self.lines.get(timeout=timeout)
            if not line.startswith("MESSAGE"):
                return line, at, messages
            messages.append(line)


class SlowEvaluator:
    """Wraps an evaluator: every call sleeps ``usual`` seconds, every ``every``-th call ten times that,
    and call number ``stuck_at`` (if given) waits until ``release`` is set."""

    def __init__(self, inner, usual: float = 0.005, every: int = 7, stuck_at: int | None = None):
        self.inner, self.usual, self.every, self.stuck_at = inner, usual, every, stuck_at
        self.calls = 0
        self.stuck = threading.Event()
        self.release = threading.Event()

    def evaluate(self, boards):
        self.calls += 1
        if self.calls == self.stuck_at:
            self.stuck.set()
            self.release.wait(30)
        time.sleep(self.usual * (10 if self.calls % self.every == 0 else 1))
        return self.inner.evaluate(boards)


def begin_while_stuck(engine, out, slow) -> tuple[str, float, bool]:
    """Sends ``BEGIN`` to an in-process engine on a thread of its own while ``slow`` (a
    ``SlowEvaluator`` with ``stuck_at``) holds a net call; returns the answer, its seconds from the
    command, and whether the net call was still stuck when it came. The call is then released and
    the search thread joined (it must end)."""
    sent = time.monotonic()
    searching = threading.Thread(target=engine.handle, args=("BEGIN", sent))
    searching.start()
    try:
        move, at, _ = out.reply()
        stuck = slow.stuck.is_set() and not slow.release.is_set()
    finally:
        slow.release.set()
        searching.join(30)
    assert not searching.is_alive()
    return move, at - sent, stuck


# 6x6, four in a row. Black's four on the first row wins; the second game is a different
# continuation of the same two-stone opening, so its first two positions after the opening repeat
# the first game's; the third game's first position after the opening repeats too.
PROBE_GAMES = [(["a1", "a2", "b1", "b2", "c1", "c2", "d1"], 1),
               (["a1", "a2", "b1", "f6", "c1", "e6", "d1"], 1),
               (["a1", "a2", "f1", "b2", "e1", "c2", "f3", "d2"], 2)]


def probe_games_file(path, games=PROBE_GAMES, rule="freestyle"):
    """An arena games file of ``games`` (engine against engine), each opening with its first two
    stones: a probe for ``gomoku.train.probe``."""
    lines = []
    for labels, result in games:
        board = Board(6, 6, 4, rule=rule)
        moves = [board.parse_move(label) for label in labels]
        line = GameRecord(6, 6, 4, moves, 1, {1: "engine:x", 2: "engine:y"}, result, rule).to_json()
        line["opening"] = labels[:2]
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n")
    return str(path)
