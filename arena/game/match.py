"""A match ("Bummerl"): deals chained until a seat, a team or a finishing order is decided.

The match seed derives everything: the first dealer and each deal's seed
(``derive_seed(seed, "deal", k)``), so a match is replayed from its seed and the action
lists of its deals. Two-handed: the deal passes as the variant says (F1.2, E8); a drawn
hand scores nothing and, under ``draw_carry = 1``, adds one game point to the next
hand's winner. The three- and four-handed forms:

- F3.1 (``three-pagat``): each seat's net stakes; the first seat at ``target`` wins. The
  deal passes left.
- F3.2 (``three-cutthroat``): each seat's marks; first to ``target`` (15); if several get
  there on one hand the bidder wins ("bidder goes out"), else the higher score.
- F3.3 (``three-sitout``): two-handed deals between the dealer's two neighbours
  (`Match.seats` maps the deal's seats 0 and 1 to match seats); the dealer scores what
  the winner scores but cannot pass 6 on his deal (M5). The first to 7 finishes first;
  the other two play on two-handed (``play_on``) or are ranked by score. The result is an
  order of finish.
- F4.1, F4.2 (``four-pagat``, ``kreuzmariage``): per team (seats 0 and 2 are team 0); the
  first team to 7 wins; F4.2 carries a point from a 65-65 hand to the next hand's winners.
- F4.3 (``four-bidding``): per team marks to ``target`` (10 or 15); both over on one hand:
  the bidding side wins (``bidder_goes_out``), else the higher. All pass: the same dealer
  deals again.
"""

from __future__ import annotations

import dataclasses

from .shuffle import derive_seed
from .state import State, new_deal
from .table import TableState
from .table_deal import new_table_deal
from .variant import Variant, get_variant

#: `MatchResult.kind`: one winning seat, one winning team, or an order of finish.
RESULT_KINDS = ("winner", "team", "order")


@dataclasses.dataclass(frozen=True, slots=True)
class MatchResult:
    """The winner, the final score, and the match's value (2 for a shutout under
    ``shutout_double``, else 1).

    ``kind`` says what ``winner`` is: a seat (``"winner"``), a team (``"team"``: team
    ``t`` is seats ``t`` and ``t + 2``; ``score`` is then per team) or the first of an
    order of finish (``"order"``: ``order`` lists the seats first to last and ``places``
    gives each seat's place, 1 = first, equal places shared).
    """

    winner: int | None
    score: tuple[int | float, ...]
    value: int
    deals: int
    kind: str = "winner"
    order: tuple[int, ...] = ()
    places: tuple[int, ...] = ()
    #: Ended by `Match.adjudicate` (a deal limit), not by reaching the target; ``winner``
    #: is then the side ahead, or None when the lead is shared.
    adjudicated: bool = False

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {
            "kind": self.kind,
            "winner": self.winner,
            "score": list(self.score),
            "value": self.value,
            "deals": self.deals,
            "order": list(self.order),
            "places": list(self.places),
            "adjudicated": self.adjudicated,
        }


class Match:
    """Chains deals: `new_deal` gives the next state, `finish_deal` scores it."""

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
        self.score: list = [0] * (self.variant.teams if self.variant.is_table else n)
        self.carry = 0
        self.deals: list[State | TableState] = []
        #: Match seat of each seat of the current deal (F3.3 maps two of three).
        self.seats: tuple[int, ...] = tuple(range(n))
        #: `seats` of every deal so far, in deal order.
        self.deal_seats: list[tuple[int, ...]] = []
        #: F3.3: seats in order of finish so far.
        self.finished: list[int] = []
        self._winner: int | None = None
        self._scored = 0

    def deal_seed(self, k: int) -> int:
        return derive_seed(self.seed, "deal", k)

    def is_over(self) -> bool:
        v = self.variant
        if v.form == "two_handed":
            return max(self.score) >= v.target
        if v.form == "dealer_sits_out":
            return len(self.finished) == 3
        return self._winner is not None

    def new_deal(self) -> State | TableState:
        """Deal the next hand. The previous one must have been finished."""
        if self.is_over():
            raise RuntimeError("the match is over")
        if self._scored < len(self.deals):
            raise RuntimeError("the current deal has not been finished and scored yet")
        k = len(self.deals)
        v = self.variant
        if v.is_table:
            state: State | TableState = new_table_deal(
                v, self.deal_seed(k), self.dealer, score=self.score, carry=self.carry, deal_no=k
            )
        elif v.form == "dealer_sits_out":
            state = self._sitout_deal(k)
        else:
            state = new_deal(v, self.deal_seed(k), self.dealer, score=self.score, carry=self.carry, deal_no=k)
        self.deals.append(state)
        self.deal_seats.append(self.seats)
        return state

    def _sitout_deal(self, k: int) -> State:
        d = self.dealer
        if not self.finished:
            self.seats = ((d + 1) % 3, (d + 2) % 3)  # the dealer's left leads; the dealer sits out
        else:
            rest = [s for s in range(3) if s not in self.finished]
            other = rest[0] if rest[1] == d else rest[1]
            self.seats = (other, d)  # play-on: the two deal to each other
        score = tuple(self.score[s] for s in self.seats)
        return new_deal(self.variant.hand_variant, self.deal_seed(k), 1, score=score, carry=self.carry, deal_no=k)

    def finish_deal(self) -> None:
        """Score the current deal (which must be over) and pass the deal."""
        if self._scored == len(self.deals):
            raise RuntimeError("no unscored deal: call new_deal first")
        state = self.deals[-1]
        if state.result is None:
            raise RuntimeError("the current deal is not over yet")
        self._scored += 1
        v = self.variant
        if isinstance(state, TableState):
            self._finish_table(state)
            return
        r = state.result
        if v.form == "dealer_sits_out":
            self._finish_sitout(state)
            return
        if r.winner is None:
            self.carry += v.draw_carry
        else:
            self.score[r.winner] += r.game_points + self.carry
            self.carry = 0
        if v.next_dealer == "alternate":
            self.dealer = (self.dealer + 1) % v.players
        elif r.winner is not None:
            self.dealer = r.winner

    def _finish_sitout(self, state: State) -> None:
        r = state.result
        v = self.variant
        d = self.dealer
        target = v.target
        if r.winner is not None:
            gp = r.game_points + self.carry
            self.carry = 0
            w = self.seats[r.winner]
            self.score[w] += gp
            if not self.finished:  # the dealer scores as the winner, but not beyond six (F3.3)
                self.score[d] = max(self.score[d], min(self.score[d] + gp, 6))
            if self.score[w] >= target:
                self.finished.append(w)
        else:
            self.carry += v.draw_carry
        if len(self.finished) == 1 and not v.play_on:
            rest = sorted((s for s in range(3) if s not in self.finished), key=lambda s: -self.score[s])
            self.finished += rest
        elif len(self.finished) == 2:
            self.finished += [s for s in range(3) if s not in self.finished]
        if len(self.finished) == 3:
            return
        if not self.finished:
            self.dealer = (d + 1) % 3
        else:  # two play on, dealing to each other in turn
            rest = [s for s in range(3) if s not in self.finished]
            self.dealer = rest[0] if rest[1] == d else rest[1] if d in rest else rest[0]

    def _finish_table(self, state: TableState) -> None:
        r = state.result
        v = self.variant
        form = v.form
        if r.reason == "all-pass":  # M8: the same dealer deals again
            return
        scores = list(r.scores)
        if r.winner is not None and self.carry:
            scores[r.winner] += self.carry
            self.carry = 0
        if form == "kreuzmariage" and r.winner is None:
            self.carry += 1  # F4.2: 65-65 carries a point to the next hand's winners
        for t, x in enumerate(scores):
            self.score[t] += x
        self.dealer = (self.dealer + 1) % v.players
        over = [t for t in range(len(self.score)) if self.score[t] >= v.target]
        if not over:
            return
        bidder = state.team_of(r.bidder) if r.bidder is not None else None
        if form in ("bidding", "cutthroat") and v.bidder_goes_out and bidder in over:
            self._winner = bidder
            return
        best = max(self.score[t] for t in over)
        top = [t for t in over if self.score[t] == best]
        if len(top) == 1:
            self._winner = top[0]

    @property
    def result(self) -> MatchResult | None:
        if not self.is_over():
            return None
        v = self.variant
        score = tuple(self.score)
        if v.form == "dealer_sits_out":
            places = [0, 0, 0]
            for i, s in enumerate(self.finished):
                prev = self.finished[i - 1] if i else None
                tied = not v.play_on and i == 2 and self.score[s] == self.score[prev]
                places[s] = places[prev] if tied else i + 1
            return MatchResult(
                self.finished[0], score, 1, len(self.deals), "order", tuple(self.finished), tuple(places)
            )
        if v.is_table:
            kind = "team" if v.players == 4 else "winner"
            return MatchResult(self._winner, score, 1, len(self.deals), kind)
        winner = max(range(len(self.score)), key=self.score.__getitem__)
        shutout = self.variant.shutout_double and min(self.score) == 0
        return MatchResult(winner, score, 2 if shutout else 1, len(self.deals))

    def adjudicate(self) -> MatchResult:
        """End a match the deals have not decided (a referee's deal limit: weak players of
        a bidding game can drift below zero for ever) by the score so far: the side
        ahead wins; equal leaders share first place and nobody wins. An order of finish
        keeps the places already taken and ranks the rest by score. The deal in progress,
        if any, is left out."""
        v = self.variant
        n = v.players
        score = tuple(self.score)
        if v.form == "dealer_sits_out":
            rest = sorted((s for s in range(n) if s not in self.finished), key=lambda s: -self.score[s])
            order = [*self.finished, *rest]
            places = [0] * n
            for i, s in enumerate(order):
                prev = order[i - 1] if i else None
                tied = prev in rest and s in rest and self.score[s] == self.score[prev]
                places[s] = places[prev] if tied else i + 1
            first = [s for s in range(n) if places[s] == 1]
            return MatchResult(first[0] if len(first) == 1 else None, score, 1, self._scored, "order",
                               tuple(order), tuple(places), adjudicated=True)  # fmt: skip
        best = max(score)
        top = [t for t, x in enumerate(score) if x == best]
        kind = "team" if v.players == 4 else "winner"
        return MatchResult(top[0] if len(top) == 1 else None, score, 1, self._scored, kind, adjudicated=True)
