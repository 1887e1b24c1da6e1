"""A tiny Gomocup engine for the tests of ``engine:COMMAND``: it plays the first empty cell.

    python tests/fake_engine.py [MODE]

Modes: ``ok`` (the default) plays well-formed moves; ``illegal`` answers 0,0 every time;
``drop`` ignores any command that arrives within 0.3 s of its last answer, as engines do
whose search thread is still winding down; ``droperror`` ignores a ``BOARD`` line that arrives
within 0.3 s of its last answer and then answers each stone line with ``ERROR``, as Rapfi does; ``crash`` exits instead of its second move;
``noanswer`` answers START and then nothing; ``deaf`` answers START and then sleeps for a minute
without reading (not even the end of its input); ``refuse`` answers START with ERROR.
Every line it reads is appended to the file named by ``FAKE_ENGINE_LOG``, if set.
"""

import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
log = os.environ.get("FAKE_ENGINE_LOG")
size = 15
stones: set = set()
answered_at = 0.0
moves = 0


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def move() -> None:
    global answered_at, moves
    moves += 1
    if mode == "crash" and moves == 2:
        sys.exit(3)
    if mode == "noanswer":
        return
    if mode == "illegal":
        say("0,0")
    else:
        x, y = next((x, y) for y in range(size) for x in range(size) if (x, y) not in stones)
        stones.add((x, y))
        say(f"{x},{y}")
    answered_at = time.monotonic()


in_board = False
for raw in sys.stdin:
    line = raw.strip()
    if log:
        with open(log, "a") as f:
            f.write(line + "\n")
    if mode == "drop" and not in_board and time.monotonic() - answered_at < 0.3:
        continue
    word = line.split(" ")[0].upper()
    if mode == "droperror" and word == "BOARD" and time.monotonic() - answered_at < 0.3:
        continue
    if mode == "droperror" and not in_board and word not in ("START", "RESTART", "BEGIN", "TURN", "BOARD",
                                                               "END", "INFO"):
        say(f"ERROR Unknown command: {line}")
        continue
    if in_board:
        if word == "DONE":
            in_board = False
            move()
        else:
            x, y, _ = line.split(",")
            stones.add((int(x), int(y)))
    elif word in ("START", "RESTART"):
        if mode == "refuse":
            say("ERROR no thanks")
            continue
        if word == "START":
            size = int(line.split()[1])
        stones.clear()
        say("OK")
        if mode == "deaf":
            time.sleep(60)
    elif word == "BEGIN":
        move()
    elif word == "TURN":
        x, y = line.split()[1].split(",")
        stones.add((int(x), int(y)))
        move()
    elif word == "BOARD":
        stones.clear()
        in_board = True
    elif word == "END":
        break
