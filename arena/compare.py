"""Comparing two versions of a strategy: duplicate pairs fed to an SPRT as they finish.

NEW and OLD play a head-to-head tournament of duplicate pairs (`arena.schedule`); each
complete pair scores 0, 1/2 or 1 for NEW. Pairs are fed to the `arena.sprt.SPRT` in pair
order (a pair that finishes early waits for the ones before it), so where the test stops
depends only on the results, not on timing: a resumed or replayed comparison stops at the
same pair. Beside the test, the game-point margins per pair are summarised as a
diagnostic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import pandas as pd

from .sprt import SPRT, MarginDiagnostic, elo_text, fixed_games_summary, los_text, margin_diagnostic


@dataclasses.dataclass
class PairFeed:
    """Collects finished matches and releases complete pairs in pair order."""

    new: str
    games: dict[int, list[tuple[float, int]]] = dataclasses.field(default_factory=dict)
    next_pair: int = 0

    def add(self, pair_index: int, seats: tuple[str, str], winner: int | None, score: tuple[int, int]) -> None:
        """One finished match: NEW's win (1, 0, or 0.5 without a result) and margin."""
        me = seats.index(self.new)
        win = 0.5 if winner is None else float(winner == me)
        self.games.setdefault(pair_index, []).append((win, score[me] - score[me ^ 1]))

    def ready(self) -> Iterable[tuple[int, float, int]]:
        """Complete pairs in order: (pair index, NEW's pair score, NEW's pair margin)."""
        while len(self.games.get(self.next_pair, [])) == 2:
            (w0, m0), (w1, m1) = self.games.pop(self.next_pair)
            yield self.next_pair, (w0 + w1) / 2, m0 + m1
            self.next_pair += 1


def feed_rows(feed: PairFeed, rows: Iterable[dict[str, Any]]) -> None:
    for r in rows:
        feed.add(r["pair_index"], (r["seat0"], r["seat1"]), r["winner"], (r["score0"], r["score1"]))


def new_test(settings: dict[str, Any]) -> SPRT:
    return SPRT(settings["elo0"], settings["elo1"], settings["alpha"], settings["beta"], settings["max_pairs"])


def describe(test: SPRT, margins: list[int], settings: dict[str, Any]) -> str:
    """The verdict in words, the estimate, and the margin diagnostic."""
    new, old = settings["new"], settings["old"]
    est = test.estimate()
    diag: MarginDiagnostic = margin_diagnostic(margins)
    if settings.get("fixed"):
        losses, halves, wins = test.counts
        verdict = fixed_games_summary(losses, halves, wins).verdict
    else:
        verdict = {
            "H1": f"H1 accepted: {new} is stronger than {old} by about {test.elo1:g} Elo or more",
            "H0": f"H0 accepted: {new} does not gain {test.elo1:g} Elo over {old}",
            "cap": f"no decision: the cap of {test.max_pairs} pairs was reached",
            "continue": "no decision yet",
        }[test.status]
    margin = (
        f"mean pair margin {diag.mean:+.2f} game points [{diag.ci_low:+.2f}, {diag.ci_high:+.2f}] (diagnostic)"
        if diag.pairs >= 2
        else "too few pairs for the margin diagnostic"
    )
    llr = "" if settings.get("fixed") else f", LLR {test.llr:.2f} in [{test.lower:.2f}, {test.upper:.2f}]"
    return f"{verdict}. {test.pairs} pairs: {elo_text(est)}, LOS {los_text(est)}{llr}; {margin}."


def sprt_from_matches(matches: pd.DataFrame, settings: dict[str, Any]) -> tuple[SPRT, str]:
    """Recompute a comparison from stored matches (for the report)."""
    feed = PairFeed(settings["new"])
    rows = matches.sort_values(["pair_index", "game"]).to_dict("records")
    feed_rows(feed, rows)
    test = new_test(settings)
    margins = []
    for _, score, margin in feed.ready():
        test.add(score)
        margins.append(margin)
    return test, describe(test, margins, settings)
