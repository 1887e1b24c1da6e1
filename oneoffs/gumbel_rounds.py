"""One game's Gumbel search, a round of leaves per net call against one leaf per call: CPU time and moves.

    python -m oneoffs.gumbel_rounds --model models/gomoku_15x15_5.npz --simulations 400 --positions 8

From each position (the project's balanced 15x15 openings, ``--extra N`` heuristic moves after
each for a middle game; as ``engine_playouts.py`` picks them), the same seeded Gumbel search runs
twice, the two ways taking turns: ``GumbelPlayer.get_action``, which evaluates a round of
leaves (one per root child still in the running) in one batch, and the lockstep runners' way,
one leaf per net call (``next_leaf`` / ``receive``). It prints the process's CPU milliseconds
per simulation each way, the net's share of them, the mean batch of the rounds, and whether the
two chose the same move (the net's last bits may differ with the batch, so targets may differ
in the last digits).
"""

from __future__ import annotations

import argparse
import sys
import time

from gomoku.game.board import Board
from oneoffs.engine_playouts import TimedNet, positions


def one_by_one(player, board: Board) -> int:
    while (leaf := player.next_leaf(board)) is not None:
        priors, values = player.evaluator.evaluate([board])
        player.receive(leaf, board, priors[0], float(values[0]))
    return player.choose(board).move


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="models/gomoku_15x15_5.npz")
    parser.add_argument("--size", type=int, default=15)
    parser.add_argument("--simulations", type=int, default=400)
    parser.add_argument("--positions", type=int, default=8)
    parser.add_argument("--extra", type=int, default=0, help="heuristic moves after each opening")
    parser.add_argument("--threats", action="store_true", help="the threat solver on (as in self-play)")
    args = parser.parse_args(argv)

    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.search.evaluator import NetEvaluator
    from gomoku.search.gumbel import GumbelPlayer

    net = TimedNet(PolicyValueModel.load(args.model, device="cpu", threads=1))
    totals = {"rounds": [0.0, 0.0, 0], "one by one": [0.0, 0.0, 0]}
    same, calls, evaluated, games = 0, 0, 0, positions(args.size, 0, args.positions, args.extra)
    for i, moves in enumerate(games):
        chosen = {}
        for way in ("rounds", "one by one"):
            board = Board(args.size, args.size, 5)
            for move in moves:
                board.play(move)
            evaluator = NetEvaluator(net)  # a cache of its own for each search: the two ways alike
            player = GumbelPlayer(evaluator, n_playout=args.simulations, seed=i, solve=args.threats,
                                  win_check=args.threats, threats=args.threats)
            net_before, start = net.seconds, time.process_time()
            chosen[way] = player.get_action(board) if way == "rounds" else one_by_one(player, board)
            total = totals[way]
            total[0] += time.process_time() - start
            total[1] += net.seconds - net_before
            total[2] += player.playouts_run
            if way == "rounds":
                calls, evaluated = calls + evaluator.calls, evaluated + evaluator.positions
        same += chosen["rounds"] == chosen["one by one"]
    print(f"{len(games)} positions, {args.simulations} simulations, threats {'on' if args.threats else 'off'}")
    for way, (cpu, in_net, sims) in totals.items():
        print(f"  {way:10s}: {1000 * cpu / sims:.2f} ms CPU a simulation, the net {in_net / cpu:.0%} of it")
    print(f"  rounds: {evaluated / max(1, calls):.1f} positions a net call on average; "
          f"the same move in {same} of {len(games)}; speed-up {totals['one by one'][0] / totals['rounds'][0]:.2f}x "
          f"(CPU a simulation)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
