"""The command line of play: ``gomoku-play`` and ``python play.py``. Play Gomoku against a trained
model, or watch two players of your choice, in a window or a terminal.

    python play.py                                    # you (Black) against the shipped model
    python play.py --model runs/NAME                  # a run's best model, else its current one
    python play.py --model runs/NAME/best_model.npz --playouts 800 --first ai
    python play.py --black pure:2000 --white az       # watch two AIs
    python play.py --size 15x15                       # the shipped model for that board and rule
    python play.py --size 7x7 --n-in-row 4            # no model for it: against pure MCTS
    python play.py --model sizefree.npz --size 15x15  # a size-free model on the board you choose
    python play.py --size 15x15 --white heuristic:4   # against the threat-aware heuristic
    python play.py --size 15x15 --rule renju --white heuristic  # renju: Black has forbidden points
    python play.py --text                             # in the terminal
    python play.py --load games/game-....json         # continue or replay a saved game

    python play.py --size 15x15 --white "engine:/path/to/pbrain-rapfi" --engine-info "max_node 100000"

Player specs: human, az[:MODEL[:PLAYOUTS]], pure[:PLAYOUTS], policy[:MODEL], heuristic[:LEVEL],
engine:COMMAND (a Gomocup engine's command line).
``gomoku-play`` takes the same flags. This module parses them and hands over to
``gomoku.play.match`` (the match), ``gomoku.play.ui`` (the window) and ``gomoku.play.textplay``
(the terminal).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings

from gomoku import interrupt
from gomoku.game.gamefile import GameFileError
from gomoku.game.rules import RULES, rules_help
from gomoku.net.flags import add_device_flags
from gomoku.net.shipped import DEFAULT_MODEL
from gomoku.play.match import MissingModelError, setup_match
from gomoku.search.options import SearchOptions, add_search_flags
from gomoku.search.player_registry import player_forms
from gomoku.search.player_specs import EngineError
from gomoku.search.recipe import ROOT_SEARCHES
from gomoku.util import board_size_arg, positive_int_arg

# Paddle warns about build tools (ccache) on import: noise to someone who wants to play.
warnings.filterwarnings("ignore", module="paddle")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Play Gomoku against a trained AlphaZero model, pure MCTS, the policy net or "
                    "the threat-aware heuristic.",
        epilog="Window keys: N new game, U undo, X swap sides, S save, Q quit, B / W change "
               "Black's / White's player, Left / Right step through the moves, Home / End go to "
               "the first / last move, H hint, P the policy net's heat map, A the search's top moves on or off. "
               "In the terminal, 'hint' and 'analyze' show the AI's view.")
    parser.add_argument("--model", metavar="PATH",
                        help="model file for the AI, or a run directory (its best_model.npz, else its "
                             f"current_model.npz); sets the board size (default: {DEFAULT_MODEL}); "
                             "with --load it replaces the saved game's model")
    parser.add_argument("--playouts", type=positive_int_arg, default=400, metavar="N",
                        help="MCTS playouts per AI move: its strength (default: 400)")
    parser.add_argument("--first", choices=("human", "ai"),
                        help="who plays Black, the side that moves first (default: human)")
    parser.add_argument("--black", metavar="PLAYER",
                        help=f"Black's player: {player_forms()}")
    parser.add_argument("--white", metavar="PLAYER", help="White's player (same forms as --black)")
    parser.add_argument("--engine-info", default="", metavar="'KEY VALUE;...'",
                        help="INFO lines for an engine player, e.g. \"timeout_turn 1000;max_node 100000\" "
                             "(timeout_turn: ms a move, 5000 by default)")
    parser.add_argument("--engine-info-white", metavar="'KEY VALUE;...'",
                        help="White's INFO lines where they differ from --engine-info (one engine against "
                             "itself at two budgets; default: the same)")
    parser.add_argument("--text", action="store_true", help="play in the terminal instead of a window")
    parser.add_argument("--load", metavar="FILE", help="a saved game (JSON) to replay or continue")
    parser.add_argument("--size", type=board_size_arg, metavar="WxH",
                        help="board size: without --model, the shipped model for this board and rule "
                        "plays (pure MCTS where none is shipped); a size-free model plays any size "
                        "(default: 8x8, or the size-free model's largest trained size)")
    parser.add_argument("--n-in-row", type=positive_int_arg, metavar="N",
                        help="stones in a row that win, for a game without a model (default: 5)")
    parser.add_argument("--rule", choices=RULES,
                        help=f"{rules_help()}. A model trained for another rule is refused; alone, it plays "
                             "the shipped model for the rule, pure MCTS where none is (default: the model's rule, "
                             "a loaded game's, else freestyle)")
    parser.add_argument("--save-dir", default="games", metavar="DIR", help="where saved games go (default: games/)")
    add_device_flags(parser, "the models")
    parser.add_argument("--seed", type=int, help="seed for the AI players' randomness")
    add_search_flags(parser, "the AlphaZero player's search", default="sharp")
    parser.add_argument("--root-search", choices=ROOT_SEARCHES, default="gumbel",
                        help="the model's search where --black/--white name no player: gumbel (sequential halving "
                             "at the root, ahead of PUCT at equal playouts) or puct (the az player) (default: gumbel)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    name = os.path.basename(sys.argv[0]) or "play.py"  # messages start with the command's name
    try:
        match = setup_match(model=args.model, playouts=args.playouts, first=args.first, black=args.black,
                            white=args.white, size=args.size, n_in_row=args.n_in_row, load=args.load,
                            seed=args.seed, device=args.device, search=SearchOptions.from_args(args),
                            precision=args.precision, rule=args.rule, engine_info=args.engine_info,
                            root_search=args.root_search, engine_info_white=args.engine_info_white)
    except MissingModelError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except (GameFileError, ValueError) as exc:  # ModelFileError is a ValueError too
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 1
    for note in match.notes:
        print(f"{name}: {note}")
    try:
        if not args.text:
            try:
                from gomoku.play import ui
            except ImportError:  # no pygame: the terminal still works
                ui = None
            if ui is not None and ui.display_available():
                try:
                    return ui.run_window(match, save_dir=args.save_dir)
                except ui.NoDisplayError as exc:
                    print(f"{name}: {exc}", file=sys.stderr)
            print("No display to open a window on: playing in the terminal (--text asks for this directly).")
        from gomoku.play.textplay import play_text

        return play_text(match, save_dir=args.save_dir)
    except KeyboardInterrupt:
        stopped_by = interrupt.stop_signal() or signal.SIGINT
        if stopped_by == signal.SIGINT:  # a SIGTERM ends quietly, as a manager's stop should
            print("\nInterrupted.", file=sys.stderr)
        return interrupt.exit_code(stopped_by)
    except EngineError as exc:  # an engine player that forfeits or stops answering
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 1
    finally:
        match.close()

