"""One Elo ladder from arena games: a Bradley-Terry fit by maximum likelihood, as BayesElo does.

    python scripts/elo_ladder.py games/*.jsonl --anchor heuristic:4 --table ladder.md --plot ladder.png
    python scripts/elo_ladder.py games/*.jsonl --anchor heuristic:4 --place az:NEW.npz:800 \\
        --out games/new.jsonl --openings balanced --target 150

Reads the games files ``gomoku-arena --out`` writes (one JSON object a game), and the SGF files
of c-gomoku-cli (its engines renamed with ``--alias``), and rates every player in them at once. A player is its spec, and for an engine its ``--engine-info`` too
(``engine pbrain-rapfi, max_node 10000``); model paths are cut to their file names.

The model: Black (player 1) at rating ``r_b`` beats White at ``r_w`` with probability
``1 / (1 + 10 ** (-(r_b - r_w + adv) / 400))``, where ``adv`` is the first move's advantage,
fitted with the ratings. A draw counts half a win for each side. A prior of ``--prior``
virtual draws between each pair that met (BayesElo's default is 2 virtual draws) keeps a perfect
score finite. The ratings maximise the posterior (Newton's method); their 95% intervals come
from the curvature there, relative to ``--anchor`` (rated 0).

``--budget-scale LABEL`` reads the players named ``LABEL`` and a number (one engine at several
budgets: ``engine pbrain-rapfi, max_node``) as a ruler, and gives every other player's 50% point
on it: the budget whose rating equals the player's (``budget_points``).

``--place PLAYER`` adds a player with as few games as can place it: each round plays one pair of
games (one opening, colours swapped) against the rated player nearest to the newcomer's current
estimate (the middle of the ladder at first), refits, and stops once the newcomer's interval is
narrower than ``--target`` Elo either side, or after ``--max-games``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from typing import Optional

import numpy as np

K = math.log(10) / 400  # logistic scale of one Elo point
Z_95 = 1.959963984540054
PRIOR = 2.0  # virtual draws per pair that met, BayesElo's default


# ------------------------------------------------------------------ games
def player_label(spec: str, engine_info: str = "") -> str:
    """A short name for a spec: model paths cut to the file name, an engine with its settings."""
    if spec.startswith("engine:"):
        from gomoku.search.player_specs import engine_program

        program = engine_program(spec[len("engine:"):])
        shown = [part.strip() for part in engine_info.split(";")
                 if part.strip() and part.split()[0].lower() not in ("timeout_turn", "rule")]
        return f"engine {program}" + (f", {', '.join(shown)}" if shown else "")
    parts = spec.split(":")
    if parts[0] in ("az", "policy") and len(parts) > 1:
        parts[1] = os.path.basename(parts[1])
    return ":".join(parts)


_SGF_GAME = re.compile(r"\(;[^()]*?PB\[([^\]]*)\][^()]*?PW\[([^\]]*)\][^()]*?RE\[([^\]]*)\]", re.S)


def read_sgf(path: str, aliases: dict) -> list[tuple[str, str, float]]:
    """The games of an SGF file c-gomoku-cli wrote (``-sgf FILE``), players renamed by ``aliases``."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    games = []
    for black, white, result in _SGF_GAME.findall(text):
        points = 1.0 if result.startswith("B+") else 0.0 if result.startswith("W+") else 0.5
        games.append((aliases.get(black, black), aliases.get(white, white), points))
    return games


def rated_game(line: dict, specs: dict) -> tuple[str, str, float]:
    """``(black, white, black's points)`` of an arena games line, its players by label; ``specs``
    collects each label's spec and engine settings (what ``--place`` needs to play it again)."""
    from gomoku.play.arena.report import engine_info_of

    labels = {}
    for colour in ("1", "2"):
        spec = line["players"][colour]
        info = engine_info_of(line, colour) if spec.startswith("engine:") else ""
        labels[colour] = player_label(spec, info)
        specs[labels[colour]] = (spec, info)
    result = line["result"]
    return labels["1"], labels["2"], 1.0 if result == 1 else 0.0 if result == 2 else 0.5


def read_games(paths: list[str], aliases: Optional[dict] = None) -> tuple[list[tuple[str, str, float]], dict]:
    """``(black, white, black's points)`` of every game in ``paths``, and each label's spec and info.

    A file ending in ``.sgf`` is c-gomoku-cli's; the others are ``gomoku-arena --out`` files. A
    game that repeats an earlier one move for move between the same players (two deterministic
    players replay it from the same opening and seed) is no new evidence: it is counted once.
    """
    from gomoku.play.arena import report

    games, specs = [], {}
    seen, repeats = set(), 0
    for path in paths:
        if path.endswith(".sgf"):
            games += read_sgf(path, aliases or {})
            continue
        lines = report.read_games(path)
        kept = report.new_games(lines, seen)
        repeats += len(lines) - len(kept)
        games += [rated_game(line, specs) for line in kept]
    if repeats:
        print(f"elo_ladder: {repeats} game(s) repeat an earlier game move for move between the same players; "
              f"each is counted once", file=sys.stderr)
    return games, specs


# ------------------------------------------------------------------ fit
def connected(games: list[tuple[str, str, float]], anchor: str) -> set:
    """The players that a chain of games links to ``anchor`` (the anchor among them)."""
    opponents: dict = {}
    for black, white, _ in games:
        opponents.setdefault(black, set()).add(white)
        opponents.setdefault(white, set()).add(black)
    reached, stack = {anchor}, [anchor]
    while stack:
        for other in opponents.get(stack.pop(), ()):
            if other not in reached:
                reached.add(other)
                stack.append(other)
    return reached


def fit(games: list[tuple[str, str, float]], anchor: str, prior: float = PRIOR):
    """Ratings, their 95% half-widths, the first move's advantage and its half-width.

    Returns:
        ``(players, ratings, half_widths, adv, adv_half_width)``, players sorted by rating.
    """
    return fit_with_covariance(games, anchor, prior)[:5]


def fit_with_covariance(games: list[tuple[str, str, float]], anchor: str, prior: float = PRIOR):
    """``fit``'s answer and, sixth, the ratings' covariance matrix (Elo squared; the anchor's
    row and column zero), in the order of the players returned."""
    players = sorted({p for g in games for p in g[:2]})
    if anchor not in players:
        raise ValueError(f"the anchor {anchor!r} played no game; players: {', '.join(players)}")
    apart = sorted(set(players) - connected(games, anchor))
    if apart:
        raise ValueError(f"no chain of games links {', '.join(apart)} to the anchor {anchor!r}, so they cannot "
                         f"be rated on its scale (an engine of an SGF file without its --alias?)")
    index = {p: i for i, p in enumerate(players)}
    rows = [(index[b], index[w], s, 1.0) for b, w, s in games]
    pairs = {tuple(sorted((index[b], index[w]))) for b, w, _ in games}
    # The prior: virtual draws, half with each colour, so that they say nothing of the advantage.
    rows += [(i, j, 0.5, prior / 2) for i, j in pairs] + [(j, i, 0.5, prior / 2) for i, j in pairs]
    n = len(players)
    theta = np.zeros(n + 1)  # ratings, then the advantage
    free = [i for i in range(n + 1) if i != index[anchor]]
    b = np.array([r[0] for r in rows])
    w = np.array([r[1] for r in rows])
    s = np.array([r[2] for r in rows])
    weight = np.array([r[3] for r in rows])
    for _ in range(100):
        x = K * (theta[b] - theta[w] + theta[n])
        p = 1.0 / (1.0 + np.exp(-x))
        residual = weight * (s - p) * K  # d loglik / d x, per row
        curvature = weight * p * (1 - p) * K * K
        grad = np.zeros(n + 1)
        np.add.at(grad, b, residual)
        np.add.at(grad, w, -residual)
        grad[n] = residual.sum()
        hess = np.zeros((n + 1, n + 1))
        for u, v, sign_u, sign_v in ((b, b, 1, 1), (w, w, -1, -1), (b, w, 1, -1), (w, b, -1, 1)):
            np.add.at(hess, (u, v), sign_u * sign_v * curvature)
        for u, sign in ((b, 1), (w, -1)):
            np.add.at(hess, (u, np.full_like(u, n)), sign * curvature)
            np.add.at(hess, (np.full_like(u, n), u), sign * curvature)
        hess[n, n] = curvature.sum()
        sub = hess[np.ix_(free, free)]
        step = np.linalg.solve(sub, grad[free])
        theta[free] += step
        if np.max(np.abs(step)) < 1e-6:
            break
    covariance = np.zeros((n + 1, n + 1))
    covariance[np.ix_(free, free)] = np.linalg.inv(hess[np.ix_(free, free)])
    half = Z_95 * np.sqrt(np.diag(covariance))
    order = np.argsort(-theta[:n])
    return ([players[i] for i in order], theta[order], half[order], float(theta[n]), float(half[n]),
            covariance[np.ix_(order, order)])


def colour_scores(games, player: str) -> tuple[tuple[float, int], tuple[float, int]]:
    """``((points, games) as Black, (points, games) as White)`` of ``player``."""
    black = [s for b, _, s in games if b == player]
    white = [1.0 - s for _, w, s in games if w == player]
    return (sum(black), len(black)), (sum(white), len(white))


def table(games, anchor: str, prior: float) -> str:
    """The ladder as a Markdown table, by colour, with the advantage of the first move."""
    players, ratings, half, adv, adv_half = fit(games, anchor, prior)
    lines = ["| # | player | Elo | 95% interval | games | as Black | as White |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for rank, (player, rating, h) in enumerate(zip(players, ratings, half), 1):
        (bp, bn), (wp, wn) = colour_scores(games, player)
        interval = "anchor" if player == anchor else f"±{h:.0f}"
        lines.append(f"| {rank} | {player} | {rating:+.0f} | {interval} | {bn + wn} | "
                     f"{bp:g}/{bn} | {wp:g}/{wn} |")
    lines.append("")
    lines.append(f"{len(games)} games; Black's advantage {adv:+.0f} Elo (±{adv_half:.0f}); "
                 f"a prior of {prior:g} virtual draws per pair that met; ratings relative to {anchor}.")
    return "\n".join(lines)


def fifty_percent_points(games, anchor: str, prior: float, scale: str) -> list[dict]:
    """Each player's 50% point on a budget scale.

    The scale is the players whose label is ``scale`` followed by a number (``engine
    pbrain-rapfi, max_node`` picks that engine at each node budget). A player's 50% point is the
    budget at which the scale's rating equals the player's: linear in the budget's logarithm
    between two budgets that were played, never beyond the first or the last. Its 95% range
    maps the player's rating plus and minus 1.96 standard errors of its difference to the
    nearest-rated budget, so the anchor's own uncertainty, shared by both, drops out.

    Returns:
        one dict a player outside the scale, best first: ``player``, ``rating``, and ``point``,
        ``low``, ``high``, each a pair ``(budget, side)``: ``side`` is -1 where the rating lies
        at or below the smallest budget's (``budget`` is then that budget), +1 at or above the
        largest's, 0 between.

    Raises:
        ValueError: fewer than two budgets, or ratings that do not rise with the budget.
    """
    players, ratings, _, _, _, covariance = fit_with_covariance(games, anchor, prior)
    pattern = re.compile(re.escape(scale) + r"\s*(\d+(?:\.\d+)?)$")
    points = sorted((float(m.group(1)), i) for i, p in enumerate(players) if (m := pattern.match(p)))
    if len(points) < 2:
        raise ValueError(f"--budget-scale {scale!r}: fewer than two players are named {scale!r} and a number")
    budgets = np.array([b for b, _ in points])
    scale_ratings = np.array([ratings[i] for _, i in points])
    if np.any(np.diff(scale_ratings) <= 0):
        shown = ", ".join(f"{b:g}: {r:+.0f}" for b, r in zip(budgets, scale_ratings))
        raise ValueError(f"--budget-scale {scale!r}: the ratings do not rise with the budget ({shown}); "
                         "more games between neighbouring budgets would settle them")

    def budget_at(rating: float) -> tuple[float, int]:
        if rating <= scale_ratings[0]:
            return float(budgets[0]), -1
        if rating >= scale_ratings[-1]:
            return float(budgets[-1]), 1
        return math.exp(np.interp(rating, scale_ratings, np.log(budgets))), 0

    rows = []
    in_scale = {i for _, i in points}
    for i, (player, rating) in enumerate(zip(players, ratings)):
        if i in in_scale:
            continue
        nearest = min(in_scale, key=lambda j: abs(ratings[j] - rating))
        spread = Z_95 * math.sqrt(max(covariance[i, i] + covariance[nearest, nearest] - 2 * covariance[i, nearest], 0))
        rows.append({"player": player, "rating": float(rating), "point": budget_at(rating),
                     "low": budget_at(rating - spread), "high": budget_at(rating + spread)})
    return rows


def budget_text(budget: tuple[float, int]) -> str:
    """``(budget, side)`` of ``fifty_percent_points`` as the tables show it."""
    value, side = budget
    return f"{'<= ' if side < 0 else '>= ' if side > 0 else ''}{value:,.0f}"


def range_text(row: dict) -> str:
    """A row of ``fifty_percent_points``'s 95% range as the tables show it."""
    low, high = budget_text(row["low"]), budget_text(row["high"])
    return low if low == high else f"{low} to {high}"


def budget_points(games, anchor: str, prior: float, scale: str) -> str:
    """Every player's 50% point on a budget scale (``fifty_percent_points``), as a Markdown table."""
    lines = [f"| player | Elo | 50% point ({scale}) | 95% range |", "|---|---:|---:|---:|"]
    for row in fifty_percent_points(games, anchor, prior, scale):
        lines.append(f"| {row['player']} | {row['rating']:+.0f} | {budget_text(row['point'])} | {range_text(row)} |")
    return "\n".join(lines)


def plot(games, anchor: str, prior: float, path: str, title: str = "Elo ladder") -> None:
    """The ladder as a chart: each player's rating and its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    players, ratings, half, _, _ = fit(games, anchor, prior)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(players) + 1.2))
    y = np.arange(len(players))[::-1]
    ax.errorbar(ratings, y, xerr=half, fmt="o", capsize=3)
    ax.set_yticks(y, players)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlabel(f"Elo relative to {anchor} (95% intervals)")
    ax.set_title(f"{title}, {len(games)} games")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ------------------------------------------------------------------ placing
def place(args, games, specs) -> list:
    """Plays the newcomer ``args.place`` against the nearest rated player until it is placed."""
    from gomoku.play.arena.run import run_arena
    from gomoku.play.arena.settings import ArenaSettings

    newcomer = player_label(args.place, args.place_info)
    played = 0
    seed = args.seed
    while played < args.max_games:
        if any(newcomer in g[:2] for g in games):
            players, ratings, half, _, _ = fit(games, args.anchor, args.prior)
            estimate = dict(zip(players, ratings))[newcomer]
            width = dict(zip(players, half))[newcomer]
            print(f"{newcomer}: {estimate:+.0f} ±{width:.0f} after {played} games", file=sys.stderr)
            if width <= args.target:
                break
            rated = [(p, r) for p, r in zip(players, ratings) if p != newcomer]
        else:
            players, ratings, _, _, _ = fit(games, args.anchor, args.prior)
            estimate = float(np.median(ratings))
            rated = list(zip(players, ratings))
        opponent = min(rated, key=lambda pr: abs(pr[1] - estimate))[0]
        spec, info = specs[opponent]
        result = run_arena(ArenaSettings(args.place, spec, games=2, openings=args.openings, seed=seed,
                                         workers=1, parallel=2, rule=args.rule, engine_info=args.place_info,
                                         engine_info_b=info, size=args.size, n_in_row=args.n_in_row))
        seed += 1
        played += 2
        lines = result.game_lines()
        if args.out:
            with open(args.out, "a", encoding="utf-8") as f:
                f.writelines(json.dumps(line) + "\n" for line in lines)
        games += [rated_game(line, specs) for line in lines]
    return games


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Rate every player of arena games files on one Elo scale.")
    parser.add_argument("files", nargs="+", help="games files that gomoku-arena --out wrote, or .sgf files "
                                                 "of c-gomoku-cli")
    parser.add_argument("--alias", action="append", default=[], metavar="NAME=LABEL",
                        help="rate c-gomoku-cli's engine NAME as LABEL, e.g. "
                             "'rapfi-10k=engine pbrain-rapfi, max_node 10000' (repeatable)")
    parser.add_argument("--anchor", required=True, help="the player rated 0, as the table names it")
    parser.add_argument("--prior", type=float, default=PRIOR, help=f"virtual draws per pair that met (default: {PRIOR:g})")
    parser.add_argument("--table", help="write the Markdown table here (default: print it)")
    parser.add_argument("--plot", help="draw the ladder into this PNG")
    parser.add_argument("--title", default="Elo ladder", help="the plot's title (default: Elo ladder)")
    parser.add_argument("--budget-scale", metavar="LABEL",
                        help="players named LABEL and a number form a budget scale (e.g. 'engine pbrain-rapfi, "
                             "max_node'): print every other player's 50%% point on it")
    parser.add_argument("--place", metavar="PLAYER", help="a new player to place with as few games as it takes")
    parser.add_argument("--place-info", default="", metavar="'KEY VALUE;...'",
                        help="the INFO lines of --place when it is an engine (the rated engines keep theirs)")
    parser.add_argument("--target", type=float, default=150.0, help="--place stops at this 95%% half-width")
    parser.add_argument("--max-games", type=int, default=20, help="--place plays at most this many games")
    parser.add_argument("--openings", default="balanced", help="--place's openings (default: balanced)")
    parser.add_argument("--rule", help="--place's rule (default: the models')")
    parser.add_argument("--size", type=lambda t: tuple(int(v) for v in t.split("x")), help="--place's board, WxH")
    parser.add_argument("--n-in-row", type=int, help="--place's row length")
    parser.add_argument("--seed", type=int, default=1000, help="--place's first seed")
    parser.add_argument("--out", help="--place appends its games to this file")
    args = parser.parse_args(argv)
    try:
        aliases = dict(alias.split("=", 1) for alias in args.alias if "=" in alias)
        games, specs = read_games(args.files, aliases)
        if args.place:
            games = place(args, games, specs)
        text = table(games, args.anchor, args.prior)
        if args.budget_scale:
            text += "\n\n" + budget_points(games, args.anchor, args.prior, args.budget_scale)
    except (OSError, ValueError, KeyError) as exc:
        print(f"elo_ladder: error: {exc}", file=sys.stderr)
        return 2
    if args.table:
        with open(args.table, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        print(text)
    if args.plot:
        plot(games, args.anchor, args.prior, args.plot, args.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
