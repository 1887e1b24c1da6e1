"""The soak's games: their settings drawn from one seed, the engines' command lines, and
``run_soak``, which plays them between engine processes on worker threads.

``soak`` is the command line and describes the soak; ``soak_report`` makes its table.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import IO, Callable, Optional, Sequence

import numpy as np

from gomoku.game.openings import make_openings
from devtools.engine_check.referee import FAULTS, run_match

N_IN_ROW = 5  # the shipped model's rule, and the heuristic's by default
PAIRINGS = {  # name: (Black's engine, White's engine)
    "model-heuristic": ("model", "heuristic"),
    "heuristic-model": ("heuristic", "model"),
    "model-model": ("model", "model"),
}
FAULT_NAMES = {"error": "ERROR", "not_a_move": "not a move", "illegal": "illegal move",
               "late": "late", "hang": "hang", "crash": "crash"}
RESULT_NAMES = {1: "Black", 2: "White", 0: "draw"}


class SoakError(ValueError):
    """Soak settings that cannot work: a missing model, an empty range, a share outside [0, 1]."""


# ---------------------------------------------------------------- settings
@dataclass(frozen=True)
class GameSettings:
    """Everything one soak game is played with; ``draw_settings`` makes them."""

    game: int
    """the game's number in the run, from 0"""
    width: int
    height: int
    pairing: str
    """a key of ``PAIRINGS``: which engine plays Black (it moves first) and which White"""
    opening: tuple[int, ...]
    """stones the referee places before the engines play, Black's first, an even count"""
    timeout_turn_ms: int
    timeout_match_ms: int
    """each engine's time for the whole game, counted down with time_left; 0 for none"""
    board_each_turn: bool
    """every move request is a BOARD block instead of TURN"""
    max_playouts: Optional[int]
    """the model engines' playout cap; None lets them search until their deadline"""
    seed: int
    """the heuristic engine's tie-break seed"""

    @property
    def board(self) -> str:
        return f"{self.width}x{self.height}"

    @property
    def engines(self) -> tuple[str, str]:
        """Black's and White's engine kinds, ``model`` or ``heuristic``."""
        return PAIRINGS[self.pairing]

    def describe(self) -> str:
        """One line for the progress log."""
        parts = [self.board, self.pairing, f"{len(self.opening)}-stone opening",
                 f"turn {self.timeout_turn_ms} ms"]
        if self.timeout_match_ms:
            parts.append(f"match {self.timeout_match_ms // 1000} s")
        if self.board_each_turn:
            parts.append("BOARD each turn")
        if "model" in self.engines:
            parts.append("uncapped" if self.max_playouts is None else f"{self.max_playouts} playouts")
        return ", ".join(parts)


def draw_settings(games: int, seed: int, boards: Sequence[tuple[int, int]] = ((15, 15), (20, 20)),
                  pairings: Sequence[str] = tuple(PAIRINGS), opening_stones: Sequence[int] = (0, 2, 4),
                  timeouts_ms: tuple[int, int] = (1000, 5000), match_ms: tuple[int, int] = (20000, 60000),
                  timed_share: float = 0.3, board_share: float = 0.3, uncapped_share: float = 0.2,
                  max_playouts: Optional[int] = 200) -> list[GameSettings]:
    """The settings of ``games`` soak games, all drawn from ``seed``: the same arguments give the same games.

    Board and pairing go round in blocks of ``len(boards) * len(pairings)`` games,
    each block holding every combination once in a shuffled order; the opening's
    stone count, ``timeout_turn`` (a multiple of 100 ms in ``timeouts_ms``,
    both ends included), the match clock (in ``match_ms``, for ``timed_share`` of
    the games), BOARD every turn (``board_share``) and the missing playout cap
    (``uncapped_share``) are drawn game by game. Game ``i`` is the same whatever
    the number of games.

    Raises:
        SoakError: an unknown pairing, an odd opening, an empty range, a share outside [0, 1],
            a negative seed.
    """
    check_settings(boards, pairings, opening_stones, timeouts_ms, match_ms,
                   (timed_share, board_share, uncapped_share), max_playouts)
    if seed < 0:
        raise SoakError(f"the seed must be 0 or more, got {seed}")
    # The blocks' order and each game's draws come from streams of their own, so that game i is the
    # same in a run of any length: a short trial run plays the first games of the long one.
    order_rng = np.random.default_rng([seed, 0])
    combinations = [(board, pairing) for board in boards for pairing in pairings]
    order: list[tuple[tuple[int, int], str]] = []
    while len(order) < games:
        order += [combinations[i] for i in order_rng.permutation(len(combinations))]
    settings = []
    for game, ((width, height), pairing) in enumerate(order[:games]):
        rng = np.random.default_rng([seed, 1, game])
        stones = int(rng.choice(opening_stones))
        opening = tuple(make_openings(1, width, height, N_IN_ROW, stones, rng)[0])
        turn = 100 * int(rng.integers(-(-timeouts_ms[0] // 100), timeouts_ms[1] // 100 + 1))
        timed = rng.random() < timed_share
        match = 1000 * int(rng.integers(-(-match_ms[0] // 1000), match_ms[1] // 1000 + 1)) if timed else 0
        board_each_turn = bool(rng.random() < board_share)
        uncapped = max_playouts is None or rng.random() < uncapped_share
        settings.append(GameSettings(game, width, height, pairing, opening, turn, match, board_each_turn,
                                     None if uncapped else max_playouts, int(rng.integers(2**31))))
    return settings


def check_settings(boards, pairings, opening_stones, timeouts_ms, match_ms, shares, max_playouts) -> None:
    """Raises SoakError for settings ``draw_settings`` cannot draw from."""
    if not boards:
        raise SoakError("no board to play on")
    for width, height in boards:
        if min(width, height) < N_IN_ROW:
            raise SoakError(f"a {width}x{height} board is too small for {N_IN_ROW} in a row")
    unknown = [p for p in pairings if p not in PAIRINGS]
    if unknown or not pairings:
        raise SoakError(f"pairings must be some of {', '.join(PAIRINGS)}; got {', '.join(pairings) or 'none'}")
    if not opening_stones or any(s < 0 or s % 2 for s in opening_stones):
        raise SoakError(f"opening stones must be even counts (the referee leaves Black to move); "
                        f"got {list(opening_stones)}")
    # The turn limit is a multiple of 100 ms and the match time of 1 s: each range must hold one.
    for name, (low, high), step in (("timeouts", timeouts_ms, 100), ("match times", match_ms, 1000)):
        if not 0 < low <= high or -(-low // step) * step > high:
            raise SoakError(f"{name} {low},{high} ms: need 0 < MIN <= MAX with a multiple of {step} ms "
                            f"between them")
    if any(not 0.0 <= share <= 1.0 for share in shares):
        raise SoakError(f"shares must lie in [0, 1]; got {list(shares)}")
    if max_playouts is not None and max_playouts < 1:
        raise SoakError(f"--max-playouts must be at least 1, got {max_playouts}")


# ----------------------------------------------------------------- engines
@dataclass(frozen=True)
class Engines:
    """How the soak starts its engines: ``python -m gomoku.play.engine`` with these flags."""

    model: str
    """the model file of the model engine"""
    heuristic_level: int = 4
    device: Optional[str] = None
    """the model engine's --device; None leaves the engine's default"""
    margin_ms: Optional[int] = None
    """the model engine's --margin-ms; None leaves the engine's default"""
    python: str = sys.executable

    def command(self, kind: str, settings: GameSettings) -> list[str]:
        """The command line of a ``model`` or ``heuristic`` engine for one game."""
        command = [self.python, "-m", "gomoku.play.engine"]
        if kind == "heuristic":
            return command + ["--heuristic", str(self.heuristic_level), "--seed", str(settings.seed)]
        command += ["--model", self.model]
        if settings.max_playouts is not None:
            command += ["--max-playouts", str(settings.max_playouts)]
        if self.device is not None:
            command += ["--device", self.device]
        if self.margin_ms is not None:
            command += ["--margin-ms", str(self.margin_ms)]
        return command

    def commands(self, settings: GameSettings) -> tuple[list[str], list[str]]:
        """Black's and White's command lines."""
        black, white = settings.engines
        return self.command(black, settings), self.command(white, settings)


# -------------------------------------------------------------------- games
def play_game(settings: GameSettings, engines: Engines, stderr_dir: Optional[str] = None) -> dict:
    """Plays one soak game through the referee and returns its record (a JSON-ready dict).

    The record holds the settings, the command lines, the referee's result and the
    wall seconds; the whole transcript is added when the game had a fault or did
    not finish, and the latency of every answer and its limit always, so that the
    table can be made again from the records alone.
    """
    commands = engines.commands(settings)
    stderr_path = None
    if stderr_dir is not None:
        stderr_path = os.path.join(stderr_dir, f"game-{settings.game:04d}.stderr")
    started = time.monotonic()
    with open(stderr_path, "w") if stderr_path else open(os.devnull, "w") as stderr:
        result = run_match(commands, settings.width, settings.height, N_IN_ROW,
                           timeout_turn_ms=settings.timeout_turn_ms, stderr=stderr,
                           opening=settings.opening, timeout_match_ms=settings.timeout_match_ms,
                           board_each_turn=settings.board_each_turn)
    seconds = time.monotonic() - started
    record = asdict(settings)
    record["opening"] = list(settings.opening)
    ratios = [latency / limit if limit > 0 else float("inf")
              for latency, limit in zip(result.latencies, result.limits)]
    slowest = int(np.argmax(result.latencies)) if result.latencies else None
    record.update(
        board=settings.board, black=settings.engines[0], white=settings.engines[1],
        commands=[list(c) for c in commands],
        winner=result.winner, result=RESULT_NAMES.get(result.winner), reason=result.reason,
        moves=list(result.moves), faults={k: result.faults.get(k, 0) for k in FAULTS},
        answers=len(result.latencies),
        slowest=None if slowest is None else round(result.latencies[slowest], 4),
        slowest_limit=None if slowest is None else result.limits[slowest],
        worst_ratio=round(max(ratios), 4) if ratios else None,
        latencies=[round(x, 4) for x in result.latencies], limits=list(result.limits),
        seconds=round(seconds, 2), stderr=stderr_path)
    if went_wrong(record):
        record["transcript"] = list(result.transcript)
    return record


def went_wrong(record: dict) -> bool:
    """Whether a game had a fault or never reached a result."""
    return record["winner"] is None or any(record["faults"].values())


def _engine_pids(commands: Sequence[Sequence[str]]) -> list[int]:
    """This process's children whose command line is one of ``commands`` (none without /proc)."""
    wanted = {tuple(c) for c in commands}
    me = os.getpid()
    pids = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return pids
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])  # the name in (...) may hold spaces
            if parent != me:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = tuple(part.decode(errors="replace") for part in f.read().split(b"\0")[:-1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if argv in wanted:
            pids.append(int(entry))
    return pids


def _kill_engines(commands: Sequence[Sequence[str]], sig: int) -> None:
    for pid in _engine_pids(commands):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


@dataclass
class SoakRun:
    """What ``run_soak`` played: the records of the finished games, in the order they finished."""

    records: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1
    interrupted: bool = False


def run_soak(games: Sequence[GameSettings], engines: Engines, workers: int = 1, out: Optional[IO[str]] = None,
             stderr_dir: Optional[str] = None, log: Optional[Callable[[str], None]] = None) -> SoakRun:
    """Plays the games, ``workers`` at a time, and returns their records.

    Each worker is a thread that takes the next game and plays it; this (the
    main) thread writes each finished game's record to ``out`` at once (so a run
    cut short keeps its games) and logs a line about it.

    On KeyboardInterrupt no game starts any more, and the engines of the games
    under way are killed, so that their referees see them close and end their
    games at once, closing both engines in their ``finally``. Those games are
    dropped: a game cut short by the user is no finding. The engines are found
    by their command lines among this process's children, and killed again
    until every worker has ended, in case one was starting an engine meanwhile.
    """
    pending = iter(games)
    take = threading.Lock()
    stop = threading.Event()
    done: queue.Queue = queue.Queue()
    in_flight: dict[int, tuple[list[str], list[str]]] = {}
    run = SoakRun(workers=workers)

    def work() -> None:
        try:
            while not stop.is_set():
                with take:
                    settings = next(pending, None)
                    if settings is None:
                        return
                    in_flight[settings.game] = engines.commands(settings)
                try:
                    record = play_game(settings, engines, stderr_dir)
                except Exception as exc:  # the referee itself failed: a finding, unless we were stopping
                    record = _failed_record(settings, engines, exc)
                finally:
                    with take:
                        in_flight.pop(settings.game, None)
                if not stop.is_set():
                    done.put(record)
        finally:
            done.put(None)

    threads = [threading.Thread(target=work, name=f"soak-{i}", daemon=True) for i in range(workers)]
    started = time.monotonic()
    try:
        for thread in threads:
            thread.start()
        running = len(threads)
        while running:
            try:
                record = done.get(timeout=0.5)  # a timed wait, so that Ctrl-C is seen at once
            except queue.Empty:
                continue
            if record is None:
                running -= 1
                continue
            run.records.append(record)
            if out is not None:
                out.write(json.dumps(record) + "\n")
                out.flush()
            if log is not None:
                log(_progress_line(record, len(run.records), len(games)))
    except KeyboardInterrupt:
        run.interrupted = True
        stop.set()
        sig = signal.SIGTERM
        while any(thread.is_alive() for thread in threads):
            with take:
                commands = [c for pair in in_flight.values() for c in pair]
            _kill_engines(commands, sig)
            for thread in threads:
                thread.join(0.5)
            sig = getattr(signal, "SIGKILL", signal.SIGTERM)  # whatever is still there a moment later
    run.seconds = time.monotonic() - started
    return run


def _failed_record(settings: GameSettings, engines: Engines, exc: Exception) -> dict:
    """The record of a game the referee could not finish because it raised."""
    record = asdict(settings)
    record.update(opening=list(settings.opening), board=settings.board, black=settings.engines[0],
                  white=settings.engines[1], commands=[list(c) for c in engines.commands(settings)],
                  winner=None, result=None, reason=f"the referee raised {exc.__class__.__name__}: {exc}",
                  moves=[], faults=dict.fromkeys(FAULTS, 0), answers=0, slowest=None, slowest_limit=None,
                  worst_ratio=None, latencies=[], limits=[], seconds=0.0, stderr=None, transcript=[])
    return record


def _progress_line(record: dict, finished: int, games: int) -> str:
    settings = GameSettings(**{name: record[name] for name in GameSettings.__dataclass_fields__})
    faults = ", ".join(f"{FAULT_NAMES[k]} {n}" for k, n in record["faults"].items() if n)
    outcome = {None: "no result", 0: "draw"}.get(record["winner"], f"{record['result']} wins")
    slowest = ("" if record["slowest"] is None else
               f"; slowest {record['slowest']:.2f} s of {record['slowest_limit']:.2f} s")
    return (f"[{finished}/{games}] game {record['game']}: {settings.describe()}: {outcome} after "
            f"{len(record['moves'])} stones in {record['seconds']:.1f} s{slowest}"
            + (f"; FAULT {faults}: {record['reason']}" if faults else "")
            + (f"; {record['reason']}" if record["winner"] is None and not faults else ""))
