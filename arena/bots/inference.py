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
from ..game.state import DRAW_PENDING, FOLLOW, LEAD, State, pack_of
from .heuristic import p_any

__all__ = [
    "Seen", "declined_since", "history_likelihood", "keep", "lead_values", "marriage_lead", "opponent_likelihood",
    "play_likelihood", "value_lead_likelihood", "view",
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


def follow_values(h: int, lead: int, seen: Seen) -> list[tuple[float, int]]:
    """``(value, card)`` for answering ``lead`` with each card of ``h`` while the talon is
    open: the trick's points won (with a marriage in hand worth a share of a lead) or
    given, a trick that reaches 66, less what the card is worth keeping (the heuristic
    player's rule for its open-phase follow)."""
    trump = seen.trump
    pairs = (h >> KING) & (h >> QUEEN) & MARRIAGE_BITS
    bonus = 0.0
    if pairs:
        bonus = 0.35 * (40.0 if pairs >> (trump * 6) & 1 else 20.0)
    ls = lead // 6
    out = []
    for c in cards_of(h):
        pts = POINTS[lead] + POINTS[c]
        cs = c // 6
        if (c < lead) if cs == ls else cs == trump:
            score = pts + bonus
            if seen.mine + pts >= 66:
                score += _OUT
        else:
            score = -pts
            if seen.theirs + pts >= 66:
                score -= _OUT
        out.append((score - keep(c, h, seen), c))
    return out


def play_likelihood(values: list[tuple[float, int]], played: int, temperature: float = TEMPERATURE) -> float:
    """How likely ``played`` was, relative to the best choice, given every card's value."""
    best = max(v for v, _ in values)
    x = best - next(v for v, c in values if c == played)
    return 1.0 if x <= 0 else max(FLOOR, math.exp(-x / temperature))


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


def value_lead_chance(st: State, temperature: float = TEMPERATURE) -> float:
    """The chance, among its cards, that a player leading by `lead_values` leads the card on
    the table from the hand world ``st`` gives the leader: each card's `play_likelihood` at
    ``temperature``, normalized over the hand; ``1 / cards`` where there is nothing to weigh."""
    o = st.leader
    h = st.hand[o] | 1 << st.lead_card
    if st.phase != FOLLOW or st.strict or marriage_lead(st):
        return 1 / h.bit_count()
    values = lead_values(h, view(st, o))
    like = {c: play_likelihood(values, c, temperature) for _, c in values}
    return like[st.lead_card] / sum(like.values())


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


#: How many of the opponent's past open-phase plays (leads and follows), the latest first,
#: `history_likelihood` weighs. The latest tell most: the hand has changed by a draw or
#: more since an older one (2 plays: 0.58 nats about the heuristic's hand where 3 give
#: 0.60 and 4 0.61, `bench/inference.py`), and each one more multiplies the hands to weigh.
HISTORY_PLAYS = 3


class _History:
    """What a deal's history says about the opponent's past plays, for every world of one
    decision (the worlds differ only in the hidden cards): the steps that take its hand
    now back to each play to weigh (draws, plays, exchanges undone), and for each such
    play its view then less its hand, the card played, and for a lead the rules' offers it
    declined."""

    __slots__ = ("o", "steps", "hand_fix", "cache")

    def __init__(self, st: State):
        log = st.trick_log
        n = len(log)
        o = self.o = st.to_act ^ 1
        v = st.variant
        last = (v.deck - 2 * v.hand_size) // 2  # the draws follow tricks 0 .. last - 1
        close_lead = draws_until = n + 1  # leads before close_lead were open; draws followed tricks before draws_until
        took: dict[int, tuple[int, int]] = {}  # trick -> (gave, took): the opponent's exchanges
        married: dict[int, int] = {}  # trick -> suit: the opponent's marriages
        shown: list[tuple[int, int, int]] = []  # (trick, seat, points): every marriage
        drawn_up = -1  # the turn-up, if the opponent took it with the last draw
        turned: dict[int, int] = {}  # trick -> the turn-up an exchange on its lead left
        turn = st.turn_up
        for e in st.events:
            kind = e[0]
            if kind == "close":
                close_lead = e[2]
                draws_until = e[2] - 1 if e[3] else e[2]
            elif kind == "exchange":
                turned[e[-1]] = e[2]
                if e[1] == o:
                    took[e[-1]] = (e[2], e[3])
            elif kind == "marriage":
                shown.append((e[-1], e[1], e[3]))
                if e[1] == o:
                    married[e[-1]] = e[2]
            elif kind == "turn_up_drawn":
                turn = e[2]
                if e[1] == o:
                    drawn_up = e[2]
        for e in reversed(st.events):  # the first turn-up: the exchanges undone
            if e[0] == "exchange":
                turn = e[3]
        deck = 0
        for c in pack_of(v):
            deck |= 1 << c
        # forwards: the plays to weigh, with what the opponent knew at each
        leads: dict[int, tuple[Seen, float, float]] = {}
        follows: dict[int, tuple[Seen, int]] = {}
        pts = [0, 0]
        gone = 0
        won = [False, False]
        for j in range(min(n, last, close_lead)):
            turn = turned.get(j, turn)
            leader, a, b, w = log[j]
            if turn >= 0 and (leader != o or j not in married):
                counts = [pts[0], pts[1]]
                for t, s, p in shown:  # the marriages shown before its play (the leader's on this lead too)
                    if t < j or (t == j and s == leader):
                        counts[s] += p
                talon = v.deck - 2 * v.hand_size - 2 * j
                unseen = deck & ~gone & ~(1 << turn)
                if leader != o:  # a follow: the card led is seen, the leader holds one card less
                    seen = Seen(unseen & ~(1 << a), v.hand_size - 1, counts[o], counts[o ^ 1], st.trump, turn,
                                st.ex_card, talon)  # fmt: skip
                    follows[j] = (seen, a)
                else:
                    seen = Seen(unseen, v.hand_size, counts[o], counts[o ^ 1], st.trump, turn, st.ex_card, talon)
                    pair_ok = won[o] or v.marriage_needs_trick == "to_count"
                    ex_ok = (
                        j not in took
                        and (won[o] or not v.exchange_needs_trick)
                        and (j > 0 or v.exchange_on_first_lead)
                        and talon >= v.exchange_min_talon
                    )
                    leads[j] = (seen, DECLINED if pair_ok else 1.0, DECLINED if ex_ok else 1.0)
            gone |= 1 << a | 1 << b
            pts[w] += POINTS[a] + POINTS[b]
            won[w] = True
        # backwards, the latest first: the steps that take the hand now back to those plays
        pending = st.phase == DRAW_PENDING
        steps: list[tuple] = []
        left = HISTORY_PLAYS if leads or follows else 0
        for j in range(n - 1, -1, -1):
            if not left:
                break
            if j < last and j < draws_until and not (pending and j == n - 1):  # it drew after trick j
                if j == last - 1 and drawn_up >= 0:
                    steps.append(("known", 1 << drawn_up))
                else:
                    pin = 0  # cards it held before that draw: taken in exchange or shown since
                    for t, (_, tk) in took.items():
                        if t <= j:
                            pin |= 1 << tk
                    for t, suit in married.items():
                        if t <= j:
                            pin |= 1 << (suit * 6 + KING) | 1 << (suit * 6 + QUEEN)
                    steps.append(("draw", pin))
            leader, a, b, _ = log[j]
            steps.append(("play", 1 << (a if leader == o else b)))
            if j in leads:
                steps.append(("weigh", j, a, leads[j][0], -1, leads[j][1], leads[j][2]))
                left -= 1
            elif j in follows:
                steps.append(("weigh", j, b, follows[j][0], follows[j][1], 1.0, 1.0))
                left -= 1
            if j in took:
                gave, tk = took[j]
                steps.append(("swap", tk, gave))
        self.steps = steps
        self.hand_fix = took.get(n)  # an exchange on the lead now being played: undone first
        self.cache: dict[tuple[int, int], float] = {}

    def likelihood(self, h: int, at: dict | None = None) -> float:
        """The chance of the weighed plays, over every draw history back from hand ``h``;
        ``at`` (for tests) gets, for each weighed trick, the hands it may have held then
        with their chances given the plays after it, and its view then (less its hand)."""
        if self.hand_fix is not None:
            gave, tk = self.hand_fix
            h = (h & ~(1 << tk)) | 1 << gave
        dist = {h: 1.0}
        cache = self.cache
        for step in self.steps:
            kind = step[0]
            if kind == "draw":
                pin = step[1]
                new: dict[int, float] = {}
                for x, p in dist.items():
                    free = x & ~pin or x
                    q = p / free.bit_count()
                    while free:
                        low = free & -free
                        y = x & ~low
                        new[y] = new.get(y, 0.0) + q
                        free ^= low
                dist = new
            elif kind == "play":
                bit = step[1]
                dist = {x | bit: p for x, p in dist.items()}
            elif kind == "known":
                bit = step[1]
                dist = {x & ~bit: p for x, p in dist.items()}
            elif kind == "swap":
                tk, gave = step[1], step[2]
                dist = {(x & ~(1 << tk)) | 1 << gave: p for x, p in dist.items()}
            else:  # a play to weigh: a lead (lead < 0) or a follow of ``lead``
                _, j, card, seen, lead, pair_decline, ex_decline = step
                if at is not None:
                    at[j] = (_normal(dist), seen)
                new = {}
                for x, p in dist.items():
                    f = cache.get((j, x))
                    if f is None:
                        f = cache[(j, x)] = _play_chance(x, card, seen, lead, pair_decline, ex_decline)
                    new[x] = p * f
                dist = new
        return sum(dist.values())


def _play_chance(h: int, card: int, seen: Seen, lead: int, pair_decline: float, ex_decline: float) -> float:
    """How likely ``card`` was from hand ``h`` with the view ``seen`` (its pool still
    holding the hand): led (``lead`` < 0; times the declines for a marriage pair and the
    exchange card held), or played on ``lead``."""
    pool = seen.pool
    seen.pool = pool & ~h
    if lead >= 0:
        f = play_likelihood(follow_values(h, lead, seen), card)
    else:
        f = play_likelihood(lead_values(h, seen), card)
        pairs = (h >> KING) & (h >> QUEEN) & MARRIAGE_BITS
        if pairs:
            f *= pair_decline ** pairs.bit_count()
        if h >> seen.ex_card & 1:
            f *= ex_decline
    seen.pool = pool
    return f


def _normal(dist: dict[int, float]) -> dict[int, float]:
    total = sum(dist.values())
    return {x: p / total for x, p in dist.items()}


_HISTORY: list = [None, None]  # (key, _History) of the last decision weighed


def history_likelihood(st: State) -> float:
    """How likely the opponent's open-phase play in this deal is from the hands world
    ``st`` gives it: the lead on the table by `value_lead_likelihood`, and its last
    `HISTORY_PLAYS` plays before that by the heuristic player's rules, which the models
    copy: a lead by `lead_values` (with `DECLINED` for a marriage or the exchange it could
    have taken on that lead and did not), a follow by `follow_values`.

    Its hand at a past play is its hand now with the cards it played since put back and
    the cards it drew since taken out. Which cards it drew is not known, so every draw
    history is weighed by its chance (each draw any card it then held and had not held
    before, as likely as another, since every deal is), the hands it may have held merged
    as the history is undone: the likelihood is exact under the models. What the history
    alone says (the views at past plays) is worked out once per decision, and a past
    play's likelihood from a given hand is kept for the other worlds of that decision.
    (An exchange is taken to come before its trick's lead, as in both presets.)

    Not the agent's: it tells three times what the value model does about the heuristic's
    hand and measured level in play (docs/agents-strength.md, "The opponent's past
    plays")."""
    like = value_lead_likelihood(st)
    if not st.trick_log or st.to_act < 0 or len(st.trick_log) != st.n_tricks:
        return like
    key = (st.n_tricks, st.phase, st.to_act, st.lead_card, st.variant, tuple(st.trick_log), tuple(st.events))
    if _HISTORY[0] != key:
        _HISTORY[0], _HISTORY[1] = key, _History(st)
    hist: _History = _HISTORY[1]
    if not hist.steps:
        return like
    h = st.hand[hist.o]
    if st.phase == FOLLOW and st.lead_card >= 0:
        h |= 1 << st.lead_card
    return like * hist.likelihood(h)
