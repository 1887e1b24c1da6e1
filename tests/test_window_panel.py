"""The window's win-rate panel in each of its states (scripts/screenshot.py --panel draws them for
docs/window/): every text is drawn whole, inside its area, and over no other text."""

import dataclasses
import os
import sys

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame is imported anywhere
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402
import pytest  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import screenshot  # noqa: E402

PLAYOUTS = 16  # few playouts: the states, not the searches, are under test


@pytest.fixture
def windows():
    opened = []

    def open_(state):
        window = screenshot.panel_window(state, PLAYOUTS)
        opened.append(window)
        return window

    yield open_
    for window in opened:
        window.quit()
    pygame.quit()


def drawn_texts(window) -> dict:
    """Draws the window and checks the win-rate section's texts; returns ``{name: words}``."""
    window.draw()
    texts = window.panel_texts
    panel = pygame.Rect(window.board_rect.right, 0, window.size[0] - window.board_rect.right, window.size[1])
    shown = {name: entry for name, entry in texts.items() if entry[0]}
    for name, (words, rect, area, whole) in shown.items():
        assert whole, f"{name}: {words!r} is cut to fit {area.width} pixels"
        assert area.contains(rect) and panel.contains(rect), f"{name}: {words!r} at {rect} runs out of {area}"
    for a in shown:
        for b in shown:
            if a < b:
                assert not shown[a][1].colliderect(shown[b][1]), f"{a} {shown[a][1]} overlaps {b} {shown[b][1]}"
    return {name: entry[0] for name, entry in shown.items()}


@pytest.mark.timeout(240)
def test_every_state_of_the_panel_draws_whole_texts_that_overlap_nothing(windows):
    seen = {}
    for state in screenshot.PANEL_STATES:
        window = windows(state)
        seen[state] = drawn_texts(window)
        how = window.analysis_for(window.match.board)[1]
        assert how == {"no_search": "", "thinking": "live", "after_move": "after"}.get(state, "done"), state
    assert seen["no_search"]["note"] == "no estimate yet: H asks for a hint"
    assert "black" not in seen["no_search"] and seen["no_search"]["legend"] == "Black to move"
    assert seen["thinking"]["note"].startswith("searching: ")
    assert seen["after_move"]["note"].startswith("White's search: ")
    assert (seen["lopsided"]["black"], seen["lopsided"]["white"]) == ("Black 95%", "White 5%")
    assert (seen["split73"]["black"], seen["split73"]["white"]) == ("Black 73%", "White 27%")
    assert (seen["even"]["black"], seen["even"]["white"]) == ("Black 50%", "White 50%")
    assert seen["proven"] == {**seen["proven"], "note": "proven: Black wins", "black": "Black 100%",
                              "white": "White 0%"}
    renju = windows("renju")
    assert renju.forbidden_marks() == [renju.match.board.parse_move("i8")]


@pytest.mark.timeout(120)
def test_both_labels_are_whole_at_any_split_for_either_side_to_move(windows):
    for state in ("even", "thinking"):  # Black to move (bold Black), White to move (bold White)
        window = windows(state)
        board = window.match.board
        shown, _ = window.analysis_for(board)
        for black in (0.0, 0.01, 0.05, 0.27, 0.5, 0.73, 0.95, 0.99, 1.0):
            for player in (1, 2):  # the analysis's value for either side: the bar turns it into Black's share
                rate = black if player == 1 else 1.0 - black
                record = dataclasses.replace(shown, player=player, root_value=2 * rate - 1)
                if window.task is not None:
                    window.task.analysis = record
                else:
                    window.analyses[tuple(board.history)] = record
                texts = drawn_texts(window)
                assert (texts["black"], texts["white"]) == (f"Black {100 * black:.0f}%",
                                                            f"White {100 - 100 * black:.0f}%")


@pytest.mark.timeout(60)
def test_a_long_note_gets_its_own_line_under_the_heading(windows):
    window = windows("no_search")
    drawn_texts(window)
    words, note, _, _ = window.panel_texts["note"]
    heading = window.panel_texts["heading"][1]
    assert note.top >= heading.bottom - 2 and note.left == heading.left
