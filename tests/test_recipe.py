"""The self-play recipe is declared once and every setting in it reaches the player.

For each field of ``SelfPlayRecipe``, a ``TrainConfig`` with a value other than the default
goes through ``SelfPlaySettings.from_config`` to the player that ``make_player`` builds, and
the player must hold that value. A field added to the recipe fails here until it reaches a
player (and ``WHERE`` says where to read it); a field added to ``TrainConfig`` fails until it
is sorted into the recipe, the games' settings, or the fields that are not self-play's.
"""

from dataclasses import fields, replace

import pytest

from gomoku.search.recipe import SelfPlayRecipe
from gomoku.train.config import TrainConfig
from gomoku.actors.tasks import SelfPlaySettings

# Where each kind of player keeps each recipe setting.
WHERE = {
    "puct": {"n_playout": "n_playout", "c_puct": "mcts.c_puct", "dirichlet_alpha": "dirichlet_alpha",
             "noise_frac": "noise_frac", "explore_moves": "explore_moves", "p_full": "p_full", "n_fast": "n_fast",
             "forced_k": "forced_k", "win_check": "mcts.win_check", "threats": "mcts.threats",
             "vct_depth": "full_vct.depth", "vct_nodes": "full_vct.nodes", "defence_vct_nodes": "full_vct.defence_nodes"},
    "gumbel": {"n_playout": "n_playout", "gumbel_m": "gumbel_m", "gumbel_c_visit": "tree.c_visit",
               "gumbel_c_scale": "tree.c_scale", "p_full": "p_full", "n_fast": "n_fast",
               "win_check": "tree.win_check", "threats": "tree.threats",
               "vct_depth": "full_vct.depth", "vct_nodes": "full_vct.nodes", "defence_vct_nodes": "full_vct.defence_nodes"},
}
OTHER_VALUES = {"n_playout": 37, "c_puct": 2.5, "dirichlet_alpha": 0.11, "noise_frac": 0.4, "explore_moves": 7,
                "p_full": 0.5, "n_fast": 9, "forced_k": 1.5, "gumbel_m": 5, "gumbel_c_visit": 30.0,
                "gumbel_c_scale": 0.7, "win_check": True, "threats": True, "vct_depth": 4, "vct_nodes": 3000,
                "defence_vct_nodes": 300}
# TrainConfig's fields that are the games' settings (SelfPlaySettings), and those that are not
# self-play's at all (the board and the net, training, evaluation, where the games run).
GAME_FIELDS = {"opening_stones", "openings", "openings_share", "rule"}
NOT_SELF_PLAY = {"actors", "arch", "batch_size", "buffer_size", "check_freq", "device", "engine_info",
                 "epochs", "eval_games", "eval_opening_stones", "eval_openings", "eval_opponent",
                 "eval_playouts", "game_batch_num", "games_per_iter", "height", "heuristic_level_start",
                 "inputs", "kl_targ", "lr", "lr_multiplier_start", "n_in_row", "parallel_games",
                 "precision", "probe_games", "pure_playout_max", "pure_playout_start",
                 "pure_playout_step", "ray_address", "res_blocks", "res_filters", "seed",
                 "size_schedule", "sizefree_blocks", "sizefree_filters", "sizes", "stage_iters",
                 "updates_per_iter", "value_mix", "warm_start_fill", "weight_decay", "width", "workers",
                 # the learner and the gate (gomoku/train/learner.py, gate.py) and the net's pooling
                 "fresh_batches", "window_floor", "average_decay", "lr_patience", "lr_cut", "lr_scale_min",
                 "lr_min_delta", "gate_games", "gate_score", "global_pool"}


def _read(player, where):
    value = player
    for part in where.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("name", [f.name for f in fields(SelfPlayRecipe) if f.name != "root_search"])
def test_every_setting_of_the_config_reaches_the_player(name):
    reached = False
    for root_search, where in WHERE.items():
        config = TrainConfig(root_search=root_search, **{name: OTHER_VALUES[name]})
        if name == "forced_k" and root_search == "gumbel":
            continue  # the config refuses forced playouts with Gumbel
        recipe = SelfPlaySettings.from_config(config, (8, 8, 5), 2).recipe
        assert getattr(recipe, name) == OTHER_VALUES[name] != getattr(SelfPlayRecipe(), name)
        player = recipe.make_player(evaluator=None, seed=0)
        if name in where:
            assert _read(player, where[name]) == OTHER_VALUES[name], f"{name} does not reach the {root_search} player"
            reached = True
    assert reached, f"{name} reaches no player"


def test_the_root_search_chooses_the_player():
    assert type(SelfPlayRecipe(root_search="gumbel").make_player(None, 0)).__name__ == "GumbelPlayer"
    assert type(SelfPlayRecipe().make_player(None, 0)).__name__ == "MCTSPlayer"
    with pytest.raises(ValueError):
        SelfPlayRecipe(root_search="beam")


def test_the_config_takes_the_recipe_defaults_and_sorts_every_self_play_field():
    config = TrainConfig()
    for f in fields(SelfPlayRecipe):
        assert getattr(config, f.name) == f.default
    game_fields = {f.name for f in fields(SelfPlaySettings)} - {"board_shape", "parallel", "recipe", "opening_book"}
    assert game_fields <= {f.name for f in fields(TrainConfig)}
    defaults = {f.name: f.default for f in fields(SelfPlaySettings) if f.name in ("opening_stones", "rule")}
    assert defaults == {name: getattr(config, name) for name in defaults}  # the games' defaults are the config's
    settings = SelfPlaySettings.from_config(replace(config, opening_stones=3, rule="standard"), (8, 8, 5), 2)
    assert (settings.opening_stones, settings.rule) == (3, "standard")
    assert game_fields <= GAME_FIELDS


def test_every_field_of_the_config_is_sorted():
    recipe = {f.name for f in fields(SelfPlayRecipe)}
    unsorted = {f.name for f in fields(TrainConfig)} - recipe - GAME_FIELDS - NOT_SELF_PLAY
    assert not unsorted, f"sort these TrainConfig fields into the recipe, the games' settings or NOT_SELF_PLAY: {unsorted}"
