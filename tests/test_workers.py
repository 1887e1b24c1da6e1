import os
import time

import pytest

from gomoku.workers import WORKER_NICE, WorkerError, WorkerPool, make_pool


def test_a_second_ctrl_c_while_closing_stops_the_workers_without_an_error(monkeypatch):
    pool = WorkerPool(2, device="cpu", threads=1)
    procs = list(pool._procs)
    first = procs[0]

    def interrupted_join(timeout=None):
        raise KeyboardInterrupt  # what the interrupt handler raises on a second signal

    monkeypatch.setattr(first, "join", interrupted_join)
    pool.close()  # must not raise: the checkpoint is saved, only the workers are left
    for proc in procs:
        type(proc).join(proc, timeout=10)
        assert not proc.is_alive()
    assert pool._procs == [] and pool._conns == []


def test_close_without_interrupts_lets_the_workers_exit(monkeypatch):
    pool = WorkerPool(2, device="cpu", threads=1)
    procs = list(pool._procs)
    pool.close()
    assert all(not p.is_alive() for p in procs)
    assert all(p.exitcode == 0 for p in procs)


def test_tasks_run_while_the_caller_goes_on_one_batch_at_a_time():
    pool = WorkerPool(2, device="cpu", threads=1)
    procs = list(pool._procs)
    try:
        pool.submit(["not a task"], "no-model-here", 1)  # returns at once; the worker fails later
        with pytest.raises(RuntimeError, match="not been collected"):
            pool.submit(["not a task"], "no-model-here", 1)
        with pytest.raises(WorkerError, match="no-model-here|not a task"):
            pool.collect()
    finally:
        pool.close()
    for proc in procs:
        proc.join(timeout=10)
        assert not proc.is_alive()


def test_training_workers_yield_the_cpu_to_the_learner():
    pool = make_pool(2, "cpu")
    try:
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        deadline = time.monotonic() + 30
        niceness = []
        while time.monotonic() < deadline:
            niceness = [os.getpriority(os.PRIO_PROCESS, p.pid) for p in pool._procs]
            if niceness == [min(19, mine + WORKER_NICE)] * 2:
                break
            time.sleep(0.1)
        assert WORKER_NICE > 0 and niceness == [min(19, mine + WORKER_NICE)] * 2
    finally:
        pool.close()
