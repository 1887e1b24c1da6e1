"""The golden self-play games (``tests/golden.py``): the reference trees and the compiled core
both play the stored moves, with the stored policy targets."""

import json

import numpy as np
import pytest

from gomoku.search.core import core_enabled
from tests import golden

TOLERANCE = 2e-6  # the targets are stored to 7 decimals


def _stored(name):
    with open(golden.PATH) as f:
        return json.load(f)[name]


def _compare(games, stored):
    assert len(games) == len(stored)
    for game, want in zip(games, stored):
        assert game["moves"] == want["moves"]
        assert game["winner"] == want["winner"]
        assert np.abs(np.array(game["pis"]) - np.array(want["pis"])).max() <= TOLERANCE


@pytest.mark.parametrize("name", sorted(golden.RECIPES))
def test_the_reference_search_plays_the_golden_games(name):
    _compare(golden.play(golden.RECIPES[name], compiled=False), _stored(name))


@pytest.mark.skipif(not core_enabled(), reason="the compiled core is off (no numba, or GOMOKU_CORE=off)")
@pytest.mark.parametrize("name", sorted(golden.RECIPES))
def test_the_compiled_core_plays_the_golden_games(name):
    _compare(golden.play(golden.RECIPES[name], compiled=True), _stored(name))
