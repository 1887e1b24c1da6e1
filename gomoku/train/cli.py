"""The trainer's command line: ``gomoku-train`` and ``python train.py`` (``--help`` lists the flags).

``main`` parses the flags and runs the pipeline; ``gomoku.commands.train`` runs it as a command.
"""

import argparse
import os
import sys
import time
from dataclasses import fields

from gomoku.game.features import INPUT_VERSIONS
from gomoku.net.flags import DEVICES, PRECISIONS
from gomoku.train.config import DEFAULT_PRESET, PRESETS, TrainConfig, field_docs, preset
from gomoku.search.recipe import ROOT_SEARCHES
from gomoku.util import DefaultsHelpFormatter, switch_arg


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Train an AlphaZero Gomoku player from self-play alone. "
                    "Ctrl-C saves and stops; --resume goes on where a run stopped.",
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default=DEFAULT_PRESET,
                        help="board and defaults to start from; flags below override it")
    parser.add_argument("--run-dir", help="directory for checkpoints, models and metrics "
                        "(default: runs/<preset>-<date>-<time>)")
    parser.add_argument("--resume", metavar="RUN_DIR",
                        help="continue the run in RUN_DIR from its checkpoint "
                             "(flags given with it override its settings)")
    parser.add_argument("--init-model", metavar="PATH",
                        help="start a new run from the weights of this model file (with a later "
                             "--inputs version than the model's, it carries the model over to it: "
                             "the new input planes start at zero weight, so it plays as before)")
    parser.add_argument("--grow", action="store_true",
                        help="with --init-model: grow the size-free model to --sizefree-blocks, "
                             "--sizefree-filters and --global-pool (more blocks, channels, pooling) before "
                             "training; it plays as before until training uses them")
    parser.add_argument("--iterations", type=int,
                        help="stop after this many more iterations (default: run to --game-batch-num)")
    docs = field_docs()
    group = parser.add_argument_group("training settings (default: the preset's)")
    for field in fields(TrainConfig):
        kind = {"int": int, "float": float, "str": str, "bool": switch_arg}[
            field.type if isinstance(field.type, str) else field.type.__name__]
        extra = {"device": {"choices": list(DEVICES)}, "precision": {"choices": list(PRECISIONS)},
                 "root_search": {"choices": list(ROOT_SEARCHES)},
                 "inputs": {"choices": list(INPUT_VERSIONS)}}.get(field.name, {})
        if kind is switch_arg:
            extra = {"metavar": "on|off"}
            default = "on" if field.default else "off"
        else:
            default = field.default
        group.add_argument("--" + field.name.replace("_", "-"), dest=field.name, type=kind,
                           default=None, help=f"{docs.get(field.name, '')} (default: {default})",
                           **extra)
    return parser


def log(line: str) -> None:
    print(line, flush=True)  # progress must show at once, also when stdout is a file


def check_net_flags(parser: argparse.ArgumentParser, init_model: str, config: TrainConfig,
                    overrides: dict, grow: bool = False) -> None:
    """A run from a model trains that model's net: net flags that ask for another are an error
    (the model can grow with --grow, and take a later --inputs version, but never silently;
    it cannot go back to an earlier input version)."""
    from gomoku.net.modelfile import read_model_spec
    from gomoku.net.spec import NET_SETTINGS, spec_field

    spec = read_model_spec(init_model)
    if "inputs" in overrides and config.inputs < spec.inputs:
        parser.error(f"--inputs {config.inputs}: {init_model} takes input version {spec.inputs}, "
                     f"and a net cannot go back to an earlier one")
    if grow:
        return
    model_net = config.with_net(spec)
    for name in NET_SETTINGS:
        if name in overrides and getattr(config, name) != getattr(model_net, name):
            parser.error(f"--{name.replace('_', '-')} {getattr(config, name)}: {init_model} has "
                         f"{spec_field(name)} {getattr(model_net, name)}, and a run "
                         f"from it trains its net "
                         f"(add --grow to grow a size-free net to more blocks, channels or global pooling)")


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    overrides = {f.name: getattr(args, f.name) for f in fields(TrainConfig)
                 if getattr(args, f.name) is not None}

    from gomoku.train.checkpoint import CheckpointError, RunBusyError

    try:
        # Another trainer in the run's folder is refused now, not after the seconds of loading
        # Paddle below (the pipeline takes the lock itself when it starts).
        refuse_a_busy_run(args.resume or args.run_dir, resume=bool(args.resume))
    except (CheckpointError, RunBusyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    from gomoku import interrupt
    from gomoku.net.modelfile import ModelFileError
    from gomoku.actors import WorkerError
    from gomoku.train.pipeline import TrainPipeline

    try:
        if args.resume:
            if args.init_model or args.grow:
                parser.error("--init-model and --grow start a new run; they cannot go with --resume")
            log(f"resuming {args.resume}: reading its checkpoint")
            pipeline = TrainPipeline.resume(args.resume, log=log, **overrides)
        else:
            config = preset(args.preset, **overrides).validate()
            run_dir = args.run_dir or os.path.join("runs", f"{args.preset}-{time.strftime('%Y%m%d-%H%M%S')}")
            if os.path.exists(os.path.join(run_dir, "checkpoint.pkl")):
                # not a usage error: the flags are fine, the folder is taken (no 36 lines of usage first)
                raise ValueError(f"{run_dir} already holds a run: use --resume {run_dir}, or another --run-dir")
            if args.init_model:
                check_net_flags(parser, args.init_model, config, overrides, args.grow)
            pipeline = TrainPipeline(config, run_dir, log=log, init_model=args.init_model, grow=args.grow)
        if args.iterations is not None and args.iterations < 1:
            parser.error("--iterations must be at least 1")
        check_eval_opponent(pipeline.config)
        pipeline.run(args.iterations)
    except (CheckpointError, ModelFileError, RunBusyError, WorkerError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # Stopped by a signal, at any moment: the shell's status for it (130 after Ctrl-C, 143 after
    # SIGTERM), as before the run started (gomoku.commands), although the run saved and stopped cleanly.
    return interrupt.exit_code(pipeline.stopped_by) if pipeline.stopped_by else 0


def refuse_a_busy_run(run_dir, resume: bool = False) -> None:
    """Raises ``RunBusyError`` when a live trainer holds the lock of ``run_dir`` (None: a new run's
    folder, named by the time: nobody else has it); for a resume of a folder without a checkpoint,
    the ``CheckpointError`` that says why there is none (a trainer still in its first iteration
    among them)."""
    from gomoku.train.checkpoint import CHECKPOINT, RunBusyError, lock_holder, read_checkpoint

    if resume and not os.path.isfile(os.path.join(run_dir, CHECKPOINT)):
        read_checkpoint(os.path.join(run_dir, CHECKPOINT))  # raises: nothing to read
    owner = lock_holder(run_dir) if run_dir else None
    if owner is not None:
        raise RunBusyError(f"another trainer (pid {owner}) is using {run_dir}; stop it first")


def check_eval_opponent(config) -> None:
    """Tries the evaluation opponent once where its kind can (an ``engine:COMMAND`` starts), so
    that a bad one fails now, not at the first evaluation."""
    from gomoku.search.player_specs import check_player

    spec = config.eval_player()
    for width, height in config.board_sizes():
        check_player(spec, width, height, config.rule)


