"""How many games in lockstep keep a GPU busy: the compiled search beside a GPU net, measured.

Self-play in one process alternates a search step on the CPU (every game to its next leaf)
and one net call on the GPU for all the new leaves. The larger the batch, the cheaper each
position is on the GPU, while the search's cost per position stays the same: this script
measures both sides and self-play itself, at several lockstep sizes, so that the choice of
``--parallel-games`` on a GPU box rests on figures.

It runs where Paddle's CUDA build is not installed: the net is a PyTorch copy of the project's
size-free net (``gomoku.net.model.SizeFreeNet``: the same layers, shapes and arithmetic, random
weights), so the figures size the search, not Paddle. Per board and lockstep size it prints:

* ``net``: positions a second of the net alone at that batch (fp32 and bf16);
* ``search``: positions a second of self-play with a net that costs nothing (uniform priors,
  value 0): the compiled search's own ceiling;
* ``selfplay``: positions a second of self-play with the GPU net, and its share of ``net``.

Needs torch with CUDA (``pip install torch``); the project's search needs numba.

    python -m oneoffs.gpu_sizing --boards 8,15 --games 128,512,2048 --seconds 15
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from gomoku.game.features import input_channels
from gomoku.search.evaluator import NetEvaluator
from gomoku.search.lockstep import RunStats
from gomoku.search.recipe import SelfPlayRecipe
from gomoku.actors import SelfPlayStream

NETS = {8: (4, 32), 15: (6, 48)}  # board -> (blocks, filters): the 8x8 default and the 15x15 model's net


def torch_net(blocks: int, filters: int, channels: int, device: str, dtype):
    """A PyTorch copy of ``SizeFreeNet`` (random weights, inference mode)."""
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(filters, filters, 3, padding=1, bias=False), nn.BatchNorm2d(filters)
            self.c2, self.b2 = nn.Conv2d(filters, filters, 3, padding=1, bias=False), nn.BatchNorm2d(filters)

        def forward(self, x):
            return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(channels, filters, 3, padding=1, bias=False), nn.BatchNorm2d(filters)
            self.blocks = nn.ModuleList(Block() for _ in range(blocks))
            self.policy = nn.Conv2d(filters, 1, 1)
            self.fc1, self.fc2 = nn.Linear(2 * filters, 64), nn.Linear(64, 1)

        def forward(self, planes):
            x = F.relu(self.bn1(self.conv1(planes)))
            for block in self.blocks:
                x = block(x)
            occupied = (planes[:, 0] + planes[:, 1]).flatten(1)
            log_p = F.log_softmax((self.policy(x).flatten(1) - 1e9 * occupied).float(), dim=-1)
            pooled = torch.cat([x.mean((2, 3)), x.amax((2, 3))], dim=1)
            return log_p, torch.tanh(self.fc2(F.relu(self.fc1(pooled)))).float()

    return Net().to(device=device, dtype=dtype).eval()


class TorchModel:
    """``predict(planes) -> (log_p, values)`` on the GPU, as ``NetEvaluator`` asks."""

    def __init__(self, net, device: str, dtype):
        import torch
        self.torch, self.net, self.device, self.dtype = torch, net, device, dtype

    def predict(self, planes: np.ndarray):
        torch = self.torch
        with torch.inference_mode():
            x = torch.from_numpy(planes).to(self.device, non_blocking=True).to(self.dtype)
            log_p, v = self.net(x)
            return log_p.cpu().numpy(), v.reshape(-1).cpu().numpy()


class FreeModel:
    """A net that costs nothing: uniform priors over the board, value 0."""

    def predict(self, planes: np.ndarray):
        n, _, h, w = planes.shape
        return np.full((n, h * w), -np.log(h * w), np.float32), np.zeros(n, np.float32)


def net_rate(model, batch: int, channels: int, size: int, seconds: float) -> float:
    planes = (np.random.default_rng(0).random((batch, channels, size, size)) > 0.7).astype(np.float32)
    for _ in range(3):
        model.predict(planes)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        model.predict(planes)
        count += batch
    return count / (time.perf_counter() - start)


def selfplay_rate(model, size: int, games: int, playouts: int, seconds: float) -> float:
    evaluator = NetEvaluator(model, cache_size=0)
    recipe = SelfPlayRecipe(n_playout=playouts)
    stream = SelfPlayStream(evaluator, (size, size, 5), games, recipe, seed=1, compiled=True)
    stats = RunStats()
    stream.lockstep.fill(games)
    for _ in range(5):  # the first steps compile and expand the roots
        stream.lockstep.step(stats)
    before, start = evaluator.positions, time.perf_counter()
    while time.perf_counter() - start < seconds:
        stream.lockstep.fill(games)
        stream.lockstep.step(stats)
    return (evaluator.positions - before) / (time.perf_counter() - start)


def _process(size, games, playouts, seconds, precision, barrier, results):
    """One of several self-play processes sharing the GPU (spawned): its positions a second."""
    import torch
    blocks, filters = NETS[size]
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[precision]
    model = TorchModel(torch_net(blocks, filters, input_channels(1), "cuda", dtype), "cuda", dtype)
    selfplay_rate(model, size, games, playouts, 1.0)  # compile, warm up
    barrier.wait()
    results.put(selfplay_rate(model, size, games, playouts, seconds))


def shared_gpu(size: int, games: int, processes: int, playouts: int, seconds: float, precision: str) -> float:
    """Positions a second of ``processes`` self-play processes on one GPU, ``games`` each."""
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_process, args=(size, games, playouts, seconds, precision, barrier, results),
                         daemon=True) for _ in range(processes)]
    for proc in procs:
        proc.start()
    total = sum(results.get(timeout=600) for _ in procs)
    for proc in procs:
        proc.join(30)
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boards", default="8,15", help="square boards (8 and 15 have nets)")
    parser.add_argument("--games", default="128,512,2048", help="games in lockstep to measure")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--playouts", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=15.0, help="time for each measurement")
    parser.add_argument("--json", default="", help="also write the figures here")
    parser.add_argument("--processes", default="",
                        help="also measure this many self-play processes sharing the GPU, e.g. 4,16 "
                             "(each with --games' last figure, first precision)")
    args = parser.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        parser.error("no CUDA device: this script sizes the lockstep batch for a GPU")
    from gomoku.search.core import core_enabled
    if not core_enabled():
        parser.error("the compiled search core is off (numba missing, or GOMOKU_CORE=off)")
    print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}", flush=True)
    rows = []
    for size in (int(s) for s in args.boards.split(",")):
        blocks, filters = NETS[size]
        channels = input_channels(1)
        for games in (int(g) for g in args.games.split(",")):
            row = {"board": size, "games": games, "net": f"{blocks}x{filters}"}
            row["search"] = selfplay_rate(FreeModel(), size, games, args.playouts, args.seconds)
            for precision in args.precisions.split(","):
                dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[precision]
                model = TorchModel(torch_net(blocks, filters, channels, "cuda", dtype), "cuda", dtype)
                row[f"net_{precision}"] = net_rate(model, games, channels, size, args.seconds / 3)
                row[f"selfplay_{precision}"] = selfplay_rate(model, size, games, args.playouts, args.seconds)
            rows.append(row)
            shares = "  ".join(f"{p}: net {row[f'net_{p}']:,.0f}  selfplay {row[f'selfplay_{p}']:,.0f} "
                               f"({row[f'selfplay_{p}'] / row[f'net_{p}']:.3f})" for p in args.precisions.split(","))
            print(f"{size}x{size} {games:5d} games: search alone {row['search']:,.0f} pos/s  {shares}", flush=True)
    precision, games = args.precisions.split(",")[0], int(args.games.split(",")[-1])
    for size in (int(s) for s in args.boards.split(",")):
        for n in (int(p) for p in args.processes.split(",") if p):
            rate = shared_gpu(size, games, n, args.playouts, args.seconds, precision)
            net = next(r[f"net_{precision}"] for r in rows if r["board"] == size and r["games"] == games)
            rows.append({"board": size, "games": games, "processes": n, f"selfplay_{precision}": rate})
            print(f"{size}x{size} {n:2d} processes x {games} games, {precision}: selfplay {rate:,.0f} pos/s "
                  f"({rate / net:.3f} of the net alone at batch {games})", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
