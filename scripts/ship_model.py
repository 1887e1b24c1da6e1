"""Copy a run's model into models/ with its training record and curves.

    python scripts/ship_model.py runs/8x8x5 gomoku_8x8_5 [--model best_model.npz|current_model.npz|checkpoint]
    python scripts/ship_model.py runs/15x15 gomoku_15x15_5 --model cand.npz --iteration 251

The second form ships a candidate copied aside from the run's ``current_model.npz`` (which every
iteration rewrites) and measured while the run went on: ``--iteration`` says which iteration it is.

writes ``models/NAME.npz`` (the model file), ``models/NAME.png`` (training curves from
the run's metrics) and ``models/NAME.json`` (iterations, self-play games, positions,
training time, the evaluation history, the machine, and the command that resumes the run).
``model_games`` and ``model_cpu_hours`` count what lies behind the shipped weights, ``selfplay_games``
and ``training_cpu_hours`` the whole run so far: they differ for a copy taken while the run went on.

A run started with ``train.py --init-model`` goes on from another model's training. The run keeps
that model's record (the JSON file beside it) in its checkpoint, and the new record keeps it under
``started_from``; ``lineage_games`` adds up the self-play games behind the shipped weights over
every run they went through. ``--started-from OLD.json`` gives the record by hand, for runs whose
checkpoints predate that (read before anything is written, so it may be the record this call
replaces). A record of an earlier model of the same run (an interim model this call replaces) is
not where the run started: its own ``started_from`` is kept instead, so no run's games count twice.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import warnings

warnings.filterwarnings("ignore")

from gomoku.train.config import TrainConfig  # noqa: E402
from gomoku.net.modelfile import BEST_MODEL, CURRENT_MODEL, read_model_spec, save_model_file  # noqa: E402
from gomoku.train.checkpoint import CHECKPOINT, CheckpointError, read_checkpoint  # noqa: E402
from gomoku.train.plot import MetricsError, read_metrics, save_plot  # noqa: E402
from gomoku.util import atomic_write  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("name", help="file name without extension, e.g. gomoku_8x8_5")
    parser.add_argument("--model", default=BEST_MODEL,
                        help="which model of the run to ship: best_model.npz (from the last evaluation that "
                             "made a new best), current_model.npz (the last iteration's) or checkpoint (the "
                             "weights of the last iteration, with the net the config describes), or with "
                             "--iteration a file copied aside from current_model.npz")
    parser.add_argument("--iteration", type=int,
                        help="the run's iteration at which the --model file was copied from current_model.npz")
    parser.add_argument("--out-dir", default="models")
    parser.add_argument("--title", help="title of the curves (default: the board)")
    parser.add_argument("--note", default="", help="a remark for the record, e.g. what else shared the machine")
    parser.add_argument("--started-from", metavar="RECORD",
                        help="the .json record of the model the run was initialised from (--init-model), "
                             "where the run's checkpoint does not keep it")
    args = parser.parse_args(argv)
    try:
        return ship(args)
    except (CheckpointError, MetricsError, OSError, ValueError) as exc:
        print(f"ship_model: {exc}", file=sys.stderr)
        return 1


def read_record(path: str) -> dict:
    """A model's training record, as written by this script.

    Raises:
        ValueError: the file is not JSON or lacks the fields of a record.
    """
    with open(path) as f:
        try:
            record = json.load(f)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not a training record ({exc})") from None
    if not isinstance(record, dict):
        raise ValueError(f"{path} is not a training record")
    missing = [k for k in ("model", "model_iteration", "config") if k not in record]
    if missing:
        raise ValueError(f"{path} is not a training record (it lacks {', '.join(missing)})")
    return record


def model_games(record: dict) -> int:
    """Self-play games behind a record's model: its run's games up to the model's iteration."""
    return record.get("model_games", record["model_iteration"] * record["config"]["games_per_iter"])


def lineage_games(record: dict) -> int:
    """``model_games`` of a record plus those of every run it started from."""
    earlier = record.get("started_from")
    return model_games(record) + (lineage_games(earlier) if earlier else 0)


def probe_of(metrics, iteration: int, cfg: dict) -> dict:
    """``{"probe": ...}``: the probe's scores of the model's iteration where the run logged them
    (``--probe-games``), with the probe's name; else nothing."""
    for r in metrics.iterations:
        if r.get("iteration") == iteration and "probe_agree" in r:
            scores = {key.removeprefix("probe_"): value for key, value in r.items() if key.startswith("probe_")}
            return {"probe": {"games": cfg.get("probe_games"), **scores}}
    return {}


def run_net(state: dict, iteration: int):
    """The net spec of the run whose checkpoint is ``state``, at ``iteration``."""
    return TrainConfig.from_dict(state["config"]).model_spec(iteration, state.get("earlier_sizes", ()))


def check_copy(path: str, iteration: int, state: dict, metrics) -> None:
    """Refuse a ``--iteration`` copy the run cannot have written: another board or net, or an
    iteration the run has not reached (or its metrics do not list).

    Raises:
        ValueError: with what does not match.
    """
    if path in ("checkpoint", CURRENT_MODEL, BEST_MODEL):
        raise ValueError(f"--iteration is for a model file copied aside from the run, not its {path}")
    if not 1 <= iteration <= state["iteration"]:
        raise ValueError(f"--iteration {iteration}: the run's checkpoint holds iterations 1 to {state['iteration']}")
    if not any(r.get("iteration") == iteration for r in metrics.iterations):
        raise ValueError(f"--iteration {iteration}: the run's metrics have no such iteration")
    spec = read_model_spec(path)
    expected = run_net(state, iteration)
    if spec != expected:
        raise ValueError(f"{path} is not a model of this run: it holds {spec}, the run's net at iteration "
                         f"{iteration} is {expected}")


def step_at(metrics, iteration: int, state: dict):
    """The adaptive learning-rate multiplier after ``iteration``'s updates, or None where the
    metrics do not say (an iteration before the first update)."""
    if iteration == state["iteration"]:
        return state["lr_multiplier"]
    steps = [r["lr_multiplier"] for r in metrics.iterations if r.get("iteration") == iteration and "lr_multiplier" in r]
    return steps[-1] if steps else None


CURVE_MARK = "(the curve)"
# The figures of each iteration a shipped record keeps (gomoku.train.pipeline writes them to the metrics).
CURVE_COLUMNS = ("iteration", "games", "cpu_s", "episode_len", "playouts_per_s", "loss", "value_loss",
                 "policy_loss", "entropy", "kl", "lr_multiplier", "lr", "lr_scale", "window", "reuse",
                 "probe_agree", "probe_loss", "probe_value")


def curve_text(metrics, last_iteration: int) -> str:
    """The record's ``curve``: its columns, then one row a line for each iteration up to
    ``last_iteration`` (null where the run did not record a figure)."""
    rows = [[r.get(k) for k in CURVE_COLUMNS] for r in metrics.iterations if r["iteration"] <= last_iteration]
    lines = ",\n".join("      " + json.dumps(row) for row in rows)
    return ('{\n    "columns": ' + json.dumps(list(CURVE_COLUMNS)) + ',\n    "rows": [\n' + lines
            + ("\n" if rows else "") + "    ]\n  }")


def same_run(record: dict, sessions: list) -> bool:
    """Whether ``record`` is of a model of the run whose ``sessions`` these are: both began with the
    same start."""
    earlier = record.get("sessions") or []
    return bool(earlier) and bool(sessions) and earlier[0] == sessions[0]


def ship(args) -> int:
    started_from = read_record(args.started_from) if args.started_from else None
    state = read_checkpoint(os.path.join(args.run_dir, CHECKPOINT))
    metrics = read_metrics(args.run_dir)
    if started_from is None:
        started_from = state.get("init_record")  # kept by the run since its start
    while started_from is not None and same_run(started_from, metrics.sessions):
        print(f"ship_model: {args.started_from or 'the record the run kept'} is of an earlier model of this run "
              f"(iteration {started_from['model_iteration']}); keeping the record it started from", file=sys.stderr)
        started_from = started_from.get("started_from")
    if args.iteration is not None:
        check_copy(args.model, args.iteration, state, metrics)
    cfg = state["config"]
    board = f"{cfg['width']}x{cfg['height']}, {cfg['n_in_row']} in a row"
    save_plot(metrics, os.path.join(args.out_dir, args.name + ".png"), args.title or f"Gomoku Zero {board}")
    model_out = os.path.join(args.out_dir, args.name + ".npz")
    if args.iteration is not None:
        model_iteration = args.iteration
    elif args.model == "checkpoint":
        model_iteration = state["iteration"]
        # the weights that play: the run's average of the weights where it keeps one (gomoku.train.learner)
        learner = state.get("learner") or {}
        save_model_file(model_out, run_net(state, state["iteration"]), learner.get("average") or state["weights"])
    elif args.model == CURRENT_MODEL:
        model_iteration = state["iteration"]  # rewritten with the checkpoint after every iteration
    else:
        # best_model.npz dates from the last gate passed, or without gates the last evaluation that made a new best.
        evaluated = [e["iteration"] for e in metrics.evaluations
                     if (e["gate"]["passed"] if "gate" in e else e.get("new_best"))]
        model_iteration = evaluated[-1] if evaluated else state["iteration"]
    if args.model != "checkpoint":
        source = args.model if args.iteration is not None else os.path.join(args.run_dir, args.model)
        with open(source, "rb") as src:
            atomic_write(model_out, lambda f: shutil.copyfileobj(src, f))

    at_model = next((r for r in metrics.iterations if r["iteration"] == model_iteration), {})  # one row an iteration
    spec = read_model_spec(model_out)

    import paddle

    gpus = paddle.device.cuda.device_count() if paddle.is_compiled_with_cuda() else 0
    record = {
        "model": os.path.basename(model_out),
        "from": args.model if args.iteration is None else f"{CURRENT_MODEL} at iteration {args.iteration}",
        "board": board,
        "size_free": spec.size_free,
        "trained_sizes": [f"{w}x{h}" for w, h in spec.trained_sizes] if spec.size_free else [board.split(",")[0]],
        "model_iteration": model_iteration,
        # From the metrics, so a --games-per-iter changed on a resume still counts right.
        "model_games": at_model.get("games", model_iteration * cfg["games_per_iter"]),
        "iterations": state["iteration"],
        "selfplay_games": state["games"],
        "selfplay_positions": state["positions"],
        "training_hours": round(state["elapsed"] / 3600, 2),
        # CPU hours of the trainer and its workers (absent from checkpoints that predate the count):
        # the whole run's so far, and those behind the shipped model (less when it was copied aside)
        **({"training_cpu_hours": round(state["cpu_elapsed"] / 3600, 2)} if state.get("cpu_elapsed") else {}),
        **({"model_cpu_hours": round(at_model["cpu_s"] / 3600, 2)} if "cpu_s" in at_model else {}),
        # the adaptive step the model was trained at: a run from this model goes on at it
        # (gomoku.train.warm_start)
        **({"lr_multiplier": step} if (step := step_at(metrics, model_iteration, state)) is not None else {}),
        "best_win_ratio_at_current_strength": state["best_win_ratio"],
        "pure_playouts_now": state["pure_playouts"],
        # the yardstick's rung now: pure MCTS playouts, or the heuristic's level in a run evaluated by it
        **({"heuristic_level_now": state["heuristic_level"]} if cfg.get("eval_opponent") == "heuristic" else {}),
        "evaluations": [{k: e[k] for k in ("iteration", "opponent", "pure_playouts", "heuristic_level", "playouts",
                                           "opening_stones", "wins", "draws", "losses", "win_ratio", "as_white",
                                           "gate")
                                           if k in e}
                        for e in metrics.evaluations],
        **probe_of(metrics, model_iteration, cfg),
        "curve": CURVE_MARK,  # the run's per-iteration figures up to the model, filled in below, a row a line
        "config": cfg,
        # where this script ran: in the usual workflow, the machine that trained the run
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {gpus} GPU(s), Python {platform.python_version()}",
        "note": args.note,
        # every start of the run (new, --init-model, --resume with the settings it changed) and stop
        "sessions": metrics.sessions,
        "resume": f"python train.py --resume runs/{os.path.basename(os.path.normpath(args.run_dir))}",
    }
    if started_from is not None:
        record["started_from"] = {k: v for k, v in started_from.items() if k != "evaluations"}
        record["started_from"]["model_games"] = model_games(started_from)
        record["lineage_games"] = lineage_games(record)
    text = json.dumps(record, indent=2).replace(json.dumps(CURVE_MARK), curve_text(metrics, model_iteration)) + "\n"
    atomic_write(os.path.join(args.out_dir, args.name + ".json"), lambda f: f.write(text.encode()))
    print(f"wrote {model_out} (iteration {model_iteration}), {args.name}.png and {args.name}.json: "
          f"run at iteration {state['iteration']}, {state['games']} games, {record['training_hours']} h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
