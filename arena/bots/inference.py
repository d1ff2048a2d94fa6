"""A model of how a player leads while the talon is open, for weighing sampled worlds.

A seat that leads with the talon open chooses among its cards by what each is worth: the
chance that the card wins against the cards the leader has not seen, the points it wins
or gives, a trick that reaches 66, against what the card is worth keeping (trump power, a
ten that rules its suit, the card to exchange, marriage halves). `lead_values` scores
every card of a hand that way (the heuristic player's rules for its open-phase lead, here
on bit masks of a world), and `value_lead_likelihood` says how likely the card the
opponent has just led is from the hand a world gives it, relative to its best lead:
``exp(-(best value - value of the card led) / TEMPERATURE)``, floored at `FLOOR`, so a
world where the lead was a poor choice counts less, never nothing. A hand that offered
the leader a marriage to show or the turn-up to take in exchange, which it did not take
before leading, counts `DECLINED` times less for each (the bundled players always take
both).

Measured on the heuristic's open-phase leads (831 decisions of 40 matches): its lead is
the model's best in 96% of them. Against the expert the model is rougher; the floor keeps
it safe.
"""

from __future__ import annotations

import math

from ..game.actions import EXCHANGE, MARRY
from ..game.cards import ACE, KING, MARRIAGE_BITS, POINTS, QUEEN, SUIT_MASK, TEN, cards_of
from ..game.state import DRAW_PENDING, FOLLOW, LEAD, State
from .heuristic import p_any

__all__ = [
    "Seen", "declined_since", "keep", "lead_values", "marriage_lead", "opponent_likelihood", "play_likelihood",
    "value_lead_likelihood", "view",
]  # fmt: skip


def _p_any_table(n: int = 24) -> list[list[list[float]]]:
    """``t[u][m][x]``: the heuristic's `p_any` looked up, not computed, on the hot path."""
    t = [[[0.0] * (n + 1) for _ in range(n + 1)] for _ in range(n + 1)]
    for u in range(n + 1):
        for m in range(u + 1):
            for x in range(1, u + 1):
                t[u][m][x] = p_any(x, u, m)
    return t


_P_ANY = _p_any_table()
#: What keeping a card is worth with the talon open, trumps and other suits (A T K Q J 9).
_TRUMP_KEEP = (18.0, 15.0, 7.0, 7.0, 6.5, 6.0)
_PLAIN_KEEP = (3.0, 2.0, 0.5, 0.5, 0.0, 0.0)
#: A trick that takes a seat to 66 (or gives the other to 66) counts this much more.
_OUT = 200.0
#: How fast a card's likelihood falls with its value below the best card's, and its floor.
TEMPERATURE = 3.0
FLOOR = 0.05


class Seen:
    """What one seat knows when it plays with the talon open: the cards it has not seen
    (``pool``: the other hand and the face-down talon), how many of them the other seat
    holds, both counts towards 66 (pending marriages included), the trump and the turn-up."""

    __slots__ = ("pool", "opp_n", "mine", "theirs", "trump", "turn_up", "ex_card", "ex_bonus")

    def __init__(
        self, pool: int, opp_n: int, mine: int, theirs: int, trump: int, turn_up: int, ex_card: int, talon: int
    ):
        self.pool = pool
        self.opp_n = opp_n
        self.mine = mine
        self.theirs = theirs
        self.trump = trump
        self.turn_up = turn_up
        self.ex_card = ex_card
        self.ex_bonus = POINTS[turn_up] * 0.6 + 2.0 if turn_up >= 0 and talon >= 4 else 0.0


def keep(c: int, h: int, seen: Seen) -> float:
    """What card ``c`` is worth keeping in hand ``h`` with the talon open: trump power, a
    ten that rules its suit, the card to exchange, marriage halves."""
    cs, r = divmod(c, 6)
    pool = seen.pool
    if cs == seen.trump:
        k = _TRUMP_KEEP[r]
        if c == seen.ex_card:
            k += seen.ex_bonus
    else:
        k = _PLAIN_KEEP[r]
        if r == TEN and not pool >> (cs * 6 + ACE) & 1:
            k += 1.5
    if r == KING or r == QUEEN:
        partner = c + 1 if r == KING else c - 1
        worth = 40.0 if cs == seen.trump else 20.0
        if h >> partner & 1:
            k += worth * 0.55
        elif pool >> partner & 1 or partner == seen.turn_up:
            k += worth * 0.08
    return k


def lead_values(h: int, seen: Seen) -> list[tuple[float, int]]:
    """``(value, card)`` for leading each card of ``h``: the expected return against the
    unseen cards (each placement of them as likely as another), less its keep value."""
    pool = seen.pool
    tab = _P_ANY[pool.bit_count()][seen.opp_n]
    trump = seen.trump
    p_tr = tab[(pool & SUIT_MASK[trump]).bit_count()]
    pts = POINTS
    out = []
    for c in cards_of(h):
        cs = c // 6
        p = pts[c]
        higher = pool & SUIT_MASK[cs] & ((1 << c) - 1)
        p_same = tab[higher.bit_count()]
        p_lose = p_same + (1.0 - p_same) * p_tr if cs != trump and p >= 10 else p_same
        beat = min(pts[x] for x in cards_of(higher)) if higher else 3
        score = (1.0 - p_lose) * (p + 1.0) - p_lose * (p + 0.5 * beat)
        if seen.mine + p + 1 >= 66:
            score += (1.0 - p_lose) * _OUT
        if seen.theirs + p + beat >= 66:
            score -= p_lose * _OUT
        out.append((score - keep(c, h, seen), c))
    return out


def play_likelihood(values: list[tuple[float, int]], played: int) -> float:
    """How likely ``played`` was, relative to the best choice, given every card's value."""
    best = max(v for v, _ in values)
    x = best - next(v for v, c in values if c == played)
    return 1.0 if x <= 0 else max(FLOOR, math.exp(-x / TEMPERATURE))


def _unseen_by(st: State, s: int) -> int:
    """Cards seat ``s`` has not seen in world ``st``: the other hand and the face-down talon."""
    pool = st.hand[s ^ 1]
    for c in st.stock[st.stock_pos :]:
        pool |= 1 << c
    return pool


def _count(st: State, s: int) -> int:
    return st.count(s) + (st.mpending[s] if not st.tricks[s] else 0)


def view(st: State, s: int) -> Seen:
    """What seat ``s`` knows in world ``st`` (talon open), as `Seen`."""
    o = s ^ 1
    return Seen(
        _unseen_by(st, s), st.hand[o].bit_count(), _count(st, s), _count(st, o), st.trump, st.turn_up, st.ex_card,
        st.talon_size(),
    )  # fmt: skip


def marriage_lead(st: State) -> bool:
    """Whether the card on the table was led with a marriage just shown (so bound to it)."""
    n, leader = st.n_tricks, st.leader
    return any(e[0] == "marriage" and e[1] == leader and e[-1] == n for e in st.events)


def value_lead_likelihood(st: State) -> float:
    """How likely, relative to its best lead, the card on the table was led from the hand
    world ``st`` gives the leader, if it leads by `lead_values` (seen from its side: the
    other hand and the face-down talon are what it has not seen). 1.0 where there is
    nothing to weigh: no card on the table, a lead bound to a marriage, a lead after the
    close or the last draw (other rules lead there)."""
    if st.phase != FOLLOW or st.strict or marriage_lead(st):
        return 1.0
    o = st.leader
    lc = st.lead_card
    seen = view(st, o)
    h = st.hand[o] | 1 << lc
    return play_likelihood(lead_values(h, seen), lc) * _declined(st, o, h)


#: A leader that could have shown a marriage, or exchanged for the turn-up, and did not is
#: this much less likely to hold one (every player here always does both, but a player
#: may have its reasons).
DECLINED = 0.1


def _declined(st: State, o: int, h: int) -> float:
    """`DECLINED` for each of a marriage and the exchange that hand ``h`` offered the
    leader ``o`` on this lead (by the engine's rules) and that it did not take; else 1."""
    n = st.n_tricks
    pairs = (h >> KING) & (h >> QUEEN) & MARRIAGE_BITS
    if not pairs and not h >> st.ex_card & 1:
        return 1.0
    exchanged = any(e[0] == "exchange" and e[1] == o and e[-1] == n for e in st.events)
    before = st.clone()  # the lead undone: what could the leader do then?
    before.hand[o] = h
    before.phase, before.to_act, before.lead_card = LEAD, o, -1
    before.step = 1 if exchanged else 0
    legal = before.legal_actions()
    like = 1.0
    if any(MARRY <= a < EXCHANGE for a in legal):
        like *= DECLINED
    if EXCHANGE in legal:
        like *= DECLINED
    return like


def declined_since(st: State) -> float:
    """At a decision of ours with no card of the opponent's on the table: how likely the
    hand world ``st`` gives the opponent is, given that on its last lead it neither showed
    a marriage nor exchanged where it could have. A trump nine (Schnapsen: jack) or a
    marriage pair held now must then have been drawn since, in whole or part: with ``k``
    of the ``m`` cards in its hand drawn since that lead (each card as likely as another
    to be one of them), the chance ``p`` of that, and the hand counts ``p + (1 - p) *
    DECLINED`` (`DECLINED` if nothing was drawn since). 1.0 where nothing is weighed."""
    if st.strict or st.phase == FOLLOW or st.to_act < 0:
        return 1.0
    o = st.to_act ^ 1
    h = st.hand[o]
    pairs = (h >> KING) & (h >> QUEEN) & MARRIAGE_BITS
    nine = h >> st.ex_card & 1
    log = st.trick_log
    n = st.n_tricks
    if not (pairs or nine) or len(log) != n:
        return 1.0
    t = n - 1
    while t >= 0 and log[t][0] != o:
        t -= 1
    if t < 0:
        return 1.0
    k = n - t - (1 if st.phase == DRAW_PENDING else 0)  # the opponent's draws since its lead
    m = h.bit_count()
    if k >= m:
        return 1.0
    took = set()
    for e in st.events:
        if e[1] == o and e[-1] == t and (e[0] == "exchange" or e[0] == "marriage"):
            took.add(e[0])
    v = st.variant
    tricks_then = sum(1 for x in log[:t] if x[3] == o)
    like = 1.0
    if (
        nine
        and "exchange" not in took
        and (tricks_then or not v.exchange_needs_trick)
        and (t or v.exchange_on_first_lead)
        and st.talon_size() + 2 * k >= v.exchange_min_talon
    ):
        p = k / m
        like *= p + (1.0 - p) * DECLINED
    if pairs and "marriage" not in took and (tricks_then or v.marriage_needs_trick == "to_count"):
        p = 1.0 - math.comb(m - 2, k) / math.comb(m, k)
        while pairs:
            like *= p + (1.0 - p) * DECLINED
            pairs &= pairs - 1
    return like


def opponent_likelihood(st: State) -> float:
    """The expert's weight of a world (``lead_model="value"``): `value_lead_likelihood`
    when the opponent's lead is on the table, else `declined_since`."""
    if st.phase == FOLLOW:
        return value_lead_likelihood(st)
    return declined_since(st)
