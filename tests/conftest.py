import multiprocessing
import os

import pytest

# Modules whose tests start processes, train nets or play whole matches: the slow tier.
# `python -m pytest -m "not slow"` runs the rest, the fast tier.
SLOW_MODULES = {
    "test_actors", "test_arena", "test_bench", "test_commands", "test_engine", "test_engine_check", "test_engine_fuzz",
    "test_engine_player", "test_engine_soak", "test_grow", "test_gumbel_rounds", "test_interrupt",
    "test_lifecycle", "test_package", "test_pipeline", "test_progress", "test_ray_actors", "test_ray_cluster",
    "test_ship_model", "test_solve_openings", "test_stops", "test_strength_table", "test_time_to_strength", "test_turning_points",
}


# Single tests of the fast modules that take seconds each (games played to the end, short runs of
# the trainer): the slow tier too, so that the fast tier stays near a minute. The golden games and
# one identical-games test of the compiled core stay fast.
SLOW_TESTS = {
    "test_core::test_15x15_games_are_the_same", "test_core::test_puct_games_are_the_same_to_the_bit_on_8x8",
    "test_core::test_renju_games_are_the_same",
    "test_core_compile::test_two_processes_that_start_together_compile_the_core_once",
    "test_core_single::test_the_engine_answers_the_same_on_the_core_as_on_the_python_tree",
    "test_core_threats::test_threats_on_input_v2_games_are_the_same_on_the_core",
    "test_engine_agreement::test_a_run_logs_its_probe_every_iteration_and_refuses_one_for_another_rule",
    "test_engine_agreement::test_buffer_updates_scores_the_probe_as_updates_go_and_leaves_the_run_alone",
    "test_engine_clock::test_playouts_ten_times_slower_than_usual_do_not_make_the_answers_late",
    "test_engine_clock::test_the_watchdog_answers_for_a_search_stuck_in_one_playout",
    "test_engine_notes::test_a_rule_and_a_model_changed_together_warn_once",
    "test_features::test_a_run_trains_version_two_from_scratch_and_from_a_carried_over_model",
    "test_heuristic::test_training_evaluates_against_the_heuristic_ladder_and_resumes",
    "test_model_paths::test_a_file_that_is_not_a_model_says_what_was_expected",
    "test_model_paths::test_play_py_plays_a_run_directory_and_says_which_model",
    "test_openings::test_the_generator_keeps_only_near_even_openings_and_says_why",
    "test_rule_training::test_a_run_carries_a_freestyle_model_over_to_renju",
    "test_selfplay_options::test_pipeline_iterations_with_the_options",
    "test_threat_search::test_threat_searches_restore_the_board_and_stay_consistent_in_random_games",
}


# Modules whose tests start Ray clusters: one test process runs them one after another (pytest-xdist's
# group), since a Ray cluster that one test starts is found by another's ray.init() through the
# address file Ray writes for the machine.
RAY_MODULES = {"test_ray_actors", "test_ray_cluster"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = os.path.splitext(os.path.basename(str(item.fspath)))[0]
        if module in SLOW_MODULES or f"{module}::{item.originalname}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        if module in RAY_MODULES:
            item.add_marker(pytest.mark.xdist_group("ray"))


@pytest.fixture(autouse=True, scope="session")
def compiled_search_core():
    """Compiles the search core once, before the first test (or loads it from numba's cache, in
    under a second): the engines and players the tests start then find it cached, instead of each
    compiling it in a process of its own while the test runs. The compile itself happens once per
    machine: the other test processes wait for the one that compiles (``search.core.cache.compile_lock``)."""
    from gomoku.search.core import core_enabled

    if core_enabled():
        from gomoku.search.core.single import core_ready

        core_ready()
    yield


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
