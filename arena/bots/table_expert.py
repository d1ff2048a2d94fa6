"""Determinized search for the card play and the bids of the three- and four-handed forms.

`TableExpert` plays each candidate card in sampled worlds of its information set
(`arena.bots.table_worlds`) and plays the rest of the deal out with a fast policy that
sees every card (`table_policy`), as the two-handed expert does before the talon runs
low; the card with the best mean value for its side is played. Bids are searched the
same way (since 2.3.0): each legal bid but the moon, and the pass, is made in each world,
the seats after it bid as the heuristic would from the hands the world gives them
(`bid_choice`), and the deal is played out; the moon is never bid (a playout that sees
every card takes every trick far more often than a player can). The trump decision of
F3.1 (searched with ``search_trump``, over `NamingWorlds`: measured level in whole
matches, so not the agent's), marriages (always shown, the trump one first), claims of 66
and the last trick's claim are the card-counting heuristic's (`TableHeuristic`).

The value of a finished deal to a side is its game points less the mean of the other
sides', plus a hundredth of a game point for each ten card points of margin (to tell
apart lines that score the same). ``budget="samples"`` searches a fixed number of worlds
(deterministic for a seed); ``budget="time"`` (the agent's) searches those, then more
while 40% of the move's allowance lasts, until the best card leads the runner-up by three
standard errors of their paired difference, as the two-handed expert does.
"""

from __future__ import annotations

import random
import time
from typing import Any

from ..game import Variant
from ..game.actions import DECLARE, MARRY, PASS, action_str, parse_action, play_action, play_card
from ..game.cards import POINTS_32, SUIT_MASK_32, SUIT_OF
from ..game.table import BIDDING, FOLLOW, LAST, LEAD, MELD, OVER, TableState
from .expert import BUDGETS, settled
from .table_strategies import TableHeuristic, bid_choice
from .table_worlds import NamingWorlds, TableWorlds

__all__ = ["TableExpert", "deal_value", "table_policy"]


def deal_value(st: TableState, team: int) -> float:
    """A finished deal's worth to ``team``: its game points less the other sides' mean,
    plus 0.001 a card point of margin (ties between equal scores)."""
    r = st.result
    k = len(r.scores)
    others = (sum(r.scores) - r.scores[team]) / (k - 1)
    pts = (sum(r.points) - r.points[team]) / (k - 1)
    return r.scores[team] - others + 0.001 * (r.points[team] - pts)


def _beats(c: int, w: int, trump: int) -> bool:
    """Whether card ``c`` played on a trick won so far by ``w`` takes it."""
    if SUIT_OF[c] == SUIT_OF[w]:
        return c < w
    return SUIT_OF[c] == trump


def _threat(st: TableState, seat: int, w: int, lead_suit: int) -> bool:
    """Whether ``seat`` (seen in the world) can beat ``w`` on a trick led in ``lead_suit``."""
    h = st.hand[seat]
    same = h & SUIT_MASK_32[lead_suit]
    if same:
        return SUIT_OF[w] == lead_suit and bool(same & ((1 << w) - 1))
    t = st.trump
    if t < 0:
        return False
    trumps = h & SUIT_MASK_32[t]
    if SUIT_OF[w] == t:
        trumps &= (1 << w) - 1
    return bool(trumps)


def _later(st: TableState, s: int) -> list[int]:
    """The seats to play after ``s`` in the trick in progress (``s`` to play now)."""
    out = []
    left = st.n_active - len(st.trick) - 1
    x = s
    for _ in range(left):
        x = st.nxt[x]
        out.append(x)
    return out


def table_policy(st: TableState) -> int:
    """A fast player that sees every card, for playouts: claims 66 when true, shows
    marriages (trumps first), leads a card nobody can beat (the most points), else its
    cheapest side card; follows by smearing points on a partner's safe trick, taking an
    opponent's with the weakest card that holds, else throwing its cheapest card."""
    acts = st.legal_actions()
    if len(acts) == 1:
        return acts[0]
    ph = st.phase
    s = st.to_act
    team = st.team_of(s)
    if ph == LAST:
        return DECLARE if st.count(team) >= 66 else PASS
    if ph == MELD:
        return acts[0]  # a marriage if it holds one (listed before the pass)
    if ph != LEAD and ph != FOLLOW:  # bidding or naming: not reached in playouts
        return acts[0]
    trump = st.trump
    if ph == LEAD:
        if DECLARE in acts and st.count(team) >= 66:
            return DECLARE
        marriages = [a for a in acts if MARRY <= a < MARRY + 4]
        if marriages:
            return MARRY + trump if MARRY + trump in marriages else marriages[0]
        cards = [c for c in map(play_card, acts) if c >= 0]
        if trump < 0:  # the first card led sets trumps: the top card of the longest suit
            h = st.hand[s]
            suit = max(range(4), key=lambda x: (h & SUIT_MASK_32[x]).bit_count())
            return play_action(min([c for c in cards if SUIT_OF[c] == suit] or cards))
        opps = [x for x in range(st.players) if st.team_of(x) != team and (st.active is None or x in st.active)]
        best, best_pts = -1, -1
        for c in cards:
            if not any(_threat(st, o, c, SUIT_OF[c]) for o in opps) and POINTS_32[c] > best_pts:
                best, best_pts = c, POINTS_32[c]
        if best >= 0:
            return play_action(best)
        side = [c for c in cards if SUIT_OF[c] != trump] or cards
        return play_action(min(side, key=lambda c: (POINTS_32[c], -c)))
    # FOLLOW
    cards = [play_card(a) for a in acts]
    w = st.win_card
    lead_suit = SUIT_OF[st.trick[0][1]]
    later_opps = [x for x in _later(st, s) if st.team_of(x) != team]
    if st.team_of(st.win_seat) == team:
        if not any(_threat(st, o, w, lead_suit) for o in later_opps):
            return play_action(max(cards, key=lambda c: (POINTS_32[c], SUIT_OF[c] != trump, c)))
        return play_action(min(cards, key=lambda c: (POINTS_32[c], SUIT_OF[c] == trump, -c)))
    winners = [c for c in cards if _beats(c, w, trump)]
    safe = [c for c in winners if not any(_threat(st, o, c, lead_suit) for o in later_opps)]
    if safe:
        return play_action(max(safe))  # the weakest card that holds the trick
    if winners and st.trick_pts >= 10:
        return play_action(min(winners))
    return play_action(min(cards, key=lambda c: (POINTS_32[c], SUIT_OF[c] == trump, -c)))


class TableExpert:
    """Determinized search over the card play of the table forms (see the module).
    ``variant`` is the match's rule set (by default the preset each observation names);
    ``move_ms`` the move allowance, for ``budget="time"``."""

    #: Worlds a decision searches at effort 1 (``budget="samples"``).
    WORLDS = 40
    #: The most worlds a time-budgeted decision searches.
    MAX_WORLDS = 2000
    #: With a time budget, the first `WORLDS` worlds stop only at this share of the
    #: allowance; the rest at ``time_fraction``, or once the best card is settled
    #: (checked every `SETTLE_EVERY` worlds: `arena.bots.expert.settled`).
    SAFETY_FRACTION = 0.6
    SETTLE_EVERY = 8

    def __init__(
        self,
        seed: int = 0,
        *,
        variant: Variant | None = None,
        move_ms: int | None = None,
        budget: str = "samples",
        effort: float = 1.0,
        time_fraction: float = 0.4,
        safety_ms: float = 8.0,
        settle_z: float = 3.0,
        search_bids: bool = True,
        search_trump: bool = False,
    ):
        if budget not in BUDGETS:
            raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
        self.seed = seed
        self.variant = variant
        self.budget = budget
        self.effort = effort
        self.move_ms = move_ms
        self.time_fraction = time_fraction
        self.safety_ms = safety_ms
        self.settle_z = settle_z
        #: Bids searched as the card play is (F4.3, F3.2); False: the heuristic's.
        self.search_bids = search_bids
        #: F3.1's trump decision searched over worlds of the unseen pack (`NamingWorlds`);
        #: False: the heuristic's estimate.
        self.search_trump = search_trump
        self.heuristic = TableHeuristic(seed)
        self.decisions = 0
        #: What the last searched decision did: worlds searched, each candidate's mean.
        self.last: dict[str, Any] = {}

    def __call__(self, obs: dict[str, Any], legal: list[str]) -> str:
        return self.choose(obs, legal)

    def choose(self, obs: dict[str, Any], legal: list[str], time_left_ms: int | None = None) -> str:
        """The action for ``obs``: searched card play and bids (the moon never), claims of
        66 when true, the heuristic's marriages, trump decision and last-trick claim."""
        self.decisions += 1
        if self.search_bids and "players" in obs and obs["phase"] == "bid" and len(legal) > 1:
            bids = [parse_action(a) for a in legal if a != "bid:5"]  # never the moon
            return self._searched(obs, legal, bids, self._deadline(time_left_ms))
        if self.search_trump and "players" in obs and obs["phase"] == "name" and len(legal) > 1:
            # once a deal: the whole safety share of the move; a suit none of its three
            # cards is in is never named (nor chosen, in 200 deals searched at four times
            # the work)
            held = {card[-1] for card in obs["hand"]}
            cands = [parse_action(a) for a in legal if a == "pass" or a[-1] in held]
            limits = self._deadline(time_left_ms)
            if limits is not None:
                limits = (limits[0], limits[0])
            return self._searched(obs, legal, cands, limits, NamingWorlds(obs, self.variant))
        if "players" not in obs or obs["phase"] not in ("lead", "follow") or len(legal) == 1:
            return self.heuristic(obs, legal)
        if any(a.startswith("marry:") for a in legal):
            return self.heuristic(obs, legal)
        if "declare" in legal and obs["points"][obs["team"]] >= 66:
            return "declare"
        cands = [parse_action(a) for a in legal if a != "declare"]
        if len(cands) == 1:
            return action_str(cands[0])
        return self._searched(obs, legal, cands, self._deadline(time_left_ms))

    def _searched(
        self,
        obs: dict[str, Any],
        legal: list[str],
        cands: list[int],
        limits: tuple[float, float] | None,
        worlds: NamingWorlds | TableWorlds | None = None,
    ) -> str:
        """The searched choice among ``cands`` (`_search`, seeded by the player's seed and the
        decision's number), or the heuristic's when no world could be drawn."""
        rng = random.Random(self.seed * 1_000_003 + self.decisions)
        best = self._search(obs, cands, rng, limits, worlds)
        return action_str(best) if best is not None else self.heuristic(obs, legal)

    def _deadline(self, time_left_ms: int | None) -> tuple[float, float] | None:
        """Seconds this decision may search: for the first `WORLDS` worlds (the safety
        net, ``SAFETY_FRACTION`` of the allowance) and for the rest (``time_fraction``),
        each less ``safety_ms``; None with fixed work."""
        if self.budget != "time" or self.move_ms is None:
            return None
        allow = self.move_ms if time_left_ms is None else min(self.move_ms, time_left_ms)
        return tuple(max(0.0, (allow * f - self.safety_ms) / 1000) for f in (self.SAFETY_FRACTION, self.time_fraction))

    def _search(
        self,
        obs: dict[str, Any],
        cands: list[int],
        rng: random.Random,
        limits: tuple[float, float] | None,
        worlds: NamingWorlds | TableWorlds | None = None,
    ) -> int | None:
        """The candidate with the best mean value over sampled worlds (each made in every
        world, the deal played out), or None when no world could be drawn."""
        worlds = worlds if worlds is not None else TableWorlds(obs, self.variant)
        team = obs["team"]
        series: list[list[float]] = [[] for _ in cands]
        n = max(1, round(self.WORLDS * self.effort))
        cap = n if limits is None else max(n, self.MAX_WORLDS)
        start = time.perf_counter()
        done = 0
        for i in range(cap):
            if limits is not None and i:
                if time.perf_counter() - start > limits[i >= n]:
                    break
                if i >= n and i % self.SETTLE_EVERY == 0 and settled(series, self.settle_z):
                    break
            w = worlds.sample(rng)
            if w is None:
                break
            for j, a in enumerate(cands):
                st = w.clone()
                st.apply_legal(a)
                while st.phase == BIDDING:  # the seats after it bid as the heuristic does
                    x = st.to_act
                    bidder = st.bidder if st.bidder >= 0 else None
                    partner = x ^ 2 if st.players == 4 else None
                    bid = bid_choice(st.hand[x], st.players, bidder, partner, st.legal_action_strings())
                    st.apply_legal(parse_action(bid))
                while st.phase != OVER:
                    st.apply_legal(table_policy(st))
                series[j].append(deal_value(st, team))
            done += 1
        self.last = {"worlds": done}
        if not done:
            return None
        means = [sum(v) / done for v in series]
        self.last["means"] = dict(zip(map(action_str, cands), means, strict=True))
        return cands[means.index(max(means))]
