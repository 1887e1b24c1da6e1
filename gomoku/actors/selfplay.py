"""Self-play for training: one game (``play_game``), the streams of games an actor plays, and the
games' training arrays.

``play_game`` is the whole loop of one self-play game in one place: the player's search, each leaf
to the net, the move, the recorded training positions. ``GameByGame`` plays an actor's games with
it, one after another (the in-process actor, one game at a time). ``SelfPlayStream`` plays the
same games many at a time in lockstep, one batched net call a step, on the compiled search core
where it can, and never drains: the fast path of every other actor.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from dataclasses import fields
from typing import Callable, Optional, Sequence

import numpy as np

from gomoku import interrupt
from gomoku.actors.stream_state import fill_slot, game_from_state, game_state, slot_state, with_recorded
from gomoku.actors.tasks import SelfPlaySettings
from gomoku.game.board import Board
from gomoku.game.features import input_channels, planes
from gomoku.game.openings import make_openings
from gomoku.game.rules import rule_of
from gomoku.search.lockstep import FinishedGame, Lockstep, RunStats, distinct_players, run_games
from gomoku.search.recipe import SelfPlayRecipe

PLAY_AHEAD_CALLS = 4
"""A stream plays ahead of its caller by at most this many calls' games. A call waits for
its oldest games, so one long game holds up a worker's whole share; meanwhile the other
workers, whose shares are done, go on playing instead of idling. The games played ahead
come from weights at most this many calls old."""


def game_seeds(seed: int, index: int) -> tuple[int, int]:
    """Seeds for game ``index`` of a stream with seed ``seed``: its player's and its opening's.

    Hashed from both numbers (``SeedSequence``), so that the games of streams whose
    seeds are close (``seed`` and ``seed + 1``) do not repeat each other at shifted
    indices, as ``seed + index`` would.
    """
    player, opening = np.random.SeedSequence([seed, index]).generate_state(2)
    return int(player), int(opening)


def start_game(settings: SelfPlaySettings, seed: int, index: int, evaluator):
    """Game ``index`` of a stream with ``seed``: its board, its opening placed, and its player
    (one player on both sides), each drawn from the game's own seeds (``game_seeds``)."""
    width, height, n_in_row = settings.board_shape
    player_seed, opening_seed = game_seeds(seed, index)
    player = settings.recipe.make_player(evaluator, player_seed)
    # Under renju Black (player 1) always opens (the rule's first player); in the symmetric
    # rules the games take turns at opening, so that each player label plays both colours.
    board = Board(width, height, n_in_row, start_player=rule_of(settings.rule).first_player or 1 + index % 2,
                  rule=settings.rule)
    rng = np.random.default_rng(opening_seed)
    if settings.opening_book and rng.random() < settings.openings_share:
        opening = settings.opening_book[int(rng.integers(len(settings.opening_book)))]
    elif settings.opening_stones:
        stones = int(rng.integers(settings.opening_stones + 1))
        opening = make_openings(1, width, height, n_in_row, stones, rng)[0]
    else:
        opening = ()
    for move in opening:
        board.do_move(move)
    return board, player


def game_in_progress(settings: SelfPlaySettings, evaluator, state: dict):
    """A snapshot's game in progress (``stream_state.slot_state``): its board after its moves, and
    its player with the random state it had then (its search tree starts afresh)."""
    board = Board(*settings.board_shape, start_player=state["start_player"], rule=settings.rule)
    for move in state["moves"]:
        board.play(move)
    player = settings.recipe.make_player(evaluator, 0)
    player.rng.bit_generator.state = state["rng"]
    return board, player


def play_game(player, board: Board, index: int = 0) -> FinishedGame:
    """One self-play game, the whole loop in one place: ``player`` plays both sides from ``board``.

    Each move, the player's search asks for leaves (``next_leaf``) until it has decided; each
    leaf goes to the player's evaluator (the net) alone, and its priors and value go back into
    the tree (``receive``). Then the player chooses (``choose``: the move, and ``pi``, the
    policy target), the position is recorded as a training target, and the move is played.
    The finished game's ``outcomes()`` give each position's value target ``z``.

    This is what ``Lockstep`` does for many games at once, one batched net call a step; on
    the players' Python trees (``Lockstep(compiled=False)``) a game played here is move for
    move the same game. ``board`` is played on (it may hold moves already: the game goes on from
    there); the player is reset at the end.
    """
    version = getattr(player.evaluator, "input_version", 1)
    recorded: list[tuple] = []  # (planes, pi, player to move, root value) of each training position
    while not board.game_over:
        interrupt.check()  # under interrupt.deferred(), Ctrl-C stops here, between moves
        while (leaf := player.next_leaf(board)) is not None:
            priors, values = player.evaluator.evaluate([board])
            player.receive(leaf, board, priors[0], float(values[0]))
        result = player.choose(board)
        if result.recorded:
            recorded.append((planes(board, version), result.pi.astype(np.float32), board.current_player,
                             result.root_value))
        board.play(result.move)
        player.notify_move(result.move)
    player.reset()
    size, shape = board.width * board.height, (input_channels(version), board.height, board.width)
    return FinishedGame(board.width, board.height, board.n_in_row, board.start_player, list(board.history),
                        int(board.winner), {1: str(player), 2: str(player)}, index=index, rule=board.rule,
                        planes=np.stack([r[0] for r in recorded]) if recorded else np.zeros((0, *shape), np.float32),
                        pis=np.stack([r[1] for r in recorded]) if recorded else np.zeros((0, size), np.float32),
                        to_move=np.asarray([r[2] for r in recorded], dtype=np.int8),
                        root_values=np.asarray([r[3] for r in recorded], dtype=np.float32))


class GameByGame:
    """Self-play one whole game at a time, each played by ``play_game`` on the player's Python trees.

    The in-process actor's stream when a run plays one game at a time (``parallel`` 1): game ``i``
    is ``SelfPlayStream``'s game ``i`` of the same settings and seed (``start_game``), move for
    move as ``Lockstep(compiled=False)`` plays it, and the games come out in the order of their
    index. No game is in progress between calls: each call's games play with the evaluator of that
    call, and the stream's ``snapshot`` is its seed and the index of its next game, in the format
    of ``SelfPlayStream.snapshot``. A lockstep stream's snapshot (a run resumed with one game at a
    time) may hold games in progress and finished games held back: ``restore`` keeps them, and
    the next calls hand them out first, in the order of their index, each game in progress played
    on from its moves, its recorded positions and its player's random state.
    """

    def __init__(self, evaluator, settings: SelfPlaySettings, seed: int):
        self.evaluator = evaluator
        self.settings = settings
        self.seed = seed
        self.started = 0  # the index of the next new game
        self.finished: dict[int, dict] = {}  # a restored snapshot's finished games, by index (``game_state``)
        self.playing: dict[int, dict] = {}  # and its games in progress (``slot_state``)

    def collect(self, n_games: int, on_game: Optional[Callable[[int, RunStats], None]] = None):
        """Plays the next ``n_games`` games; returns ``(games, stats)``. ``on_game(done, stats)`` is
        called after each game."""
        start = time.perf_counter()
        games, stats = [], RunStats()
        while len(games) < n_games:
            held = min(self.finished.keys() | self.playing.keys(), default=None)
            if held in self.finished:  # finished before the snapshot
                games.append(game_from_state(self.finished.pop(held)))
            else:
                if held is None:  # a new game
                    index, state = self.started, None
                    board, player = start_game(self.settings, self.seed, index, self.evaluator)
                    self.started += 1
                else:  # in progress at the snapshot
                    index, state = held, self.playing.pop(held)
                    board, player = game_in_progress(self.settings, self.evaluator, state)
                moves_before = len(board.history)
                game = play_game(player, board, index)
                stats.games += 1
                stats.moves += len(game.moves) - moves_before
                stats.playouts += player.playouts_run
                games.append(game if state is None else with_recorded(game, state))
            if on_game is not None:
                on_game(len(games), stats)
        stats.seconds = time.perf_counter() - start
        return games, stats

    def snapshot(self) -> dict:
        """The stream in plain data, as ``SelfPlayStream.snapshot`` gives it; a copy."""
        return {"seed": self.seed, "next": self.started, "started": self.started,
                "finished": [dict(state) for _, state in sorted(self.finished.items())],
                "playing": [dict(state) for _, state in sorted(self.playing.items())]}

    def restore(self, state: dict) -> None:
        """Puts back a snapshot (of a stream with this one's seed) into this new stream."""
        if self.started or state["seed"] != self.seed:
            raise ValueError("a snapshot is restored into a new stream of its own seed")
        self.started = state["started"]
        self.finished = {game["index"]: game for game in state["finished"]}
        self.playing = {game["index"]: game for game in state["playing"]}


class SelfPlayStream:
    """Self-play that never drains: ``parallel`` games always in progress.

    ``collect(n)`` returns the next ``n`` games in the order they started,
    playing until all of them have finished; the games still in progress go
    on at the next call, so the batch stays full however few games an
    iteration asks for. Handing games out in the order they started, not the
    order they finished, keeps short games from crowding the first
    collections after a start: the first games to finish are the short ones.
    A game that runs far longer than the rest would then hold up every call
    while later games pile up: once as many of the games that started after
    it as play in lockstep (``parallel``) have finished, it is passed over,
    and handed out first by the first call after it finishes. It is late, not
    lost, and only a game about twice as long as the typical one is passed.
    Game ``i`` draws its noise, move sampling and opening from random streams
    of its own, derived from ``(seed, i)`` (``game_seeds``): no two games of
    a stream, nor of two streams with different seeds, share one. It opens
    with player ``1 + i % 2``, so the games do not depend on ``parallel``
    while the evaluator is unchanged.

    Args:
        evaluator: the net evaluator shared by all games.
        board_shape: ``(width, height, n_in_row)``.
        parallel: games in lockstep.
        recipe: how each game's player searches and chooses (``search.recipe``).
        seed: base seed.
        opening_stones: each game starts from 0 to this many random central stones,
            as many of each count (drawn like the arena's openings, from game ``i``'s
            own seed); they are placed, not searched, so no training position comes
            from them. Games from the empty board keep the first move in the data.
        opening_book, openings_share: this share of the games start instead from one of
            these openings (move lists), drawn from game ``i``'s seed; placed, like the stones.
        rule: the rule of the games (``gomoku.game.rules``); under renju Black always opens.
        compiled: play on the compiled search core where it can (None: unless turned off; ``search.core``).
    """

    def __init__(self, evaluator, board_shape: Sequence[int], parallel: int, recipe: SelfPlayRecipe, seed: int,
                 opening_stones: int = 0, opening_book: Sequence[Sequence[int]] = (), openings_share: float = 0.0,
                 rule: str = "freestyle", compiled: Optional[bool] = None):
        self.evaluator = evaluator
        self.recipe = recipe
        self.parallel = parallel
        self.seed = seed
        self._settings = SelfPlaySettings(tuple(board_shape), parallel, recipe, opening_stones, tuple(opening_book),
                                          openings_share, rule)

        def new_game(i):
            board, player = start_game(self._settings, seed, i, self.evaluator)
            return board, {1: player, 2: player}

        self.lockstep = Lockstep(new_game, record=True, compiled=compiled)
        self._finished: dict[int, FinishedGame] = {}  # by index, until handed out
        self._next = 0  # the index of the next game to hand out in start order (earlier ones: ``passed``)
        self._stats = RunStats()  # what was played since the last call handed games out

    def set_evaluator(self, evaluator) -> None:
        """Switches the games in progress to new weights; their search trees start afresh."""
        self.evaluator = evaluator
        for slot in self.lockstep.slots:
            for p in distinct_players(slot.players):
                p.evaluator = evaluator
        self.lockstep.reset_searches()

    def snapshot(self) -> dict:
        """The stream as a switch of weights leaves it, in plain data (``stream_state``): its seed
        and counters, the finished games it holds back, and each game in progress by its moves,
        its recorded positions and its player's random state, without the search trees, which a
        switch drops. ``restore`` on a new stream of the same settings then plays on exactly as
        this one would after ``set_evaluator`` now. Copies: the stream may play on meanwhile."""
        return {"seed": self.seed, "next": self._next, "started": self.lockstep.started,
                "finished": [game_state(g) for _, g in sorted(self._finished.items())],
                "playing": [slot_state(slot) for slot in self.lockstep.slots]}

    def restore(self, state: dict) -> None:
        """Puts back a ``snapshot`` (of a stream with this one's seed) into this new stream.

        The games in progress keep their index, moves, recorded positions and random state,
        and search with this stream's evaluator; the stream may have another ``parallel``:
        it opens new games only while fewer are in progress.
        """
        if self.lockstep.started or state["seed"] != self.seed:
            raise ValueError("a snapshot is restored into a new stream of its own seed")
        self._next, self.lockstep.started = state["next"], state["started"]
        self._finished = {g.index: g for g in map(game_from_state, state["finished"])}
        for game in state["playing"]:
            board, player = game_in_progress(self._settings, self.evaluator, game)
            fill_slot(self.lockstep.adopt(game["index"], board, {1: player, 2: player}), game)

    def collect(self, n_games: int, keep_playing: Optional[Callable[[], bool]] = None,
                on_step: Optional[Callable[[int, RunStats], None]] = None):
        """Returns ``(games, stats)`` for the next ``n_games`` games in the order they started
        (after any game passed over that has since finished).

        Later games that finish first wait for a later call. With ``keep_playing``
        the stream then plays ahead, while ``keep_playing()`` is true and until the
        next ``PLAY_AHEAD_CALLS`` calls' games (of ``n_games`` each) have finished, so
        that a worker whose games are done goes on playing while the learner still
        updates or another worker finishes a long game. ``on_step(done, stats)`` is
        called after every step until the ``n_games`` are ready, with how many of
        them are. The stats count what was played since the last call: this call's
        playing and any ``play_ahead`` between the calls, and the seconds it took.
        """
        picked = self._play_until(n_games, on_step=on_step)
        games = [self._finished.pop(i) for i in picked]
        self._next = max(self._next, max(picked) + 1)
        if keep_playing is not None:
            self.play_ahead(n_games, keep_playing)
        stats, self._stats = self._stats, RunStats()
        return games, stats

    def play_ahead(self, n_games: int, keep_playing: Callable[[], bool]) -> None:
        """Plays while ``keep_playing()`` is true, until the next ``PLAY_AHEAD_CALLS`` calls
        of ``n_games`` each have their games; the next call's stats count what it played."""
        self._play_until(PLAY_AHEAD_CALLS * n_games, keep_playing)

    @property
    def passed(self) -> set[int]:
        """The games passed over and not yet handed out: started before ``_next``, still playing or
        finished since."""
        return ({slot.index for slot in self.lockstep.slots if slot.index < self._next}
                | {i for i in self._finished if i < self._next})

    def _pick(self, n_games: int) -> tuple[list[int], bool]:
        """The indices of the next ``n_games`` games to hand out, as far as they are known, and
        whether they all are: games passed over that have finished come first, then the games in
        start order, skipping one still playing that enough later games have finished past."""
        picked = sorted(i for i in self._finished if i < self._next)[:n_games]  # passed, now finished
        later = sorted(i for i in self._finished if i >= self._next)
        index = self._next
        while len(picked) < n_games:
            if index in self._finished:
                picked.append(index)
            elif len(later) - bisect_right(later, index) < self.parallel:
                return picked, False  # not finished, nor passed by enough later games: wait for it
            index += 1
        return picked, True

    def _play_until(self, n_games: int, keep_playing=lambda: True, on_step=None) -> list[int]:
        start = time.perf_counter()
        picked, ready = self._pick(n_games)
        while not ready and keep_playing():
            self.lockstep.fill(self.parallel)
            for game in self.lockstep.step(self._stats):
                self._finished[game.index] = game
            picked, ready = self._pick(n_games)
            if on_step is not None:
                on_step(len(picked), self._stats)
        self._stats.seconds += time.perf_counter() - start
        return picked


def self_play_games(evaluator, board_shape: Sequence[int], n_games: int, parallel: int, seed: int = 0,
                    compiled: Optional[bool] = None, **settings):
    """Exactly ``n_games`` self-play games (game ``i`` as in ``SelfPlayStream``), in index order.

    ``settings``: the recipe's fields (``SelfPlayRecipe``) and ``SelfPlayStream``'s opening and rule
    keywords, by name.
    """
    names = {f.name for f in fields(SelfPlayRecipe)}
    recipe = SelfPlayRecipe(**{k: v for k, v in settings.items() if k in names})
    stream = SelfPlayStream(evaluator, board_shape, parallel, recipe, seed,
                            **{k: v for k, v in settings.items() if k not in names})
    return run_games(n_games, stream.lockstep.new_game, parallel, record=True, compiled=compiled)


def training_arrays(games: Sequence[FinishedGame], value_mix: float = 0.0):
    """Stacks games' recorded positions into ``(planes, pis, zs)`` arrays, before augmentation.

    Args:
        games: finished self-play games.
        value_mix: ``lambda`` of value target mixing: ``z' = (1 - lambda) z + lambda Q_root``,
            ``Q_root`` the search's root value for the player to move (0: ``z`` alone).
    """
    if not 0.0 <= value_mix <= 1.0:
        raise ValueError(f"value_mix must be in [0, 1], got {value_mix}")
    planes = np.concatenate([g.planes for g in games])
    pis = np.concatenate([g.pis for g in games])
    zs = np.concatenate([g.outcomes() for g in games])
    if value_mix > 0:
        q = np.concatenate([g.root_values for g in games])
        zs = ((1.0 - value_mix) * zs + value_mix * q).astype(np.float32)
    return planes, pis, zs
