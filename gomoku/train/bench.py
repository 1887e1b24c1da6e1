"""Benchmark: how fast the net, self-play, pure MCTS and a training step run on this machine.

``gomoku-bench`` (or ``python -m gomoku.train.bench``; 8x8, five in a row, 400 playouts
by default) measures, with the process layout training uses (one process per worker, one
predictor thread each):

* ``nn_positions_per_s``: the inference predictor alone at the self-play batch
  size, summed over the workers: the ceiling for self-play;
* ``selfplay_playouts_per_s`` and ``selfplay_games_per_hour``: lockstep self-play
  with a freshly initialised net (the code path of ``train.py``); it runs until the
  first batch of games that started together has finished, and games per hour use
  their mean length (not the first games to finish: those are the short ones);
* ``pure_playouts_per_s``: pure MCTS as in evaluation (games in lockstep per worker);
* ``train_step_s``: one Adam step on a batch of 512 in the trainer's process;
* ``update_s``: one update at its longest, as the trainer runs it: 5 Adam steps on
  a batch of 512, each followed by the forward pass that measures its KL;
* ``nn_positions_per_s_<net>_<W>x<H>``: the predictor alone, as for
  ``nn_positions_per_s``, for the size-free net (one predictor exported once with
  the board size left open) and for the conv3 net made for that board, on
  each of ``--sizefree-sizes`` (9x9 and 15x15 by default);
* peak memory (resident set) of the benchmark process and of its largest worker;
* what playing in actors costs (``--actors local`` or ``ray``): ``publish_s``, new
  weights until every actor has loaded them; ``task_roundtrip_ms``, one empty task
  per actor and back; ``weights_bytes``, the exported net a publish sends;
  ``game_bytes_per_move``, a finished self-play game with its training positions
  as the actors send it back, per move.

The net and self-play figures are measured once per inference precision
(``--precisions``, by default fp32 and, on a CPU with native bf16, bf16 too), side
by side in one run: the first precision's figures have plain names, the others'
end in ``_bf16`` and so on. ``--model PATH`` measures a trained net instead of a
fresh one (its games are as long as the model plays them, so games per hour are
the run's).

``--json PATH`` writes the same figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import resource
import sys
import tempfile
import time
import warnings
from typing import Optional

import numpy as np

from gomoku.game.features import INPUT_VERSIONS, input_channels
from gomoku.game.rules import RULES, check_rule
from gomoku.net.flags import add_device_flags
from gomoku.progress import timed_phase
from gomoku.search.playout_cap import N_FAST, check_playout_cap
from gomoku.search.recipe import ROOT_SEARCHES
from gomoku.search.tree_threats import DEFENCE_VCT_NODES, ROOT_VCT_NODES, VCT_DEPTH, VctBudgets
from gomoku.util import DefaultsHelpFormatter, switch_arg, usable_cpus


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _nn_worker(args, evaluator) -> tuple[float, float]:
    shape, batch, seconds = args
    predictor = evaluator.model  # the worker's InferencePredictor, without the evaluator's cache
    width, height = shape[:2]
    channels = input_channels(evaluator.input_version)
    planes = (np.random.default_rng(0).random((batch, channels, height, width)) > 0.7).astype(np.float32)
    for _ in range(3):
        predictor.run(planes)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        predictor.run(planes)
        count += batch
    return count / (time.perf_counter() - start), _peak_rss_mb()


def _selfplay_worker(args, evaluator) -> dict:
    shape, parallel, n_playout, seconds, seed, recipe, compiled = args
    from gomoku.search.lockstep import RunStats
    from gomoku.search.recipe import SelfPlayRecipe
    from gomoku.actors import SelfPlayStream

    evaluator.clear_cache()  # the trees measured before played the same games: no head start from their positions
    root_search, threats, opening_stones, moves_per_game, rule, p_full, n_fast, vct = recipe
    recipe = SelfPlayRecipe(n_playout=n_playout, root_search=root_search, win_check=threats, threats=threats,
                            p_full=p_full, n_fast=n_fast, vct_depth=vct.depth, vct_nodes=vct.nodes,
                            defence_vct_nodes=vct.defence_nodes)
    stream = SelfPlayStream(evaluator, shape, parallel, recipe, seed, opening_stones=opening_stones, rule=rule,
                            compiled=compiled)
    lengths = {}  # of the first `parallel` games, which start together
    sized = None  # a finished game as the trainer receives it, to size the traffic

    def step(stats):
        nonlocal sized
        stream.lockstep.fill(parallel)
        for game in stream.lockstep.step(stats):
            sized = sized or game
            if game.index < parallel:
                lengths[game.index] = len(game.moves)

    # Untimed until a move was played: the compiled core compiles its kernels (a minute on a cold
    # cache) at its first step and its root searches at the first move, which is no steady state.
    warm_up = RunStats()
    while not warm_up.moves:
        step(warm_up)
    positions_before = evaluator.positions
    stats = RunStats()
    start = time.perf_counter()
    # At least `seconds`, and until the first games have all finished, for the game length (unless
    # the caller gives the length: long games would take far longer than `seconds`).
    # (and until a playout was backed up: the compiled core backs up a step's leaves at the next step)
    while (time.perf_counter() - start < seconds or not stats.playouts
           or (not moves_per_game and len(lengths) < parallel)):
        step(stats)
    elapsed = time.perf_counter() - start
    return {"playouts": stats.playouts, "seconds": elapsed, "lengths": list(lengths.values()),
            "nn_positions": evaluator.positions - positions_before, "rss_mb": _peak_rss_mb(),
            "game_bytes": len(pickle.dumps(sized, protocol=pickle.HIGHEST_PROTOCOL)) if sized else 0,
            "game_moves": len(sized.moves) if sized else 0}


def _no_op(arg, evaluator=None) -> None:
    return None


def _pure_worker(args, evaluator=None) -> dict:
    shape, parallel, n_playout, seconds, seed = args
    from gomoku.game.board import Board
    from gomoku.search.mcts_player import MCTSPlayer
    from gomoku.search.rollout import RolloutEvaluator
    from gomoku.search.lockstep import Lockstep, RunStats

    width, height, n_in_row = shape
    rollouts = RolloutEvaluator(seed)

    def new_game(i):
        players = {c: MCTSPlayer(rollouts, n_playout=n_playout, seed=seed + 2 * i + c) for c in (1, 2)}
        return Board(width, height, n_in_row), players

    lockstep = Lockstep(new_game)
    stats = RunStats()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        lockstep.fill(parallel)
        lockstep.step(stats)
    return {"playouts": stats.playouts, "seconds": time.perf_counter() - start, "rss_mb": _peak_rss_mb()}


def run_benchmark(width: int = 8, height: int = 8, n_in_row: int = 5, n_playout: int = 400,
                  workers: int = 0, parallel: int = 32, pure_parallel: int = 5,
                  pure_playouts: int = 1000, seconds: float = 20.0, device: str = "cpu",
                  sizefree_sizes: tuple = (9, 15), sizefree_blocks: int = 4, sizefree_filters: int = 32,
                  actors: str = "local", log=print, precisions: tuple = ("fp32",),
                  model_path: Optional[str] = None, root_search: str = "puct", threats: bool = False,
                  opening_stones: int = 0, moves_per_game: float = 0.0,
                  trees: tuple = ("compiled",), sweep: tuple = (), inputs: int = 1, training: bool = True,
                  rule: str = "freestyle", p_full: float = 1.0, n_fast: int = N_FAST,
                  vct: VctBudgets = VctBudgets()) -> dict:
    """Measures everything; returns the figures as a dict (see the module docstring).

    ``sizefree_sizes``: the square boards on which the size-free net
    (``sizefree_blocks`` x ``sizefree_filters``) and the conv3 net are compared.
    ``precisions``: the inference precisions to measure the net and self-play in, side
    by side; the first one's figures have plain names, the others' end in ``_<precision>``.
    ``model_path``: a model file whose net the net-alone and self-play figures use
    (a size-free one also stands in for the size-free net), instead of a fresh one.
    ``root_search``, ``threats``, ``opening_stones``, ``rule``, ``p_full``, ``n_fast``: the self-play
    recipe and the games' rule, as ``train.py``'s flags; under playout cap randomisation
    (``p_full < 1``) games per hour count a move's expected playouts, ``p_full * n_playout + (1 -
    p_full) * n_fast``. ``vct``: the root VCT of the full searches, as ``--vct-depth``, ``--vct-nodes``
    and ``--defence-vct-nodes``.
    ``inputs``: the fresh net's input version (a model file says its own).
    ``training``: also measure a training step and an update.
    ``moves_per_game``: the games' mean length, if known (say, from a run's log); self-play then
    runs ``seconds`` only and games per hour use this length.
    ``trees``: self-play's search trees to measure side by side: ``compiled`` (the compiled core,
    where the recipe allows it; plain names) and ``reference`` (the Python trees; names with
    ``_reference``).
    ``sweep``: games in lockstep per process to measure besides ``parallel`` (the compiled
    trees, the first precision): the net alone at that batch and self-play with that many
    games, for choosing ``--parallel-games`` on a machine (on a GPU, a large batch).
    """
    warnings.filterwarnings("ignore")
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec
    from gomoku.actors import ProcessActors

    workers = workers or usable_cpus()
    shape = (width, height, n_in_row)

    def recipe(moves: float) -> tuple:  # what _selfplay_worker reads after the board and budget
        return root_search, threats, opening_stones, moves, rule, p_full, n_fast, vct

    check_playout_cap(n_playout, p_full, n_fast)
    playouts_per_move = p_full * n_playout + (1 - p_full) * n_fast

    results = {
        "board": f"{width}x{height}, {n_in_row} in a row", "n_playout": n_playout,
        "workers": workers, "parallel_games_per_worker": parallel, "device": device, "actors": actors,
        "precision": precisions[0], "net": model_path or f"a fresh conv3 net, input version {inputs}",
        "selfplay_recipe": f"{root_search}, threats {'on' if threats else 'off'}, opening stones {opening_stones}, "
                           f"{rule}" + (f", playout cap {p_full:g} of moves full, the rest {n_fast}" if p_full < 1 else "")
                           + (f", root VCT {vct.depth} threes, {vct.nodes}/{vct.defence_nodes} nodes"
                              if threats and vct != VctBudgets() else ""),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                   f"Python {platform.python_version()}",
    }
    if model_path is not None:
        model = PolicyValueModel.load(model_path, device=device, threads=usable_cpus(),
                                      expect=NetSpec(width, height, n_in_row))
    else:
        model = PolicyValueModel(NetSpec(width, height, n_in_row, inputs=inputs), device=device, threads=usable_cpus())
    with tempfile.TemporaryDirectory(prefix="gomoku-bench-") as directory:
        model.export_inference(directory)  # what a publish sends to each machine
        results["weights_bytes"] = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))
    if sizefree_sizes:
        if model.spec.size_free:
            sizefree = model
            results["sizefree_net"] = f"{model_path}: {model.spec.res_blocks} blocks x {model.spec.res_filters} filters"
        else:
            sizefree = PolicyValueModel(NetSpec(width, height, n_in_row, "sizefree", sizefree_blocks,
                                                sizefree_filters), device=device)
            results["sizefree_net"] = f"{sizefree_blocks} blocks x {sizefree_filters} filters"
    worker_rss = 0.0
    for first, precision in zip([True] + [False] * len(precisions), precisions):
        name = "" if first else f"_{precision}"
        if actors == "ray":
            from gomoku.actors import RayActors

            pool = RayActors(workers, device=device, precision=precision)
        else:
            pool = ProcessActors(workers, device=device, precision=precision)
        with pool as actors_:
            actors_.publish(model)
            actors_.map(_no_op, [None] * workers)  # the actors have started and loaded the weights
            if first:
                model.weights_changed()  # as after an update: the next publish sends them again
                start = time.perf_counter()
                actors_.publish(model)
                actors_.map(_no_op, [None] * workers)
                results["publish_s"] = round(time.perf_counter() - start, 3)
                calls = []
                for _ in range(20):
                    start = time.perf_counter()
                    actors_.map(_no_op, [None] * workers)
                    calls.append(time.perf_counter() - start)
                results["task_roundtrip_ms"] = round(1000 * float(np.median(calls)), 2)
            log(f"net alone ({precision}): batch {parallel}, {workers} process(es), {seconds:.0f} s ...")
            with timed_phase(f"net alone ({precision})", seconds):
                nn = actors_.map(_nn_worker, [(shape, parallel, seconds)] * workers)
            results["nn_positions_per_s" + name] = round(sum(r for r, _ in nn))

            for tree in trees:
                compiled = tree == "compiled"
                tree_name = ("" if compiled else "_reference") + name
                log(f"self-play ({precision}, {tree} trees): {parallel} games in lockstep per process, "
                    f"{seconds:.0f} s or more (until the first {parallel} games have finished) ...")
                with timed_phase(f"self-play ({precision}, {tree} trees)", seconds):
                    sp = actors_.map(_selfplay_worker, [(shape, parallel, n_playout, seconds, 1000 * i,
                                                         recipe(moves_per_game), compiled)
                                                        for i in range(workers)])
                playouts_per_s = sum(r["playouts"] / r["seconds"] for r in sp)
                lengths = [moves_per_game] if moves_per_game else [n for r in sp for n in r["lengths"]]
                results["selfplay_playouts_per_s" + tree_name] = round(playouts_per_s)
                results["selfplay_share_of_nn" + tree_name] = round(
                    playouts_per_s / results["nn_positions_per_s" + name], 3)
                if lengths:
                    results["selfplay_games_per_hour" + tree_name] = round(
                        playouts_per_s * 3600 / (np.mean(lengths) * playouts_per_move))
            if first:
                results["selfplay_nn_evals_per_playout"] = round(
                    sum(r["nn_positions"] for r in sp) / max(1, sum(r["playouts"] for r in sp)), 3)
                if any(r["game_moves"] for r in sp):
                    results["game_bytes_per_move"] = round(sum(r["game_bytes"] for r in sp)
                                                           / sum(r["game_moves"] for r in sp))
                if lengths:
                    results["selfplay_moves_per_game"] = round(float(np.mean(lengths)), 1)

                log(f"pure MCTS: {pure_parallel} games of {pure_playouts} playouts in lockstep per process, "
                    f"{seconds:.0f} s ...")
                with timed_phase("pure MCTS", seconds):
                    pure = actors_.map(_pure_worker, [(shape, pure_parallel, pure_playouts, seconds, 77 + i)
                                                      for i in range(workers)])
                results["pure_playouts_per_s"] = round(sum(r["playouts"] / r["seconds"] for r in pure))
                worker_rss = max([worker_rss] + [r["rss_mb"] for r in pure])
            worker_rss = max([worker_rss] + [r for _, r in nn] + [r["rss_mb"] for r in sp])

            for games in sweep if first else ():
                log(f"sweep ({precision}): the net at batch {games}, then self-play with {games} games in lockstep "
                    f"per process, {seconds:.0f} s each ...")
                nn = actors_.map(_nn_worker, [(shape, games, seconds)] * workers)
                results[f"sweep_{games}_nn_positions_per_s"] = round(sum(r for r, _ in nn))
                sp = actors_.map(_selfplay_worker, [(shape, games, n_playout, seconds, 1000 * i,
                                                     recipe(moves_per_game or 1.0), True) for i in range(workers)])
                rate = sum(r["playouts"] / r["seconds"] for r in sp)
                results[f"sweep_{games}_selfplay_playouts_per_s"] = round(rate)
                results[f"sweep_{games}_selfplay_share_of_nn"] = round(
                    rate / results[f"sweep_{games}_nn_positions_per_s"], 3)

            for n in sizefree_sizes:
                board = (n, n, n_in_row)
                for net_name, net in (("sizefree", sizefree),
                                      ("conv3", PolicyValueModel(NetSpec(*board), device=device))):
                    log(f"net alone ({precision}): {net_name} net on {n}x{n}, batch {parallel}, "
                        f"{workers} process(es), {seconds:.0f} s ...")
                    actors_.publish(net)
                    measured = actors_.map(_nn_worker, [(board, parallel, seconds)] * workers)
                    results[f"nn_positions_per_s_{net_name}_{n}x{n}{name}"] = round(sum(r for r, _ in measured))

    if training:
        _measure_training(model, width, height, results, log)
    results["peak_rss_mb"] = round(_peak_rss_mb())
    results["peak_rss_mb_worker"] = round(worker_rss)
    return results


def _measure_training(model, width: int, height: int, results: dict, log) -> None:
    log("training step: Adam on a batch of 512 ...")
    rng = np.random.default_rng(0)
    planes = (rng.random((512, model.spec.channels, height, width)) > 0.7).astype(np.float32)
    pis = rng.dirichlet(np.ones(width * height), 512).astype(np.float32)
    zs = rng.choice([-1.0, 1.0], 512).astype(np.float32)
    model.train_step(planes, pis, zs, 2e-3)  # warm-up
    times = []
    for _ in range(5):
        start = time.perf_counter()
        model.train_step(planes, pis, zs, 2e-3)
        times.append(time.perf_counter() - start)
    results["train_step_s"] = round(float(np.median(times)), 3)
    start = time.perf_counter()
    fit = model.fit_batch(planes, pis, zs)
    for _ in range(5):
        fit.step(2e-3)
    results["update_s"] = round(time.perf_counter() - start, 3)


def format_table(results: dict) -> str:
    others = [k[len("nn_positions_per_s_"):] for k in results
              if k.startswith("nn_positions_per_s_") and k.count("_") == 4]  # the further precisions
    per_precision = [f"{k}{suffix}" for suffix in [""] + [f"_{p}" for p in others]
                     for k in ("nn_positions_per_s", "selfplay_playouts_per_s", "selfplay_share_of_nn",
                               "selfplay_games_per_hour", "selfplay_playouts_per_s_reference",
                               "selfplay_share_of_nn_reference", "selfplay_games_per_hour_reference")]
    rows = [(k, results[k]) for k in (
        "board", "n_playout", "selfplay_recipe", "workers", "parallel_games_per_worker", "net", "precision", *per_precision,
        "selfplay_nn_evals_per_playout", "selfplay_moves_per_game", "pure_playouts_per_s",
        "train_step_s", "update_s", "peak_rss_mb", "peak_rss_mb_worker", "actors", "publish_s",
        "task_roundtrip_ms", "weights_bytes", "game_bytes_per_move", "machine") if k in results]
    rows[-1:-1] = [(k, v) for k, v in results.items()
                   if (k.startswith("nn_positions_per_s_") and k.count("_") > 4) or k == "sizefree_net"
                   or k.startswith("sweep_")]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="gomoku-bench",
                                     description="Benchmark the net, self-play, pure MCTS and training.",
                                     formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--width", type=int, default=8, help="board columns")
    parser.add_argument("--height", type=int, default=8, help="board rows")
    parser.add_argument("--n-in-row", type=int, default=5, help="stones in a row that win")
    parser.add_argument("--playouts", type=int, default=400, help="self-play playouts per move")
    parser.add_argument("--workers", type=int, default=0, help="processes (default: one per core)")
    parser.add_argument("--parallel", type=int, default=32, help="self-play games in lockstep per process")
    parser.add_argument("--pure-playouts", type=int, default=1000, help="pure MCTS playouts per move")
    parser.add_argument("--seconds", type=float, default=20.0, help="time for each measurement")
    add_device_flags(parser, "the net", precision=False)
    parser.add_argument("--actors", choices=["local", "ray"], default="local",
                        help="worker processes on this machine, or Ray actors on a local Ray cluster")
    parser.add_argument("--sizefree-sizes", default="9,15",
                        help="square boards to compare the size-free net and the conv3 net on "
                             "(empty: skip)")
    parser.add_argument("--sizefree-blocks", type=int, default=4, help="the size-free net's residual blocks")
    parser.add_argument("--sizefree-filters", type=int, default=32, help="the size-free net's channels")
    parser.add_argument("--precisions", default="auto",
                        help="inference precisions to measure side by side, e.g. fp32,bf16 (the first "
                             "one's figures have plain names); auto: fp32, and bf16 too on a CPU that "
                             "does it natively")
    parser.add_argument("--model", help="measure the net and self-play with this model file's net "
                                        "(a size-free one also stands in for the size-free net)")
    parser.add_argument("--root-search", choices=ROOT_SEARCHES, default="puct",
                        help="the self-play search, as train.py's --root-search")
    parser.add_argument("--threats", type=switch_arg, default=False, metavar="on|off",
                        help="self-play with the threat solver, as train.py's --threats")
    parser.add_argument("--p-full", type=float, default=1.0,
                        help="self-play with playout cap randomisation, as train.py's --p-full")
    parser.add_argument("--n-fast", type=int, default=N_FAST, help="the fast searches' playouts, as train.py's --n-fast")
    for flag, default in (("--vct-depth", VCT_DEPTH), ("--vct-nodes", ROOT_VCT_NODES),
                          ("--defence-vct-nodes", DEFENCE_VCT_NODES)):
        parser.add_argument(flag, type=int, default=default, help=f"with --threats on: {flag[2:]} of the full "
                                                                  f"searches, as train.py's {flag}")
    parser.add_argument("--rule", choices=RULES, default="freestyle",
                        help="the self-play games' rule, as train.py's --rule (default: freestyle)")
    parser.add_argument("--inputs", type=int, choices=list(INPUT_VERSIONS), default=1,
                        help="the fresh net's input version, as train.py's --inputs (2: the threat planes)")
    parser.add_argument("--opening-stones", type=int, default=0,
                        help="self-play games start from up to this many random central stones")
    parser.add_argument("--moves-per-game", type=float, default=0.0,
                        help="the self-play games' mean length, if known: self-play then runs --seconds "
                             "only (not until its first games finish) and games per hour use it")
    parser.add_argument("--trees", choices=["compiled", "reference", "both"], default="both",
                        help="self-play's search trees: the compiled core, the Python reference, or both "
                             "side by side (the reference's figures end in _reference)")
    parser.add_argument("--sweep", default="",
                        help="also measure the net and self-play (compiled trees) with these many games in "
                             "lockstep per process, e.g. 128,512,1024: on a GPU, the batch that feeds it best "
                             "(give train.py that many with --parallel-games)")
    parser.add_argument("--training", type=switch_arg, default=True, metavar="on|off",
                        help="also measure a training step and an update (off: a shorter run)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    try:
        check_playout_cap(args.playouts, args.p_full, args.n_fast)
    except ValueError as exc:
        parser.error(f"--playouts, --p-full, --n-fast: {exc}")
    try:
        vct = VctBudgets(args.vct_depth, args.vct_nodes, args.defence_vct_nodes)
    except ValueError as exc:
        parser.error(str(exc))
    if args.moves_per_game < 0:
        parser.error("--moves-per-game must not be negative")
    if args.opening_stones < 0:
        parser.error("--opening-stones must not be negative")
    try:
        sizefree_sizes = tuple(int(n) for n in args.sizefree_sizes.split(",") if n.strip())
    except ValueError:
        parser.error(f"--sizefree-sizes wants square board sizes like 9,15, got {args.sizefree_sizes!r}")
    if any(n < args.n_in_row for n in sizefree_sizes):
        parser.error("every --sizefree-sizes board must hold n_in_row")
    if min(args.width, args.height) < args.n_in_row or args.playouts < 1 or args.parallel < 1:
        parser.error("the board must hold n_in_row, and playouts and parallel must be positive")
    try:
        check_rule(args.rule, args.n_in_row)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        sweep = tuple(int(n) for n in args.sweep.split(",") if n.strip())
    except ValueError:
        parser.error(f"--sweep wants game counts like 128,512, got {args.sweep!r}")
    if any(n < 1 for n in sweep):
        parser.error("every --sweep count must be positive")
    from gomoku.net.device import cpu_has_bf16, resolve_device, resolve_precision

    device = resolve_device(args.device)
    if args.precisions == "auto":
        precisions = ("fp32", "bf16") if device == "cpu" and cpu_has_bf16() else ("fp32",)
    else:
        precisions = tuple(p.strip() for p in args.precisions.split(",") if p.strip())
        try:
            for precision in precisions:
                resolve_precision(precision, device)
        except ValueError as exc:
            parser.error(str(exc))
        if not precisions or len(set(precisions)) < len(precisions):
            parser.error(f"--precisions wants distinct precisions like fp32,bf16, got {args.precisions!r}")
    results = run_benchmark(args.width, args.height, args.n_in_row, args.playouts, args.workers,
                            args.parallel, pure_playouts=args.pure_playouts, seconds=args.seconds,
                            device=device, actors=args.actors, sizefree_sizes=sizefree_sizes,
                            sizefree_blocks=args.sizefree_blocks, sizefree_filters=args.sizefree_filters,
                            log=lambda s: print(s, file=sys.stderr, flush=True), precisions=precisions,
                            model_path=args.model, root_search=args.root_search, threats=args.threats,
                            opening_stones=args.opening_stones, moves_per_game=args.moves_per_game,
                            trees=("reference", "compiled") if args.trees == "both" else (args.trees,),
                            sweep=sweep, inputs=args.inputs, training=args.training, rule=args.rule,
                            p_full=args.p_full, n_fast=args.n_fast, vct=vct)
    print(format_table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
