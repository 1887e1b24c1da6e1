import multiprocessing
import os

import pytest

# Modules whose tests start processes, train nets or play whole matches: the slow tier.
# `python -m pytest -m "not slow"` runs the rest, the fast tier, in about a minute.
SLOW_MODULES = {
    "test_actors", "test_arena", "test_bench", "test_commands", "test_engine", "test_engine_fuzz",
    "test_engine_player", "test_engine_soak", "test_grow", "test_interrupt", "test_lifecycle", "test_package",
    "test_pipeline", "test_progress", "test_ray_actors", "test_ray_cluster", "test_ship_model",
    "test_solve_openings", "test_strength_table", "test_time_to_strength", "test_turning_points",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if os.path.splitext(os.path.basename(str(item.fspath)))[0] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


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
