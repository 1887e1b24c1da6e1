from gomoku.train.bench import format_table, run_benchmark


def test_the_benchmark_measures_every_figure_on_a_small_board():
    lines = []
    results = run_benchmark(6, 6, 4, n_playout=8, workers=2, parallel=4, pure_parallel=2, pure_playouts=20,
                            seconds=0.3, device="cpu", log=lines.append)
    for key in ("nn_positions_per_s", "selfplay_playouts_per_s", "selfplay_games_per_hour", "pure_playouts_per_s",
                "train_step_s", "update_s", "publish_s", "task_roundtrip_ms", "weights_bytes",
                "game_bytes_per_move"):
        assert results[key] > 0, key
    assert results["actors"] == "local" and len(lines) >= 4
    assert "selfplay_playouts_per_s" in format_table(results)
