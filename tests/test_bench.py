import pytest

from gomoku.net.device import cpu_has_bf16
from gomoku.train.bench import format_table, main, run_benchmark


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


@pytest.mark.skipif(not cpu_has_bf16(), reason="the CPU has no native bf16")
def test_the_benchmark_measures_each_precision_side_by_side(tmp_path):
    from gomoku.net.policy_value import PolicyValueModel
    from gomoku.net.spec import NetSpec

    path = tmp_path / "sizefree.npz"
    PolicyValueModel(NetSpec(6, 6, 4, "sizefree", 1, 8), device="cpu").save(str(path))
    results = run_benchmark(6, 6, 4, n_playout=8, workers=1, parallel=4, pure_parallel=2, pure_playouts=20,
                            seconds=0.2, device="cpu", log=lambda line: None, precisions=("fp32", "bf16"),
                            sizefree_sizes=(7,), model_path=str(path))
    for key in ("nn_positions_per_s", "nn_positions_per_s_bf16", "selfplay_playouts_per_s_bf16",
                "selfplay_games_per_hour_bf16", "nn_positions_per_s_sizefree_7x7_bf16",
                "nn_positions_per_s_conv3_7x7"):
        assert results[key] > 0, key
    assert results["precision"] == "fp32" and results["net"] == str(path)
    table = format_table(results)
    assert "selfplay_games_per_hour_bf16" in table and "nn_positions_per_s_sizefree_7x7_bf16" in table


def test_bad_precisions_are_refused(capsys):
    for flags in (["--precisions", "fp16"], ["--precisions", "fp32,fp32"]):
        with pytest.raises(SystemExit):
            main(flags)
        assert "precision" in capsys.readouterr().err


def test_the_benchmark_plays_the_gumbel_recipe_on_both_trees_and_a_sweep_side_by_side():
    results = run_benchmark(7, 7, 4, n_playout=8, workers=1, parallel=3, pure_parallel=2, pure_playouts=20,
                            seconds=0.2, device="cpu", log=lambda line: None, sizefree_sizes=(),
                            root_search="gumbel", threats=True, opening_stones=2, moves_per_game=20,
                            trees=("reference", "compiled"), sweep=(2,))
    for key in ("selfplay_share_of_nn", "selfplay_share_of_nn_reference", "sweep_2_nn_positions_per_s",
                "sweep_2_selfplay_playouts_per_s", "sweep_2_selfplay_share_of_nn"):
        assert results[key] > 0, key
    table = format_table(results)
    assert "selfplay_share_of_nn_reference" in table and "sweep_2_selfplay_share_of_nn" in table
    assert results["selfplay_playouts_per_s"] > 0 and results["selfplay_moves_per_game"] == 20
    # games per hour from the given length; playouts/s is rounded to a whole number in the results,
    # which moves games per hour by up to half a playout's worth (large on a slow machine)
    assert results["selfplay_games_per_hour"] == pytest.approx(results["selfplay_playouts_per_s"] * 3600 / (20 * 8),
                                                               abs=0.5 * 3600 / (20 * 8) + 1)
    assert results["selfplay_recipe"] == "gumbel, threats on, opening stones 2, freestyle"


def test_the_benchmark_plays_renju_and_refuses_a_rule_its_board_cannot_hold(capsys):
    results = run_benchmark(9, 9, 5, n_playout=8, workers=1, parallel=2, pure_parallel=1, pure_playouts=10,
                            seconds=0.2, device="cpu", log=lambda line: None, sizefree_sizes=(),
                            root_search="gumbel", threats=True, moves_per_game=20, training=False, rule="renju")
    assert results["selfplay_recipe"].endswith(", renju") and results["selfplay_playouts_per_s"] > 0
    with pytest.raises(SystemExit):
        main(["--rule", "renju", "--n-in-row", "4", "--width", "9", "--height", "9"])
    assert "renju is played with five in a row" in capsys.readouterr().err


def test_the_benchmark_plays_with_a_playout_cap_and_counts_its_expected_playouts_a_move(capsys):
    results = run_benchmark(7, 7, 4, n_playout=8, workers=1, parallel=2, pure_parallel=1, pure_playouts=10,
                            seconds=0.2, device="cpu", log=lambda line: None, sizefree_sizes=(), moves_per_game=20,
                            training=False, p_full=0.5, n_fast=2)
    assert results["selfplay_recipe"].endswith(", playout cap 0.5 of moves full, the rest 2")
    # a move costs 0.5 * 8 + 0.5 * 2 = 5 playouts on average
    assert results["selfplay_games_per_hour"] == pytest.approx(results["selfplay_playouts_per_s"] * 3600 / (20 * 5),
                                                               abs=0.5 * 3600 / (20 * 5) + 1)
    with pytest.raises(SystemExit):
        main(["--p-full", "0"])
    assert "p_full must be in (0, 1]" in capsys.readouterr().err


def test_the_benchmark_offers_every_input_version(capsys):
    from gomoku.game.features import INPUT_VERSIONS

    with pytest.raises(SystemExit):
        main(["--help"])
    assert f"--inputs {{{','.join(map(str, INPUT_VERSIONS))}}}" in capsys.readouterr().out
