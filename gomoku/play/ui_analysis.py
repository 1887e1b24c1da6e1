"""The AI's view in the window, as analysis programs show it: a win-rate bar, the search's top
moves on the board, a heat map of the policy net, and a hint for a human player.

``AnalysisView`` is a part of ``ui.GameWindow`` (a mixin, like ``ui_draw.WindowDrawing``): it
keeps what the window knows of the AI's view and draws it. Everything it shows comes from
``analysis.Analysis`` records, which the search threads hand over finished (``analysis.SearchTask``
keeps the latest one), so the drawing loop never reads a search tree.

* Win-rate bar (panel): Black's share dark, White's light, for the shown position: from a
  search of it running or done (the AI's, or a hint's), else from the search of the position
  before it that chose the last move, else from the policy net's value while the heat map is on;
  a result the solver has proven shows as 100% and says so. The note that says where the rate
  comes from has a line of its own under the heading, and each side's label stands under its end
  of the bar, so that every text is whole at any split (``panel_texts`` records where each went).
* Top moves (A toggles; on at first): up to ``TOP_MOVES`` circles on empty points, with the
  win rate of the side to move if it plays there (bold) and the move's share of the visits;
  the first (``Analysis.top``: the chosen move once the search has ended, else the most visited)
  is blue, the others go from green (as many visits as the most visited) to red (few).
* Heat map (P toggles): the policy net's prior of each legal point, shaded and in percent.
  Players without a net (pure MCTS, the heuristic) have none: the panel says so.
* Hint (H, or the Hint button): the advisor (``analysis.advisor``) searches the position for
  the human to move; its move is a ringed ghost stone until the position changes. It is the
  terminal's hint: the same search, seeded from the position, so the same move each time.
"""

from __future__ import annotations

from typing import Optional

import pygame
import pygame.gfxdraw

from gomoku.game.board import Board
from gomoku.game.gamefile import COLOUR_NAMES
from gomoku.play.analysis import (TOP_MOVES, Analysis, SearchTask, advisor, hint_text, net_evaluator, percent,
                                   policy_of)
from gomoku.play.ui_draw import fit_label

MAX_ANALYSES = 1000  # finished analyses kept, by position
BEST = (70, 170, 235)
MANY, SOME, FEW = (96, 196, 92), (232, 200, 64), (226, 96, 64)
HINT_RING = (40, 220, 250)
BLACK_BAR, WHITE_BAR = (28, 28, 30), (238, 234, 226)
MUTED = (164, 154, 140)
TEXT = (236, 228, 214)
ACCENT = (232, 160, 62)


def _font(size: int, bold: bool = False) -> pygame.font.Font:
    try:
        return pygame.font.SysFont("dejavusans,freesans,arial,helvetica", size, bold=bold)
    except Exception:  # no font config on this system: pygame's bundled font
        return pygame.font.Font(None, int(size * 1.3))


def _mix(a, b, t: float) -> tuple:
    return tuple(int(round(x + (y - x) * t)) for x, y in zip(a, b))


def candidate_colour(rank: int, share: float, top_share: float) -> tuple:
    """Blue for the first candidate; the others from green (as many visits as the most visited) to red (few)."""
    if rank == 0:
        return BEST
    t = share / top_share if top_share > 0 else 0.0
    return _mix(FEW, SOME, t / 0.5) if t < 0.5 else _mix(SOME, MANY, (t - 0.5) / 0.5)


def heat_colour(t: float) -> tuple:
    """From a faint blue (a small prior) through yellow to red (the net's favourite), with alpha."""
    rgb = _mix((60, 110, 230), (245, 210, 60), t / 0.5) if t < 0.5 else _mix((245, 210, 60), (225, 40, 30),
                                                                              (t - 0.5) / 0.5)
    return rgb + (int(20 + 190 * t ** 0.6),)


class AnalysisView:
    """The window's analysis state and drawing (see the module docstring)."""

    def _init_analysis(self) -> None:
        self.show_moves = True
        self.show_heatmap = False
        self.hint_task = None  # an analysis.SearchTask looking for a hint
        self.hint_key: Optional[tuple] = None  # the position whose hint is shown
        self.hints: dict[tuple, tuple[Analysis, str]] = {}  # the advisor's analyses by position, with its name
        self.analyses: dict[tuple, Analysis] = {}  # finished analyses by position (its moves)
        self._policies: dict[tuple, Optional[tuple]] = {}
        size = max(10, min(16, int(self.cell * 0.36)))
        self.font_cand = _font(size, bold=True)
        self.font_share = _font(max(9, size - 3))
        self.font_bold_small = _font(13, bold=True)
        self.panel_texts: dict[str, tuple] = {}  # what the win-rate section drew: (words, rect, area) by name

    # ------------------------------------------------------------ state
    def keep_analysis(self, analysis: Optional[Analysis]) -> None:
        if analysis is None:
            return
        if len(self.analyses) >= MAX_ANALYSES:
            self.analyses.clear()
        self.analyses[analysis.history] = analysis

    def forget_analyses(self) -> None:
        """Drops what the players said (a new game, or another player in a seat)."""
        self.analyses.clear()
        self._policies.clear()
        self.hints.clear()
        self.hint_key = None

    def analysis_for(self, board: Board) -> tuple[Optional[Analysis], str]:
        """The analysis to show for ``board`` and how it relates: 'live' (a search of it is running),
        'done' (a finished search of it), 'after' (the search that chose its last move), or ''."""
        key = tuple(board.history)
        for task in (self.task, self.hint_task):
            shot = getattr(task, "analysis", None)
            if shot is not None and shot.history == key:
                return shot, "done" if task.done else "live"
        if key in self.analyses:
            return self.analyses[key], "done"
        before = self.analyses.get(key[:-1]) if key else None
        if before is not None and before.move == key[-1]:
            return before, "after"
        return None, ""

    def _searching(self) -> bool:
        """Whether any search thread may be using an evaluator now."""
        return self.task is not None or self.hint_task is not None or bool(self._cancelled)

    def heatmap_evaluator(self):
        """The policy net to draw: the side to move's, else the other seat's; None when no seat has one."""
        board = self.match.board
        for side in (board.current_player, 3 - board.current_player):
            evaluator = net_evaluator(self.match.players[side])
            if evaluator is not None:
                return evaluator
        return None

    def policy_for(self, board: Board) -> Optional[tuple]:
        """``(priors over the board, value)`` of the policy net for ``board``, or None (no net, or a
        search is using it now: the heat map appears once the search hands over the net's view)."""
        key = tuple(board.history)
        shown, _ = self.analysis_for(board)
        if shown is not None and shown.history == key and shown.policy is not None:
            return shown.policy, shown.net_value
        if key in self._policies:
            return self._policies[key]
        evaluator = self.heatmap_evaluator()
        if evaluator is None or self._searching() or board.game_over:
            return None
        try:
            found = policy_of(evaluator, board)
        except Exception as exc:  # a failing net must not take the window down
            self.say(f"The policy net failed: {exc}")
            found = None
        if len(self._policies) >= MAX_ANALYSES:
            self._policies.clear()
        self._policies[key] = found
        return found

    def toggle_moves(self) -> None:
        self.show_moves = not self.show_moves
        self.say("Top moves on the board: " + ("on." if self.show_moves else "off."))

    def toggle_heatmap(self) -> None:
        self.show_heatmap = not self.show_heatmap
        if not self.show_heatmap:
            self.say("Heat map off.")
        elif self.heatmap_evaluator() is None:
            self.say("Heat map: no policy net here (pure MCTS and the heuristic have none).")
        else:
            self.say("Heat map: the policy net's prior of each point.")

    def ask_hint(self) -> None:
        """Shows the AI's move for the human to move, searching for it first if need be."""
        board = self.match.board
        if self.view is not None or not self.match.human_to_move:
            self.say("A hint is for a human's move in the live game.")
            return
        key = tuple(board.history)
        if key in self.hints:  # the advisor's search of a position gives the same hint each time
            analysis, name = self.hints[key]
            self.hint_key = key
            self.keep_analysis(analysis)
            self.say(hint_text(analysis, board, name))
            return
        if self.hint_task is not None:
            return  # already looking
        try:
            player = advisor(self.match)
        except ValueError as exc:  # a model that will not load
            self.say(f"No hint: {exc}")
            return
        if player is None:
            self.say("No hint: there is no AI in this game to ask.")
            return
        self.hint_task = SearchTask(player, board, self.generation).start()

    def cancel_hint(self) -> None:
        task, self.hint_task = self.hint_task, None
        if task is not None:
            task.cancel()
            if not task.done:
                self._cancelled.append(task)

    def collect_hint(self) -> None:
        """Takes a finished hint search's result (called from ``update``)."""
        task = self.hint_task
        if task is None or not task.done:
            return
        self.hint_task = None
        if task.error is not None:
            self.say(f"No hint: the search failed: {task.error}")
        elif task.generation == self.generation and task.analysis is not None \
                and task.analysis.history == tuple(self.match.board.history):
            name = getattr(task.player, "name", "the AI")
            if len(self.hints) >= MAX_ANALYSES:
                self.hints.clear()
            self.hints[task.analysis.history] = (task.analysis, name)
            self.keep_analysis(task.analysis)
            self.hint_key = task.analysis.history
            self.say(hint_text(task.analysis, self.match.board, name))

    # ------------------------------------------------------------ drawing
    def _draw_heatmap(self, surface: pygame.Surface, board: Board) -> None:
        if not self.show_heatmap:
            return
        found = self.policy_for(board)
        if found is None:
            return
        policy = found[0]
        top = float(policy.max())
        if top <= 0:
            return
        overlay = pygame.Surface(surface.get_size(), pygame.SRCALPHA)
        half = self.cell // 2 - 1
        shown = [m for m in map(int, policy.nonzero()[0]) if policy[m] >= 0.002]  # the rest stays wood
        for move in shown:
            t = float(policy[move]) / top
            x, y = self.pixel_of(move)
            pygame.draw.rect(overlay, heat_colour(t), pygame.Rect(x - half, y - half, 2 * half + 1, 2 * half + 1),
                             border_radius=max(2, self.cell // 8))
        surface.blit(overlay, (0, 0))
        for move in shown:
            if policy[move] >= 0.01:
                text = self.font_share.render(f"{100 * policy[move]:.0f}", True, (20, 16, 12))
                surface.blit(text, text.get_rect(center=self.pixel_of(move)))

    def _draw_candidates(self, surface: pygame.Surface, board: Board) -> None:
        if not self.show_moves:
            return
        analysis, how = self.analysis_for(board)
        if analysis is None:
            return
        top = [c for i, c in enumerate(analysis.top(TOP_MOVES))
               if board.cells[c.move] == 0 and (c.share >= 0.01 or i == 0)]
        if not top:
            return
        best = max(c.share for c in analysis.top())  # the most visited share, the scale of the colours
        radius = int(self.cell * 0.45)
        overlay = pygame.Surface(surface.get_size(), pygame.SRCALPHA)
        # After a move, the candidates describe the position before it: drawn fainter.
        alpha = 180 if how == "after" else 215
        for rank, c in enumerate(top):
            x, y = self.pixel_of(c.move)
            colour = candidate_colour(rank if how != "after" else rank + 1, c.share, best) + (alpha,)
            pygame.gfxdraw.filled_circle(overlay, x, y, radius, colour)
            pygame.gfxdraw.aacircle(overlay, x, y, radius, colour)
        surface.blit(overlay, (0, 0))
        ink = (16, 14, 12)
        for c in top:
            x, y = self.pixel_of(c.move)
            rate = self.font_cand.render(f"{100 * c.win_rate:.0f}", True, ink)
            share = self.font_share.render(f"{100 * c.share:.0f}%", True, ink)
            gap = (rate.get_height() + share.get_height()) // 2
            surface.blit(rate, rate.get_rect(midtop=(x, y - gap + 1)))
            surface.blit(share, share.get_rect(midbottom=(x, y + gap - 1)))

    def _draw_hint(self, surface: pygame.Surface, board: Board) -> None:
        key = tuple(board.history)
        if self.hint_key != key or self.view is not None or key not in self.hints:
            return
        move = self.hints[key][0].best()
        if move is None or board.cells[move] != 0:
            return
        x, y = self.pixel_of(move)
        if not self.show_moves:  # else the move's circle with its numbers is under the ring
            ghost = self._ghosts[board.current_player]
            surface.blit(ghost, ghost.get_rect(center=(x, y)))
        radius = int(self.cell * 0.46)
        for r in range(radius, radius + 3):
            pygame.gfxdraw.aacircle(surface, x, y, r, HINT_RING)
        label = self.font_share.render("hint", True, (16, 14, 12))
        pill = label.get_rect(midbottom=(x, y - radius - 3)).inflate(8, 2)
        pygame.draw.rect(surface, HINT_RING, pill, border_radius=pill.height // 2)
        surface.blit(label, label.get_rect(center=pill.center))

    def winrate_shown(self, board: Board) -> tuple[Optional[float], str, Optional[Analysis], str]:
        """What the bar shows for ``board``: the side to move's win rate (None: none known), the note
        that says where it comes from, and the analysis behind it with its relation (``analysis_for``)."""
        analysis, how = self.analysis_for(board)
        rate, source = None, ""
        if analysis is not None:
            rate = analysis.win_rate(board.current_player)
            visits = analysis.playouts
            if analysis.proven:
                winner = analysis.player if analysis.proven > 0 else 3 - analysis.player
                source = f"proven: {COLOUR_NAMES[winner]} wins"
            elif visits:
                source = {"live": f"searching: {visits} visits", "done": f"search: {visits} visits",
                          "after": f"{COLOUR_NAMES[analysis.player]}'s search: {visits} visits"}[how]
            else:
                source = "the net's value" if rate is not None else "this AI gives no win rate"
        if rate is None and self.show_heatmap:
            found = self.policy_for(board)
            if found is not None:
                rate, source = (found[1] + 1.0) / 2.0, "the policy net's value"
        if board.game_over:
            rate = None if board.winner == 0 else (1.0 if board.winner == board.current_player else 0.0)
            source = "the game is over"
        return rate, source or "no estimate yet: H asks for a hint", analysis, how

    def _panel_text(self, surface: pygame.Surface, name: str, words: str, font: pygame.font.Font, colour,
                    area: pygame.Rect, **anchor) -> None:
        """Draws ``words`` in ``area``, placed by ``anchor`` (cut short with an ellipsis should they not
        fit), and records by ``name`` in ``panel_texts`` ``(words, rect drawn, area, whole)``, ``whole``
        False when they were cut: the tests check that every text is whole and inside its area."""
        text = fit_label(words, area.width, (font,), colour)
        rect = text.get_rect(**anchor)
        surface.blit(text, rect)
        self.panel_texts[name] = (words, rect, area, font.size(words)[0] <= area.width)

    def _draw_winrate(self, surface: pygame.Surface, left: int, top: int, width: int) -> int:
        """The win-rate section of the panel at ``top``: the heading, the note on its own line, the
        bar, Black's and White's labels under the bar's two ends (whole at any split), the legend.
        Returns where the next section may start."""
        board = self.shown_board()
        rate, source, analysis, how = self.winrate_shown(board)
        self.panel_texts = {}
        section = pygame.Rect(left, top, width, 94)
        self._panel_text(surface, "heading", "Win rate", self.font_bold, ACCENT, section, topleft=(left, top))
        self._panel_text(surface, "note", source, self.font_small, MUTED, section, topleft=(left, top + 22))
        bar = pygame.Rect(left, top + 40, width, 14)
        pygame.draw.rect(surface, (90, 84, 78), bar, border_radius=5)
        mover = board.current_player
        if rate is not None:
            black = rate if mover == 1 else 1.0 - rate
            split = bar.left + int(round(bar.width * black))
            pygame.draw.rect(surface, WHITE_BAR, bar, border_radius=5)
            if split > bar.left:
                pygame.draw.rect(surface, BLACK_BAR, pygame.Rect(bar.left, bar.top, split - bar.left, bar.height),
                                 border_top_left_radius=5, border_bottom_left_radius=5,
                                 border_top_right_radius=5 if split >= bar.right else 0,
                                 border_bottom_right_radius=5 if split >= bar.right else 0)
            pygame.draw.line(surface, ACCENT, (bar.centerx, bar.top - 1), (bar.centerx, bar.bottom), 1)
            # Each side's label under its own end of the bar: the halves of the row are the areas.
            for side, anchor in ((1, "topleft"), (2, "topright")):
                share = black if side == 1 else 1.0 - black
                label = f"{COLOUR_NAMES[side]} {percent(share)}"
                font = self.font_bold_small if side == mover and not board.game_over else self.font_small
                half = pygame.Rect(left if side == 1 else bar.centerx, bar.bottom + 3, width // 2, 18)
                at = half.topleft if side == 1 else half.topright
                self._panel_text(surface, COLOUR_NAMES[side].lower(), label, font, TEXT, half, **{anchor: at})
        pygame.draw.rect(surface, (120, 110, 100), bar, width=1, border_radius=5)
        if self.show_heatmap and self.heatmap_evaluator() is None:
            legend = "Heat map: no policy net here"
        elif self.show_heatmap:
            legend = "Heat map: the policy net's priors, in %"
        elif self.show_moves and how == "after":
            legend = f"Circles: {COLOUR_NAMES[analysis.player]}'s other choices"
        elif self.show_moves and analysis is not None:
            legend = "Circles: win rate (bold), share of visits"
        else:
            legend = f"{COLOUR_NAMES[mover]} to move" if not board.game_over else ""
        self._panel_text(surface, "legend", legend, self.font_small, MUTED, section, topleft=(left, bar.bottom + 22))
        return section.bottom
