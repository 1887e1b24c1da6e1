"""How often a model's net picks a strong engine's move, and how well its value foresees the games.

    python scripts/engine_agreement.py rapfi shipped=models/gomoku_15x15_5.npz next=models/next/gomoku_15x15_5.npz

A match against an engine costs tens of minutes for an interval of about +-0.15; this costs
seconds. The games file holds engine-against-engine games (``gomoku-arena --out`` with two
``engine:`` seats); ``rapfi`` is the probe that ships in gomoku/data for the first model's board
and rule (docs/engines.md says how those were made). Every position
after each game's opening is a test position: the engine's move there is the policy's target and
the game's result (for the player to move: 1, 0 or -1) the value's. A position reached twice (the
same stones, the same player to move) is scored once, with its first move. For each model, with the
net alone (no search), it prints:

- **agree**: the share of positions where the net's most likely move is the engine's, overall and
  with Black and with White to move;
- **top 3**: the share where the engine's move is among the net's three most likely;
- **loss**: the mean cross-entropy of the engine's move under the net's policy (nats);
- **value**: the mean squared error of the net's value against the result.

With ``--search-playouts N`` it also scores each model's player as the arena plays it
(``az:MODEL:N``) on ``--search-positions`` positions spread evenly over the probe: slower, but the
search is what plays the games.

Each later model is also compared with the first, position by position: the difference in
agreement with its 95% interval, games as the unit of sampling (the positions of one game are not
independent). The measure is ``gomoku.train.probe``'s, the one the trainer logs with
``--probe-games``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from gomoku.train.probe import SHIPPED, Probe, Scores, paired_difference, probe_path, read_probe


def load_model(path: str, probe: Probe):
    """The model of the file at ``path``, once it is known to fit the probe.

    Raises:
        ValueError: the file cannot be read, or its net is for another board or rule.
    """
    from gomoku.net.modelfile import ModelFileError, read_model_spec
    from gomoku.net.policy_value import PolicyValueModel

    try:
        spec = read_model_spec(path)
    except ModelFileError as exc:
        raise ValueError(str(exc)) from None
    problem = probe.fit_problem(spec)
    if problem:
        raise ValueError(f"{path}: {problem}")
    return PolicyValueModel.load(path, device="cpu")


def table(names: list[str], scores: list[Scores], probe: Probe) -> str:
    """The Markdown table of the scores, the first model the baseline of the differences."""
    black = probe.black_to_move()
    rows = ["| model | agree | with Black to move | with White to move | top 3 | loss | value | agree - first |",
            "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, s in zip(names, scores):
        if s is scores[0]:
            versus = "-"
        else:
            mean, half = paired_difference(scores[0].top1, s.top1, probe.games)
            versus = f"{100 * mean:+.1f} ({100 * (mean - half):+.1f} to {100 * (mean + half):+.1f})"
        rows.append(f"| {name} | {100 * s.top1.mean():.1f}% | {100 * s.top1[black].mean():.1f}% | "
                    f"{100 * s.top1[~black].mean():.1f}% | {100 * s.top3.mean():.1f}% | "
                    f"{s.loss.mean():.3f} | {s.value_error.mean():.3f} | {versus} |")
    return "\n".join(rows)


def shipped_or_path(games: str, first_model: str) -> str:
    """``games``, or for ``rapfi`` the probe that ships for the board and rule of ``first_model``
    (a size-free net's largest trained board).

    Raises:
        ValueError: the model cannot be read, or no probe ships for its board and rule.
    """
    if games != SHIPPED:
        return games
    from gomoku.net.modelfile import ModelFileError, read_model_spec

    try:
        spec = read_model_spec(first_model)
    except ModelFileError as exc:
        raise ValueError(str(exc)) from None
    return probe_path(SHIPPED, spec.width, spec.height, spec.n_in_row, spec.rule)


def search_agreement(probe: Probe, path: str, playouts: int, sample: np.ndarray, models: dict) -> np.ndarray:
    """Whether the model's AlphaZero player (``az:PATH:PLAYOUTS``, the arena's search) plays the
    engine's move, at each position of ``sample``; a fresh player for each position."""
    from gomoku.search.player_specs import PlayerSpec, make_player

    spec = PlayerSpec.parse(f"az:{path}:{playouts}")
    hits = []
    for i in sample:
        board = probe.boards[i].copy()
        player = make_player(spec, board, seed=0, device="cpu", models=models)
        hits.append(player.get_action(board) == probe.moves[i])
    return np.array(hits)


def search_table(names: list[str], hits: list[np.ndarray], games: np.ndarray, playouts: int) -> str:
    """The agreement of the models' searches on the sampled positions, the first the baseline."""
    rows = [f"| model | agree with {playouts} playouts of search ({len(games)} positions) | agree - first |",
            "|---|---:|---|"]
    for name, h in zip(names, hits):
        versus = "-"
        if h is not hits[0]:
            mean, half = paired_difference(hits[0], h, games)
            versus = f"{100 * mean:+.1f} ({100 * (mean - half):+.1f} to {100 * (mean + half):+.1f})"
        rows.append(f"| {name} | {100 * h.mean():.1f}% | {versus} |")
    return "\n".join(rows)


def parse_models(items: list[str]) -> list[tuple[str, str]]:
    """``NAME=PATH`` or ``PATH`` (named by its file name) -> ``[(name, path)]``."""
    models = []
    for item in items:
        name, sep, path = item.partition("=")
        models.append((name, path) if sep and name and path else (os.path.basename(item), item))
    return models


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", help="an arena games file of engine-against-engine games, or 'rapfi': the probe "
                                      "that ships for the first model's board and rule")
    parser.add_argument("models", nargs="+", help="model files, each PATH or NAME=PATH; the first is the baseline")
    parser.add_argument("--search-playouts", type=int, default=0, metavar="N",
                        help="also score each model's player, az:MODEL:N as the arena plays it, on a sample of "
                             "the positions (slower: N playouts a position)")
    parser.add_argument("--search-positions", type=int, default=300, metavar="K",
                        help="the positions, evenly spread over the probe, that --search-playouts scores "
                             "(default: 300)")
    parser.add_argument("--json", help="also write the scores to this file")
    args = parser.parse_args(argv)
    if args.search_playouts < 0 or args.search_positions < 1:
        parser.error("--search-playouts must not be negative and --search-positions must be at least 1")
    try:
        models = parse_models(args.models)
        probe = read_probe(shipped_or_path(args.games, models[0][1]))
        loaded = [load_model(path, probe) for _, path in models]
    except ValueError as exc:
        print(f"engine_agreement: {exc}", file=sys.stderr)
        return 2
    scores = [probe.score(model.predict, model.input_version) for model in loaded]
    print(f"{len(probe)} positions from {len(set(probe.games))} games in {probe.path}")
    print(table([name for name, _ in models], scores, probe))
    searched = []
    if args.search_playouts:
        sample = np.unique(np.linspace(0, len(probe) - 1, min(args.search_positions, len(probe))).astype(int))
        cache: dict = {}
        searched = [search_agreement(probe, path, args.search_playouts, sample, cache) for _, path in models]
        print()
        print(search_table([name for name, _ in models], searched, np.asarray(probe.games)[sample],
                           args.search_playouts))
    if args.json:
        rows = [{"model": name, "path": path, "positions": len(probe), **s.summary()}
                for (name, path), s in zip(models, scores)]
        for row, hits in zip(rows, searched):
            row.update(search_agree=float(hits.mean()), search_playouts=args.search_playouts,
                       search_positions=len(hits))
        with open(args.json, "w") as out:
            json.dump({"games": args.games, "scores": rows}, out, indent=1)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
