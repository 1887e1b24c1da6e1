"""The fuzz's command line: ``python -m devtools.engine_check.fuzz``."""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from gomoku.net.flags import add_device_flags
from devtools.engine_check.fuzz.check import PLAIN_SIDE
from devtools.engine_check.fuzz.runner import Fuzz, FuzzConfig, Report
from devtools.engine_check.fuzz.scenario import HOSTILE
from gomoku.search.heuristic import DEFAULT_LEVEL, LEVELS
from gomoku.search.options import SearchOptions, add_search_flags
from gomoku.util import DefaultsHelpFormatter


# ------------------------------------------------------------ command line
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.engine_check.fuzz",
        description="Send seeded random command sequences, valid and hostile, to the Gomocup engine and check "
                    "every answer against the protocol. Exit status 1 if anything failed.",
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--sequences", type=int, default=1000, help="how many sequences to send")
    parser.add_argument("--seed", type=int, default=0, help="seeds the sequences and the engines")
    parser.add_argument("--engine", choices=["pure", "heuristic", "model"],
                        help="the engine to fuzz (default: model with --model, else pure)")
    parser.add_argument("--model", help="model file for --engine model")
    parser.add_argument("--level", type=int, choices=LEVELS, default=DEFAULT_LEVEL, help="the heuristic's level")
    parser.add_argument("--n-in-row", type=int, default=5, help="stones in a row that win (pure and heuristic)")
    parser.add_argument("--max-playouts", type=int, default=8, help="playouts per move")
    add_search_flags(parser, "the engine's search", default="sharp")
    add_device_flags(parser, device="cpu", precision=False)
    parser.add_argument("--process", action="store_true",
                        help="talk to a python -m gomoku.play.engine process instead of an engine in this process")
    parser.add_argument("--hang-s", type=float,
                        help="seconds one answer may take: of CPU in this process (default 5), of wall time "
                             "from a process (default 15)")
    parser.add_argument("--start-s", type=float, default=20.0,
                        help="seconds the first START may take (model loading), and a process's first answer")
    parser.add_argument("--restart-every", type=int,
                        help="sequences per engine (default: 1 in this process without a model, else 25)")
    parser.add_argument("--hostile-share", type=float, default=0.08, help="share of hostile steps in a game")
    parser.add_argument("--skip", nargs="*", default=[], choices=sorted(HOSTILE), metavar="CATEGORY",
                        help=f"hostile categories to leave out: {', '.join(HOSTILE)}")
    parser.add_argument("--max-side", type=int, default=PLAIN_SIDE,
                        help="the largest side of the boards games start on")
    parser.add_argument("--max-failures", type=int, help="stop once this many sequences have failed")
    parser.add_argument("--show", type=int, default=2, help="examples to print of each failure kind")
    parser.add_argument("--shrink-s", type=float, default=30.0,
                        help="seconds to shrink each example to a short repro (in this process; 0: no shrinking)")
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    engine = args.engine or ("model" if args.model else "pure")
    if engine == "model" and not args.model:
        build_parser().error("--engine model needs --model PATH")
    config = FuzzConfig(engine=engine, model=args.model, level=args.level, n_in_row=args.n_in_row,
                        max_playouts=args.max_playouts, search=SearchOptions.from_args(args), device=args.device,
                        process=args.process, hang_s=args.hang_s, start_s=args.start_s,
                        restart_every=args.restart_every, hostile_share=args.hostile_share, skip=frozenset(args.skip),
                        max_side=args.max_side)
    step = max(1, args.sequences // 10)

    def progress(report: Report, done: int) -> None:
        if done % step == 0:
            print(f"  {done}/{args.sequences} sequences, {report.failed} failures", file=sys.stderr, flush=True)

    report = Fuzz(config).run(args.sequences, args.seed, keep=args.show, shrink_s=args.shrink_s,
                             max_failures=args.max_failures, progress=progress)
    print(report.table())
    for failure in report.examples:
        print()
        print(failure.describe())
    return 1 if report.failed else 0
