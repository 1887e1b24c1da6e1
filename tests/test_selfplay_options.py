"""Self-play options of docs/algorithm.md, section 7: playout cap randomisation, forced playouts with pruning,
Gumbel root search, value target mixing."""

import math

import numpy as np
import pytest

from gomoku.game.board import Board
from gomoku.search.gumbel import GumbelNode, GumbelPlayer, GumbelTree, improved_policy
from gomoku.search.mcts import MCTS
from gomoku.search.mcts_player import MCTSPlayer
from gomoku.train.config import TrainConfig
from gomoku.search.recipe import SelfPlayRecipe
from gomoku.actors.selfplay import GameByGame, game_seeds, play_game, training_arrays, self_play_games
from gomoku.actors.tasks import SelfPlaySettings
from tests.helpers import HashEvaluator


class ConstantEvaluator:
    """Uniform priors and the same value everywhere: a search learns nothing new from it."""

    def evaluate(self, boards):
        return np.full((len(boards), boards[0].size), 1.0 / boards[0].size), np.zeros(len(boards))


def fresh_board():
    board = Board(6, 6, 4)
    board.do_move(14)
    return board


def _search(player, board):
    """The player's search through its two halves, then its decision (``SearchResult``)."""
    while (leaf := player.next_leaf(board)) is not None:
        priors, values = player.evaluator.evaluate([board])
        player.receive(leaf, board, priors[0], float(values[0]))
    return player.choose(board)


# ------------------------------------------------------------ playout cap randomisation
def test_playout_cap_records_only_full_searches_and_about_p_full_of_them():
    player = MCTSPlayer(HashEvaluator(), n_playout=12, n_fast=3, p_full=0.25, self_play=True, seed=1)
    board = fresh_board()
    recorded = []
    for _ in range(400):
        result = _search(player, board)
        visits = player.mcts.root.N
        assert visits in (3, 12)
        assert result.recorded == (visits == 12)
        recorded.append(result.recorded)
        player.reset()
    assert 0.18 < np.mean(recorded) < 0.32


def test_playout_cap_in_self_play_records_a_subset_with_the_game_result():
    games, stats = self_play_games(HashEvaluator(), (6, 6, 4), n_games=4, parallel=2, n_playout=16,
                                   c_puct=5.0, seed=5, p_full=0.4, n_fast=4)
    moves = sum(len(g.moves) for g in games)
    positions = sum(len(g.to_move) for g in games)
    assert 0 < positions < moves
    for g in games:
        assert len(g.planes) == len(g.pis) == len(g.to_move) == len(g.root_values)
        stones = g.planes[:, :2].sum(axis=(1, 2, 3)).astype(int)  # which ply each position is
        assert len(set(stones)) == len(stones) and all(0 <= s < len(g.moves) for s in stones)
        for s, to_move, pi in zip(stones, g.to_move, g.pis):
            assert to_move == (g.start_player if s % 2 == 0 else 3 - g.start_player)
            assert np.all(pi[g.moves[:s]] == 0) and abs(pi.sum() - 1) < 1e-5
        z = g.outcomes()
        assert np.all(z == np.where(g.to_move == g.winner, 1, -1)) or g.winner == 0
    # full searches spend n_playout, fast ones n_fast: between the two per move
    assert 4 * stats.moves < stats.playouts < 16 * stats.moves


def test_a_game_with_no_full_search_records_nothing():
    games, _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=1, parallel=1, n_playout=8,
                               c_puct=5.0, seed=0, p_full=1e-9, n_fast=2)
    planes, pis, zs = training_arrays(games)
    assert planes.shape == (0, 4, 6, 6) and pis.shape == (0, 36) and zs.shape == (0,)


@pytest.mark.parametrize("root_search", ["puct", "gumbel"])
def test_one_game_played_alone_is_the_lockstep_game_on_the_python_trees(root_search):
    settings = dict(n_playout=12, c_puct=5.0, root_search=root_search, gumbel_m=4, p_full=0.75, n_fast=4)
    recipe = SelfPlayRecipe(**settings)
    player = recipe.make_player(HashEvaluator(), game_seeds(3, 0)[0])
    game = play_game(player, Board(6, 6, 4, start_player=1))
    assert game.winner in (0, 1, 2) and len(game.moves) >= 7
    assert 0 < len(game.to_move) <= len(game.moves) and game.planes.shape == (len(game.to_move), 4, 6, 6)
    (same,), _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=1, parallel=1, seed=3, compiled=False,
                                 **settings)
    assert game.moves == same.moves and game.winner == same.winner
    assert np.array_equal(game.pis, same.pis) and np.array_equal(game.planes, same.planes)
    assert np.array_equal(game.outcomes(), same.outcomes()) and np.array_equal(game.root_values, same.root_values)


@pytest.mark.parametrize("root_search", ["puct", "gumbel"])
def test_one_game_at_a_time_plays_the_lockstep_streams_games_on_the_python_trees(root_search):
    # The in-process actor's stream at one game at a time: game i of the lockstep stream of the same
    # settings and seed (its opening, its player's seed), across calls, in the order of the index.
    settings = dict(n_playout=12, c_puct=5.0, root_search=root_search, gumbel_m=4, p_full=0.75, n_fast=4)
    stream = GameByGame(HashEvaluator(), SelfPlaySettings((6, 6, 4), 1, SelfPlayRecipe(**settings),
                                                          opening_stones=2), seed=9)
    (first, second), stats = stream.collect(2)
    (third,), _ = stream.collect(1)
    reference, _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=3, parallel=1, seed=9, compiled=False,
                                   opening_stones=2, **settings)
    assert [g.index for g in (first, second, third)] == [0, 1, 2]
    for game, same in zip((first, second, third), reference):
        assert game.moves == same.moves and game.winner == same.winner and game.start_player == same.start_player
        assert np.array_equal(game.pis, same.pis) and np.array_equal(game.planes, same.planes)
        assert np.array_equal(game.to_move, same.to_move) and np.array_equal(game.root_values, same.root_values)
    assert stats.games == 2 and 0 < stats.moves <= len(first.moves) + len(second.moves) and stats.playouts > 0
    assert stream.snapshot() == {"seed": 9, "next": 3, "started": 3, "finished": [], "playing": []}


# ------------------------------------------------------------ forced playouts and pruning
def forced_counts(root, k):
    return np.sqrt(k * root.child_P * root.child_N.sum())


def test_forced_playouts_give_every_root_child_its_forced_count():
    board = fresh_board()
    plain = MCTSPlayer(HashEvaluator(), n_playout=300, seed=0)
    plain.get_action(board)
    short_plain = plain.mcts.root.child_N < np.floor(forced_counts(plain.mcts.root, 2.0))
    assert short_plain.any()  # without forcing, PUCT leaves some moves below the count

    forced = MCTSPlayer(HashEvaluator(), n_playout=300, forced_k=2.0, self_play=True, seed=0)
    forced.get_action(board)
    root = forced.mcts.root
    # a child below its count is chosen at the next playout; the count creeps up by less
    # than one visit per playout, so at the end no child is more than one visit short
    assert np.all(root.child_N >= np.floor(forced_counts(root, 2.0)) - 1)


def brute_force_prune(tree, k):
    """Pruning one visit at a time, straight from the definition."""
    root = tree.root
    visits = root.child_N
    best = root.best_index()
    scale = tree.c_puct * math.sqrt(root.N)
    best_value = root.child_Q[best] + scale * root.child_P[best] / (1 + visits[best])
    out = visits.copy()
    for c in range(len(visits)):
        if c == best:
            continue
        limit = math.sqrt(k * root.child_P[c] * visits.sum())
        n = visits[c]
        while n >= 1 and visits[c] - (n - 1) <= limit + 1e-12 and \
                root.child_Q[c] + scale * root.child_P[c] / n < best_value:
            n -= 1
        out[c] = 0 if n <= 1 else n
    return out


def test_pruning_matches_its_definition_and_never_raises_a_count_nor_touches_the_best():
    rng = np.random.default_rng(3)
    for trial in range(200):
        tree = MCTS(c_puct=float(rng.uniform(0.5, 5)))
        root = tree.root
        k = 12
        root.moves = np.arange(k)
        root.child_P = rng.dirichlet(np.ones(k))
        root.child_N = rng.integers(0, 60, size=k).astype(float)
        root.child_Q = rng.uniform(-1, 1, size=k)
        root.N = int(root.child_N.sum()) + 1
        pruned = tree.pruned_counts(2.0)
        best = root.best_index()
        assert pruned[best] == root.child_N[best]
        assert np.all(pruned <= root.child_N) and not np.any(pruned == 1)
        np.testing.assert_array_equal(pruned, brute_force_prune(tree, 2.0))


def test_forced_playouts_prune_the_training_pi():
    board = fresh_board()
    player = MCTSPlayer(HashEvaluator(), n_playout=300, forced_k=2.0, self_play=True, seed=0)
    _, pi = player.get_action(board, return_probs=True)
    root = player.mcts.root
    pruned = player.mcts.pruned_counts(2.0)
    assert pruned.sum() < root.child_N.sum()
    expected = np.zeros(board.size)
    expected[root.moves] = pruned / pruned.sum()
    np.testing.assert_allclose(pi, expected, atol=1e-8)


# ------------------------------------------------------------ Gumbel root search
@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 64])
def test_gumbel_spends_exactly_n_simulations_and_its_target_sums_to_one(n):
    board = fresh_board()
    evaluator = HashEvaluator()
    player = GumbelPlayer(evaluator, n_playout=n, seed=n)
    move, pi = player.get_action(board, return_probs=True)
    assert player.tree.root.child_N.sum() == n
    assert sum(evaluator.batches) == n + 1  # and the root's own evaluation
    assert board.cells[move] == 0
    assert pi[14] == 0 and abs(pi.sum() - 1) < 1e-9


def test_gumbel_sequential_halving_schedule():
    # n = 64, m = 16: four phases of 16 simulations over 16, 8, 4, 2 moves
    board = fresh_board()
    player = GumbelPlayer(HashEvaluator(), n_playout=64, seed=0)
    move, _ = player.get_action(board, return_probs=True)
    visits = player.tree.root.child_N
    assert sorted(visits[visits > 0]) == [1] * 8 + [3] * 4 + [7] * 2 + [15] * 2
    assert visits[list(player.tree.root.moves).index(move)] == 15


def test_gumbel_with_two_simulations_improves_the_prior_when_values_differ():
    board = fresh_board()
    player = GumbelPlayer(HashEvaluator(), n_playout=2, seed=0)
    move, pi = player.get_action(board, return_probs=True)
    root = player.tree.root
    assert move in root.moves and board.cells[move] == 0
    prior = np.zeros(board.size)
    prior[root.moves] = root.child_P
    assert np.abs(pi - prior).max() > 1e-3
    # the visited move with the higher value gains against the other
    a, b = np.flatnonzero(root.child_N)
    better, worse = (a, b) if root.child_Q[a] > root.child_Q[b] else (b, a)
    assert pi[root.moves[better]] / prior[root.moves[better]] > pi[root.moves[worse]] / prior[root.moves[worse]]


def test_gumbel_target_is_the_prior_when_every_value_is_the_same():
    board = fresh_board()
    player = GumbelPlayer(ConstantEvaluator(), n_playout=8, seed=0)
    _, pi = player.get_action(board, return_probs=True)
    legal = board.legal_moves()
    np.testing.assert_allclose(pi[legal], 1.0 / len(legal), atol=1e-12)


def test_gumbel_selection_below_the_root():
    node = GumbelNode()
    node.moves = np.arange(4)
    node.child_P = np.array([0.4, 0.3, 0.2, 0.1])
    node.child_N = np.array([3.0, 0.0, 1.0, 0.0])
    node.child_Q = np.array([-0.5, 0.0, 0.8, 0.0])
    node.v = 0.1
    tree = GumbelTree(c_visit=50, c_scale=0.1)
    pi = improved_policy(node, 50, 0.1)
    assert tree.select_index(node) == int(np.argmax(pi - node.child_N / 5.0))
    # completed values: unvisited moves take v_mix, between the visited values and v
    assert pi[2] > pi[0]  # the visited move with the best value gains on the more likely one


def test_gumbel_games_in_lockstep_equal_games_played_alone():
    kwargs = dict(c_puct=5.0, root_search="gumbel")
    together, stats = self_play_games(HashEvaluator(), (6, 6, 4), n_games=4, parallel=4, n_playout=6,
                                      seed=11, **kwargs)
    for i in range(4):
        # game i of the stream opens with player 1 + i % 2 and searches with its own seed
        board = Board(6, 6, 4, start_player=1 + i % 2)
        player = GumbelPlayer(HashEvaluator(), n_playout=6, seed=game_seeds(11, i)[0], name="self-play")
        pis = []
        while not board.game_over:
            move, pi = player.get_action(board, return_probs=True)
            pis.append(pi)
            board.do_move(move)
            player.notify_move(move)
        assert board.history == together[i].moves
        np.testing.assert_array_equal(np.array(pis, dtype=together[i].pis.dtype), together[i].pis)
    assert stats.playouts == 7 * stats.moves  # six simulations and the root, every move


# ------------------------------------------------------------ value target mixing
def test_value_mixing():
    games, _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=2, parallel=2, n_playout=10,
                               c_puct=5.0, seed=2)
    _, _, z = training_arrays(games)
    _, _, z0 = training_arrays(games, value_mix=0.0)
    _, _, z1 = training_arrays(games, value_mix=1.0)
    _, _, zh = training_arrays(games, value_mix=0.5)
    np.testing.assert_array_equal(z0, np.concatenate([g.outcomes() for g in games]))
    np.testing.assert_array_equal(z0, z)
    q = np.concatenate([g.root_values for g in games])
    np.testing.assert_allclose(z1, q, atol=1e-6)
    np.testing.assert_allclose(zh, 0.5 * z + 0.5 * q, atol=1e-6)
    assert np.all(np.abs(q) <= 1) and np.any(q != 0)
    with pytest.raises(ValueError, match="value_mix"):
        training_arrays(games, value_mix=1.5)


def test_root_value_is_the_visit_weighted_mean():
    player = MCTSPlayer(HashEvaluator(), n_playout=50, seed=0)
    board = fresh_board()
    while (leaf := player.next_leaf(board)) is not None:
        priors, values = player.evaluator.evaluate([board])
        player.receive(leaf, board, priors[0], float(values[0]))
    root = player.mcts.root
    result = player.choose(board)
    assert result.root_value == pytest.approx((root.child_N * root.child_Q).sum() / root.child_N.sum())


@pytest.mark.parametrize("bad, message", [
    (dict(p_full=0.0), "p_full"), (dict(value_mix=-0.1), "value_mix"), (dict(n_fast=0), "n_fast"),
    (dict(root_search="alpha"), "root_search"), (dict(root_search="gumbel", forced_k=2.0), "forced_k"),
    (dict(gumbel_c_scale=0.0), "gumbel_c_scale"), (dict(p_full=0.5, n_playout=50, n_fast=100), "n_fast"),
    (dict(win_check=2), "win_check"),
])
def test_config_rejects_bad_option_values(bad, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**bad).validate()


# ------------------------------------------------------------ through the pipeline
@pytest.mark.parametrize("options", [
    dict(p_full=0.5, n_fast=4, forced_k=2.0, value_mix=0.3),
    dict(root_search="gumbel", n_playout=4, p_full=0.5, n_fast=2, opening_stones=2, win_check=True),
    dict(p_full=0.5, n_fast=4, win_check=True, check_freq=3),  # and an evaluation with it
])
def test_pipeline_iterations_with_the_options(tmp_path, options):
    from gomoku.train.pipeline import TrainPipeline
    from tests.helpers import tiny_config

    pipeline = TrainPipeline(tiny_config(**{"batch_size": 16, "check_freq": 100, **options}), str(tmp_path))
    records = [pipeline.run_iteration() for _ in range(3)]
    for record in records:
        # the episode length counts every move; only the full searches' positions are recorded
        assert 0 < record["positions"] < 2 * record["episode_len"]
    assert len(pipeline.buffer) == 8 * sum(r["positions"] for r in records)
    assert "loss" in records[-1]


# ------------------------------------------------------------ opening stones
@pytest.mark.parametrize("root_search", ["puct", "gumbel"])
def test_opening_stones_start_games_from_central_stones_that_are_not_recorded(root_search):
    from gomoku.game.openings import opening_area

    games, _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=12, parallel=4, n_playout=8, c_puct=5.0,
                               seed=3, root_search=root_search, opening_stones=2)
    area = set(opening_area(6, 6))
    counts = []
    for g in games:
        # the first recorded position holds the opening; every later move was searched and recorded
        stones = g.planes[:, :2].sum(axis=(1, 2, 3)).astype(int)
        k = int(stones[0])
        counts.append(k)
        assert len(g.to_move) == len(g.moves) - k and list(stones) == list(range(k, len(g.moves)))
        assert set(g.moves[:k]) <= area and len(set(g.moves[:k])) == k
        # the starting player (Black) placed the opening's first stone
        assert g.to_move[0] == (g.start_player if k % 2 == 0 else 3 - g.start_player)
    assert set(counts) == {0, 1, 2}  # 0 to 2 stones, the empty board included
    assert len({tuple(g.moves[:2]) for g in games if len(g.moves) >= 2}) > 1
    again, _ = self_play_games(HashEvaluator(), (6, 6, 4), n_games=12, parallel=3, n_playout=8, c_puct=5.0,
                               seed=3, root_search=root_search, opening_stones=2)
    # seeded, whatever the parallelism
    openings = [g.moves[:k] for g, k in zip(games, counts)]
    assert [g.moves[:int(g.planes[0, :2].sum())] for g in again] == openings


def test_opening_stones_that_do_not_fit_every_board_of_the_run_are_refused():
    TrainConfig(width=6, height=6, n_in_row=4, opening_stones=2).validate()
    with pytest.raises(ValueError, match="enough to win"):
        TrainConfig(width=6, height=6, n_in_row=4, opening_stones=7).validate()
    with pytest.raises(ValueError, match="does not fit"):  # a 4x4 board has 4 central cells
        TrainConfig(width=9, height=9, n_in_row=4, arch="sizefree", sizes="4,9", opening_stones=4).validate()


def test_win_check_is_an_on_off_flag_and_old_checkpoints_holding_1_still_load():
    import train

    parser = train.build_parser()
    for words, value in ((["--win-check", "on"], True), (["--win-check", "1"], True),
                         (["--win-check", "OFF"], False), (["--win-check", "no"], False), ([], None)):
        assert parser.parse_args(words).win_check is value
    with pytest.raises(SystemExit):
        parser.parse_args(["--win-check", "2"])
    assert "(default: off)" in " ".join(parser.format_help().split())
    # a checkpoint's config from before the switch was a bool held 0 or 1
    old = {**TrainConfig().to_dict(), "win_check": 1}
    assert TrainConfig.from_dict(old).validate().win_check is True
    assert TrainConfig.from_dict({**old, "win_check": 0}).win_check is False
    with pytest.raises(ValueError, match="win_check must be True or False"):
        TrainConfig(win_check=1).validate()


@pytest.mark.parametrize("rule, threats", [("freestyle", False), ("renju", True)])
def test_gumbel_rounds_grow_the_tree_one_simulation_after_the_other_grows(rule, threats):
    # get_action evaluates a round's leaves (one per root child) in one batch; next_leaf and
    # receive give them one at a time, as the lockstep runners do: the trees must be the same
    board = Board(9, 9, 5, rule=rule)
    for move in (40, 41, 31, 49, 50, 32):
        board.play(move)
    batched_evaluator = HashEvaluator()
    batched = GumbelPlayer(batched_evaluator, n_playout=48, seed=5, solve=threats, threats=threats)
    move, pi = batched.get_action(board, return_probs=True)
    single = GumbelPlayer(HashEvaluator(), n_playout=48, seed=5, solve=threats, threats=threats)
    while (leaf := single.next_leaf(board)) is not None:
        priors, values = single.evaluator.evaluate([board])
        single.receive(leaf, board, priors[0], float(values[0]))
    result = single.choose(board)
    assert (move, batched.playouts_run) == (result.move, single.playouts_run)
    np.testing.assert_array_equal(pi, result.pi)
    for a, b in ((batched.tree.root, single.tree.root),):
        np.testing.assert_array_equal(a.child_N, b.child_N)
        np.testing.assert_array_equal(a.child_Q, b.child_Q)
    assert max(batched_evaluator.batches) > 1 and len(batched_evaluator.batches) < sum(batched_evaluator.batches)
    assert board.history == [40, 41, 31, 49, 50, 32]  # restored


def test_a_stopped_gumbel_search_says_so_and_forgets_its_tree():
    from gomoku.search.mcts import SearchStopped

    player = GumbelPlayer(HashEvaluator(), n_playout=64, seed=0)
    asked = []
    with pytest.raises(SearchStopped):
        player.get_action(fresh_board(), stop=lambda: asked.append(1) or len(asked) > 3)
    assert not player.tree.root.expanded
