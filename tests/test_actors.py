from gomoku.search.recipe import SelfPlayRecipe
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from gomoku.actors.actors import InlineActors
from gomoku.actors.backends import WORKER_NICE, make_actors
from gomoku.actors.tasks import PUBLISHED, SelfPlaySettings, SelfPlayTask, WorkerError, split
from gomoku.actors.worker_loop import COLLECT, _serve
from gomoku.actors.workers import ProcessActors
from gomoku.search.player_specs import PlayerSpec
from tests.helpers import blocked_signals, tiny_model, tiny_self_play

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = tiny_self_play()


def run_script(body: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ``body`` as a script's main block in a fresh interpreter (nothing imports Paddle first)."""
    script = "if __name__ == '__main__':\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": ROOT})


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_split_spreads_evenly_and_drops_empty_shares():
    assert split(8, 2) == [4, 4] and split(5, 2) == [3, 2] and split(1, 4) == [1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_close_lets_idle_workers_exit_by_themselves(monkeypatch):
    from gomoku.actors import workers

    # Each step of close waits 5 s; an idle worker leaving by itself shuts its interpreter down,
    # Paddle with it, which a busy machine can make longer than that: the test gives it a minute.
    monkeypatch.setattr(workers, "STOP_GRACE_S", 60.0)
    actors = ProcessActors(2, device="cpu")
    procs = [w.proc for w in actors._workers]
    # Idle: serving, with SIGTERM unblocked once Paddle is imported and the worker's handler is in
    # place, however long a busy machine takes to get there (close waits 5 s for an answer).
    deadline = time.monotonic() + 200
    while time.monotonic() < deadline and any(p.is_alive() and blocked_signals(p.pid) & (1 << (signal.SIGTERM - 1))
                                              for p in procs):
        time.sleep(0.1)
    actors.close()
    assert all(p.exitcode == 0 for p in procs)
    actors.close()  # a second close does nothing


def test_a_second_ctrl_c_while_closing_kills_the_workers_without_an_error(monkeypatch):
    actors = ProcessActors(2, device="cpu")
    procs = [w.proc for w in actors._workers]

    def interrupted_join(timeout=None):
        raise KeyboardInterrupt  # what the interrupt handler raises on a second signal

    monkeypatch.setattr(procs[0], "join", interrupted_join)
    actors.close()  # must not raise: the checkpoint is saved, only the workers are left
    for proc in procs:
        type(proc).join(proc, timeout=10)
        assert not proc.is_alive()


def test_starting_and_closing_at_random_moments_of_start_up_never_hangs_or_reaches_paddle(capfd):
    # A signal that lands while a worker imports Paddle must wait for the worker's own handler:
    # Paddle's handler, run in the middle of malloc, deadlocked the worker and then the caller.
    # One random moment in each sixth of the first 2.5 s of start-up, so that every run spreads
    # its moments over the whole window (from before gomoku's import into Paddle's).
    rng, rounds = random.Random(19), 6
    for k in range(rounds):
        actors = ProcessActors(2, device="cpu")
        procs = [w.proc for w in actors._workers]
        time.sleep((k + rng.random()) * 2.5 / rounds)
        actors._pending = 1  # as if a task were in flight: terminate at once, no polite wait
        start = time.monotonic()
        actors.close()
        assert time.monotonic() - start < 20
        # Our handler's exit, or the kill that follows when a loaded machine is slow to import
        # Paddle; never the signal's default action or Paddle's handler.
        assert all(p.exitcode in (0, -signal.SIGKILL) for p in procs), [p.exitcode for p in procs]
    out, err = capfd.readouterr()
    assert "FatalError" not in out + err and "Termination signal" not in out + err


def test_a_worker_starts_with_the_stop_signals_blocked_until_its_handler_is_in_place():
    done = run_script("""
        from gomoku.actors import workers as a

        actors = a.ProcessActors(1, device="cpu")
        actors._workers[0].proc.terminate()  # at once: the worker has not even imported gomoku yet
        actors._workers[0].proc.join(150)  # the import of Paddle first: long on a busy machine
        print("exit", actors._workers[0].proc.exitcode)
        actors.close()
    """, timeout=200)
    assert done.returncode == 0, done.stderr
    assert "exit 0" in done.stdout


def test_tasks_run_while_the_caller_goes_on_one_batch_at_a_time():
    actors = ProcessActors(2, device="cpu")
    try:
        pending = actors._start(["not a task"])  # returns at once; the worker fails later
        with pytest.raises(RuntimeError, match="not been collected"):
            actors._start(["not a task"])
        with pytest.raises(WorkerError, match="not a task"):
            pending.result()
    finally:
        actors.close()


def _niceness(arg, evaluator):
    return os.getpriority(os.PRIO_PROCESS, 0)


def test_training_workers_yield_the_cpu_to_the_learner():
    actors = make_actors(2, "cpu", nice=WORKER_NICE)
    try:
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        # Each worker starts at the caller's priority (Paddle's import, the search core: quick on a
        # busy machine) and lowers it with its first task.
        assert actors.map(_niceness, [0, 1]) == [min(19, mine + WORKER_NICE)] * 2
        deadline = time.monotonic() + 30
        niceness = []
        while time.monotonic() < deadline:
            niceness = [os.getpriority(os.PRIO_PROCESS, pid) for pid in actors.pids]
            if niceness == [min(19, mine + WORKER_NICE)] * 2:
                break
            time.sleep(0.1)
        assert WORKER_NICE > 0 and niceness == [min(19, mine + WORKER_NICE)] * 2
    finally:
        actors.close()


def test_one_worker_means_the_callers_process():
    assert isinstance(make_actors(1, "cpu"), InlineActors)


def test_publish_sends_weights_only_when_they_changed():
    model = tiny_model()
    actors = InlineActors()
    assert actors.publish(model) == 1 and actors.publish(model) == 1
    model.weights_changed()
    assert actors.publish(model) == 2


class CountingActors(InlineActors):
    """Inline actors that count the weights ``publish`` sends and can pretend tasks are in flight."""

    def __init__(self):
        super().__init__()
        self.sent, self.busy = [], False

    def _send_weights(self, model, version):
        super()._send_weights(model, version)
        self.sent.append(version)

    def _in_flight(self):
        return self.busy


def test_the_publish_guard_sends_a_new_model_or_new_weights_and_never_while_tasks_fly():
    first, second = tiny_model(), tiny_model()
    actors = CountingActors()
    assert [actors.publish(first), actors.publish(first), actors.publish(second)] == [1, 1, 2]
    assert actors.sent == [1, 2]
    actors.busy = True
    assert actors.publish(second) == 2  # nothing to send: allowed while tasks fly
    second.weights_changed()
    with pytest.raises(RuntimeError, match="in flight"):
        actors.publish(second)
    actors.busy = False
    assert actors.publish(second) == 3 and actors.sent == [1, 2, 3]
    assert actors._evaluator.model is second


def test_a_published_version_is_exported_for_the_workers_once():
    model = tiny_model()
    actors = ProcessActors(1, device="cpu")
    try:
        assert actors.publish(model) == 1
        first = actors._export_dir
        assert actors.publish(model) == 1 and actors._export_dir == first
        model.weights_changed()
        assert actors.publish(model) == 2 and not os.path.exists(first)
        games, stats = actors.self_play(2, TINY, seed=0)
        assert len(games) == 2 and stats.playouts > 0
    finally:
        actors.close()
    assert not os.path.exists(actors._tmp)


def test_matches_are_the_same_games_in_the_callers_process_and_in_a_worker():
    a, b = PlayerSpec("pure", playouts=30), PlayerSpec("pure", playouts=10)
    openings = [[14], [14], [15], [15]]
    inline, _ = InlineActors().match(a, b, (6, 6, 4), openings, seed=3, parallel=4)
    with ProcessActors(1, device="cpu") as actors:
        remote, _ = actors.match(a, b, (6, 6, 4), openings, seed=3, parallel=4)
    assert [(g.index, g.moves, g.a_colour, g.winner) for g in inline] == \
           [(g.index, g.moves, g.a_colour, g.winner) for g in remote]
    assert [g.a_colour for g in inline] == [1, 2, 1, 2]
    assert all(g.moves[:1] == o for g, o in zip(inline, openings))


def test_a_match_plays_the_published_net():
    model = tiny_model()
    actors = InlineActors()
    with pytest.raises(WorkerError, match="none were published"):
        actors.match(PlayerSpec("az", PUBLISHED, 4), PlayerSpec("pure", playouts=4), (6, 6, 4), [[]], seed=0)
    actors.publish(model)
    games, stats = actors.match(PlayerSpec("az", PUBLISHED, 4), PlayerSpec("pure", playouts=4), (6, 6, 4),
                                [[], []], seed=0)
    assert len(games) == 2 and all(g.winner in (0, 1, 2) for g in games)


class ScriptedConn:
    """The worker's end of the pipe: the caller's messages in order, and for each task
    whether COLLECT is already waiting (True) or the learner is still busy (False)."""

    def __init__(self, messages, collect_waiting):
        self.messages = list(messages)
        self.collect_waiting = list(collect_waiting)
        self.waiting = False
        self.sent = []

    def recv(self):
        message = self.messages.pop(0)
        if isinstance(message, tuple):  # a task: the caller's COLLECT comes now or later
            self.waiting = self.collect_waiting.pop(0)
        return message

    def poll(self):
        return self.waiting

    def send(self, reply):
        self.sent.append(reply)


def test_a_worker_plays_ahead_while_the_learner_is_busy(tmp_path):
    model_dir = str(tmp_path / "weights")
    tiny_model().export_inference(model_dir)
    one_at_a_time = SelfPlaySettings((6, 6, 4), 1, SelfPlayRecipe(n_playout=8))
    task = SelfPlayTask(one_at_a_time, n_games=1, seed=0)
    conn = ScriptedConn([(model_dir, 1, task, False), COLLECT, (model_dir, 1, task, False), COLLECT,
                         (model_dir, 1, task, False), COLLECT, None],
                        collect_waiting=[True, False, True])
    _serve(conn, "cpu", 1)
    (_, (first, s1)), (_, (second, s2)), (_, (third, s3)) = conn.sent
    assert [g.index for g in first + second + third] == [0, 1, 2]
    assert s1.playouts > 0 and s2.playouts > 0
    assert s3.playouts == 0  # game 2 was played ahead, while the learner was busy


class BetweenTasksConn(ScriptedConn):
    """COLLECT is always waiting during a task, and the next task comes late: the worker's
    reply is followed by ``polls_between`` polls that find nothing before the next message."""

    def __init__(self, messages, polls_between):
        super().__init__(messages, [True] * sum(isinstance(m, tuple) for m in messages))
        self.polls_between = polls_between
        self.between = 0

    def recv(self):
        self.between = 0  # the next message came
        return super().recv()

    def poll(self):
        if self.between > 0:
            self.between -= 1
            return False
        return self.waiting

    def send(self, reply):
        super().send(reply)
        self.between = self.polls_between


def test_a_worker_plays_ahead_between_tasks_while_its_caller_waits_for_the_others(tmp_path):
    model_dir = str(tmp_path / "weights")
    tiny_model().export_inference(model_dir)
    one_at_a_time = SelfPlaySettings((6, 6, 4), 1, SelfPlayRecipe(n_playout=8))
    task = SelfPlayTask(one_at_a_time, n_games=1, seed=0)
    # the second task asks for progress: a step it had to play would send some
    conn = BetweenTasksConn([(model_dir, 1, task, False), COLLECT, (model_dir, 1, task, True), COLLECT, None],
                            polls_between=10_000)
    _serve(conn, "cpu", 1)
    (_, (first, s1)), (_, (second, s2)) = conn.sent  # no progress: game 1 was ready
    assert [g.index for g in first + second] == [0, 1]
    assert s1.playouts > 0
    # game 1 was played after the first reply, before the second task came; the second reply
    # counts what was played meanwhile
    assert s2.playouts > 0 and s2.seconds > 0


def test_a_worker_whose_caller_vanished_leaves():
    class Gone:
        def recv(self):
            raise EOFError

    _serve(Gone(), "cpu", 1)  # returns instead of raising in a process nobody reads


def test_workers_hand_out_games_in_order_across_collects():
    model = tiny_model()
    actors = ProcessActors(1, device="cpu")
    try:
        actors.publish(model)
        indices = []
        for sleep in (0, 2, 0):  # 2: the learner's updates, while the worker plays ahead
            pending = actors.start_self_play(1, TINY, seed=0)
            time.sleep(sleep)
            games, _ = pending.result()
            indices += [g.index for g in games]
        assert indices == [0, 1, 2]
    finally:
        actors.close()


def test_a_worker_that_dies_is_a_clear_error():
    actors = ProcessActors(1, device="cpu")
    try:
        pending = actors._start(["not a task"])
        actors._workers[0].proc.kill()
        with pytest.raises(WorkerError, match="died"):
            pending.result()
    finally:
        actors.close()


def test_a_busy_worker_stopped_by_close_prints_no_paddle_report():
    done = run_script("""
        import time
        from gomoku.net.policy_value import PolicyValueModel
        from gomoku.net.spec import NetSpec
        from gomoku.search.recipe import SelfPlayRecipe
        from gomoku.actors.tasks import SelfPlaySettings
        from gomoku.actors.workers import ProcessActors

        actors = ProcessActors(1, device="cpu")
        actors.publish(PolicyValueModel(NetSpec(6, 6, 4), device="cpu"))
        actors.self_play(1, SelfPlaySettings((6, 6, 4), 2, SelfPlayRecipe(n_playout=4)), seed=0)  # Paddle is loaded
        actors.start_self_play(50, SelfPlaySettings((6, 6, 4), 2, SelfPlayRecipe(n_playout=400)), seed=1)
        time.sleep(1)
        actors.close()  # a task in flight: terminated at once
        print("closed")
    """)
    assert done.returncode == 0, done.stderr
    assert "closed" in done.stdout
    report = done.stdout + done.stderr  # Paddle writes its report to both
    assert "FatalError" not in report and "Termination signal" not in report


def test_workers_left_open_are_stopped_at_exit():
    done = run_script("""
        from gomoku.actors.workers import ProcessActors

        actors = ProcessActors(2, device="cpu")
        print(*actors.pids)
    """, timeout=60)
    assert done.returncode == 0, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2 and all(gone(pid) for pid in pids)


def test_workers_die_with_their_parent():
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        if __name__ == "__main__":
            import time
            from gomoku.actors.workers import ProcessActors

            actors = ProcessActors(2, device="cpu")
            print(*actors.pids, flush=True)
            time.sleep(600)
    """)], cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": ROOT})
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(gone(pid) for pid in pids):
            time.sleep(0.1)
        assert len(pids) == 2 and all(gone(pid) for pid in pids)
    finally:
        parent.kill()
        parent.wait(30)


def test_no_two_self_play_games_are_the_same_across_actors_iterations_and_playing_ahead():
    # Two workers, four calls of 4 games (2 each): the streams play ahead between calls, so
    # worker 0's later games run beside worker 1's first ones with the same weights. With seeds
    # of seed + index the two streams repeated each other's games; each game must be new.
    settings = SelfPlaySettings((6, 6, 4), 2, SelfPlayRecipe(n_playout=8))
    games = []
    with ProcessActors(2, device="cpu") as actors:
        actors.publish(tiny_model())
        for call in range(4):
            played, _ = actors.start_self_play(4, settings, seed=100 + call).result()
            games += played
    assert len(games) == 16
    keys = {(g.start_player, tuple(g.moves)) for g in games}
    assert len(keys) == len(games), "two self-play games were the same game"

