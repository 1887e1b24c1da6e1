"""How a run's net moves on the probe with more updates on its replay buffer alone.

    python -m oneoffs.buffer_updates runs/long-15x15 --probe rapfi --updates 16 --every 2

It reads the run's checkpoint (the net, its Adam state, the learning-rate multiplier and the
replay buffer, as the trainer would resume them), then runs the trainer's own KL-adaptive updates
(``TrainPipeline.update``) on that buffer, with no new self-play, and scores the net on the probe
(``gomoku.train.probe``) before the first update and after every ``--every`` updates.
``--lr-multiplier`` and ``--kl-targ`` try another step size; ``--grow 8x64`` first grows the
net (``gomoku.net.grow``) and so asks whether a larger net learns more from the same games. A run whose
agreement with the engine keeps rising with updates on data it already has is using too few
updates for the games it plays; one whose agreement falls is fitting its buffer. The run's
directory is only read (its checkpoint is read once; nothing is written there), so it works
beside the run's own trainer.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run directory with a checkpoint")
    parser.add_argument("--probe", default="rapfi", help="the probe games file, or 'rapfi' (default)")
    parser.add_argument("--updates", type=int, default=16, help="updates in all (default: 16)")
    parser.add_argument("--every", type=int, default=2, help="updates between two scores (default: 2)")
    parser.add_argument("--lr-multiplier", type=float, metavar="X",
                        help="start the learning-rate multiplier at X instead of the run's")
    parser.add_argument("--kl-targ", type=float, metavar="KL",
                        help="the KL target the multiplier adapts to, instead of the run's")
    parser.add_argument("--grow", metavar="BLOCKSxCHANNELS",
                        help="first grow the run's size-free net to this trunk (gomoku.net.grow: it plays as "
                             "before until the updates change it), with a fresh Adam state")
    args = parser.parse_args(argv)
    if args.updates < 1 or args.every < 1:
        parser.error("--updates and --every must be at least 1")
    if (args.lr_multiplier is not None and args.lr_multiplier <= 0) or (args.kl_targ is not None and args.kl_targ <= 0):
        parser.error("--lr-multiplier and --kl-targ must be positive")

    from gomoku.net.grow import grown_model
    from gomoku.net.spec import trunk_of
    from gomoku.train.checkpoint import CheckpointError
    from gomoku.util import usable_cpus
    from gomoku.train.pipeline import TrainPipeline

    try:
        # a KL target of the command line's is one of resume's own overrides, as for train.py --resume
        overrides = {} if args.kl_targ is None else {"kl_targ": args.kl_targ}
        pipeline = TrainPipeline.resume(args.run, log=lambda line: None, probe_games=args.probe, workers=1,
                                        **overrides)
    except (CheckpointError, ValueError) as exc:
        print(f"buffer_updates: {exc}", file=sys.stderr)
        return 2
    if args.grow:
        try:
            blocks, channels = (int(n) for n in args.grow.lower().split("x"))
            config = pipeline.config
            trunk = trunk_of(replace(config, sizefree_blocks=blocks, sizefree_filters=channels), "sizefree")
            pipeline.model = grown_model(pipeline.model, trunk, device=config.device,
                                         weight_decay=config.weight_decay, threads=usable_cpus(),
                                         precision=config.precision)
        except ValueError as exc:
            print(f"buffer_updates: --grow {args.grow}: {exc}", file=sys.stderr)
            return 2
    if args.lr_multiplier is not None:
        pipeline.lr_multiplier = args.lr_multiplier
    probe, model = pipeline.probe, pipeline.model
    net = model.spec
    print(f"{args.run}: iteration {pipeline.iteration}, buffer {len(pipeline.buffer)} positions, "
          f"net {net.res_blocks}x{net.res_filters}, lr x{pipeline.lr_multiplier:.3f}, "
          f"KL target {pipeline.config.kl_targ}; probe {os.path.basename(probe.path)} ({len(probe)} positions)")
    print("| updates | agree | top 3 | loss | value | buffer loss | kl | lr multiplier | seconds |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    scores = probe.measure(model)
    row = "| {} | {:.1f}% | {:.1f}% | {:.3f} | {:.3f} | {} | {} | {} | {} |"
    print(row.format(0, 100 * scores["probe_agree"], 100 * scores["probe_top3"], scores["probe_loss"],
                     scores["probe_value"], "-", "-", f"{pipeline.lr_multiplier:.3f}", "-"), flush=True)
    start = time.perf_counter()
    for done in range(1, args.updates + 1):
        update = pipeline.update()
        if done % args.every == 0 or done == args.updates:
            scores = probe.measure(model)
            print(row.format(done, 100 * scores["probe_agree"], 100 * scores["probe_top3"], scores["probe_loss"],
                             scores["probe_value"], f"{update.loss:.3f}", f"{update.kl:.4f}",
                             f"{update.lr_multiplier:.3f}", f"{time.perf_counter() - start:.0f}"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
