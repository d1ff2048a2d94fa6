"""Determinized search for agents: worlds from an observation, an exact endgame solver,
fast playouts, and `ExpertStrategy`, the reference searching player.

An observation (`arena.game.observation`) is a seat's information set. A *world* is a full
engine `State` consistent with it: the seat's own hand and every public fact as they are,
the opponent's unseen cards and the order of the face-down talon filled in.

- `state_from_observation(obs, variant, hidden)` builds the world for one assignment of
  the hidden cards (`Hidden`: the opponent's whole hand and the face-down talon, top
  first); `hidden_of(state, seat)` reads the true assignment off a real state.
- `sample_worlds(obs, variant, n, rng)` draws worlds uniformly among the assignments
  consistent with what the seat knows: the opponent's hand size, the cards known to be in
  it, the cards played, and what the strict phase's follow rules reveal (a player who
  did not follow suit is void in it; one who did not trump when void holds no trump; one
  who played a lower card of the led suit holds no higher one).
- `solve(state, seat)` is exact alpha-beta with a transposition table on a state whose
  hidden cards are all placed, from the moment the talon is closed or exhausted (or down
  to its last two cards): the value in game points for ``seat`` and the best action.
  `minimax(state, seat)` is the brute-force reference it must agree with.
- `ExpertStrategy` plays by perfect-information Monte Carlo: exact solving of sampled
  worlds once the talon is closed or nearly gone, playouts with a cheap policy before.

Everything here is deterministic given its inputs and the `random.Random` passed in.
Strategies read the clock only as a safety net (see `ExpertStrategy`).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .game.actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY, action_str, parse_action
from .game.cards import KING, POINTS, QUEEN, SUIT_MASK, SUITS, cards_of, parse_card
from .game.state import CLOSE_OFFER, DRAW_PENDING, FOLLOW, LEAD, OVER, PHASES, DealResult, State, pack_of
from .game.variant import Variant, get_variant

__all__ = [
    "Hidden",
    "ExpertStrategy",
    "InfoSet",
    "hidden_of",
    "minimax",
    "playout",
    "policy_action",
    "sample_worlds",
    "solve",
    "solve_actions",
    "state_from_observation",
]


# ==========================================================================================
# Information sets and worlds
# ==========================================================================================
class Hidden(NamedTuple):
    """One assignment of the cards a seat cannot see.

    ``opp_hand`` is the opponent's whole hand as a bitmask (cards known to be in it
    included); ``talon`` the face-down talon cards, top first (the turn-up is public and
    not part of it).
    """

    opp_hand: int
    talon: tuple[int, ...]


def hidden_of(state: State, seat: int) -> Hidden:
    """The true hidden cards of ``state`` as seen from ``seat`` (for tests and analysis)."""
    return Hidden(state.hand[seat ^ 1], tuple(state.stock[state.stock_pos :]))


def _mask(cards: Sequence[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_card(c)
    return m


def _popcount(m: int) -> int:
    return m.bit_count()


class InfoSet:
    """An observation decoded once: masks, counts and the constraints on the hidden cards.

    Attributes: ``seat``, ``opp``, ``trump``; ``hand`` (own cards), ``played`` (cards in
    finished tricks and on the table), ``known`` (cards known to be in the opponent's
    hand), ``turn_up`` (-1 if none); ``opp_size`` (the opponent's hand size), ``need``
    (its unknown cards), ``n_down`` (face-down talon cards); ``pool`` (every card the
    seat has not seen anywhere), ``void`` (cards the opponent cannot hold, from the strict
    phase's follow rules); ``strict`` (talon closed or exhausted).
    """

    __slots__ = (
        "obs", "variant", "seat", "opp", "trump", "hand", "played", "known", "turn_up", "talon_size",
        "n_down", "opp_size", "need", "pool", "void", "strict", "closed", "n_tricks",
    )  # fmt: skip

    def __init__(self, obs: dict[str, Any], variant: Variant | str):
        v = get_variant(variant)
        self.obs = obs
        self.variant = v
        seat = self.seat = obs["seat"]
        opp = self.opp = seat ^ 1
        self.trump = SUITS.index(obs["trump"])
        self.hand = _mask(obs["hand"])
        played = 0
        tricks = obs["tricks"]
        for t in tricks:
            for c in t["cards"]:
                played |= 1 << parse_card(c)
        cur = obs["current_trick"]
        lead = parse_card(cur["card"]) if cur else -1
        if lead >= 0:
            played |= 1 << lead
        self.played = played
        self.known = _mask(obs["known_cards"][opp]) & ~self.hand & ~played
        self.turn_up = parse_card(obs["turn_up"]) if obs["turn_up"] else -1
        self.talon_size = obs["talon_size"]
        self.n_down = self.talon_size - (self.turn_up >= 0)
        # Hands hold the same number of cards except while a card is on the table.
        n = _popcount(self.hand)
        if lead >= 0:
            n += 1 if cur["leader"] == seat else -1
        self.opp_size = n
        self.need = n - _popcount(self.known)
        full = 0
        for c in pack_of(v):
            full |= 1 << c
        tu_bit = 1 << self.turn_up if self.turn_up >= 0 else 0
        self.pool = full & ~self.hand & ~played & ~self.known & ~tu_bit
        self.closed = obs["closed"]
        self.strict = self.closed is not None or self.talon_size == 0
        self.n_tricks = sum(obs["trick_counts"])
        self.void = self._void_inferences(tricks)
        if self.need < 0 or _popcount(self.pool) < self.need + self.n_down:
            raise ValueError(
                f"inconsistent observation: the opponent needs {self.need} unseen cards and the talon "
                f"{self.n_down}, but only {_popcount(self.pool)} cards are unseen"
            )

    def _void_inferences(self, tricks: list[dict[str, Any]]) -> int:
        """Cards the opponent cannot hold now, from its follows in the strict phase.

        The strict phase never draws, so what the opponent lacked then it lacks now. A
        trick was strict if played after the close, or after the talon ran out: in a real
        deal after trick (talon size at the deal) / 2; in a hand-made position without its
        history, when the hands held fewer cards than a full hand before it.
        """
        v = self.variant
        closed = self.closed
        n_logged = len(tricks)
        offset = self.n_tricks - n_logged  # 0 in a real deal
        cur = self.obs["current_trick"]
        hand_now = _popcount(self.hand) + (1 if cur and cur["leader"] == self.seat else 0)
        exhausted_after = (v.deck - 2 * v.hand_size) // 2
        void = 0
        tmask = SUIT_MASK[self.trump]
        for i, t in enumerate(tricks):
            if t["leader"] == self.opp:
                continue
            n = i + offset
            if closed is not None:
                strict = n >= closed["trick"]
            elif offset == 0:
                strict = n >= exhausted_after
            else:
                strict = self.talon_size == 0 and hand_now + n_logged - i < v.hand_size
            if not strict:
                continue
            lc, fc = parse_card(t["cards"][0]), parse_card(t["cards"][1])
            ls = lc // 6
            if fc // 6 != ls:
                void |= SUIT_MASK[ls]
                if v.strict_must_trump and fc // 6 != self.trump:
                    void |= tmask
            elif v.strict_must_head and fc > lc:
                void |= SUIT_MASK[ls] & ((1 << lc) - 1)
        return void

    @property
    def determined(self) -> bool:
        """Whether the hidden cards that matter are known: the opponent's hand is fully
        known and the face-down talon (if any) will never be drawn."""
        if not self.strict:
            return False
        free = self.pool & ~self.void
        return self.need == 0 or _popcount(free) == self.need

    def sample(self, rng: random.Random) -> Hidden:
        """One assignment, uniform among those consistent with the information set."""
        free = self.pool & ~self.void
        pool_free = list(cards_of(free))
        need = self.need
        if len(pool_free) < need:  # contradictory inferences (only hand-made positions): drop them
            pool_free = list(cards_of(self.pool))
        chosen = rng.sample(pool_free, need) if need else []
        opp = self.known
        for c in chosen:
            opp |= 1 << c
        rest = list(cards_of(self.pool & ~opp))
        rng.shuffle(rest)
        return Hidden(opp, tuple(rest[: self.n_down]))


def _result_from_dict(d: dict[str, Any]) -> DealResult:
    return DealResult(
        winner=d["winner"],
        game_points=d["game_points"],
        reason=d["reason"],
        points=tuple(d["points"]),
        tricks=tuple(d["tricks"]),
        declarer=d.get("declarer"),
    )


def _build_state(info: InfoSet, hidden: Hidden) -> State:
    """Every slot of `State` from the information set and one hidden assignment."""
    obs = info.obs
    v = info.variant
    seat, opp = info.seat, info.opp
    st = object.__new__(State)
    st.variant = v
    st.players = 2
    st.seed = None
    st.dealer = obs["dealer"]
    st.score = tuple(obs["score"])
    st.carry = obs["carry"]
    st.deal_no = obs["deal"]
    trump = info.trump
    st.trump = trump
    st.ex_card = trump * 6 + v.exchange_rank_index
    hands = [0, 0]
    hands[seat] = info.hand
    hands[opp] = hidden.opp_hand
    st.hand = hands
    st.stock = tuple(hidden.talon)
    st.stock_pos = 0
    st.turn_up = info.turn_up
    st.strict = info.strict
    phase = PHASES.index(obs["phase"])
    st.phase = phase
    st.to_act = obs["to_act"] if obs["to_act"] is not None else -1
    leader = st.leader = obs["leader"]
    cur = obs["current_trick"]
    st.lead_card = parse_card(cur["card"]) if cur else -1
    ms = SUITS.index(obs["marriage_lead"]) if obs["marriage_lead"] else -1
    st.marriage_suit = ms
    n_tricks = info.n_tricks
    closed = obs["closed"]
    # The mid-turn step of the leader (RULES.md E1): 1 after an exchange, 2 after a
    # marriage, 3 after a close, all on the current lead.
    step = 0
    if phase == CLOSE_OFFER:
        step = 3
    elif phase == LEAD:
        if closed is not None and closed["trick"] == n_tricks and closed["seat"] == leader:
            step = 3
        elif ms >= 0:
            step = 2
        elif any(e["seat"] == leader and e["trick"] == n_tricks for e in obs["exchanges"]):
            step = 1
    st.step = step
    tricks = obs["tricks"]
    marriages = obs["marriages"]
    if closed is not None:
        c = closed["trick"]
        st.closed_by = closed["seat"]
        offset = n_tricks - len(tricks)
        ct = [0, 0]
        cp = [0, 0]
        if offset == 0:
            for t in tricks[:c]:
                w = t["winner"]
                ct[w] += 1
                cp[w] += POINTS[parse_card(t["cards"][0])] + POINTS[parse_card(t["cards"][1])]
        else:  # a hand-made position without its history: the best we can say
            ct = list(obs["trick_counts"])
            cp = [obs["points"][s] for s in range(2)]
        for m in marriages:
            if m["trick"] <= c and ct[m["seat"]] > 0:
                cp[m["seat"]] += m["points"]
        st.close_tricks = tuple(ct)
        st.close_points = tuple(cp)
    else:
        st.closed_by = -1
        st.close_tricks = st.close_points = None
    st.tricks = list(obs["trick_counts"])
    mcredit = [0, 0]
    for m in marriages:
        if m["credited"]:
            mcredit[m["seat"]] += m["points"]
    st.mcredit = mcredit
    st.points = [obs["points"][s] - mcredit[s] for s in range(2)]
    st.mpending = list(obs["pending"])
    st.n_tricks = n_tricks
    st.trick_log = [(t["leader"], parse_card(t["cards"][0]), parse_card(t["cards"][1]), t["winner"]) for t in tricks]
    # Events, in the order they happened: by trick count; on one lead exchange, marriage,
    # close; the last draw at the end of its trick.
    events: list[tuple[int, int, tuple]] = []
    for e in obs["exchanges"]:
        gave, took = parse_card(e["gave"]), parse_card(e["took"])
        events.append((e["trick"], 1, ("exchange", e["seat"], gave, took, e["trick"])))
    for m in marriages:
        suit = SUITS.index(m["suit"])
        events.append((m["trick"], 2, ("marriage", m["seat"], suit, m["points"], m["trick"])))
    if closed is not None:
        events.append((closed["trick"], 3, ("close", closed["seat"], closed["trick"], closed["before_draw"])))
    last = (v.deck - 2 * v.hand_size) // 2  # the trick after which the turn-up is drawn
    if closed is None and info.talon_size == 0 and n_tricks == len(tricks) and len(tricks) >= last:
        t = tricks[last - 1]
        drawer = t["winner"] ^ 1
        events.append((last, 0, ("turn_up_drawn", drawer, _drawn_turn_up(info, drawer), last)))
    events.sort(key=lambda e: (e[0], e[1]))
    st.events = [e[2] for e in events]
    st.history = []
    st.result = _result_from_dict(obs["result"]) if obs["result"] is not None else None
    return st


def _drawn_turn_up(info: InfoSet, drawer: int) -> int:
    """The turn-up taken by the last draw, as far as the observation tells.

    The last exchange's ``gave`` card is it. Otherwise it is the original turn-up, which
    an observation names only while the drawer still holds it: a trump the drawer is
    known to hold. When it cannot be told (it has been played, or the seat drew it
    itself), any card gives the same observation, so a played card stands in.
    """
    obs = info.obs
    if obs["exchanges"]:
        return parse_card(obs["exchanges"][-1]["gave"])
    if drawer != info.seat:
        known = _mask(obs["known_cards"][drawer])
        married = 0
        for m in obs["marriages"]:
            if m["seat"] == drawer:
                s = SUITS.index(m["suit"])
                married |= (1 << (s * 6 + KING)) | (1 << (s * 6 + QUEEN))
        tk = known & SUIT_MASK[info.trump]
        for m in (tk & ~married, tk):
            if m:
                return (m & -m).bit_length() - 1
    if info.played:
        return (info.played & -info.played).bit_length() - 1
    return info.trump * 6 + info.variant.exchange_rank_index


def state_from_observation(obs: dict[str, Any], variant: Variant | str, hidden_assignment: Hidden) -> State:
    """A full engine `State` consistent with ``obs`` (the information set of ``obs["seat"]``)
    in which the hidden cards are placed as ``hidden_assignment`` says.

    ``hidden_assignment`` is a `Hidden` (or a pair): the opponent's whole hand (a bitmask,
    or an iterable of card ids) and the face-down talon, top first. Everything else comes
    from the observation: the turn-up, trump, the close and the tricks and points at that
    moment (for the scoring), points, tricks, credited and pending marriages, the leader
    and the card led, the phase, the seat to act, and the leader's progress through its
    turn (exchange, marriage, close already done on this lead). The result is playable:
    `legal_actions`, `apply_legal` and the scoring behave as in the real deal, and the
    seat's observation of it equals ``obs``. `State.history` is left empty and
    `State.seed` is None.
    """
    opp_hand, talon = hidden_assignment
    if not isinstance(opp_hand, int):
        m = 0
        for c in opp_hand:
            m |= 1 << (parse_card(c) if isinstance(c, str) else c)
        opp_hand = m
    talon = tuple(parse_card(c) if isinstance(c, str) else c for c in talon)
    info = InfoSet(obs, variant)
    return _build_state(info, Hidden(opp_hand, talon))


class _Worlds:
    """Cheap worlds for one observation: a template state, cloned and filled per sample."""

    def __init__(self, info: InfoSet):
        self.info = info
        self.template = _build_state(info, Hidden(info.known, ()))

    def make(self, hidden: Hidden) -> State:
        st = self.template.clone()
        st.hand[self.info.opp] = hidden.opp_hand
        st.stock = hidden.talon
        return st

    def sample(self, rng: random.Random) -> State:
        return self.make(self.info.sample(rng))


def sample_worlds(obs: dict[str, Any], variant: Variant | str, n: int, rng: random.Random) -> list[State]:
    """``n`` worlds drawn independently and uniformly among the hidden-card assignments
    consistent with the seat's information (see `InfoSet`), each a full `State`."""
    worlds = _Worlds(InfoSet(obs, variant))
    return [worlds.sample(rng) for _ in range(n)]


# ==========================================================================================
# The exact solver
# ==========================================================================================
_INF = 99


def _fast_variant(v: Variant) -> bool:
    """Whether the strict phase of ``v`` has only plays, marriages and declarations by the
    leader (true of both presets): what the fast solver models."""
    return v.out_timing != "any_time" and v.exchange_on_close != "any_with_trick"


def _fast_ok(st: State) -> bool:
    return st.strict and (st.phase == LEAD or st.phase == FOLLOW) and _fast_variant(st.variant)


class _Solver:
    """Alpha-beta on the strict phase of one deal, for fixed close facts.

    Values are game points for seat 0 (+g if seat 0 wins the deal, -g if it loses, 0 for a
    drawn hand). The position travels in the arguments: leader ``L``, hands ``h0 h1``,
    counts ``p0 p1`` (trick points plus credited marriages), tricks ``t0 t1`` and pending
    marriage points ``m0 m1``. Lead nodes are cached in a transposition table of bounds.
    """

    def __init__(self, v: Variant, trump: int, closer: int, ct: tuple | None, cp: tuple | None):
        self.count = [0]  # nodes visited
        self._build(v, trump, closer, ct or (0, 0), cp or (0, 0))

    def _build(self, v: Variant, trump: int, closer: int, ct: tuple, cp: tuple) -> None:  # noqa: C901
        sch = v.schneider_at
        at_close = v.close_score_basis == "at_close"
        failed_rule = v.failed_close
        beaten_two = v.beaten_closer == "two"
        false_two = v.false_claim == "two"
        last_trick_wins = v.exhausted_rule == "last_trick_wins"
        head = v.strict_must_head
        must_trump = v.strict_must_trump
        mar_ok = v.marriage_after_close
        mar_needs_trick = v.marriage_needs_trick == "to_declare"
        king_only = v.marriage_lead == "king_only"
        # Declaring with 66 at once is at least as good as playing on, unless the closer's
        # opponent would score more from a failed close than from beating the closer.
        weird = failed_rule == "three" or beaten_two
        forced = v.auto_out
        tmask = SUIT_MASK[trump]
        smask = SUIT_MASK
        count = self.count
        pts = POINTS
        tt: dict[int, tuple[int, int, int]] = {}
        self.tt = tt
        ct0, ct1 = ct
        cp0, cp1 = cp
        # Lead order: sure-looking high cards first, then cheap ones. Follow order: winners
        # cheapest first, then discards cheapest first (the lists are rebuilt per node).
        lead_key = [0] * 24
        for c in range(24):
            lead_key[c] = (-pts[c] * 2 - (8 if c // 6 == trump else 0), c)
        lead_order_cache: dict[int, tuple[int, ...]] = {}
        self.order_cache = lead_order_cache

        def lead_order(h: int) -> tuple[int, ...]:
            r = lead_order_cache.get(h)
            if r is None:
                r = tuple(sorted(cards_of(h), key=lead_key.__getitem__))
                lead_order_cache[h] = r
            return r

        def scale(t: int, p: int) -> int:
            if not t:
                return 3
            return 2 if p < sch else 1

        def closer_out(c: int, p0: int, p1: int, t0: int, t1: int) -> int:
            if c == 0:
                return scale(ct1, cp1) if at_close else scale(t1, p1)
            return -(scale(ct0, cp0) if at_close else scale(t0, p0))

        def failed(p0: int, p1: int) -> int:
            # The closer failed: its opponent wins.
            cto = ct1 if closer == 0 else ct0
            if failed_rule == "three" or not cto:
                g = 3
            elif failed_rule == "by_closer_count":
                g = 1 if (p0 if closer == 0 else p1) >= sch else 2
            else:
                g = 2
            return -g if closer == 0 else g

        def declare(s: int, p0: int, p1: int, t0: int, t1: int) -> int:
            ps = p0 if s == 0 else p1
            if ps >= 66:
                if closer < 0:
                    g = scale(t1, p1) if s == 0 else scale(t0, p0)
                elif closer == s:
                    return closer_out(s, p0, p1, t0, t1)
                else:
                    g = 2 if beaten_two or (ct0 if s == 0 else ct1) else 3
                return g if s == 0 else -g
            if closer == s:
                return failed(p0, p1)
            g = 2 if false_two or (t1 if s == 0 else t0) else 3
            return -g if s == 0 else g

        def played_out(w: int, p0: int, p1: int, t0: int, t1: int) -> int:
            if closer >= 0:
                if w == closer and (p0 if w == 0 else p1) >= 66:
                    return closer_out(w, p0, p1, t0, t1)
                return failed(p0, p1)
            if last_trick_wins:
                return 1 if w == 0 else -1
            if w == 0:
                p0 += 10
            else:
                p1 += 10
            if p0 == p1:
                return 0
            if p0 > p1:
                return scale(t1, p1)
            return -scale(t0, p0)

        def follow_mask(h: int, c: int) -> int:
            same = h & smask[c // 6]
            if same:
                if head:
                    return same & ((1 << c) - 1) or same
                return same
            if must_trump and h & tmask:
                return h & tmask
            return h

        def follow(L, c, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta):
            # L led c (already out of its hand); the other seat answers.
            count[0] += 1
            cs = c // 6
            cp_ = pts[c]
            if L == 0:
                hf = h1
                maxi = False
            else:
                hf = h0
                maxi = True
            legal = follow_mask(hf, c)
            # winners first, cheapest first
            win = []
            lose = []
            for f in cards_of(legal):
                fs = f // 6
                if (fs == cs and f < c) or (fs != cs and fs == trump):
                    win.append(f)
                else:
                    lose.append(f)
            if len(win) > 1:
                win.sort(key=pts.__getitem__)
            if len(lose) > 1:
                lose.sort(key=pts.__getitem__)
            best = -_INF if maxi else _INF
            for f in win + lose:
                g = cp_ + pts[f]
                fs = f // 6
                if (fs == cs and f < c) or (fs != cs and fs == trump):
                    w = L ^ 1
                else:
                    w = L
                if L == 0:
                    n0, n1 = h0, h1 ^ (1 << f)
                else:
                    n0, n1 = h0 ^ (1 << f), h1
                if w == 0:
                    q0, q1, u0, u1, k0, k1 = p0 + g, p1, t0 + 1, t1, m0, m1
                    if t0 == 0 and m0:
                        q0 += m0
                        k0 = 0
                else:
                    q0, q1, u0, u1, k0, k1 = p0, p1 + g, t0, t1 + 1, m0, m1
                    if t1 == 0 and m1:
                        q1 += m1
                        k1 = 0
                if not (n0 | n1):
                    val = played_out(w, q0, q1, u0, u1)
                else:
                    val = lead(w, n0, n1, q0, q1, u0, u1, k0, k1, alpha, beta, -1)
                if maxi:
                    if val > best:
                        best = val
                        if val > alpha:
                            alpha = val
                            if alpha >= beta or val >= 3:
                                break
                else:
                    if val < best:
                        best = val
                        if val < beta:
                            beta = val
                            if alpha >= beta or val <= -3:
                                break
            return best

        def lead(L, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta, ms):
            """Value of seat L leading. ``ms``: -1 a normal lead; -2 no marriage on this
            lead (after a close); a suit: that marriage was just declared."""
            count[0] += 1
            maxi = L == 0
            if L == 0:
                h, tl, pl = h0, t0, p0
                closer_other = closer == 1
            else:
                h, tl, pl = h1, t1, p1
                closer_other = closer == 0
            best = -_INF if maxi else _INF
            if tl:
                dv = declare(L, p0, p1, t0, t1)
                if pl >= 66 and (forced or not (weird and closer_other)):
                    return dv
                best = dv
                if maxi:
                    if dv > alpha:
                        alpha = dv
                elif dv < beta:
                    beta = dv
                if alpha >= beta:
                    return best
            if ms >= 0:
                k = ms * 6 + KING
                cards = (k,) if king_only else (k, k + 1)
                for c in cards:
                    if L == 0:
                        val = follow(0, c, h0 ^ (1 << c), h1, p0, p1, t0, t1, m0, m1, alpha, beta)
                    else:
                        val = follow(1, c, h0, h1 ^ (1 << c), p0, p1, t0, t1, m0, m1, alpha, beta)
                    if maxi:
                        if val > best:
                            best = val
                            if val > alpha:
                                alpha = val
                    elif val < best:
                        best = val
                        if val < beta:
                            beta = val
                    if alpha >= beta:
                        break
                return best
            key = 0
            bm = -1
            if ms == -1:
                key = (
                    h0
                    | h1 << 24
                    | L << 48
                    | p0 << 49
                    | p1 << 58
                    | ((m0 + 1) if not t0 else 0) << 67
                    | ((m1 + 1) if not t1 else 0) << 75
                    | (1 if t0 else 0) << 83
                    | (1 if t1 else 0) << 84
                )
                e = tt.get(key)
                if e is not None:
                    lo, hi, bm = e
                    if lo >= beta:
                        return lo
                    if hi <= alpha:
                        return hi
                    if lo == hi:
                        return lo
                    if lo > alpha:
                        alpha = lo
                    if hi < beta:
                        beta = hi
            a0, b0 = alpha, beta
            bmove = -1
            # Marriages (only when the variant allows them in the strict phase).
            if ms == -1 and mar_ok and (tl or not mar_needs_trick):
                for s in range(4):
                    if h >> (s * 6 + KING) & 3 == 3:
                        mp = 40 if s == trump else 20
                        if tl:
                            q0, q1, k0, k1 = (p0 + mp, p1, m0, m1) if L == 0 else (p0, p1 + mp, m0, m1)
                        else:
                            q0, q1, k0, k1 = (p0, p1, m0 + mp, m1) if L == 0 else (p0, p1, m0, m1 + mp)
                        val = lead(L, h0, h1, q0, q1, t0, t1, k0, k1, alpha, beta, s)
                        if maxi:
                            if val > best:
                                best = val
                                bmove = 100 + s
                                if val > alpha:
                                    alpha = val
                        elif val < best:
                            best = val
                            bmove = 100 + s
                            if val < beta:
                                beta = val
                        if alpha >= beta:
                            break
            if alpha < beta:
                order = lead_order(h)
                if bm >= 0 and bm < 24 and bm in order:
                    order = (bm,) + tuple(c for c in order if c != bm)
                for c in order:
                    if L == 0:
                        val = follow(0, c, h0 ^ (1 << c), h1, p0, p1, t0, t1, m0, m1, alpha, beta)
                    else:
                        val = follow(1, c, h0, h1 ^ (1 << c), p0, p1, t0, t1, m0, m1, alpha, beta)
                    if maxi:
                        if val > best:
                            best = val
                            bmove = c
                            if val > alpha:
                                alpha = val
                                if alpha >= beta or val >= 3:
                                    break
                    elif val < best:
                        best = val
                        bmove = c
                        if val < beta:
                            beta = val
                            if alpha >= beta or val <= -3:
                                break
            if ms == -1:
                lo, hi = -_INF, _INF
                e = tt.get(key)
                if e is not None:
                    lo, hi = e[0], e[1]
                if best <= a0:
                    hi = min(hi, best)
                elif best >= b0:
                    lo = max(lo, best)
                else:
                    lo = hi = best
                tt[key] = (lo, hi, bmove)
            return best

        self.lead = lead
        self.follow = follow

    def value(self, st: State, alpha: int = -_INF, beta: int = _INF) -> int:
        """The value for seat 0 of a strict-phase `State` (phase lead or follow)."""
        h0, h1 = st.hand
        p0, p1 = st.count(0), st.count(1)
        t0, t1 = st.tricks
        m0, m1 = st.mpending
        if st.phase == FOLLOW:
            return self.follow(st.leader, st.lead_card, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta)
        ms = st.marriage_suit
        if ms < 0:
            ms = -1 if st.step <= 1 else -2
        return self.lead(st.leader, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta, ms)


#: Solvers by their constants, shared by every search: a transposition-table entry holds
#: the whole position (both hands), so entries stay valid across worlds and decisions.
_SOLVERS: dict[tuple, _Solver] = {}
_TT_LIMIT = 150_000


def _solver_for(st: State) -> _Solver:
    key = (st.variant, st.trump, st.closed_by, st.close_tricks, st.close_points)
    s = _SOLVERS.get(key)
    if s is None:
        if len(_SOLVERS) >= 64:
            _SOLVERS.clear()
        s = _SOLVERS[key] = _Solver(st.variant, st.trump, st.closed_by, st.close_tricks, st.close_points)
    elif len(s.tt) > _TT_LIMIT:
        s.tt.clear()
        s.order_cache.clear()
    return s


class _Search:
    """Exact values of perfect-information states: the fast solver from the strict phase
    on, the engine's own moves (with alpha-beta) above it."""

    def __init__(self) -> None:
        self.nodes = 0

    def value(self, st: State, alpha: int = -_INF, beta: int = _INF) -> int:
        """Value for seat 0."""
        if st.phase == OVER:
            r = st.result
            if r.winner is None:
                return 0
            return r.game_points if r.winner == 0 else -r.game_points
        if _fast_ok(st):
            s = _solver_for(st)
            n = s.count[0]
            v = s.value(st, alpha, beta)
            self.nodes += s.count[0] - n
            return v
        self.nodes += 1
        maxi = st.to_act == 0
        best = -_INF if maxi else _INF
        for a in st.legal_actions():
            child = st.clone()
            child.apply_legal(a)
            v = self.value(child, alpha, beta)
            if maxi:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            elif v < best:
                best = v
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        return best

    def action_values(self, st: State, actions: Sequence[int] | None = None) -> list[tuple[int, int]]:
        """Exact value for seat 0 of each action (all legal ones by default)."""
        out = []
        for a in st.legal_actions() if actions is None else actions:
            child = st.clone()
            child.apply_legal(a)
            out.append((a, self.value(child)))
        return out


def _check_solvable(state: State) -> None:
    if state.phase == OVER:
        return
    if not state.strict and state.talon_size() > 2:
        raise ValueError(
            "solve: the talon is open with more than two cards; the exact search starts once it is "
            "closed, exhausted or down to its last two cards"
        )


def solve_actions(state: State, seat: int) -> list[tuple[int, int]]:
    """The exact value for ``seat`` of every legal action of ``state``, in legal order.

    ``state`` is a perfect-information position (every hidden card placed, as in a
    world from `sample_worlds`) whose talon is closed, exhausted or down to two cards.
    """
    _check_solvable(state)
    sign = 1 if seat == 0 else -1
    return [(a, sign * v) for a, v in _Search().action_values(state)]


def solve(state: State, seat: int) -> tuple[int, int | None]:
    """Exact alpha-beta: ``(value, best_action)`` for ``seat``.

    The value is in game points: +g if ``seat`` wins the deal with best play by both
    sides, -g if it loses, 0 for a drawn hand. ``best_action`` is an engine action id
    (`arena.game.action_str` gives its string), the first legal one of the best when
    several tie, or None if ``seat`` is not to act (or the deal is over). Declarations
    are searched like any action (a false claim loses), and so are marriages after a
    close where the variant allows them. See `solve_actions` for the positions accepted.
    """
    _check_solvable(state)
    search = _Search()
    sign = 1 if seat == 0 else -1
    if state.phase == OVER or state.to_act != seat:
        return sign * search.value(state), None
    best, best_a = -_INF, None
    for a, v in search.action_values(state):
        if sign * v > best:
            best, best_a = sign * v, a
    return best, best_a


def minimax(state: State, seat: int) -> int:
    """Plain minimax over the engine's own moves, no pruning: the reference for `solve`."""
    if state.phase == OVER:
        return state.returns()[seat]
    vals = []
    for a in state.legal_actions():
        child = state.clone()
        child.apply_legal(a)
        vals.append(minimax(child, seat))
    return max(vals) if state.to_act == seat else min(vals)


# ==========================================================================================
# Playouts: a cheap policy on engine states
# ==========================================================================================
_PAIRS = 0x41041  # bit 6*s of (h >> 2) & (h >> 3): the K and Q of suit s both in h


def policy_action(st: State) -> int:
    """A fast, greedy-like choice for the seat to act in a (perfect-information) world:
    the playout policy.

    Claims 66 when true, always exchanges and shows marriages (40 first). Closes when a
    quick playout of the closed deal with every card known wins it (from a count of
    `CLOSE_PROBE_COUNT`). Open talon: leads its cheapest non-trump card outside a
    marriage pair; follows with the card that best weighs the trick (its points, pending
    marriage points, reaching 66) against what the card is worth keeping (trump power,
    aces and tens that rule their suit, marriage halves). Strict phase: leads a card the
    opponent cannot beat (the richest), else its cheapest; follows by winning as cheaply
    as it can, else by playing its cheapest legal card. The answer is always one of
    ``st.legal_actions()``; they are computed only when a special action may be open.
    """
    ph = st.phase
    s = st.to_act
    v = st.variant
    if ph == FOLLOW:
        if v.out_timing == "any_time" and st.tricks[s] and st.count(s) >= 66:
            return DECLARE
        return _policy_follow(st, s) if st.strict else _follow_kv(st, s)
    if ph == LEAD:
        return _policy_lead(st, s)
    if ph == DRAW_PENDING:
        if st.tricks[s] and st.count(s) >= 66:
            return DECLARE
        return CLOSE if _close_pays(st, s) else DRAW
    if ph == CLOSE_OFFER:
        return EXCHANGE
    raise ValueError("policy_action: the deal is over")


#: The playout policy considers closing only from this count on.
CLOSE_PROBE_COUNT = 30


def _close_pays(st: State, s: int) -> bool:
    """Whether closing now wins the deal for ``s`` when the rest is played out greedily
    with every card known (`_closed_sim`: a quick perfect-information test, for playouts)."""
    cnt = st.count(s) + (st.mpending[s] if not st.tricks[s] else 0)
    if cnt < CLOSE_PROBE_COUNT:
        return False
    v = st.variant
    if st.talon_size() < v.close_min_talon or (not v.close_on_first_lead and st.n_tricks == 0):
        return False
    o = s ^ 1
    return _closed_sim(
        v,
        st.trump,
        st.hand[s],
        st.hand[o],
        st.count(s),
        st.count(o),
        st.tricks[s],
        st.tricks[o],
        st.mpending[s],
        st.mpending[o],
    )


def _closed_sim(v: Variant, trump: int, hc: int, ho: int, pc: int, po: int, tc: int, to: int, mc: int, mo: int) -> bool:
    """Greedy strict-phase play of a deal the first seat (hands ``hc``, counts ``pc``,
    tricks ``tc``, pending marriage points ``mc``) has just closed and leads: does the
    closer reach 66 on lead, or take the last trick with 66, before the other seat gets
    the lead with 66? The leader leads its richest sure winner, else its cheapest card;
    the follower wins as cheaply as it can, else plays its cheapest legal card."""
    tm = SUIT_MASK[trump]
    head = v.strict_must_head
    must_trump = v.strict_must_trump
    pts = POINTS
    closer_leads = True
    while True:
        if closer_leads:
            if tc and pc >= 66:
                return True
            hl, hf = hc, ho
        else:
            if to and po >= 66:
                return False
            hl, hf = ho, hc
        # the lead
        best, bk = -1, 1 << 30
        for c in cards_of(hl):
            t = c // 6 == trump
            same = hf & SUIT_MASK[c // 6]
            if (not same & ((1 << c) - 1)) if same else (t or not hf & tm):
                k = t - 4 * pts[c]
            else:
                k = 1000 + 2 * pts[c] + t
            if k < bk:
                best, bk = c, k
        lc = best
        ls = lc // 6
        # the follow
        same = hf & SUIT_MASK[ls]
        if same:
            legal = (same & ((1 << lc) - 1) or same) if head else same
        elif must_trump and hf & tm:
            legal = hf & tm
        else:
            legal = hf
        best, bk = -1, 1 << 30
        for c in cards_of(legal):
            cs = c // 6
            t = cs == trump
            k = (0 if (c < lc if cs == ls else t) else 1000) + 2 * pts[c] + t
            if k < bk:
                best, bk = c, k
        fc = best
        fs = fc // 6
        follower_wins = fc < lc if fs == ls else fs == trump
        g = pts[lc] + pts[fc]
        if closer_leads:
            hc ^= 1 << lc
            ho ^= 1 << fc
        else:
            ho ^= 1 << lc
            hc ^= 1 << fc
        closer_won = closer_leads != follower_wins
        if closer_won:
            pc += g + (mc if not tc else 0)
            tc += 1
        else:
            po += g + (mo if not to else 0)
            to += 1
        if not hc:
            return closer_won and pc >= 66
        closer_leads = closer_won


def _policy_lead(st: State, s: int) -> int:
    h = st.hand[s]
    if st.tricks[s] and st.count(s) >= 66:
        return DECLARE
    trump = st.trump
    ms = st.marriage_suit
    step = st.step
    if ms >= 0:
        if not st.strict and step <= 2 and _close_pays(st, s):
            return CLOSE
        k = ms * 6 + KING
        return k if st.variant.marriage_lead == "king_only" else k + 1
    if (step == 0 and st.turn_up >= 0 and h >> st.ex_card & 1) or (step <= 1 and (h >> 2) & (h >> 3) & _PAIRS):
        acts = st.legal_actions()
        if EXCHANGE in acts:
            return EXCHANGE
        best_m = -1
        for a in acts:
            if MARRY <= a < EXCHANGE:
                if a - MARRY == trump:
                    return a
                if best_m < 0:
                    best_m = a
        if best_m >= 0:
            return best_m
    if not st.strict and step <= 2 and _close_pays(st, s):
        return CLOSE
    best, best_key = -1, 1 << 30
    pts = POINTS
    if st.strict:
        o = st.hand[s ^ 1]
        tm = SUIT_MASK[trump]
        for c in cards_of(h):
            t = c // 6 == trump
            same = o & SUIT_MASK[c // 6]
            if (not same & ((1 << c) - 1)) if same else (t or not o & tm):
                key = t - 4 * pts[c]
            else:
                key = 1000 + 2 * pts[c] + t
            if key < best_key:
                best, best_key = c, key
        return best
    for c in cards_of(h):
        r = c % 6
        key = (1000 if c // 6 == trump else 0) + 2 * pts[c]
        if (r == KING and h >> (c + 1) & 1) or (r == QUEEN and h >> (c - 1) & 1):
            key += 100
        if key < best_key:
            best, best_key = c, key
    return best


def _policy_follow(st: State, s: int) -> int:
    """Strict-phase follow: the cheapest legal winner, else the cheapest legal card."""
    lc = st.lead_card
    trump = st.trump
    h = st.hand[s]
    ls = lc // 6
    pts = POINTS
    v = st.variant
    same = h & SUIT_MASK[ls]
    if same:
        legal = (same & ((1 << lc) - 1) or same) if v.strict_must_head else same
    elif v.strict_must_trump and h & SUIT_MASK[trump]:
        legal = h & SUIT_MASK[trump]
    else:
        legal = h
    best, best_key = -1, 1 << 30
    for c in cards_of(legal):
        cs = c // 6
        t = cs == trump
        win = c < lc if cs == ls else t
        key = (0 if win else 1000) + 2 * pts[c] + t
        if key < best_key:
            best, best_key = c, key
    return best


_KEEP_TRUMP = (14, 11, 7, 7, 6, 5)


def _gone(st: State) -> int:
    """Cards out of play in a world: in neither hand, not in the talon."""
    live = st.hand[0] | st.hand[1]
    if st.turn_up >= 0:
        live |= 1 << st.turn_up
    for c in st.stock[st.stock_pos :]:
        live |= 1 << c
    return ((1 << 24) - 1) & ~live


def _keep(c: int, h: int, gone: int, st: State) -> float:
    """What card ``c`` is worth in hand ``h`` beyond its points: its power to win later
    tricks and to make a marriage (``gone``: cards out of play)."""
    s, r = divmod(c, 6)
    trump = st.trump
    if s == trump:
        v = _KEEP_TRUMP[r]
        if r == 1 and (gone | h) >> (s * 6) & 1:
            v = 13
        if c == st.ex_card and st.turn_up >= 0 and st.talon_size() >= 4:
            v += 4
    elif r == 0:
        v = 4
    elif r == 1:
        v = 4 if (gone | h) >> (s * 6) & 1 else 1
    else:
        v = 0
    if r == KING or r == QUEEN:
        partner = c + 1 if r == KING else c - 1
        mp = 40 if s == trump else 20
        if h >> partner & 1:
            v += 0.75 * mp
        elif not gone >> partner & 1:
            v += mp / 10
    return v


def _follow_kv(st: State, s: int) -> int:
    """Open-phase follow weighing the trick against the keep value of the card spent."""
    lc = st.lead_card
    trump = st.trump
    h = st.hand[s]
    lead = st.leader
    ls = lc // 6
    gone = _gone(st) | (1 << lc)
    pend_s = st.mpending[s] if not st.tricks[s] else 0
    pend_l = st.mpending[lead] if not st.tricks[lead] else 0
    cnt_s = st.count(s)
    cnt_l = st.count(lead)
    pl = POINTS[lc]
    best, best_v = -1, -1e9
    for f in cards_of(h):
        fs = f // 6
        g = pl + POINTS[f]
        if (f < lc) if fs == ls else fs == trump:
            d = g + pend_s
            if cnt_s + d >= 66:
                d += 40
            d += 1
            ha = h & ~(1 << f)
            pairs = (ha >> 2) & (ha >> 3) & _PAIRS
            while pairs:
                b = pairs & -pairs
                d += 8 if (b.bit_length() - 1) // 6 == trump else 4
                pairs ^= b
        else:
            d = g + pend_l
            if cnt_l + d >= 66:
                d += 40
            d = -d
        val = d - _keep(f, h, gone, st)
        if val > best_v:
            best, best_v = f, val
    return best


def playout(st: State, policy: Callable[[State], int] = policy_action) -> State:
    """Play ``st`` (changed in place) to the end with ``policy`` for both seats; returns it."""
    apply = st.apply_legal
    while st.phase != OVER:
        apply(policy(st))
    return st


def _seat_value(st: State, seat: int, util: Sequence[float]) -> float:
    """What the finished deal is worth to ``seat`` (``util`` by game points -3..3), with
    the card-point margin as a small tie-break."""
    r = st.result
    g = 0 if r.winner is None else (r.game_points if r.winner == seat else -r.game_points)
    return util[g + 3] + (r.points[seat] - r.points[seat ^ 1]) * 0.001


# ==========================================================================================
# The expert
# ==========================================================================================
#: How a won deal is scored, roughly (1, 2 or 3 game points), for the match model.
_DEAL_POINTS = ((1, 0.45), (2, 0.40), (3, 0.15))


def _match_win_table(target: int) -> list[list[float]]:
    """``W[a][b]``: the chance to win the match needing ``a`` more game points while the
    opponent needs ``b``, if every deal is a coin flip scored as `_DEAL_POINTS`."""
    w = [[0.0] * (target + 1) for _ in range(target + 1)]
    for a in range(target + 1):
        for b in range(target + 1):
            if a == 0:
                w[a][b] = 1.0
            elif b == 0:
                w[a][b] = 0.0
            else:
                w[a][b] = sum(0.5 * q * (w[max(0, a - g)][b] + w[a][max(0, b - g)]) for g, q in _DEAL_POINTS)
    return w


_TABLES: dict[int, list[list[float]]] = {}


def deal_utility(obs: dict[str, Any], target: int) -> list[float]:
    """The worth for ``obs["seat"]`` of each deal result -3..3 (index ``g + 3``), in game
    points of the match: the chance to win the match after the deal, rescaled so that
    winning the deal by 1 is worth +1 and losing it by 1 is worth -1. Winning by 3 is then
    worth no more than by 1 when 1 point wins the match, and so on."""
    if target not in _TABLES:
        _TABLES[target] = _match_win_table(target)
    w = _TABLES[target]
    me = obs["seat"]
    score = obs["score"]
    carry = obs.get("carry", 0)
    a = max(1, min(target, target - score[me]))
    b = max(1, min(target, target - score[me ^ 1]))
    raw = []
    for g in range(-3, 4):
        if g > 0:
            raw.append(w[max(0, a - g - carry)][b])
        elif g < 0:
            raw.append(w[a][max(0, b + g - carry)])
        else:
            raw.append(w[a][b])
    lo, hi = raw[2], raw[4]
    if hi - lo < 1e-12:
        return [float(g) for g in range(-3, 4)]
    return [2 * (x - lo) / (hi - lo) - 1 for x in raw]


def _decision_seed(seed: int, obs: dict[str, Any], legal: Sequence[str]) -> int:
    """A seed for one decision from the player's seed and the position (process-independent)."""
    text = json.dumps([seed, obs, list(legal)], sort_keys=True, separators=(",", ":"))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _out_of_time(start: float, done: int, deadline: float) -> bool:
    """Whether one more iteration, as long as the slowest plausible one so far, would pass
    the deadline (the mean iteration time, with room to spare)."""
    now = time.perf_counter()
    return now + 1.5 * (now - start) / done > deadline


class ExpertStrategy:
    """Determinized search: perfect-information Monte Carlo over sampled worlds.

    - One legal action: played at once. ``declare`` whenever the count is 66 or more,
      never falsely; always exchanges, shows the best marriage (40 first).
    - Talon closed or exhausted, or down to its last two cards: samples worlds (one when
      the opponent's hand is known) and solves each exactly for every candidate action
      (`solve_actions`), then plays the best average.
    - Open talon: every candidate is played out in each sampled world with
      `policy_action` for both seats (common worlds for all candidates), and closing is
      valued by solving the closed deal in each world; closing needs a clear edge.

    Work is fixed per decision (``effort`` scales it), so play depends only on the seed and
    the position; the clock is a safety net: sampling stops once ``move_ms_fraction`` of
    min(move allowance, time left), less ``safety_ms``, has passed.

    Call it as ``strategy(obs, legal)`` like any strategy, or ``strategy.choose(obs,
    legal, time_left_ms)`` to pass the request's clock. ``variant`` is the rule set (from
    ``hello``); by default the preset named in the observation. ``move_ms`` is the per-move
    allowance from ``hello``'s time control.
    """

    #: Worlds per decision at effort 1.0, sized to stay well inside 100 ms per move.
    STRICT_WORLDS = 32
    TALON2_WORLDS = 10
    PLAYOUT_WORLDS = 40
    CLOSE_WORLDS = 24
    #: Closing needs this many game points over the best alternative, and a positive mean.
    CLOSE_MARGIN = 0.25

    def __init__(
        self,
        seed: int = 0,
        move_ms_fraction: float = 0.6,
        *,
        variant: Variant | str | None = None,
        move_ms: int | None = None,
        effort: float = 1.0,
        safety_ms: float = 8.0,
    ):
        self.seed = seed
        self.move_ms_fraction = move_ms_fraction
        self.variant = get_variant(variant) if variant is not None else None
        self.move_ms = move_ms
        self.effort = effort
        self.safety_ms = safety_ms
        #: The playout policy (both seats); it also breaks ties between equal values.
        self.policy: Callable[[State], int] = policy_action
        #: Finish playouts with the exact solver once the talon is closed or exhausted.
        self.solve_tail = False
        #: Value deal results by the chance to win the match they give (`deal_utility`).
        self.match_aware = True
        self._util: list[float] = [float(g) for g in range(-3, 4)]
        #: What the last decision did: ``kind``, ``samples``, ``ms`` (for logs and tests).
        self.last: dict[str, Any] = {}

    def __call__(self, obs: dict[str, Any], legal: Sequence[str]) -> str:
        return self.choose(obs, legal)

    def _n(self, base: int) -> int:
        return max(1, round(base * self.effort))

    def choose(self, obs: dict[str, Any], legal: Sequence[str], time_left_ms: float | None = None) -> str:
        t0 = time.perf_counter()
        if len(legal) == 1:
            self.last = {"kind": "forced", "samples": 0, "ms": 0.0}
            return legal[0]
        allow = [x for x in (self.move_ms, time_left_ms) if x is not None]
        allowance = min(allow) if allow else 1000.0
        budget_ms = max(3.0, self.move_ms_fraction * allowance - self.safety_ms)
        deadline = t0 + budget_ms / 1000
        v = self.variant or get_variant(obs["variant"])
        rng = random.Random(_decision_seed(self.seed, obs, legal))
        acts = [parse_action(a) for a in legal]
        self.last = {"kind": "?", "samples": 0}
        a = self._decide(obs, acts, v, rng, deadline)
        self.last["ms"] = (time.perf_counter() - t0) * 1000
        return action_str(a)

    # -- the decision procedure -------------------------------------------------------------
    def _decide(self, obs: dict[str, Any], acts: list[int], v: Variant, rng: random.Random, deadline: float) -> int:
        me = obs["seat"]
        if DECLARE in acts:
            if obs["points"][me] >= 66:
                self.last["kind"] = "declare"
                return DECLARE
            acts = [a for a in acts if a != DECLARE]
        if len(acts) == 1:
            self.last["kind"] = "forced"
            return acts[0]
        if obs["phase"] == "close-offer":
            self.last["kind"] = "rule"
            return EXCHANGE if EXCHANGE in acts else acts[0]
        info = InfoSet(obs, v)
        worlds = _Worlds(info)
        self._util = deal_utility(obs, v.target) if self.match_aware else [float(g) for g in range(-3, 4)]
        if info.strict:
            n = 1 if info.determined else self._n(self.STRICT_WORLDS)
            self.last["kind"] = "solve"
            return self._pimc_exact(worlds, acts, n, rng, deadline)
        if EXCHANGE in acts:
            self.last["kind"] = "rule"
            return EXCHANGE
        marriages = [a for a in acts if MARRY <= a < EXCHANGE]
        if marriages:
            self.last["kind"] = "rule"
            trump = MARRY + info.trump
            return trump if trump in marriages else marriages[0]
        if info.talon_size <= 2:
            self.last["kind"] = "solve-talon2"
            return self._pimc_exact(worlds, acts, self._n(self.TALON2_WORLDS), rng, deadline)
        self.last["kind"] = "playouts"
        return self._open(worlds, acts, rng, deadline)

    def _pick(self, acts: list[int], means: list[float], world: State) -> int:
        best = max(means)
        tied = [a for a, m in zip(acts, means, strict=True) if m >= best - 1e-9]
        if len(tied) == 1:
            return tied[0]
        pref = self.policy(world)
        return pref if pref in tied else tied[0]

    def _pimc_exact(self, worlds: _Worlds, acts: list[int], n: int, rng: random.Random, deadline: float) -> int:
        """Solve each sampled world exactly for every action; the best mean utility."""
        me = worlds.info.seat
        util = self._util
        sums = [0.0] * len(acts)
        first = None
        done = 0
        start = time.perf_counter()
        for i in range(n):
            if i and _out_of_time(start, i, deadline):
                break
            w = worlds.sample(rng)
            if first is None:
                first = w
            for j, (_, val) in enumerate(_Search().action_values(w, acts)):
                sums[j] += util[(val if me == 0 else -val) + 3]
            done += 1
        self.last["samples"] = done
        return self._pick(acts, [s / done for s in sums], first)

    def _playout_value(self, st: State, me: int) -> float:
        """The value for ``me`` of playing ``st`` out: by the policy while the talon is
        open, then (with ``solve_tail``) exactly."""
        policy = self.policy
        apply = st.apply_legal
        if self.solve_tail:
            while st.phase != OVER and not _fast_ok(st):
                apply(policy(st))
            if st.phase != OVER:
                val = _solver_for(st).value(st)
                return self._util[(val if me == 0 else -val) + 3]
        else:
            while st.phase != OVER:
                apply(policy(st))
        return _seat_value(st, me, self._util)

    def _open(self, worlds: _Worlds, acts: list[int], rng: random.Random, deadline: float) -> int:
        """Open talon: playouts for every candidate in common sampled worlds; closing is
        valued by solving the closed deal exactly (the best first lead on average)."""
        me = worlds.info.seat
        util = self._util
        cands = [a for a in acts if a != CLOSE]
        can_close = CLOSE in acts
        n = self._n(self.PLAYOUT_WORLDS)
        n_close = self._n(self.CLOSE_WORLDS) if can_close else 0
        sums = [0.0] * len(cands)
        close_sums: dict[int, float] = {}
        close_done = 0
        first = None
        done = 0
        start = time.perf_counter()
        for i in range(n):
            if i and _out_of_time(start, i, deadline):
                break
            w = worlds.sample(rng)
            if first is None:
                first = w
            for j, a in enumerate(cands):
                st = w.clone()
                st.apply_legal(a)
                sums[j] += self._playout_value(st, me)
            if close_done < n_close and not (
                # stop valuing the close once it clearly trails the best alternative
                close_done >= 6 and max(close_sums.values()) / close_done < max(sums) / (i + 1) - 0.5
            ):
                st = w.clone()
                st.apply_legal(CLOSE)
                if st.to_act != me:  # the opponent's turn at once (an exchange offer): just the value
                    vals = [(-1, _Search().value(st))]
                else:
                    nxt = [a for a in st.legal_actions() if a != DECLARE or st.count(me) >= 66]
                    vals = _Search().action_values(st, nxt)
                for a, val in vals:
                    close_sums[a] = close_sums.get(a, 0.0) + util[(val if me == 0 else -val) + 3]
                close_done += 1
            done += 1
        self.last["samples"] = done
        means = [s / done for s in sums]
        if close_done:
            close_value = max(close_sums.values()) / close_done
            self.last["close_value"] = close_value
            if close_value > util[3] and close_value >= max(means) + self.CLOSE_MARGIN:
                return CLOSE
        return self._pick(cands, means, first)
