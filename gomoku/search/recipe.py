"""The self-play recipe: how each self-play player searches and chooses, declared once.

``SelfPlayRecipe`` holds every setting a self-play player takes, under the names the
trainer's config and flags use (``train.config.TrainConfig`` takes its defaults from here),
and builds the player: PUCT (``MCTSPlayer``) or Gumbel (``GumbelPlayer``), by ``root_search``.
A new self-play option is one field here, its flag in ``TrainConfig``, and its line in
``make_player``; tests/test_recipe.py fails until a field reaches the player.
"""

from __future__ import annotations

from dataclasses import dataclass

from gomoku.search.gumbel import GUMBEL_C_SCALE, GUMBEL_C_VISIT, GUMBEL_M, GumbelPlayer
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.search.playout_cap import N_FAST
from gomoku.search.tree_threats import DEFENCE_VCT_NODES, ROOT_VCT_NODES, VCT_DEPTH, VctBudgets

ROOT_SEARCHES = ("puct", "gumbel")
"""self-play's root searches: AlphaZero's PUCT (``MCTSPlayer``) and Gumbel (``GumbelPlayer``)"""


def check_root_search(root_search: str) -> None:
    """Raises ValueError unless ``root_search`` names one of ``ROOT_SEARCHES``."""
    if root_search not in ROOT_SEARCHES:
        raise ValueError(f"root_search must be one of {', '.join(ROOT_SEARCHES)}, got {root_search!r}")


@dataclass(frozen=True)
class SelfPlayRecipe:
    """Every setting of a self-play player; ``TrainConfig`` documents each one for its flag."""

    n_playout: int = 400
    c_puct: float = 5.0
    root_search: str = "puct"
    dirichlet_alpha: float = 0.3
    noise_frac: float = 0.25
    explore_moves: int = 0
    p_full: float = 1.0
    n_fast: int = N_FAST
    forced_k: float = 0.0
    gumbel_m: int = GUMBEL_M
    gumbel_c_visit: float = GUMBEL_C_VISIT
    gumbel_c_scale: float = GUMBEL_C_SCALE
    win_check: bool = False
    threats: bool = False
    vct_depth: int = VCT_DEPTH
    vct_nodes: int = ROOT_VCT_NODES
    defence_vct_nodes: int = DEFENCE_VCT_NODES

    def __post_init__(self):
        check_root_search(self.root_search)
        self.full_vct()  # checks the budgets

    def full_vct(self) -> VctBudgets:
        """The root VCT searches of a full search (``threats`` on)."""
        return VctBudgets(self.vct_depth, self.vct_nodes, self.defence_vct_nodes)

    def make_player(self, evaluator, seed: int, name: str = "self-play"):
        """The self-play player of this recipe, with its own random stream from ``seed``."""
        if self.root_search == "gumbel":
            return GumbelPlayer(evaluator, n_playout=self.n_playout, gumbel_m=self.gumbel_m,
                                gumbel_c_visit=self.gumbel_c_visit, gumbel_c_scale=self.gumbel_c_scale,
                                p_full=self.p_full, n_fast=self.n_fast, win_check=self.win_check,
                                threats=self.threats, seed=seed, name=name, full_vct=self.full_vct())
        return MCTSPlayer(evaluator, c_puct=self.c_puct, n_playout=self.n_playout, self_play=True,
                          dirichlet_alpha=self.dirichlet_alpha, noise_frac=self.noise_frac,
                          explore_moves=self.explore_moves, p_full=self.p_full, n_fast=self.n_fast,
                          forced_k=self.forced_k, win_check=self.win_check, threats=self.threats, seed=seed,
                          name=name, full_vct=self.full_vct())
