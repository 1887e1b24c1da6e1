import multiprocessing

import pytest


@pytest.fixture(autouse=True)
def no_process_outlives_its_test():
    """Fails a test that leaves a child process behind (and stops the child), so one test's
    workers cannot slow down the next ones or keep the run from ending."""
    yield
    left = multiprocessing.active_children()
    for proc in left:
        proc.kill()
        proc.join(10)
    assert not left, f"the test left child processes running: {left}"
