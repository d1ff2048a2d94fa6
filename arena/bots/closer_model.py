"""Which kind of closer the opponent is, learned within a match from what it did.

The expert's playouts need a model of how the opponent closes the talon. One model is
a rule from the opponent's own cards (`arena.bots.heuristic.close_by_rule`); it describes
some players exactly and others badly (docs/agents-strength.md, "Which closer it faces").
`CloserEvidence` weighs, over a match, the hypothesis "this opponent is a player of that
rule" against "it is some other player": each time a card it led is on the table, the
decision right after (ours, to follow) weighs that lead under each hypothesis's model of
leading, and, where closing was open to it, whether it closed, against what the rule says
in sampled worlds of its hand then (its hand now plus the card it led). Pure: no clocks,
no I/O; the worlds come from the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..game.actions import CLOSE
from ..game.state import LEAD, State

__all__ = ["CloserEvidence", "any_card", "before_lead"]

#: How often a player of the rule is taken to do otherwise (the worlds' reconstruction of
#: its view is not exact, and no player is a perfect copy).
SLIP = 0.05
#: The chance, before any evidence, that the opponent closes by the rule.
PRIOR = 0.2


def before_lead(world: State) -> tuple[State, bool] | None:
    """The opponent's position just before the lead on the table in ``world`` (a world of
    the decision that follows it), and whether it closed there; None where this lead says
    nothing about its closing: no lead on the table, a talon already closed before it, an
    exchange or a marriage on this lead (its close would have been weighed after them), or
    closing not open to it."""
    if world.lead_card < 0 or world.players != 2:
        return None
    o = world.leader
    n = world.n_tricks
    closed_here = False
    for e in world.events:
        if e[0] in ("exchange", "marriage") and e[1] == o and e[-1] == n:
            return None
        if e[0] == "close":
            if e[1] != o or e[2] != n:
                return None
            closed_here = True
    pre = world.clone()
    pre.hand[o] |= 1 << pre.lead_card
    pre.lead_card = -1
    pre.phase = LEAD
    pre.to_act = o
    pre.step = 0
    pre.marriage_suit = -1
    if closed_here:
        pre.events = [e for e in pre.events if e[0] != "close"]
        pre.closed_by = -1
        pre.strict = False
        pre.close_tricks = pre.close_points = None
        return pre, True
    if world.strict or CLOSE not in pre.legal_actions():
        return None
    return pre, False


def any_card(world: State) -> float:
    """The chance of the lead on the table in ``world`` if every card of the hand is as likely."""
    return 1 / (world.hand[world.leader].bit_count() + 1)


class CloserEvidence:
    """The evidence, over one match, that the opponent closes by ``rule(state, seat)``.

    `observe` takes the worlds of the decision right after an opponent's lead; `p_rule`
    is the posterior chance that it is a player of the rule. The other hypothesis closes at
    a steady rate, estimated from this opponent's own closes and chances so far."""

    def __init__(
        self,
        rule: Callable[[State, int], bool],
        prior: float = PRIOR,
        slip: float = SLIP,
        lead_chance: Callable[[State], float] = any_card,
        loose_lead_chance: Callable[[State], float] = any_card,
    ):
        self.rule = rule
        #: The chance that a player of the rule, and another player, leads the card on the
        #: table from a world's hand (normalized over its cards): the lead is evidence too,
        #: and weighs the worlds for the rule (both `any_card`: the closes alone).
        self.lead_chance = lead_chance
        self.loose_lead_chance = loose_lead_chance
        self.slip = slip
        self.log_odds = math.log(prior / (1 - prior))
        self.chances = 0
        self.closes = 0

    @property
    def p_rule(self) -> float:
        return 1 / (1 + math.exp(-self.log_odds))

    def observe(self, sample: Callable[[], State], n: int) -> bool:
        """Weigh the opponent's lead on the table over ``n`` uniform worlds drawn by
        ``sample`` (of the decision that follows it): the card it led, and whether it closed
        where closing was open to it. False if it did not say whether it closes."""
        said = 0.0  # the worlds' weight where the rule closes
        mass = plain = 0.0  # the lead's chance under the rule's player, and under the other
        closed: bool | None = None
        for _ in range(n):
            w = sample()
            if w.lead_card < 0:
                return False
            q = self.lead_chance(w)
            mass += q
            plain += self.loose_lead_chance(w)
            seen = before_lead(w)
            if seen is not None:  # the same in every world: it turns on public facts only
                pre, closed = seen
                said += q * self.rule(pre, pre.to_act)
        self.log_odds += math.log(mass / plain)  # the lead: by the rule's player, or loosely
        if closed is not None:
            p_close_rule = self.slip + (1 - 2 * self.slip) * (said / mass)
            rate = (self.closes + 0.5) / (self.chances + 3)  # the steady closer, its rate so far
            if closed:
                self.log_odds += math.log(p_close_rule / rate)
                self.closes += 1
            else:
                self.log_odds += math.log((1 - p_close_rule) / (1 - rate))
            self.chances += 1
        self.log_odds = max(-20.0, min(20.0, self.log_odds))
        return closed is not None
