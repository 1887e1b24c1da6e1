"""The engine's MESSAGE notes about the rule: each said once, and INFO rule 2 (continuous) noted."""

import io

import pytest

from gomoku.play.engine.brain import EngineOptions, PbrainEngine
from tests.helpers import FakeClock, converse


@pytest.mark.timeout(180)
def test_a_rule_and_a_model_changed_together_warn_once():
    # INFO rule 4 then 1: the shipped renju model, then the freestyle one for standard. Choosing
    # the model and setting the rule both warned that it was trained for freestyle: twice.
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(shipped=True, device="cpu", max_playouts=20), out, FakeClock(0.001))
    assert converse(engine, out, "START 15")[-1] == "OK"
    lines = converse(engine, out, "INFO rule 4", "INFO rule 1", "BEGIN")
    warnings = [line for line in lines if "with a model trained for freestyle" in line]
    assert warnings == ["MESSAGE playing standard with a model trained for freestyle: its moves are legal, "
                        "but it may play them worse"]
    assert len(lines) == len(set(lines)), lines


def test_a_continuous_game_is_noted_as_unsupported():
    out = io.StringIO()
    engine = PbrainEngine(EngineOptions(seed=0, max_playouts=20), out, FakeClock(0.001))
    converse(engine, out, "START 9")
    lines = converse(engine, out, "INFO rule 2", "BEGIN")
    assert lines[0] == "MESSAGE INFO rule 2: continuous games are not supported; each game ends at its first line"
    assert engine.rule == "freestyle"
    standard = converse(engine, out, "INFO rule 3", "RESTART")
    assert standard[0].startswith("MESSAGE INFO rule 3: continuous games") and engine.rule == "standard"
