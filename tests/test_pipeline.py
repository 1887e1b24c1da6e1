import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from gomoku.train.config import TrainConfig
from gomoku.actors.actors import InlineActors, Pending
from gomoku.train.checkpoint import CheckpointError, read_checkpoint, write_checkpoint
from gomoku.net.training import kl_divergence
from gomoku.train.pipeline import TrainPipeline
from gomoku.train.replay import ReplayBuffer
from gomoku.actors.stream_state import game_from_state
from tests.helpers import ROOT, TINY, tiny_config, train_in_process


def train(*args, **kwargs):
    return subprocess.run([sys.executable, "train.py", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, **kwargs)


def test_replay_buffer_is_a_fifo():
    buf = ReplayBuffer(5, (1, 2, 2), 4)
    for i in range(7):
        buf.extend(np.full((1, 1, 2, 2), i % 2, np.uint8), np.full((1, 4), i, np.float32),
                   np.array([i], np.float32))
    assert len(buf) == 5
    assert list(buf.state()["zs"]) == [2, 3, 4, 5, 6]
    other = ReplayBuffer(5, (1, 2, 2), 4)
    other.load_state(buf.state())
    assert list(other.state()["zs"]) == [2, 3, 4, 5, 6]
    planes, pis, zs = buf.sample(3, np.random.default_rng(0))
    assert planes.dtype == np.float32 and len(set(zs)) == 3


def test_kl_divergence():
    p = np.log(np.array([[0.5, 0.5], [0.9, 0.1]]))
    assert kl_divergence(p, p) == pytest.approx(0.0)
    q = np.log(np.array([[0.9, 0.1], [0.9, 0.1]]))
    expected = 0.5 * np.log(0.5 / 0.9) + 0.5 * np.log(0.5 / 0.1)
    assert kl_divergence(p, q) == pytest.approx(expected / 2)


def test_checkpoint_detects_corruption(tmp_path):
    path = str(tmp_path / "checkpoint.pkl")
    write_checkpoint(path, {"iteration": 3, "array": np.arange(5)})
    assert read_checkpoint(path)["iteration"] == 3
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-10])
    with pytest.raises(CheckpointError, match="corrupted or truncated"):
        read_checkpoint(path)
    open(path, "wb").write(b"junk")
    with pytest.raises(CheckpointError, match="not a Gomoku Zero checkpoint"):
        read_checkpoint(path)
    with pytest.raises(CheckpointError, match="no checkpoint.*is this a run directory"):
        read_checkpoint(str(tmp_path / "missing.pkl"))
    stopped = tmp_path / "stopped-run"  # train.py took its lock and was killed before a checkpoint
    stopped.mkdir()
    (stopped / "lock").write_text("")
    with pytest.raises(CheckpointError, match="stopped before its first checkpoint"):
        read_checkpoint(str(stopped / "checkpoint.pkl"))


def test_pipeline_iterates_evaluates_and_resumes_in_process(tmp_path):
    run = str(tmp_path / "run")
    pipeline = TrainPipeline(tiny_config(), run, log=lambda s: None)
    pipeline.run(iterations=2)
    assert pipeline.iteration == 2
    assert os.path.exists(os.path.join(run, "best_model.npz")) or pipeline.best_win_ratio == 0
    assert os.path.exists(os.path.join(run, "current_model.npz"))
    events = [json.loads(line) for line in open(os.path.join(run, "metrics.jsonl"))]
    assert [e["event"] for e in events] == ["start", "iteration", "iteration", "evaluation", "stop"]
    assert events[0]["how"] == "new" and events[0]["iteration"] == 0
    assert events[-1]["why"] == "finished" and events[-1]["iteration"] == 2
    assert "loss" in events[2] and "entropy" in events[2]
    assert 0 < events[1]["cpu_s"] < events[2]["cpu_s"]  # the CPU seconds add up, iteration by iteration
    assert events[3]["playouts"] == pipeline.config.n_playout  # the net's search in the evaluation
    # the games the net played as White, on their own: half of the paired games
    assert len(events[3]["as_white"]) == 3 and sum(events[3]["as_white"]) == pipeline.config.eval_games // 2

    again = TrainPipeline.resume(run, log=lambda s: None)
    assert again.iteration == 2 and again.games == pipeline.games
    assert again.cpu_elapsed == pipeline.cpu_elapsed > 0
    assert again.lr_multiplier == pipeline.lr_multiplier
    assert np.array_equal(again.buffer.state()["pis"], pipeline.buffer.state()["pis"])
    for name, w in pipeline.model.weights().items():
        assert np.array_equal(w, again.model.weights()[name])
    with pytest.raises(ValueError, match="cannot change width"):
        TrainPipeline.resume(run, log=lambda s: None, width=8)

    # a resume that changes a setting leaves a start record naming the change
    changed = TrainPipeline.resume(run, log=lambda s: None, n_playout=16, width=6)
    changed.run(iterations=1)
    start = [json.loads(line) for line in open(os.path.join(run, "metrics.jsonl"))][-3]
    assert start["event"] == "start" and start["how"] == "resume" and start["iteration"] == 2
    assert start["changed"] == {"n_playout": [12, 16]}  # width 6 is no change


def test_train_py_stops_and_resumes_with_its_state(tmp_path):
    run = str(tmp_path / "run")
    first = train(*TINY, "--run-dir", run, "--iterations", "3")
    assert first.returncode == 0, first.stderr
    before = read_checkpoint(os.path.join(run, "checkpoint.pkl"))
    assert before["iteration"] == 3
    closing = first.stdout.strip().splitlines()[-1]
    assert closing.startswith("done: iteration 3 of ")
    assert f"python play.py --model {run}" in closing and f"python train.py --resume {run}" in closing

    second = train("--resume", run, "--iterations", "1")
    assert second.returncode == 0, second.stderr
    assert "iteration 3 of" in second.stdout and "iter     4" in second.stdout
    assert "self-play on 6x6 goes on with the" in second.stdout  # the games in progress went on
    after = read_checkpoint(os.path.join(run, "checkpoint.pkl"))
    assert after["iteration"] == 4
    assert after["games"] == before["games"] + 2
    # the buffer kept its old positions (oldest first) and grew by the new ones
    n = len(before["buffer"]["zs"])
    assert np.array_equal(after["buffer"]["pis"][:n], before["buffer"]["pis"])
    assert len(after["buffer"]["zs"]) == n + 8 * (after["positions"] - before["positions"])
    # the lr multiplier went on from the stored one (one update changes it by 1.5x at most)
    ratio = after["lr_multiplier"] / before["lr_multiplier"]
    assert min(abs(ratio - r) for r in (1.0, 1.5, 1 / 1.5)) < 1e-9


def test_a_resume_goes_on_with_the_games_in_progress_at_the_stop(tmp_path, monkeypatch):
    import gomoku.train.pipeline as module

    run = str(tmp_path / "run")
    TrainPipeline(tiny_config(check_freq=10, parallel_games=4), run, log=lambda s: None).run(iterations=2)
    state = read_checkpoint(os.path.join(run, "checkpoint.pkl"))
    (_, snapshots), = state["streams"]["by_shape"].values()
    playing = {g["index"]: g["moves"] for s in snapshots for g in s["playing"]}
    held = {g.index: g.moves for s in snapshots for g in map(game_from_state, s["finished"])}
    assert playing and [s["next"] for s in snapshots] == [4]  # one stream, past the 4 games handed over
    seen, arrays = [], module.training_arrays
    monkeypatch.setattr(module, "training_arrays", lambda games, mix: seen.append(games) or arrays(games, mix))
    lines = []
    TrainPipeline.resume(run, log=lines.append).run(iterations=1)
    assert any("self-play on 6x6 goes on with the" in line for line in lines)
    games = seen[0]
    assert [g.index for g in games] == [4, 5]  # the next games of the stopped stream, not new ones
    for game in games:  # each started before the stop: finished then, or going on from its moves then
        if game.index in held:
            assert game.moves == held[game.index]
        else:
            assert game.moves[:len(playing[game.index])] == playing[game.index]
    assert any(game.index in playing and playing[game.index] for game in games)

    del state["streams"]  # a checkpoint from before the snapshots: new games, and a line that says so
    write_checkpoint(os.path.join(run, "checkpoint.pkl"), state)
    lines.clear()
    TrainPipeline.resume(run, log=lines.append).run(iterations=1)
    assert any("predates" in line for line in lines) and [g.index for g in seen[1]] == [0, 1]


def test_one_game_at_a_time_in_process_plays_each_game_with_play_game_and_resumes(tmp_path, monkeypatch):
    # The learner's setting (one worker, one game at a time): each self-play game is one call of
    # play_game, whole, and the checkpoint holds no game in progress, only where the games go on.
    import gomoku.train.pipeline as module
    from gomoku.actors import selfplay

    played, real_game = [], selfplay.play_game
    monkeypatch.setattr(selfplay, "play_game", lambda player, board, index=0: played.append(index) or
                        real_game(player, board, index))
    seen, arrays = [], module.training_arrays
    monkeypatch.setattr(module, "training_arrays", lambda games, mix: seen.append(games) or arrays(games, mix))
    run = str(tmp_path / "run")
    pipeline = TrainPipeline(tiny_config(check_freq=10, parallel_games=1), run, log=lambda s: None)
    pipeline.run(iterations=1)
    assert played == [0, 1] and [g.index for g in seen[0]] == [0, 1]
    for game in seen[0]:  # whole games: every move of each a recorded position (no opening stones here)
        assert game.winner != 0 or len(game.moves) == 36
        assert len(game.to_move) == len(game.moves)
    assert len(pipeline.buffer) == 8 * sum(len(g.moves) for g in seen[0])
    (_, snapshots), = read_checkpoint(os.path.join(run, "checkpoint.pkl"))["streams"]["by_shape"].values()
    assert [(s["next"], s["playing"], s["finished"]) for s in snapshots] == [(2, [], [])]

    lines = []
    TrainPipeline.resume(run, log=lines.append).run(iterations=1)
    assert any("goes on with the 0 games in progress of 1 stream(s)" in line for line in lines)
    assert played == [0, 1, 2, 3] and [g.index for g in seen[1]] == [2, 3]  # the stream's next games, not new ones


def test_worker_processes_hand_back_their_games_in_progress_and_a_resume_with_fewer_says_so(tmp_path):
    run = str(tmp_path / "run")
    flags = [*TINY, "--workers", "2", "--parallel-games", "3", "--check-freq", "10"]
    first = train(*flags, "--run-dir", run, "--iterations", "1")
    assert first.returncode == 0, first.stderr
    (_, snapshots), = read_checkpoint(os.path.join(run, "checkpoint.pkl"))["streams"]["by_shape"].values()
    assert len(snapshots) == 2 and len({s["seed"] for s in snapshots}) == 2  # one stream per worker
    second = train("--resume", run, "--iterations", "1", "--workers", "1", "--parallel-games", "4")
    assert second.returncode == 0, second.stderr
    assert "of 1 stream(s); the " in second.stdout and "of 1 more stream(s) start over (fewer actors now)" in \
        second.stdout and "up to 4 in lockstep (were 3)" in second.stdout


def test_ctrl_c_saves_and_exits_cleanly(tmp_path):
    run = str(tmp_path / "run")
    proc = subprocess.Popen([sys.executable, "train.py", *TINY, "--run-dir", run], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while time.time() < deadline:
        line = proc.stdout.readline()
        if line.startswith("iter"):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err  # Ctrl-C's status, as before the run started (docs/training.md)
    assert "resume with: python train.py --resume" in out
    state = read_checkpoint(os.path.join(run, "checkpoint.pkl"))
    assert state["iteration"] >= 1


def test_bad_flags_and_runs_are_clear_errors(tmp_path, capsys):
    # train.py itself, once: the error is one line, without a traceback
    missing = train("--resume", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no checkpoint" in missing.stderr
    assert "Traceback" not in missing.stderr
    # the other errors of the same command line, in this process
    code, err = train_in_process(capsys, "--preset", "6x6x4", "--n-in-row", "9", "--run-dir", str(tmp_path / "r"))
    assert code == 2 and "cannot hold" in err
    code, err = train_in_process(capsys, "--preset", "7x7x7")
    assert code == 2 and "invalid choice" in err
    os.makedirs(tmp_path / "c")
    (tmp_path / "c" / "checkpoint.pkl").write_bytes(b"GOMOKU-ZERO-CKPT-1\nabc\nxyz")
    code, err = train_in_process(capsys, "--resume", str(tmp_path / "c"))
    assert code == 2 and "corrupted" in err
    wrong_model = tmp_path / "m.npz"
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    PolicyValueModel(NetSpec(8, 8, 5), device="cpu").save(str(wrong_model))
    code, err = train_in_process(capsys, *TINY, "--run-dir", str(tmp_path / "w"), "--init-model", str(wrong_model))
    assert code == 2 and "8x8, 5 in a row" in err
    assert not os.path.exists(tmp_path / "w" / "checkpoint.pkl")


def test_help_explains_every_flag():
    out = train("--help").stdout
    for flag in ("--n-playout", "--c-puct", "--kl-targ", "--check-freq", "--game-batch-num",
                 "--workers", "--device", "--resume", "--init-model", "--preset", "--seed"):
        assert flag in out
    # each default is stated once, and none is an empty "(default: None)"
    flat = " ".join(out.split())
    assert "(default: None)" not in flat and "(default: False)" not in flat
    assert "--buffer-size BUFFER_SIZE replay buffer size, in augmented positions (FIFO) (default: 10000)" in flat
    assert "run to --game-batch-num)" in flat and flat.count("(default:") == flat.count("default:")


def test_help_shows_a_zero_default_but_not_an_empty_one():
    import argparse

    from gomoku.util import DefaultsHelpFormatter

    parser = argparse.ArgumentParser(formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--zero", type=int, default=0, help="a count")
    parser.add_argument("--off", action="store_true", help="a switch")
    parser.add_argument("--unset", help="a path")
    flat = " ".join(parser.format_help().split())
    assert "a count (default: 0)" in flat
    assert "a switch --unset" in flat and flat.endswith("a path")


def test_a_second_trainer_on_the_same_run_is_refused(tmp_path):
    from gomoku.train.checkpoint import lock_run_dir

    run = str(tmp_path / "run")
    held = lock_run_dir(run)
    try:
        second = train(*TINY, "--run-dir", run, "--iterations", "1")
    finally:
        held.close()
    assert second.returncode == 2 and f"another trainer (pid {os.getpid()})" in second.stderr
    lock_run_dir(run).close()  # free again once the holder let go


def test_a_busy_run_is_refused_before_paddle_loads(tmp_path):
    # The lock is checked before anything imports Paddle (seconds on a busy machine): a trainer
    # that could not import Paddle at all still says the run is busy, for a new run and a resume.
    from gomoku.train.checkpoint import lock_run_dir

    run = str(tmp_path / "run")
    held = lock_run_dir(run)
    without_paddle = ("import importlib.util, runpy, sys\n"
                      "real = importlib.util.find_spec\n"
                      "importlib.util.find_spec = lambda name, *a: None if name == 'paddle' else real(name, *a)\n"
                      "sys.modules['paddle'] = None\n")
    try:
        for args, ending in (([*TINY, "--run-dir", run], "; stop it first"),
                             (["--resume", run], " and has not written its first checkpoint yet; resume once it has stopped")):
            code = without_paddle + f"sys.argv = {['train.py', *args]!r}\nrunpy.run_path('train.py', run_name='__main__')\n"
            proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
            assert proc.returncode == 2, proc.stderr
            assert proc.stderr.strip() == f"error: another trainer (pid {os.getpid()}) is using {run}{ending}"
        write_checkpoint(os.path.join(run, "checkpoint.pkl"), {})  # a run with a checkpoint, still busy
        code = without_paddle + f"sys.argv = {['train.py', '--resume', run]!r}\nrunpy.run_path('train.py', run_name='__main__')\n"
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and proc.stderr.strip() == \
            f"error: another trainer (pid {os.getpid()}) is using {run}; stop it first", proc.stderr
    finally:
        held.close()


def test_sigterm_saves_and_exits_cleanly_with_workers(tmp_path):
    run = str(tmp_path / "run")
    args = list(TINY)
    args[args.index("--workers") + 1] = "2"
    proc = subprocess.Popen([sys.executable, "train.py", *args, "--run-dir", run], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while time.time() < deadline:
        if proc.stdout.readline().startswith("iter"):
            break
    proc.terminate()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err  # SIGTERM's status (128 + 15): saved and stopped all the same
    assert "resume with" in out
    assert read_checkpoint(os.path.join(run, "checkpoint.pkl"))["iteration"] >= 1


class RecordingActors(InlineActors):
    """Stands in for the worker processes and records the order of calls. It plays the tasks in
    this process when they are started, with the weights of that moment, as the workers would."""

    def __init__(self, pipeline, events):
        super().__init__()
        self.pipeline, self.events = pipeline, events

    @property
    def slots(self):
        return 2

    def _start(self, tasks, progress=None):
        self.events.append(("start", self._version))
        pending = super()._start(tasks, progress)

        def result():
            self.events.append(("collect", len(self.pipeline.buffer)))
            return pending.result()

        return Pending(result)


def test_updates_overlap_self_play_with_the_weights_the_iteration_began_with(tmp_path):
    pipeline = TrainPipeline(tiny_config(updates_per_iter=2, check_freq=100), str(tmp_path / "run"),
                             log=lambda s: None)
    events = []
    pipeline.actors = RecordingActors(pipeline, events)
    real_update = pipeline.update

    def update():
        events.append(("update", len(pipeline.buffer)))
        return real_update()

    pipeline.update = update
    for _ in range(3):
        pipeline.run_iteration()
    kinds = [e[0] for e in events]
    # The first iteration has nothing to learn from; later ones update while the games are played.
    assert kinds == ["start", "collect", "start", "update", "update", "collect",
                     "start", "update", "update", "collect"]
    # The updates of an iteration see the buffer before its games, and the games of the
    # next iteration start from the weights those updates left (a new version to publish).
    buffer_before = events[1][1]
    assert buffer_before == 0 and events[3][1] == events[4][1] == events[5][1] > 0
    versions = [v for kind, v in events if kind == "start"]
    assert versions == [1, 1, 2]
    assert pipeline.games == 3 * 2


def test_in_process_iteration_plays_its_games_before_the_updates(tmp_path):
    pipeline = TrainPipeline(tiny_config(check_freq=100), str(tmp_path / "run"), log=lambda s: None)
    pipeline.run_iteration()
    before = len(pipeline.buffer)
    seen = []
    real_update = pipeline.update
    pipeline.update = lambda: seen.append(len(pipeline.buffer)) or real_update()
    record = pipeline.run_iteration()
    assert seen == [before] and len(pipeline.buffer) > before
    assert record["update_s"] > 0 and record["selfplay_s"] > 0


def test_actors_that_cannot_start_release_the_run(tmp_path, monkeypatch):
    from gomoku.train import pipeline as pipeline_module

    run = str(tmp_path / "run")
    pipeline = TrainPipeline(tiny_config(), run, log=lambda s: None)

    def no_actors(n, device, **options):
        raise OSError("cannot start workers")

    locks = []
    real_lock = pipeline_module.lock_run_dir
    monkeypatch.setattr(pipeline_module, "lock_run_dir", lambda d: locks.append(real_lock(d)) or locks[-1])
    monkeypatch.setattr(pipeline_module, "make_actors", no_actors)
    with pytest.raises(OSError, match="cannot start workers"):
        pipeline.run(iterations=1)
    assert len(locks) == 1 and locks[0].closed  # released at once, not when the process ends


def test_workers_side_by_side_count_the_slowest_ones_seconds():
    from gomoku.search.lockstep import RunStats
    from gomoku.actors.tasks import merge_games

    games, stats = merge_games([(["a"], RunStats(games=1, moves=10, playouts=4000, seconds=10.0)),
                           (["b", "c"], RunStats(games=2, moves=20, playouts=6000, seconds=20.0))])
    assert games == ["a", "b", "c"]
    assert (stats.games, stats.moves, stats.playouts, stats.seconds) == (3, 30, 10000, 20.0)


def test_an_iteration_whose_games_were_played_ahead_shows_no_rate(tmp_path):
    from gomoku.search.lockstep import RunStats

    pipeline = TrainPipeline(tiny_config(check_freq=100), str(tmp_path / "run"), log=lambda s: None)
    real = pipeline.start_self_play

    def ready_games(progress=None):
        finish = real(progress)
        games, _ = finish()
        return lambda: (games, RunStats(games=0, moves=0, playouts=0, seconds=0.0))

    pipeline.start_self_play = ready_games
    lines = []
    pipeline.log = lines.append
    record = pipeline.run_iteration()
    assert record["playouts_per_s"] is None
    assert "no new playouts (its games were played ahead, earlier)" in lines[-1] and "- playouts/s" not in lines[-1]


def test_a_stop_before_the_first_checkpoint_does_not_offer_a_resume(tmp_path):
    pipeline = TrainPipeline(tiny_config(workers=1), str(tmp_path / "run"), log=lambda s: None)
    lines = []
    pipeline.log = lines.append

    def stopped():
        raise KeyboardInterrupt

    pipeline.run_iteration = stopped
    pipeline.run()
    assert "no checkpoint to resume" in lines[-1] and "--resume" not in lines[-1]
    assert not os.path.exists(os.path.join(str(tmp_path / "run"), "checkpoint.pkl"))


def test_evaluation_searches_with_eval_playouts_or_else_the_self_play_playouts(tmp_path):
    from gomoku.actors.tasks import MatchGame

    for eval_playouts, expected in ((0, 12), (30, 30)):
        pipeline = TrainPipeline(tiny_config(eval_playouts=eval_playouts), str(tmp_path / str(expected)),
                                 log=lambda s: None)
        seen = []

        def match(a, b, geometry, openings, seed, **kwargs):
            seen.append(a.playouts)
            return [MatchGame(i, [], [], 1, 2) for i in range(len(openings))], None

        pipeline.actors.match = match
        assert pipeline.evaluate()["win_ratio"] == 0.0 and seen == [expected]
    with pytest.raises(ValueError, match="eval_playouts must not be negative"):
        tiny_config(eval_playouts=-1).validate()


def test_evaluation_from_paired_openings_and_a_resume_that_changes_them(tmp_path):
    from gomoku.game.openings import opening_area
    from gomoku.actors.tasks import MatchGame

    run = str(tmp_path / "run")
    pipeline = TrainPipeline(tiny_config(eval_games=6, eval_opening_stones=2), run, log=lambda s: None)
    seen = []

    def match(a, b, geometry, openings, seed, **kwargs):
        seen.append(openings)
        return [MatchGame(i, o, [], 1, 1 if i % 2 == 0 else 2) for i, o in enumerate(openings)], None

    pipeline.actors.match = match
    record = pipeline.evaluate()
    openings = seen[0]
    # each opening twice in a row (A as Black, then as White), three different ones, central stones
    assert len(openings) == 6 and all(openings[i] == openings[i + 1] for i in (0, 2, 4))
    assert len({tuple(o) for o in openings}) == 3
    assert all(len(o) == 2 and set(o) <= set(opening_area(6, 6)) for o in openings)
    assert record["opening_stones"] == 2 and record["win_ratio"] == 0.5
    pipeline.evaluate()
    assert seen[1] != openings  # each evaluation draws its own

    # From the empty board (the default) every game starts from no stones, as before.
    plain = TrainPipeline(tiny_config(eval_games=3), str(tmp_path / "plain"), log=lambda s: None)
    plain.actors.match = match
    assert "opening_stones" not in plain.evaluate() and seen[-1] == [[], [], []]

    # A resume that changes the openings keeps the ladder's rung but no best score.
    pipeline.best_win_ratio = 0.5
    pipeline.save_checkpoint()
    assert TrainPipeline.resume(run, log=lambda s: None).best_win_ratio == 0.5
    changed = TrainPipeline.resume(run, log=lambda s: None, eval_opening_stones=0)
    assert changed.best_win_ratio == 0.0 and changed.pure_playouts == pipeline.pure_playouts
    with pytest.raises(ValueError, match="enough to win"):
        tiny_config(eval_opening_stones=7).validate()


def test_a_bad_rate_or_constant_is_named_in_its_error():
    for name, value in (("lr", -1.0), ("kl_targ", 0.0), ("c_puct", float("nan"))):
        with pytest.raises(ValueError, match=f"^{name} must be positive, got {value}$"):
            TrainConfig(**{name: value}).validate()


@pytest.mark.timeout(30)
def test_the_next_step_lines_name_the_command_the_user_ran(monkeypatch):
    from gomoku.train.pipeline import _commands

    monkeypatch.setattr(sys, "argv", ["/some/venv/bin/gomoku-train", "--preset", "6x6x4"])
    assert _commands() == ("gomoku-train", "gomoku-play")
    monkeypatch.setattr(sys, "argv", ["train.py"])
    assert _commands() == ("python train.py", "python play.py")
