"""Where were lost games lost? The first move after which the opponent had a forced win.

    gomoku-arena --a az:MODEL:800 --b heuristic:4 --size 15x15 --out games.jsonl
    python scripts/turning_points.py games.jsonl --model MODEL

For every game that the player ``--player`` (A by default) lost, the script replays
the moves and, after each of that player's own moves (the arena's opening stones
are not theirs), asks the heuristic's threat searches whether the opponent, now to
move, has a forced win: a VCF (continuous fours) or a VCT (threes as well). The
first such move is the game's turning point. With ``--model`` it also shows what
the net thought there: the prior of the move played, and which of the net's
``--top`` moves would have left the opponent no forced win that the searches find.
With ``--search gumbel:64,gumbel:200,puct:800`` it also runs those searches of the
net at each turning point (the self-play Gumbel search, over ``--seeds`` seeds, and
the PUCT search that plays evaluations and the arena) and says which of them chose
a move that keeps the game: how deep self-play must search before its targets
teach the net the defence it lacks. A search written ``gumbel:400:3/1000`` has the
threat searches on, with a root VCT of 3 threes and 1,000 nodes (the training
flags ``--threats on --vct-depth 3 --vct-nodes 1000``; ``4/5000/5000`` also gives each move checked
against the opponent's VCT at least 5,000 nodes, ``--defence-vct-nodes``); the summary then gives the
milliseconds a search spent in the root's threat searches, and in all.

The searches stop at a node budget (``--budget``, ``--depth`` threes deep), so "no
forced win" means none found: a turning point can lie earlier than reported.
Lines of the arena's ``--out`` file and single game files from play.py are read alike.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Optional

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

from gomoku.game.board import Board  # noqa: E402
from gomoku.game.gamefile import GameFileError, GameRecord, load_game  # noqa: E402
from gomoku.game.line_board import LineBoard  # noqa: E402
from gomoku.game.vcf import find_vcf  # noqa: E402
from gomoku.play.arena.report import read_games as read_arena_games  # noqa: E402
from gomoku.play.arena.settings import ArenaError  # noqa: E402
from gomoku.search.tree_threats import DEFENCE_VCT_NODES, VctBudgets  # noqa: E402
from gomoku.search.vct import find_vct  # noqa: E402
from gomoku.util import positive_int_arg  # noqa: E402


@dataclass
class TurningPoint:
    """A lost game and the move that lost it (``stone`` None: no forced win was found)."""

    game: object
    loser: int  # the losing player's colour, 1 Black or 2 White
    length: int
    stone: Optional[int] = None  # 1-based number of the losing move in the game
    move: Optional[str] = None
    kind: Optional[str] = None  # "VCF" or "VCT"
    prior: Optional[float] = None  # the net's prior on the move played
    safe: list = field(default_factory=list)  # (label, prior) of the net's top moves that keep the game
    before: Optional[Board] = None  # the position the losing move was played in
    searches: dict = field(default_factory=dict)  # search spec -> (searches that kept the game, searches)


def forced_win(board: Board, budget: int, depth: int) -> Optional[str]:
    """'VCF' or 'VCT' if the player to move has a forced win the searches find, else None
    (a win at once counts as a VCF: ``find_vcf`` returns it first)."""
    if find_vcf(LineBoard(board), board.current_player, budget=budget):
        return "VCF"
    if find_vct(LineBoard(board), board.current_player, budget=budget, depth=depth) is not None:
        return "VCT"
    return None


def find_turning_point(record: GameRecord, loser: int, opening: int = 0, budget: int = 20000,
                       depth: int = 4, evaluator=None, top: int = 15, name: object = None) -> TurningPoint:
    """The first of ``loser``'s moves (after the ``opening`` stones) that left the opponent a forced win."""
    point = TurningPoint(name, loser, len(record.moves))
    board = Board(record.width, record.height, record.n_in_row, record.start_player, record.rule)
    for number, move in enumerate(record.moves, 1):
        own = board.current_player == loser and number > opening
        board.do_move(move)
        if not own or board.game_over:
            continue
        kind = forced_win(board, budget, depth)
        if kind is None:
            continue
        point.stone, point.move, point.kind = number, board.move_to_label(move), kind
        point.before = board.copy()
        point.before.undo()
        if evaluator is not None:
            priors = np.asarray(evaluator.evaluate([point.before])[0][0], dtype=np.float64)
            point.prior = float(priors[move])
            legal = point.before.legal_moves()
            for candidate in sorted(legal, key=lambda m: -priors[m])[:top]:
                if keeps_game(point.before, candidate, loser, budget, depth):
                    point.safe.append((point.before.move_to_label(candidate), float(priors[candidate])))
        break
    return point


def keeps_game(before: Board, move: int, mover: int, budget: int, depth: int) -> bool:
    """Whether ``mover`` playing ``move`` in ``before`` wins or leaves the opponent no forced win found."""
    after = before.copy()
    after.do_move(move)
    return after.winner == mover or not after.game_over and forced_win(after, budget, depth) is None


SEARCH_KINDS = ("gumbel", "puct")


def parse_searches(text: str) -> list[tuple]:
    """``'gumbel:64,puct:800:4/2000'`` -> ``[('gumbel', 64, None), ('puct', 800, VctBudgets(4, 2000, 100))]``
    (the third part: the threat searches on, with that root VCT: depth, nodes and, after a second
    slash, the defence checks' least nodes); ValueError on anything else."""
    searches = []
    for item in text.split(","):
        kind, _, rest = item.strip().partition(":")
        count, _, vct = rest.partition(":")
        budgets = None
        try:
            if kind not in SEARCH_KINDS or not count.isdigit() or int(count) < 1:
                raise ValueError("")
            if vct:
                parts = vct.split("/")
                if len(parts) not in (2, 3) or not all(part.isdigit() for part in parts):
                    raise ValueError("")
                depth, nodes = int(parts[0]), int(parts[1])
                defence = int(parts[2]) if len(parts) == 3 else min(DEFENCE_VCT_NODES, nodes)
                budgets = VctBudgets(depth, nodes, defence)
        except ValueError as exc:
            why = f" ({exc})" if str(exc) else ""
            raise ValueError(f"bad search {item.strip()!r}{why}: write KIND:SIMULATIONS[:DEPTH/NODES[/DEFENCE]] with KIND one of "
                             f"{', '.join(SEARCH_KINDS)}, e.g. gumbel:200 or gumbel:400:4/2000") from None
        searches.append((kind, int(count), budgets))
    return searches


def spec_name(kind: str, count: int, budgets) -> str:
    if budgets is None:
        return f"{kind}:{count}"
    return f"{kind}:{count}:{budgets.depth}/{budgets.nodes}/{budgets.defence_nodes}"


class RootClock:
    """Seconds spent in the root's threat searches, on either backend, while in a ``with`` block."""

    def __enter__(self):
        import gomoku.search.core.games as games
        import gomoku.search.core.single as single
        from gomoku.search.tree_threats import ThreatSolver

        self.seconds = 0.0
        self._saved = [(single, "analyse_root"), (games, "analyse_root"), (ThreatSolver, "root")]
        self._saved = [(owner, name, getattr(owner, name)) for owner, name in self._saved]
        for owner, name, fn in self._saved:
            setattr(owner, name, self._timed(fn))
        return self

    def _timed(self, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return timed

    def __exit__(self, *exc):
        for owner, name, fn in self._saved:
            setattr(owner, name, fn)


def try_searches(point: TurningPoint, evaluator, searches: list[tuple], seeds: int = 3,
                 budget: int = 20000, depth: int = 4) -> None:
    """Runs each search of the net in the turning point's position and fills ``point.searches``
    with ``(searches that kept the game, searches, seconds in the root's threat searches, seconds)``.

    'gumbel' is the self-play search (Gumbel sampling and sequential halving with the
    training defaults, the win check on), once for each of ``seeds`` seeds; 'puct' is
    the evaluation's PUCT search with the win check, which is deterministic, so once.
    With budgets (``parse_searches``) the threat searches are on, with that root VCT.
    """
    from gomoku.search.gumbel import GumbelPlayer
    from gomoku.search.mcts_player import MCTSPlayer

    verdicts = {}  # move -> keeps the game; the threat searches are the slow part
    for kind, count, budgets in searches:
        kept = tries = 0
        seconds = threat_seconds = 0.0
        options = dict(win_check=True, threats=budgets is not None, full_vct=budgets)
        for seed in range(seeds if kind == "gumbel" else 1):
            if kind == "gumbel":
                player = GumbelPlayer(evaluator, n_playout=count, seed=seed, **options)
            else:
                player = MCTSPlayer(evaluator, n_playout=count, **options)
            with RootClock() as clock:
                start = time.perf_counter()
                move = player.get_action(point.before.copy())
                seconds += time.perf_counter() - start
            threat_seconds += clock.seconds
            if move not in verdicts:
                verdicts[move] = keeps_game(point.before, move, point.loser, budget, depth)
            kept += verdicts[move]
            tries += 1
        point.searches[spec_name(kind, count, budgets)] = (kept, tries, threat_seconds, seconds)


def read_games(path: str) -> list[tuple[object, GameRecord, dict]]:
    """(name, record, raw JSON) of every game in an arena ``--out`` file or a single game file."""
    try:
        items = read_arena_games(path)
    except ArenaError as not_arena:
        try:
            return [(1, load_game(path), {})]
        except GameFileError:
            raise GameFileError(f"{path} is neither a game record nor an arena games file "
                                f"({not_arena})") from None
    games = []
    for number, item in enumerate(items, 1):
        try:
            record = GameRecord.from_json(item)
        except GameFileError as exc:
            raise GameFileError(f"{path}, game {number}: {exc}") from None
        games.append((item.get("game", number), record, item))
    return games


def losers_colour(item: dict, record: GameRecord, player: str) -> Optional[int]:
    """The colour ``player`` had in a game it lost, else None.

    ``player`` is the arena's ``A`` or ``B``, or ``black`` / ``white`` for any game file.
    """
    if record.result not in (1, 2):
        return None
    loser = 3 - record.result
    if player in ("black", "white"):
        return loser if (loser == 1) == (player == "black") else None
    colours = item.get("colours")
    if not isinstance(colours, dict) or player not in colours:
        raise GameFileError(f"game {item.get('game', '?')} does not say which colour {player} played "
                            f"(an arena --out file does); use --player black or white")
    return loser if colours[player] == ("black" if loser == 1 else "white") else None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", help="an arena --out file (one game a line) or a game file")
    parser.add_argument("--player", default="A", choices=("A", "B", "black", "white"),
                        help="whose lost games to look at")
    parser.add_argument("--model", help="a model file: show the net's priors at each turning point")
    parser.add_argument("--top", type=positive_int_arg, default=15,
                        help="with --model: how many of the net's best moves to try instead")
    parser.add_argument("--budget", type=positive_int_arg, default=20000, help="nodes per threat search")
    parser.add_argument("--depth", type=positive_int_arg, default=4, help="threes in one VCT line")
    parser.add_argument("--search", metavar="KIND:N[:DEPTH/NODES[/DEFENCE]][,...]",
                        help="with --model: run these searches of the net at each turning point "
                             "(gumbel:N, the self-play search; puct:N, the evaluation's; with "
                             ":DEPTH/NODES[/DEFENCE], the threat searches on with that root VCT) and say which chose a move that keeps the game")
    parser.add_argument("--seeds", type=positive_int_arg, default=3,
                        help="with --search: seeds for each Gumbel search")
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    searches = []
    if args.search is not None:
        if not args.model:
            parser.error("--search needs --model")
        try:
            searches = parse_searches(args.search)
        except ValueError as exc:
            parser.error(str(exc))
    try:
        games = read_games(args.games)
    except (OSError, GameFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    evaluator = None
    if args.model:
        from gomoku.net.modelfile import ModelFileError
        from gomoku.net.policy_value import PolicyValueModel
        from gomoku.search.evaluator import NetEvaluator
        try:
            model = PolicyValueModel.load(args.model)
        except (OSError, ModelFileError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        evaluator = NetEvaluator(model)
    points = []
    for name, record, item in games:
        try:
            loser = losers_colour(item, record, args.player)
        except GameFileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if loser is None:
            continue
        if evaluator is not None:
            problem = evaluator.model.spec.board_mismatch(record.width, record.height, record.n_in_row)
            if problem is not None:
                print(f"error: game {name}: {problem}", file=sys.stderr)
                return 2
        opening = len(item.get("opening", []))
        point = find_turning_point(record, loser, opening, args.budget, args.depth, evaluator, args.top, name)
        if searches and point.stone is not None:
            try_searches(point, evaluator, searches, args.seeds, args.budget, args.depth)
        points.append(point)
        colour = "Black" if loser == 1 else "White"
        line = f"game {name}: lost as {colour} in {point.length} stones; "
        if point.stone is None:
            line += "no forced win found for the opponent before the end"
        else:
            line += f"after stone {point.stone} ({point.move}) the opponent had a {point.kind}"
            if evaluator is not None:
                safe = ", ".join(f"{label} {prior:.3f}" for label, prior in point.safe) or "none"
                line += f"; prior of {point.move} {point.prior:.3f}; safe among the net's top {args.top}: {safe}"
            for spec, (kept, tries, *_) in point.searches.items():
                line += f"; {spec} kept it {kept}/{tries}"
        print(line)
    found = [p for p in points if p.stone is not None]
    summary = f"{len(points)} lost games; a turning point in {len(found)}"
    if found:
        summary += f", at stone {min(p.stone for p in found)} to {max(p.stone for p in found)}"
        kinds = [p.kind for p in found]
        summary += f" ({kinds.count('VCF')} VCF, {kinds.count('VCT')} VCT)"
    if evaluator is not None and found:
        summary += f"; the net ranked a safe move in its top {args.top} in {sum(1 for p in found if p.safe)}"
    print(summary)
    for spec in (spec_name(*search) for search in searches):
        kept, tries, threat_seconds, seconds = (sum(p.searches[spec][i] for p in found) for i in range(4))
        if tries:
            print(f"{spec} kept the game in {kept} of {tries} searches; a search took "
                  f"{1000 * seconds / tries:.0f} ms, {1000 * threat_seconds / tries:.0f} ms of it in the root's threat searches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
