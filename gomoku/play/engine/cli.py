"""The Gomocup brain protocol, so that our players run in piskvork, qpiskvork, liskvork and the like.

A manager starts the engine as a child process and talks to it one line at a
time over stdin/stdout (the protocol: https://plastovicka.github.io/protocl2en.htm)::

    pbrain-gomokuzero                                # the shipped model for the manager's board and rule
    pbrain-gomokuzero --model best_model.npz         # the model (Gumbel search); it decides the board size
    pbrain-gomokuzero --pure --n-in-row 5            # pure MCTS (random rollouts) on any board
    pbrain-gomokuzero --heuristic 3                  # the threat-aware heuristic, on any board
    pbrain-gomokuzero --player heuristic:3           # the same, as a player spec of the registry
    python -m gomoku.play.engine --heuristic 3       # the same without the installed command
    pbrain-gomokuzero --check                        # before a tournament: the model of each board and rule

Notation. The protocol writes a cell ``x,y``, both counted from 0, ``x`` the
column and ``y`` the row. Here that cell is the move ``y * width + x`` of
``board.Board`` (``location(move) == (y, x)``). Stones are *own* (``1`` in a
``BOARD`` line) or the *opponent's* (``2``), from the engine's viewpoint: the
engine never needs to know its colour, because whenever it is asked for a move
it is the side to move.

=======================  ==========================================================
manager sends            engine answers
=======================  ==========================================================
``START n``              ``OK``, or ``ERROR reason`` (no usable model, a fixed-size model for another
                         size; a size-free model plays any size)
``RECTSTART w,h``        the same for a ``w`` x ``h`` board
``RESTART``              ``OK``: a new game on the same board
``BEGIN``                its move ``x,y`` on the empty board
``TURN x,y``             the opponent played ``x,y``; its move
``BOARD``, lines, DONE   a whole position, one ``x,y,who`` line per stone; its move
``TAKEBACK x,y``         ``OK``: the stone on ``x,y`` is gone
``INFO key value``       nothing (time and memory limits, the rule; unknown keys are ignored)
``ABOUT``                ``name="GomokuZero", version="...", author="..."``
``END``                  nothing: the engine exits
anything else            ``UNKNOWN ...``
=======================  ==========================================================

Bad input (a malformed line, coordinates off the board, an occupied cell, a
game command before ``START``) is answered ``ERROR reason``; the position stays
as it was and the engine goes on reading. ``MESSAGE`` lines just before a reply
carry diagnostics: the search's size and value, ``INFO`` lines that were
ignored (``INFO`` itself gets no reply, so their notes wait for the next one).

Rules. ``INFO rule`` chooses the rule (``gomoku.game.rules``): 0 freestyle, 1
standard (exactly five), 4 renju (Black may not play double threes, double fours
or overlines), 8 caro (a five between two opponent's stones does not win); 2 (a
continuous game) gets a ``MESSAGE`` that it is not supported and changes nothing
else; a number no rule has (9, caro with exactly five) is refused with a
``MESSAGE``. Until
it comes, the engine plays its model's rule (freestyle without a model). A
model trained for another rule still plays, with a ``MESSAGE`` saying so: its
moves follow the game's rule, as every move of the engine does. Without
``--model`` (``--shipped``, the default) the engine picks the shipped model
for the board and the rule at ``START`` and again after each ``INFO rule``:
the renju model for renju, the freestyle one for freestyle. ``START`` loads
the board's model for every rule, so that a switch costs no move any time.

Time. A move is searched until its time is spent, not for a fixed number of
playouts: ``TimeControl`` takes ``timeout_turn`` and a share of ``time_left``,
less a safety margin, counted from the moment the command arrived (a thread
reads the input and stamps every line), or from the end of ``START`` for a command that came
while ``START`` loaded the models (the protocol does not count ``START``'s time). The search stops when the slowest of
the recent playouts would end past that deadline, and a move that still ran
over widens the margin of the next ones; a watchdog thread answers the search's
best move so far if the search is still running halfway between the deadline
and the turn's end (``move_search``). A move that completes a line is played at
once, without a search. The heuristic player (``--heuristic``, ``search.heuristic``)
needs far less than a turn and ignores the clock.

The search runs on the compiled core (``search.core.single``) with a model's net,
on the Python tree with rollouts (``--pure``), under caro, or with
``GOMOKU_CORE=off``: the same search, move for move. The kernels load at
``START``; without numba's cache of them another process compiles them (about a
minute of CPU, once) while the Python search plays.

With ``--root-search gumbel`` a model's move is Gumbel's sequential halving at the
root (``gumbel.GumbelPlayer``, on the Python tree): after the root's expansion the
budget is planned from the recent seconds a simulation, each round of candidates
goes to the net in one call, a plan the time cannot hold ends at the deadline with
the best candidate still in the running, and time left over goes to the last two
(``move_search.gumbel_timed_search``).

Won and lost positions. The engine never resigns and never forfeits. With the
solver (``--solve``, on by default on the command line) the search can prove a
position won or lost by force, and then stops early. A won position is finished
by the quickest winning line the search has seen; a lost one is defended as long
as possible: the engine blocks a line one move from complete, else makes a four
of its own (the opponent must answer it), else plays the move whose losing line
is longest, the net's favourite among equals (``MCTS.best_move``). Should the
search fail anyway, the engine still answers with a legal move (a five, a block,
the policy net's best move, the heuristic's) and reports the error in a
``MESSAGE``; ``ERROR`` is kept for requests that are malformed.

``referee`` is the other side of the protocol: a manager that plays two engine
processes against each other and checks every answer.

This module is the command line. ``brain`` holds the engine that answers the
lines (``PbrainEngine``, ``EngineOptions``), ``protocol`` the position, the time
control and the parsing they share with ``referee``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Optional

from gomoku import interrupt
from gomoku.net.flags import add_device_flags
from gomoku.play.engine.brain import EngineOptions, PbrainEngine
from gomoku.play.engine.move_search import stamped_lines
from gomoku.search.heuristic import DEFAULT_LEVEL, LEVELS
from gomoku.search.options import SearchOptions, add_search_flags
from gomoku.search.player_specs import PlayerSpec, model_player_kind
from gomoku.search.recipe import ROOT_SEARCHES
from gomoku.util import DefaultsHelpFormatter


# ------------------------------------------------------------ command lines
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pbrain-gomokuzero",
        description="A Gomoku engine for Gomocup managers (piskvork, liskvork...): it speaks their "
                    "protocol on stdin/stdout. 'python -m devtools.engine_check.referee --help', from a "
                    "checkout, plays two engines against each other.",
        formatter_class=DefaultsHelpFormatter)
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--model", help="model file to play with (AlphaZero MCTS); a fixed-size model plays only its own "
                          "board, a size-free one any board")
    who.add_argument("--shipped", action="store_true",
                     help="play each game with the shipped model (models/, installed with the package) nearest to its board "
                          "and to the rule INFO rule sets, pure MCTS where none fits (the default without "
                          "--model, --pure or --heuristic)")
    who.add_argument("--pure", action="store_true",
                     help="play pure MCTS with random rollouts, on any board")
    who.add_argument("--heuristic", type=int, nargs="?", const=DEFAULT_LEVEL, choices=LEVELS, metavar="LEVEL",
                     help=f"play the threat-aware heuristic, on any board; LEVEL is "
                          f"{', '.join(map(str, LEVELS))} ({DEFAULT_LEVEL} without one)")
    who.add_argument("--player", metavar="PLAYER",
                     help="the player as play.py and the arena write it: az:MODEL[:N], gumbel:MODEL[:N], pure[:N], heuristic[:LEVEL] "
                          "(N: at most N playouts a move); --model, --pure and --heuristic are short for these")
    parser.add_argument("--n-in-row", type=int, default=5,
                        help="stones in a row that win, for --pure, --heuristic and the shipped models")
    add_device_flags(parser)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads for the model")
    parser.add_argument("--c-puct", type=float, default=5.0, help="PUCT exploration constant")
    add_search_flags(parser, "the search", default="sharp")
    parser.add_argument("--root-search", choices=ROOT_SEARCHES, default="gumbel",
                        help="with --model or the shipped models: Gumbel's sequential halving at the root, its "
                             "budget planned from the clock and a round of candidates a net call (the stronger at "
                             "1 s a move), or PUCT playouts one at a time on the compiled core; as player specs, "
                             "gumbel:MODEL is always Gumbel and az:MODEL always PUCT, as in play.py and the arena")
    parser.add_argument("--max-playouts", type=int,
                        help="at most this many playouts per move, however much time is left")
    parser.add_argument("--turn-ms", type=int, default=5000,
                        help="time per move until the manager sends INFO timeout_turn")
    parser.add_argument("--margin-ms", type=int, default=100,
                        help="time kept back from every move, so that no answer is late")
    parser.add_argument("--seed", type=int, help="seed for the rollouts of --pure and the tie-breaks of --heuristic")
    parser.add_argument("--quiet", action="store_true", help="no MESSAGE line with search statistics")
    parser.add_argument("--check", action="store_true",
                        help="do not play: say which model the engine would play on each shipped board under each "
                             "rule (or --model's), with its search and precision, and whether the search core is "
                             "compiled; exit 1 when a model it would play cannot be used (Paddle missing, a bad file)")
    return parser


def engine_options(argv: Optional[list[str]] = None) -> EngineOptions:
    """The engine's options from its command line (exits with a usage error on a bad flag)."""
    args = build_parser().parse_args(argv)
    for name in ("n_in_row", "threads", "max_playouts"):
        value = getattr(args, name)
        if value is not None and value < 1:
            build_parser().error(f"--{name.replace('_', '-')} must be at least 1")
    spec = player_spec(args)
    if spec is None:  # managers start a brain without arguments: it then plays the shipped models
        who = {"shipped": True}
    elif spec.kind not in ENGINE_PLAYERS:
        build_parser().error(f"the engine plays {', '.join(ENGINE_PLAYERS)}, not {spec}")
    else:
        who = ENGINE_PLAYERS[spec.kind](spec)
    max_playouts = args.max_playouts if args.max_playouts is not None or spec is None else spec.playouts
    who.setdefault("root_search", args.root_search)
    return EngineOptions(**who, n_in_row=args.n_in_row,
                         device=args.device, threads=args.threads, precision=args.precision, c_puct=args.c_puct,
                         max_playouts=max_playouts, turn_ms=args.turn_ms, margin_ms=args.margin_ms,
                         seed=args.seed, messages=not args.quiet, search=SearchOptions.from_args(args))


ENGINE_PLAYERS = {
    "az": lambda spec: {"model": spec.model, "root_search": "puct"},
    "gumbel": lambda spec: {"model": spec.model, "root_search": "gumbel"},
    "pure": lambda spec: {},
    "heuristic": lambda spec: {"heuristic": spec.level},
}
"""The player kinds (``search.player_registry``) the engine plays, and the engine options of each one's spec."""


def player_spec(args: argparse.Namespace) -> Optional[PlayerSpec]:
    """The player the flags name as a registry spec (``--model X`` is ``gumbel:X``, or ``az:X`` with
    ``--root-search puct``; ``--pure`` is ``pure``, ``--heuristic L`` is ``heuristic:L``); None for the
    shipped models. A spec without playouts leaves them to the clock (``playouts`` None).

    Exits with a usage error on a spec the registry cannot read.
    """
    if args.player is not None:
        try:
            spec = PlayerSpec.parse(args.player, default_playouts=None)
        except ValueError as exc:
            build_parser().error(f"--player: {exc}")
        if spec.entry.model and not spec.model:
            build_parser().error(f"--player: the {spec.kind} player needs a model file: {spec.entry.form}")
        return spec
    if args.model is not None:
        return PlayerSpec(model_player_kind(args.root_search), args.model)
    if args.pure:
        return PlayerSpec("pure")
    if args.heuristic is not None:
        return PlayerSpec("heuristic", level=args.heuristic)
    return None


def main(argv: Optional[list[str]] = None) -> int:
    options = engine_options(argv)
    warnings.filterwarnings("ignore", message=".*ccache.*")
    if build_parser().parse_args(argv).check:
        from gomoku.play.engine.check import check

        return check(options, sys.stdout)
    # Only protocol lines may reach the manager: replies get a private copy of
    # stdout, and whatever Paddle or anything else prints goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="ascii", errors="replace")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    sys.stdin.reconfigure(errors="replace")
    # The reader thread never takes SIGTERM: it comes to the main thread's quiet end
    # (``interrupt.end_quietly``), or waits while the main thread imports Paddle.
    with interrupt.stop_signals_blocked():
        lines = stamped_lines(sys.stdin)
    try:
        PbrainEngine(options, out).run(lines)
    except BrokenPipeError:  # the manager has gone: nobody is left to answer
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
