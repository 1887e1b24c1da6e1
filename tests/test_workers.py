from gomoku.workers import WorkerPool


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
