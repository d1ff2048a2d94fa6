"""A match ("Bummerl"): deals chained until a seat reaches the target in game points.

The match seed derives everything: the first dealer and each deal's seed
(``derive_seed(seed, "deal", k)``), so a match is replayed from its seed and the action
lists of its deals. The deal passes as the variant says (F1.2, E8); a drawn hand scores
nothing and, under ``draw_carry = 1``, adds one game point to the next hand's winner.
"""

from __future__ import annotations

import dataclasses

from .shuffle import derive_seed
from .state import State, new_deal
from .variant import Variant, get_variant


@dataclasses.dataclass(frozen=True, slots=True)
class MatchResult:
    """The winner, the final game-point score, and the match's value (2 for a shutout
    under ``shutout_double``, else 1)."""

    winner: int
    score: tuple[int, ...]
    value: int
    deals: int


class Match:
    """Chains deals: `new_deal` gives the next `State`, `finish_deal` scores it."""

    def __init__(self, variant: Variant | str = "sixty-six", seed: int = 0, first_dealer: int | None = None):
        self.variant = get_variant(variant)
        if type(seed) is not int or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        n = self.variant.players
        self.seed = seed
        if first_dealer is None:
            first_dealer = derive_seed(seed, "first-dealer") % n
        elif type(first_dealer) is not int or not 0 <= first_dealer < n:
            raise ValueError(f"first_dealer must be a seat 0..{n - 1}, got {first_dealer!r}")
        self.dealer = first_dealer
        self.score = [0] * n
        self.carry = 0
        self.deals: list[State] = []
        self._scored = 0

    def deal_seed(self, k: int) -> int:
        return derive_seed(self.seed, "deal", k)

    def is_over(self) -> bool:
        return max(self.score) >= self.variant.target

    def new_deal(self) -> State:
        """Deal the next hand. The previous one must have been finished."""
        if self.is_over():
            raise RuntimeError("the match is over")
        if self._scored < len(self.deals):
            raise RuntimeError("the current deal has not been finished and scored yet")
        k = len(self.deals)
        state = new_deal(self.variant, self.deal_seed(k), self.dealer, score=self.score, carry=self.carry, deal_no=k)
        self.deals.append(state)
        return state

    def finish_deal(self) -> None:
        """Score the current deal (which must be over) and pass the deal."""
        if self._scored == len(self.deals):
            raise RuntimeError("no unscored deal: call new_deal first")
        state = self.deals[-1]
        if state.result is None:
            raise RuntimeError("the current deal is not over yet")
        self._scored += 1
        r = state.result
        v = self.variant
        if r.winner is None:
            self.carry += v.draw_carry
        else:
            self.score[r.winner] += r.game_points + self.carry
            self.carry = 0
        if v.next_dealer == "alternate":
            self.dealer = (self.dealer + 1) % v.players
        elif r.winner is not None:
            self.dealer = r.winner

    @property
    def result(self) -> MatchResult | None:
        if not self.is_over():
            return None
        winner = max(range(len(self.score)), key=self.score.__getitem__)
        shutout = self.variant.shutout_double and min(self.score) == 0
        return MatchResult(winner, tuple(self.score), 2 if shutout else 1, len(self.deals))
