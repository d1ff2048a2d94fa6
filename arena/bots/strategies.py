"""Built-in Python strategies: one callable from (observation, legal actions) to an action.

A strategy sees exactly what an agent on the wire sees: the dict of
`arena.game.observation` and the legal action strings. Each is built with a seed and
keeps its own `random.Random`, so a seeded run is reproducible. These are the players
of ``arena selfplay`` and the brains of the bundled Python agents.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from ..game.cards import POINTS, card_str, parse_card

Strategy = Callable[[dict[str, Any], Sequence[str]], str]


class RandomStrategy:
    """Uniform over the legal actions (it declares 66 falsely, closes rashly: a floor)."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def __call__(self, obs: dict[str, Any], legal: Sequence[str]) -> str:
        return legal[int(self.rng.random() * len(legal))]


def _beats(lead: int, card: int, trump: int) -> bool:
    """Whether ``card`` played second beats ``lead`` (F1.5)."""
    if card // 6 == lead // 6:
        return card < lead
    return card // 6 == trump


class GreedyStrategy:
    """Simple and short-sighted: take points now, give little away.

    Goes out as soon as its count reaches 66 (never falsely), shows the best marriage,
    exchanges when it can, never closes. Leads its cheapest non-trump card. Follows by
    winning a trick worth having with its cheapest winning card, else throws its
    cheapest card.
    """

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def __call__(self, obs: dict[str, Any], legal: Sequence[str]) -> str:
        me = obs["seat"]
        if "declare" in legal and obs["points"][me] >= 66:
            return "declare"
        if "exchange" in legal:
            return "exchange"
        if "draw" in legal:
            return "draw"
        if "pass" in legal:
            return "pass"
        trump = "CDHS".index(obs["trump"])
        marriages = [a for a in legal if a.startswith("marry:")]
        if marriages:
            return max(marriages, key=lambda a: a[-1] == obs["trump"])
        cards = [parse_card(a[5:]) for a in legal if a.startswith("play:")]

        def cheap(c: int) -> tuple[int, int, int]:
            # Prefer giving away few points, then non-trumps, then weaker cards.
            return (POINTS[c], c // 6 == trump, -(c % 6))

        current = obs["current_trick"]
        if current is None:
            non_trumps = [c for c in cards if c // 6 != trump] or cards
            choice = min(non_trumps, key=cheap)
        else:
            lead = parse_card(current["card"])
            winners = [c for c in cards if _beats(lead, c, trump)]
            worth = POINTS[lead] >= 10 or any(c // 6 == lead // 6 for c in winners)
            choice = min(winners, key=cheap) if winners and worth else min(cards, key=cheap)
        return "play:" + card_str(choice)


STRATEGIES: dict[str, type] = {"random": RandomStrategy, "greedy": GreedyStrategy}


def make_strategy(name: str, seed: int = 0) -> Strategy:
    """A fresh strategy by name; an unknown name raises `ValueError` listing the known ones."""
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; built-in strategies: {', '.join(STRATEGIES)}") from None
    return cls(seed)
