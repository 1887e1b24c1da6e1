"""Nets of different sizes trained side by side on one run's games, scored on games they never saw.

    python scripts/net_compare.py runs/long-15x15 --nets 6x48,8x64,8x64p2 --steps 300 --every 50

It reads the run's checkpoint (a run directory or its ``checkpoint.pkl``; only read), takes the
replay buffer of one board size and holds out its newest iterations' games: the trainer adds each
iteration's finished games as one block of rows, grouped by symmetry, so the blocks can be found
from the rows alone and no game has positions on both sides. Each net of ``--nets`` starts from
the run's net (or ``--base``), grown to its trunk (``gomoku.net.grow``: it plays as the base does
until training moves it); ``BxF`` is B blocks of F channels and ``pN`` adds N global pooling
blocks. Every net takes the same Adam steps on the same mini-batches from the training games, and
prints its held-out policy cross-entropy and value MSE before the first step and every ``--every``
steps. Last, each net's inference time per position (the exported predictor on one thread, as
self-play and the engine use it) at batch 128 and batch 1, so that nets can be compared at equal
time a move as well as at equal steps. On a machine shared with other work, ``OMP_NUM_THREADS=1``
keeps the training steps on one core.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

import numpy as np

NET = re.compile(r"(\d+)x(\d+)(?:p(\d+))?")


def parse_nets(text: str) -> list[tuple[int, int, int]]:
    """``"6x48,8x64p2"`` -> ``[(6, 48, 0), (8, 64, 2)]``.

    Raises:
        ValueError: a name that is not BLOCKSxCHANNELS with an optional pN.
    """
    nets = []
    for name in text.split(","):
        match = NET.fullmatch(name.strip().lower())
        if not match:
            raise ValueError(f"{name!r} is not a net: write BLOCKSxCHANNELS, with pN for N global pooling blocks")
        nets.append((int(match[1]), int(match[2]), int(match[3] or 0)))
    return nets


def net_name(blocks: int, filters: int, pool: int) -> str:
    return f"{blocks}x{filters}" + (f"p{pool}" if pool else "")


def last_iteration_rows(planes: np.ndarray) -> int:
    """How many rows at the end of ``planes`` (oldest first) the newest iteration added: a block of
    ``8 n`` rows whose ``k``-th ``n`` rows are the first ``n`` under the board's ``k``-th symmetry
    (``gomoku.game.symmetry.augment``). 0 when no such block ends the rows."""
    from gomoku.game.symmetry import symmetries

    syms = symmetries(planes.shape[-1], planes.shape[-2])
    total, count = len(planes), len(syms)
    for n in range(1, total // count + 1):
        start = total - count * n
        if not np.array_equal(syms[1].apply(planes[start:start + 1]), planes[start + n:start + n + 1]):
            continue  # the cheap test on one row first
        first = planes[start:start + n]
        if all(np.array_equal(sym.apply(first), planes[start + k * n:start + (k + 1) * n])
               for k, sym in enumerate(syms)):
            return count * n
    return 0


def held_out_start(planes: np.ndarray, share: float) -> int:
    """The first row of the newest whole iterations that hold at least ``share`` of the rows.

    Raises:
        ValueError: the rows do not end in iteration blocks, or one iteration is all there is.
    """
    end = len(planes)
    while end > len(planes) * (1.0 - share):
        rows = last_iteration_rows(planes[:end])
        if rows == 0:
            raise ValueError(f"cannot tell where the games of an iteration begin in the newest {len(planes) - end} "
                             f"of {len(planes)} rows: is this a checkpoint of train.py?")
        end -= rows
    if end <= 0:
        raise ValueError("the buffer holds a single iteration's games: nothing is left to train on")
    return end


def read_buffer(path: str, size: str = ""):
    """The run's config, net weights and the buffer (planes, pis, zs) of board ``size`` (default:
    the largest it holds).

    Raises:
        CheckpointError: no readable checkpoint. ValueError: no buffer of that size.
    """
    from gomoku.train.checkpoint import CHECKPOINT, read_checkpoint
    from gomoku.train.config import TrainConfig

    state = read_checkpoint(os.path.join(path, CHECKPOINT) if os.path.isdir(path) else path)
    buffers = state["buffer"].get("by_size") or {"": state["buffer"]}
    if size:
        if size not in buffers:
            raise ValueError(f"no buffer of size {size}: the checkpoint holds {', '.join(buffers)}")
        buffer = buffers[size]
    else:
        buffer = max(buffers.values(), key=lambda b: b["planes"].shape[-1] * b["planes"].shape[-2])
    return TrainConfig.from_dict(state["config"]), state["weights"], buffer


def base_model(config, weights, base: str):
    """The net the compared nets grow from: the model file ``base``, or the run's own net."""
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    if base:
        return PolicyValueModel.load(base, device="cpu", fast_inference=False)
    model = PolicyValueModel(NetSpec.for_config(config), device="cpu", fast_inference=False)
    model.set_weights(weights)
    return model


def net_from(base, blocks: int, filters: int, pool: int):
    """``base`` grown to that trunk, or a copy of it where the trunk is its own."""
    from gomoku.net.grow import grown_model
    from gomoku.net.policy_value import PolicyValueModel

    trunk = dict(res_blocks=blocks, res_filters=filters, global_pool=pool)
    spec = base.spec
    if (spec.res_blocks, spec.res_filters, spec.global_pool) == (blocks, filters, pool):
        model = PolicyValueModel(spec, device="cpu", fast_inference=False)
        model.set_weights(base.weights())
        return model
    return grown_model(base, trunk, device="cpu", fast_inference=False)


def held_out_loss(model, planes, pis, zs, chunk: int = 256) -> tuple[float, float]:
    """The policy cross-entropy ``-pi . log p`` and value MSE ``(z - v)^2`` over the rows, net in eval mode."""
    ce, se = 0.0, 0.0
    for i in range(0, len(planes), chunk):
        log_p, v = model.predict_dygraph(planes[i:i + chunk].astype(np.float32))
        ce += float(-(pis[i:i + chunk] * log_p).sum())
        se += float(((zs[i:i + chunk] - v) ** 2).sum())
    return ce / len(planes), se / len(planes)


def inference_ms(model, planes: np.ndarray, batch: int, seconds: float) -> float:
    """Milliseconds a position through the exported predictor (one thread) at ``batch`` positions a
    call: the best of three rounds of ``seconds / 3``, so that a burst of load on a shared machine
    weighs less."""
    import tempfile

    from gomoku.net.inference import InferencePredictor

    with tempfile.TemporaryDirectory(prefix="net-compare-") as tmp:
        model.export_inference(tmp)
        predictor = InferencePredictor(tmp, "cpu", threads=1)
    x = np.ascontiguousarray(np.resize(planes, (batch, *planes.shape[1:])), dtype=np.float32)
    predictor.run(x)  # the first call sets up oneDNN's kernels
    best = float("inf")
    for _ in range(3):
        calls, start = 0, time.perf_counter()
        while calls < 2 or time.perf_counter() - start < seconds / 3:
            predictor.run(x)
            calls += 1
        best = min(best, (time.perf_counter() - start) * 1000.0 / (calls * batch))
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run directory or its checkpoint.pkl (only read)")
    parser.add_argument("--nets", default="6x48,8x64,8x64p2",
                        help="the nets, BLOCKSxCHANNELS[pPOOLING] (default: 6x48,8x64,8x64p2)")
    parser.add_argument("--base", default="", help="a size-free model file to grow the nets from (default: the run's net)")
    parser.add_argument("--size", default="", help="the board size's buffer, e.g. 15x15 (default: the largest)")
    parser.add_argument("--held-out", type=float, default=0.15, help="share of the rows held out (default: 0.15)")
    parser.add_argument("--steps", type=int, default=300, help="Adam steps for each net (default: 300)")
    parser.add_argument("--every", type=int, default=50, help="steps between two scores (default: 50)")
    parser.add_argument("--batch-size", type=int, default=256, help="rows a step (default: 256)")
    parser.add_argument("--lr", type=float, default=5e-4, help="Adam's step size (default: 5e-4)")
    parser.add_argument("--eval-rows", type=int, default=4096, help="held-out rows scored (default: 4096)")
    parser.add_argument("--time-s", type=float, default=3.0, help="seconds of each inference timing (default: 3)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.steps, args.every, args.batch_size, args.eval_rows) < 1 or not 0 < args.held_out < 1 \
            or args.lr <= 0:
        parser.error("--steps, --every, --batch-size and --eval-rows must be at least 1, --held-out in (0, 1), "
                     "--lr positive")
    from gomoku.train.checkpoint import CheckpointError

    try:
        nets = parse_nets(args.nets)
        config, weights, buffer = read_buffer(args.run, args.size)
        planes, pis, zs = buffer["planes"], buffer["pis"], buffer["zs"]
        split = held_out_start(planes, args.held_out)
        base = base_model(config, weights, args.base)
        if not base.spec.size_free or base.spec.channels != planes.shape[1]:
            raise ValueError(f"the base net ({base.spec.arch}, {base.spec.channels} input planes) must be size-free "
                             f"and take the buffer's {planes.shape[1]} planes")
        models = {net_name(*net): net_from(base, *net) for net in nets}
    except (CheckpointError, ValueError) as exc:
        print(f"net_compare: {exc}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    held = np.arange(split, len(planes))
    held = np.sort(rng.choice(held, size=min(args.eval_rows, len(held)), replace=False))
    held_data = (planes[held], pis[held], zs[held])
    batches = [rng.choice(split, size=min(args.batch_size, split), replace=False) for _ in range(args.steps)]
    print(f"{args.run}: {len(planes)} rows of {planes.shape[-1]}x{planes.shape[-2]}, {split} to train on, "
          f"{len(planes) - split} held out (newest iterations; {len(held)} scored); {args.steps} steps of "
          f"{args.batch_size} rows, lr {args.lr}; base net {net_name(base.spec.res_blocks, base.spec.res_filters, base.spec.global_pool)}")
    print("| net | weights | step | policy CE | value MSE | train s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, model in models.items():
        count = sum(v.size for k, v in model.weights().items() if not k.endswith(("_mean", "_variance")))
        spent = 0.0
        for step in range(args.steps + 1):
            if step % args.every == 0 or step == args.steps:
                ce, mse = held_out_loss(model, *held_data)
                print(f"| {name} | {count} | {step} | {ce:.4f} | {mse:.4f} | {spent:.0f} |", flush=True)
            if step < args.steps:
                rows = batches[step]
                start = time.perf_counter()
                model.train_step(planes[rows].astype(np.float32), pis[rows], zs[rows], args.lr)
                spent += time.perf_counter() - start
    print("\n| net | ms a position, batch 128 | ms a position, batch 1 | positions a second, batch 1 |")
    print("|---|---:|---:|---:|")
    sample = held_data[0][:128].astype(np.float32)
    for name, model in models.items():
        wide, single = (inference_ms(model, sample, b, args.time_s) for b in (128, 1))
        print(f"| {name} | {wide:.3f} | {single:.3f} | {1000.0 / single:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
