"""Copy a run's model into models/ with its training record and curves.

    python scripts/ship_model.py runs/8x8x5 gomoku_8x8_5 [--model best_model.npz]

writes ``models/NAME.npz`` (the model file), ``models/NAME.png`` (training curves from
the run's metrics) and ``models/NAME.json`` (iterations, self-play games, positions,
training time, the evaluation history, the machine, and the command that resumes the run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
warnings.filterwarnings("ignore")

from gomoku.pipeline import CHECKPOINT, CheckpointError, read_checkpoint  # noqa: E402
from gomoku.plot import MetricsError, save_plot  # noqa: E402
from gomoku.util import atomic_write  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("name", help="file name without extension, e.g. gomoku_8x8_5")
    parser.add_argument("--model", default="best_model.npz", help="which model of the run to ship")
    parser.add_argument("--out-dir", default="models")
    parser.add_argument("--title", help="title of the curves (default: the board)")
    parser.add_argument("--note", default="", help="a remark for the record, e.g. what else shared the machine")
    args = parser.parse_args(argv)
    try:
        return ship(args)
    except (CheckpointError, MetricsError, OSError) as exc:
        print(f"ship_model: {exc}", file=sys.stderr)
        return 1


def ship(args) -> int:
    state = read_checkpoint(os.path.join(args.run_dir, CHECKPOINT))
    cfg = state["config"]
    board = f"{cfg['width']}x{cfg['height']}, {cfg['n_in_row']} in a row"
    metrics = save_plot(args.run_dir, os.path.join(args.out_dir, args.name + ".png"),
                        args.title or f"Gomoku Zero {board}")
    # best_model.npz dates from the last evaluation that made a new best; current_model.npz is now.
    bests = [e["iteration"] for e in metrics.evaluations if e.get("new_best")]
    model_iteration = bests[-1] if args.model == "best_model.npz" and bests else state["iteration"]
    model_out = os.path.join(args.out_dir, args.name + ".npz")
    with open(os.path.join(args.run_dir, args.model), "rb") as src:
        atomic_write(model_out, lambda f: shutil.copyfileobj(src, f))

    import paddle

    gpus = paddle.device.cuda.device_count() if paddle.is_compiled_with_cuda() else 0
    record = {
        "model": os.path.basename(model_out),
        "from": args.model,
        "board": board,
        "model_iteration": model_iteration,
        "iterations": state["iteration"],
        "selfplay_games": state["games"],
        "selfplay_positions": state["positions"],
        "training_hours": round(state["elapsed"] / 3600, 2),
        "best_win_ratio_at_current_strength": state["best_win_ratio"],
        "pure_playouts_now": state["pure_playouts"],
        "evaluations": [{k: e[k] for k in ("iteration", "pure_playouts", "wins", "draws", "losses", "win_ratio")}
                        for e in metrics.evaluations],
        "config": cfg,
        # where this script ran: in the usual workflow, the machine that trained the run
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {gpus} GPU(s), Python {platform.python_version()}",
        "note": args.note,
        "resume": f"python train.py --resume runs/{os.path.basename(os.path.normpath(args.run_dir))}",
    }
    text = json.dumps(record, indent=2) + "\n"
    atomic_write(os.path.join(args.out_dir, args.name + ".json"), lambda f: f.write(text.encode()))
    print(f"wrote {model_out} (iteration {model_iteration}), {args.name}.png and {args.name}.json: "
          f"run at iteration {state['iteration']}, {state['games']} games, {record['training_hours']} h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
