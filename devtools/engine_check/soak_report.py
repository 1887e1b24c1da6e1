"""The soak's report: the table of a run (games by board and pairing, faults, the slowest
answers, results by colour, the games that went wrong) and the records of an ``--out`` file.
"""

from __future__ import annotations

import json

import numpy as np

from devtools.engine_check.referee import FAULTS
from devtools.engine_check.soak_run import FAULT_NAMES, PAIRINGS, SoakRun, went_wrong

TRANSCRIPT_TAIL = 12  # transcript lines printed for each game that went wrong


# -------------------------------------------------------------------- table
def _answer_kinds(record: dict) -> list[str]:
    """The engine that gave each of a game's answers: ``model``, ``model (uncapped)`` or ``heuristic``.

    The opening has an even number of stones, so Black (the first engine) gives
    answers 0, 2, 4... and White answers 1, 3, 5...
    """
    names = []
    for kind in (record["black"], record["white"]):
        if kind == "model":
            kind = "model (uncapped)" if record["max_playouts"] is None else "model (capped)"
        names.append(kind)
    return [names[i % 2] for i in range(len(record["latencies"]))]


def format_table(run: SoakRun) -> str:
    """The soak's summary: games by board and pairing, faults, answer times, results by colour."""
    records = run.records
    if not records:
        return f"no game finished in {run.seconds:.1f} s" + (" (interrupted)" if run.interrupted else "")
    lines = []
    header = f"{'board':<8}{'pairing':<17}{'games':>6}{'stones':>8}{'s/game':>8}{'Black':>7}{'White':>7}{'draws':>7}"
    lines += ["games by board and pairing (stones a game, wall seconds a game, results by colour)", header]
    boards = sorted({(r["width"], r["height"]) for r in records})
    pairings = [p for p in PAIRINGS if any(r["pairing"] == p for r in records)]

    def row(board: str, pairing: str, group: list[dict]) -> str:
        wins = {c: sum(1 for r in group if r["winner"] == c) for c in (1, 2, 0)}
        stones = np.mean([len(r["moves"]) for r in group])
        seconds = np.mean([r["seconds"] for r in group])
        return (f"{board:<8}{pairing:<17}{len(group):>6}{stones:>8.1f}{seconds:>8.1f}"
                f"{wins[1]:>7}{wins[2]:>7}{wins[0]:>7}")

    for width, height in boards:
        for pairing in pairings:
            group = [r for r in records if (r["width"], r["height"]) == (width, height) and r["pairing"] == pairing]
            if group:
                lines.append(row(f"{width}x{height}", pairing, group))
    if len(boards) > 1:
        for pairing in pairings:
            lines.append(row("all", pairing, [r for r in records if r["pairing"] == pairing]))
    if len(boards) > 1 or len(pairings) > 1:
        lines.append(row("all", "all", records))

    faults = {k: sum(r["faults"][k] for r in records) for k in FAULTS}
    unfinished = sum(1 for r in records if r["winner"] is None)
    lines += ["", "faults: " + ", ".join(f"{FAULT_NAMES[k]} {faults[k]}" for k in FAULTS)
              + f"; total {sum(faults.values())}" + (f"; games without a result {unfinished}" if unfinished else "")]

    lines += ["", f"{'answers by':<18}{'answers':>8}{'slowest':>9}{'limit':>8}{'game':>6}"
                  f"{'latency/limit':>15}{'game':>6}"]
    answers: dict[str, list[tuple[float, float, int]]] = {}
    for r in records:
        for kind, latency, limit in zip(_answer_kinds(r), r["latencies"], r["limits"]):
            answers.setdefault(kind, []).append((latency, limit, r["game"]))
    everything = [a for kind in answers for a in answers[kind]]
    for kind in sorted(answers) + ["all"]:
        group = everything if kind == "all" else answers[kind]
        if not group:
            continue
        latency, limit, game = max(group)
        ratio_latency, ratio_limit, ratio_game = max(group, key=lambda a: a[0] / a[1] if a[1] > 0 else float("inf"))
        ratio = ratio_latency / ratio_limit if ratio_limit > 0 else float("inf")
        lines.append(f"{kind:<18}{len(group):>8}{latency:>8.3f}s{limit:>7.3f}s{game:>6}{ratio:>15.3f}{ratio_game:>6}")

    lines += ["", f"{len(records)} game{'s' if len(records) > 1 else ''} in {run.seconds:.1f} s of wall time "
                  f"on {run.workers} worker{'s' if run.workers > 1 else ''}, "
              f"{run.seconds / len(records):.1f} s a game"
              + ("; interrupted: the games under way were dropped" if run.interrupted else "")]
    wrong = [r for r in records if went_wrong(r)]
    for r in wrong:
        lines += ["", f"game {r['game']} ({r['board']} {r['pairing']}): {r['reason']}"
                  + (f"; engines' stderr: {r['stderr']}" if r["stderr"] else "")]
        lines += [f"    {line}" for line in (r.get("transcript") or [])[-TRANSCRIPT_TAIL:]]
    return "\n".join(lines)


def read_records(path: str) -> list[dict]:
    """The records of a soak's ``--out`` file."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
