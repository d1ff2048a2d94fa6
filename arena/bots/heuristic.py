"""A reference strategy of sound rules: card counting, careful closing, cheap winning.

`HeuristicStrategy(seed)` is a callable ``(observation, legal) -> action`` like the
strategies of `arena.bots.strategies`, in pure Python and fast (tens of microseconds a
decision on average, under a millisecond at worst). From the public history in the
observation it counts which cards are unseen, which the opponent is known to hold (and,
once the rules are strict, cannot hold: a seat that did not follow suit is void), and how
many points each side has; then it plays by rules:

- goes out (``declare``) as soon as its count is 66 or more, and never otherwise; shows
  a marriage that takes it to 66 and then goes out;
- exchanges the trump 9 (Schnapsen: the jack) whenever it may, also at a close-offer;
  shows the best marriage (40 before 20);
- closes the talon (also before drawing) when the tricks it is sure to win (its unbroken
  top trumps, then every other winner once the opponent can hold no trump) make 66 even
  if the opponent throws its cheapest cards; or when its winners (top trumps first, then
  top cards of side suits, which lose only to a void opponent's trump) make 66 with a
  chance of at least `CLOSE_CHANCE`;
- talon open: follows by weighing the trick's points against what the card spent is
  worth keeping (trump honours, marriage halves, the card to exchange), so it takes aces
  and tens cheaply (a higher card of the suit, else a low trump) and throws low cards on
  low leads; leads the card with the best expected return against the unseen cards (low
  side cards, not marriage halves or trump honours, aces once they cannot be trumped);
- talon closed or exhausted: plays out sure winners (highest trumps first while the
  opponent may hold a trump), else leads and follows for points: takes a trick with its
  cheapest winning card, gives the fewest points when it cannot. With the talon exhausted
  both hands are known; from `ENDGAME_CARDS` cards in hand down it plays them exactly
  (a small alpha-beta over the rest of the deal, capped at `ENDGAME_BUDGET` positions).

Only legal actions are returned, and a decision depends only on the observation and a
`random.Random` seeded at construction, used to break exact ties.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..game.cards import ACE, JACK, KING, NINE, NINES, POINTS, QUEEN, SUIT_MASK, TEN, card_str, cards_of, parse_card

if TYPE_CHECKING:
    from ..game.state import State

__all__ = ["HeuristicStrategy", "close_by_rule"]

_SUITS = "CDHS"
_PACK_24 = (1 << 24) - 1
_PACK_20 = _PACK_24 & ~NINES
#: Bonus for a trick that lets a seat go out at once (and the penalty mirrored).
_OUT = 200.0
#: What keeping a trump of each rank is worth while the talon is open (A T K Q J 9).
_TRUMP_KEEP = (18.0, 15.0, 7.0, 7.0, 6.5, 6.0)
#: The same for the other suits.
_PLAIN_KEEP = (3.0, 2.0, 0.5, 0.5, 0.0, 0.0)
#: Chance of the opponent's trumps falling that makes a close worth it (1.0: sure closes only).
CLOSE_CHANCE = 0.65
#: Hand size up to which an exhausted talon with both hands known is played exactly.
ENDGAME_CARDS = 5
#: Positions the exact endgame may visit before it gives up for the rules (keeps a decision fast).
ENDGAME_BUDGET = 4000


def _bits(m: int) -> int:
    return m.bit_count()


def _beats(lead: int, card: int, trump: int) -> bool:
    """Whether ``card`` played second beats ``lead`` (F1.5)."""
    if card // 6 == lead // 6:
        return card < lead
    return card // 6 == trump


def p_any(x: int, u: int, m: int) -> float:
    """Chance that ``m`` cards drawn from ``u`` unknown ones include one of ``x`` given ones."""
    if x <= 0 or m <= 0:
        return 0.0
    if u - x < m:
        return 1.0
    return 1.0 - math.comb(u - x, m) / math.comb(u, m)


def _strict_replies(hand: int, lead: int, trump: int) -> int:
    """The cards of ``hand`` that may answer ``lead`` once the talon is closed (F1.11)."""
    same = hand & SUIT_MASK[lead // 6]
    if same:
        return same & ((1 << lead) - 1) or same
    trumps = hand & SUIT_MASK[trump]
    return trumps or hand


class _View:
    """The facts of one observation, as bitmasks and numbers."""

    __slots__ = (
        "me", "opp", "trump", "hand", "played", "turn_up", "talon", "strict", "pool", "known", "unknown",
        "opp_n", "exact", "my_pts", "opp_pts", "my_pending", "opp_pending", "my_tricks", "opp_tricks",
        "lead", "schnapsen", "ex_card", "declared", "marriage_lead", "closed", "preset",
    )  # fmt: skip

    def __init__(self, obs: dict[str, Any]):
        me = obs["seat"]
        opp = me ^ 1
        self.me, self.opp = me, opp
        trump = _SUITS.index(obs["trump"])
        self.trump = trump
        hand = 0
        for c in obs["hand"]:
            hand |= 1 << parse_card(c)
        self.hand = hand
        played = 0
        tricks = obs["tricks"]
        for t in tricks:
            for c in t["cards"]:
                played |= 1 << parse_card(c)
        cur = obs.get("current_trick")
        self.lead = parse_card(cur["card"]) if cur else -1
        tu = obs.get("turn_up")
        self.turn_up = parse_card(tu) if tu else -1
        self.talon = obs["talon_size"]
        self.strict = self.talon == 0 or obs.get("closed") is not None
        n_hand = _bits(hand)
        total = 2 * n_hand + self.talon + 2 * len(tricks)
        name = str(obs.get("variant", ""))
        self.schnapsen = name.startswith("schnapsen")
        self.preset = name in ("sixty-six", "schnapsen")
        self.closed = obs.get("closed") is not None
        if total == 20:
            pack = _PACK_20
        elif total == 24:
            pack = _PACK_24
        else:  # a hand-made position with cards removed: guess from the name and the nines in sight
            seen = hand | played | (1 << self.turn_up if self.turn_up >= 0 else 0)
            pack = _PACK_24 if (seen & NINES or not self.schnapsen) else _PACK_20
        self.ex_card = trump * 6 + (NINE if pack == _PACK_24 else JACK)
        known = 0
        for c in obs["known_cards"][opp]:
            known |= 1 << parse_card(c)
        pool = pack & ~hand & ~played
        if self.turn_up >= 0:
            pool &= ~(1 << self.turn_up)
        if self.lead >= 0:
            pool &= ~(1 << self.lead)
        self.played = played | (1 << self.lead if self.lead >= 0 else 0)
        if self.preset:  # presets: follow, head and trump are compulsory
            closed = obs.get("closed")
            first_strict = closed["trick"] if closed else (6 if pack == _PACK_24 else 5)
            pool &= ~self._strict_inference(tricks[first_strict:], opp, trump) | known
        self.known = known & pool
        self.pool = pool
        self.unknown = self.pool & ~self.known
        self.opp_n = n_hand - (1 if self.lead >= 0 else 0)
        self.exact = _bits(self.pool) <= self.opp_n
        pts = obs["points"]
        pend = obs.get("pending") or [0, 0]
        tc = obs.get("trick_counts") or [0, 0]
        self.my_pts, self.opp_pts = pts[me], pts[opp]
        self.my_pending, self.opp_pending = pend[me], pend[opp]
        self.my_tricks, self.opp_tricks = tc[me], tc[opp]
        declared = 0
        for m in obs.get("marriages") or ():
            s = _SUITS.index(m["suit"])
            declared |= 1 << s
        self.declared = declared
        ml = obs.get("marriage_lead")
        self.marriage_lead = _SUITS.index(ml) if ml else -1

    @classmethod
    def of_state(cls, st: State, seat: int) -> _View:
        """The same facts read off an engine `State` with the talon open, without building
        the observation (for models of this player inside a search): equal to
        ``_View(observation(st, seat))`` there (tests/test_heuristic.py checks it)."""
        v = cls.__new__(cls)
        opp = seat ^ 1
        v.me, v.opp = seat, opp
        v.trump = st.trump
        v.hand = hand = st.hand[seat]
        played = 0
        for _, lc, fc, _ in st.trick_log:
            played |= (1 << lc) | (1 << fc)
        v.lead = lead = st.lead_card
        v.turn_up = st.turn_up
        v.talon = st.talon_size()
        v.closed = st.closed_by >= 0
        v.strict = v.talon == 0 or v.closed
        name = st.variant.name
        v.schnapsen = name.startswith("schnapsen")
        v.preset = name in ("sixty-six", "schnapsen")
        v.ex_card = st.ex_card
        known = declared = 0
        for ev in st.events:
            kind = ev[0]
            if kind == "marriage":
                declared |= 1 << ev[2]
                if ev[1] == opp:
                    known |= (1 << (ev[2] * 6 + KING)) | (1 << (ev[2] * 6 + QUEEN))
            elif ev[1] == opp and kind == "exchange":
                known |= 1 << ev[3]
            elif ev[1] == opp and kind == "turn_up_drawn":
                known |= 1 << ev[2]
        pool = (_PACK_24 if st.variant.deck == 24 else _PACK_20) & ~hand & ~played
        if v.turn_up >= 0:
            pool &= ~(1 << v.turn_up)
        if lead >= 0:
            pool &= ~(1 << lead)
        v.played = played | (1 << lead if lead >= 0 else 0)
        v.known = known & st.hand[opp] & pool
        v.pool = pool
        v.unknown = pool & ~v.known
        v.opp_n = _bits(hand) - (1 if lead >= 0 else 0)
        v.exact = _bits(pool) <= v.opp_n
        v.my_pts, v.opp_pts = st.count(seat), st.count(opp)
        v.my_pending, v.opp_pending = st.mpending[seat], st.mpending[opp]
        v.my_tricks, v.opp_tricks = st.tricks[seat], st.tricks[opp]
        v.declared = declared
        v.marriage_lead = st.marriage_suit
        return v

    @staticmethod
    def _strict_inference(tricks: list[dict[str, Any]], opp: int, trump: int) -> int:
        """Cards the opponent cannot hold, from how it followed once the rules were strict."""
        out = 0
        for t in tricks:
            if t["leader"] == opp:
                continue
            led, f = parse_card(t["cards"][0]), parse_card(t["cards"][1])
            ls = led // 6
            if f // 6 != ls:
                out |= SUIT_MASK[ls]  # void in the led suit
                if f // 6 != trump:
                    out |= SUIT_MASK[trump]  # and without a trump
            elif f > led:
                out |= SUIT_MASK[ls] & ((1 << led) - 1)  # could not head: nothing higher
        return out

    # -- counts ---------------------------------------------------------------------------
    def my_gain_total(self, gain: int) -> int:
        """My count after winning a trick worth ``gain`` (a first trick credits pending marriages)."""
        return self.my_pts + gain + (self.my_pending if self.my_tricks == 0 else 0)

    def opp_gain_total(self, gain: int) -> int:
        return self.opp_pts + gain + (self.opp_pending if self.opp_tricks == 0 else 0)

    def p_opp_holds(self, cards: int) -> float:
        """Chance that the opponent's hand holds at least one of ``cards``."""
        if cards & self.known:
            return 1.0
        m = self.opp_n - _bits(self.known)
        return p_any(_bits(cards & self.unknown), _bits(self.unknown), m)

    def p_opp_at_most(self, mask: int, k: int) -> float:
        """Chance that the opponent holds at most ``k`` cards of ``mask``."""
        k -= _bits(self.known & mask)
        if k < 0:
            return 0.0
        x = _bits(self.unknown & mask)
        u = _bits(self.unknown)
        m = self.opp_n - _bits(self.known)
        if m <= 0 or x <= k:
            return 1.0
        total = math.comb(u, m)
        return sum(math.comb(x, i) * math.comb(u - x, m - i) for i in range(k + 1)) / total

    def p_opp_none(self, cards: int) -> float:
        """Chance that the opponent holds none of ``cards``."""
        return 1.0 - self.p_opp_holds(cards)

    def endgame_ok(self) -> bool:
        """Whether the exact endgame applies: talon exhausted (not closed), both hands known,
        and a preset's rules."""
        return self.talon == 0 and not self.closed and self.exact and self.preset

    def marriage_ok(self) -> bool:
        """Whether a marriage can still be shown later in this deal."""
        return not self.strict or self.schnapsen

    # -- how much a card in hand is worth keeping ----------------------------------------------
    def keep(self, c: int) -> float:
        s, r = divmod(c, 6)
        trump = self.trump
        if self.strict:
            # Points are what counts now; keep trumps and the top cards of suits a little.
            v = 2.0 if s == trump else 0.0
            higher = self.pool & SUIT_MASK[s] & ((1 << c) - 1)
            if not higher:
                v += 1.5
        else:
            v = _TRUMP_KEEP[r] if s == trump else _PLAIN_KEEP[r]
            if s != trump and r == TEN and not (self.pool & (1 << (s * 6 + ACE))):
                v += 1.5  # the ten rules its suit
            if c == self.ex_card and self.turn_up >= 0 and self.talon >= 4:
                v += POINTS[self.turn_up] * 0.6 + 2.0
        if (r == KING or r == QUEEN) and self.marriage_ok() and not (self.declared >> s & 1):
            partner = c + 1 if r == KING else c - 1
            worth = 40.0 if s == trump else 20.0
            if self.hand >> partner & 1:
                v += worth * 0.55
            elif (self.unknown >> partner & 1) or partner == self.turn_up:
                v += worth * 0.08
        return v

    def marriage_in_hand(self) -> float:
        """Points of the best marriage held and not yet shown."""
        best = 0.0
        for s in range(4):
            if self.hand >> (s * 6 + KING) & 3 == 3 and not (self.declared >> s & 1):
                best = max(best, 40.0 if s == self.trump else 20.0)
        return best

    def wins_now(self, c: int) -> bool:
        """Whether ``c`` in my hand, led once the talon is closed, wins whatever the opponent holds."""
        if not self.hand >> c & 1:
            return False
        s = c // 6
        if self.pool & SUIT_MASK[s] & ((1 << c) - 1):
            return False
        return s == self.trump or not self.pool & SUIT_MASK[self.trump]

    # -- sure tricks -----------------------------------------------------------------------
    def sure_winners(self, hand: int, drawn: bool = False) -> list[int]:
        """Cards of ``hand`` that win whatever the opponent holds, led in this order, once the
        talon is closed: the unbroken top trumps, then, if that leaves the opponent no trump
        it could hold (or, with ``drawn``, assuming it does not), every other trump and the
        unbroken top cards of each suit."""
        trump, pool = self.trump, self.pool
        plan = []
        tmask = SUIT_MASK[trump]
        for c in cards_of(hand & tmask):
            if pool & tmask & ((1 << c) - 1):
                break
            plan.append(c)
        if drawn or _bits(pool & tmask) <= len(plan):
            rest = [c for c in cards_of(hand & tmask) if c not in plan]
            plan.extend(rest)
            for s in range(4):
                if s == trump:
                    continue
                sm = SUIT_MASK[s]
                for c in cards_of(hand & sm):
                    if pool & sm & ((1 << c) - 1):
                        break
                    plan.append(c)
        return plan


class _Abort(Exception):
    """The endgame search went over its node budget."""


#: Cards in the order the endgame search tries leads: aces first, then tens, and so on.
_BY_RANK = tuple(sorted(range(24), key=lambda c: (c % 6, c)))


class _Endgame:
    """Exact play of an exhausted talon with both hands known: alpha-beta with a table.

    Values are game points for seat 0 ("me") under perfect play, going out as soon as a
    trick takes a seat to 66. Sixty-Six: the last trick adds 10 and the higher total wins;
    Schnapsen: the last trick wins 1 and a leader may still show a marriage. A position
    is ``(h0, h1, leader, p0, p1, t0, t1, q0, q1)``: hands, the leader, card points,
    whether each seat has a trick, and marriage points pending until its first trick.
    """

    INF = 10

    def __init__(self, trump: int, schnapsen: bool, budget: int):
        self.trump = trump
        self.schnapsen = schnapsen
        self.budget = budget
        self.table: dict[tuple, tuple[int, int]] = {}

    @staticmethod
    def _scale(tricks: bool, pts: int) -> int:
        return 3 if not tricks else (2 if pts < 33 else 1)

    def leads(self, hand: int) -> list[tuple[int, int]]:
        """(card, marriage suit or -1) for every lead: marriages, then strong cards first."""
        out = []
        if self.schnapsen:
            for s in range(4):
                k = s * 6 + KING
                if hand >> k & 3 == 3:
                    out += ((k, s), (k + 1, s))
        out += [(c, -1) for c in _BY_RANK if hand >> c & 1]
        return out

    def lead_value(self, pos: tuple, c: int, suit: int, alpha: int, beta: int) -> int:
        """Value of leading ``c`` (after showing the marriage ``suit`` if not -1)."""
        h0, h1, lead, p0, p1, t0, t1, q0, q1 = pos
        trump = self.trump
        if suit >= 0:
            m = 40 if suit == trump else 20
            if lead == 0:
                if t0:
                    p0 += m
                    if p0 >= 66:
                        return self._scale(t1, p1)
                else:
                    q0 += m
            elif t1:
                p1 += m
                if p1 >= 66:
                    return -self._scale(t0, p0)
            else:
                q1 += m
        if lead == 0:
            h0 &= ~(1 << c)
            replies = _strict_replies(h1, c, trump)
        else:
            h1 &= ~(1 << c)
            replies = _strict_replies(h0, c, trump)
        # The follower's winning answers first: they cut off most often.
        cs = c // 6
        if replies & SUIT_MASK[cs]:
            win_mask = replies & ((1 << c) - 1)
        elif cs != trump:
            win_mask = replies & SUIT_MASK[trump]
        else:
            win_mask = 0
        fmax = lead == 1
        best = -self.INF if fmax else self.INF
        for x in cards_of(win_mask) + cards_of(replies & ~win_mask):
            v = self.outcome(h0, h1, lead, p0, p1, t0, t1, q0, q1, c, x, alpha, beta)
            if fmax:
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

    def outcome(self, h0, h1, lead, p0, p1, t0, t1, q0, q1, c, x, alpha, beta) -> int:
        """Value once the leader led ``c`` (no longer in its hand) and the other seat answers ``x``."""
        w = lead ^ 1 if _beats(c, x, self.trump) else lead
        g = POINTS[c] + POINTS[x]
        if lead == 0:
            h1 &= ~(1 << x)
        else:
            h0 &= ~(1 << x)
        if w == 0:
            p0 += g
            if not t0:
                t0, p0, q0 = True, p0 + q0, 0
        else:
            p1 += g
            if not t1:
                t1, p1, q1 = True, p1 + q1, 0
        if not h0:
            if self.schnapsen:
                return 1 if w == 0 else -1
            if w == 0:
                p0 += 10
            else:
                p1 += 10
            if p0 == p1:
                return 0
            return self._scale(t1, p1) if p0 > p1 else -self._scale(t0, p0)
        if w == 0:
            if p0 >= 66:
                return self._scale(t1, p1)
        elif p1 >= 66:
            return -self._scale(t0, p0)
        return self.search((h0, h1, w, p0, p1, t0, t1, q0, q1), alpha, beta)

    def search(self, pos: tuple, alpha: int, beta: int) -> int:
        lo, hi = self.table.get(pos, (-self.INF, self.INF))
        if lo >= beta or lo == hi:
            return lo
        if hi <= alpha:
            return hi
        if lo > alpha:
            alpha = lo
        if hi < beta:
            beta = hi
        self.budget -= 1
        if self.budget < 0:
            raise _Abort
        a0, b0 = alpha, beta
        lead = pos[2]
        best = -self.INF if lead == 0 else self.INF
        for c, suit in self.leads(pos[lead]):
            v = self.lead_value(pos, c, suit, alpha, beta)
            if lead == 0:
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
        if best <= a0:
            self.table[pos] = (lo, best)
        elif best >= b0:
            self.table[pos] = (best, hi)
        else:
            self.table[pos] = (best, best)
        return best

    def best_of(self, value_of, options: list) -> list:
        """The options of the highest value for me (each value found with a narrow window)."""
        best = -self.INF
        top: list = []
        for o in options:
            v = value_of(o, best - 1 if top else -self.INF, self.INF)
            if v > best:
                best, top = v, [o]
            elif v == best:
                top.append(o)
        return top


def close_by_rule(st: State, seat: int) -> bool:
    """Whether this player would close the talon for ``seat`` in the engine `State` ``st``
    (talon open, closing legal), judging from ``seat``'s information only: a model of a
    closer who cannot see the other hand, for the expert's playouts."""
    return HeuristicStrategy._should_close(_RULES, _View.of_state(st, seat))


class HeuristicStrategy:
    """Sound rules with card counting; see the module docstring."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    # -- entry point ------------------------------------------------------------------------
    def __call__(self, obs: dict[str, Any], legal: Sequence[str]) -> str:
        try:
            action = self._choose(obs, legal)
        except (KeyError, ValueError, TypeError, IndexError, AttributeError):  # malformed: play safe
            action = None
        if action in legal:
            return action
        return self._fallback(legal)

    @staticmethod
    def _fallback(legal: Sequence[str]) -> str:
        for a in legal:
            if a.startswith("play:"):
                return a
        for a in ("draw", "pass", "exchange"):
            if a in legal:
                return a
        safe = [a for a in legal if a not in ("declare", "close")]
        return (safe or list(legal))[0]

    def _pick(self, scored: list[tuple[float, str]]) -> str:
        best = max(s for s, _ in scored)
        ties = [a for s, a in scored if s >= best - 1e-9]
        return ties[0] if len(ties) == 1 else ties[int(self.rng.random() * len(ties))]

    def _choose(self, obs: dict[str, Any], legal: Sequence[str]) -> str | None:
        me = obs["seat"]
        if "declare" in legal and obs["points"][me] >= 66:
            return "declare"
        if "exchange" in legal:
            return "exchange"
        if "pass" in legal:
            return "pass"
        v = _View(obs)
        if "draw" in legal:
            return "close" if "close" in legal and self._should_close(v) else "draw"
        if v.endgame_ok() and _bits(v.hand) <= ENDGAME_CARDS:
            try:
                action = self._endgame(v, legal)
            except _Abort:
                action = None
            if action is not None:
                return action
        marriages = [a for a in legal if a.startswith("marry:")]
        if marriages:
            return self._marriage(v, marriages)
        if "close" in legal and self._should_close(v):
            return "close"
        plays = [parse_card(a[5:]) for a in legal if a.startswith("play:")]
        if not plays:
            return None
        if len(plays) == 1:
            return "play:" + card_str(plays[0])
        if v.lead >= 0:
            scored = self._follow_strict(v, plays) if v.strict else self._follow_open(v, plays)
        else:
            scored = self._lead_strict(v, plays) if v.strict else self._lead_open(v, plays)
        return self._pick([(s, "play:" + card_str(c)) for s, c in scored])

    # -- the last few cards, solved ----------------------------------------------------------------
    def _endgame(self, v: _View, legal: Sequence[str]) -> str | None:
        """The best legal action by exact play of the known endgame; ties go to the rules."""
        eg = _Endgame(v.trump, v.schnapsen, ENDGAME_BUDGET)
        tr0, tr1 = v.my_tricks > 0, v.opp_tricks > 0
        plays = [parse_card(a[5:]) for a in legal if a.startswith("play:")]
        if v.lead >= 0:
            # The opponent led v.lead from a hand that held it.
            lead = v.lead
            pos = (v.hand, v.pool, 1, v.my_pts, v.opp_pts, tr0, tr1, v.my_pending, v.opp_pending)
            top = eg.best_of(lambda x, a, b: eg.outcome(*pos, lead, x, a, b), plays)
        else:
            pos = (v.hand, v.pool, 0, v.my_pts, v.opp_pts, tr0, tr1, v.my_pending, v.opp_pending)
            if v.marriage_lead >= 0:
                options = [(c, -1) for c in plays]
            else:
                options = [
                    (c, suit) for c, suit in eg.leads(v.hand)
                    if ("marry:" + _SUITS[suit] if suit >= 0 else "play:" + card_str(c)) in legal
                ]  # fmt: skip
            top = eg.best_of(lambda o, a, b: eg.lead_value(pos, o[0], o[1], a, b), options)
            marry = [o for o in top if o[1] >= 0]
            if marry:
                return "marry:" + _SUITS[marry[0][1]]
            top = [o[0] for o in top]
        if not top:
            return None
        if len(top) == 1:
            return "play:" + card_str(top[0])
        scored = self._follow_strict(v, top) if v.lead >= 0 else self._lead_strict(v, top)
        return self._pick([(sc, "play:" + card_str(c)) for sc, c in scored])

    # -- marriages and closing -----------------------------------------------------------------
    def _marriage(self, v: _View, marriages: list[str]) -> str:
        def worth(a: str) -> int:
            return 40 if _SUITS.index(a[-1]) == v.trump else 20

        if v.my_tricks:
            out = [a for a in marriages if v.my_pts + worth(a) >= 66]
            if out:
                return out[0]
        return max(marriages, key=lambda a: (worth(a), a))

    def _should_close(self, v: _View) -> bool:
        """Close when the tricks I am sure to win make 66 against the opponent's cheapest
        cards, or when my winners (top trumps, then top cards that lose only to a trump from a
        void opponent) make 66 with a high enough chance."""
        # The lead may be bound to a marriage just shown: that card must win at once.
        if v.marriage_lead >= 0 and not any(v.wins_now(v.marriage_lead * 6 + r) for r in (KING, QUEEN)):
            return False
        if self._plan_total(v, v.sure_winners(v.hand)) >= 66:
            return True
        return CLOSE_CHANCE < 1.0 and self._close_chance(v) >= CLOSE_CHANCE

    @staticmethod
    def _close_chance(v: _View) -> float:
        """The chance that leading my winners once the talon is closed takes me to 66, each
        adding its points and an average cheap card of the opponent's; a trump below the
        opponent's wins once its trumps are drawn, a side card when it can follow or has no
        trump left (treated as independent)."""
        plan = v.sure_winners(v.hand, drawn=True)
        if not plan:
            return 0.0
        # Top trumps first, then the side suits' top cards, the lower trumps last.
        tops = v.sure_winners(v.hand)[: len(plan)]
        n_top = 0
        while n_top < len(tops) and tops[n_top] // 6 == v.trump and tops[n_top] == plan[n_top]:
            n_top += 1
        plan = (
            plan[:n_top]
            + [c for c in plan[n_top:] if c // 6 != v.trump]
            + [c for c in plan[n_top:] if c // 6 == v.trump]
        )
        need = 66 - v.my_gain_total(0)
        if v.schnapsen:
            need -= v.marriage_in_hand()
        values = [POINTS[c] for c in cards_of(v.pool)]
        gift = sum(values) / len(values) if values else 0.0
        tmask = SUIT_MASK[v.trump]
        trumps_led = 0
        led = [0, 0, 0, 0]
        chance = 1.0
        got = 0.0
        for c in plan:
            s = c // 6
            if s == v.trump:
                if v.pool & tmask & ((1 << c) - 1):
                    chance *= v.p_opp_at_most(tmask, trumps_led)
                trumps_led += 1
            else:
                void = v.p_opp_at_most(SUIT_MASK[s], led[s])
                trumps_left = 1.0 - v.p_opp_at_most(tmask, trumps_led)
                chance *= 1.0 - void * trumps_left
                led[s] += 1
            got += POINTS[c] + gift
            if got >= need:
                return chance
        return 0.0

    @staticmethod
    def _plan_total(v: _View, plan: list[int]) -> int:
        """My count after winning the tricks of ``plan``, the opponent giving its cheapest cards."""
        if not plan:
            return 0
        k = min(len(plan), v.opp_n)
        mine = sum(POINTS[c] for c in plan[:k])
        theirs = sorted(POINTS[c] for c in cards_of(v.pool))[:k]
        total = v.my_gain_total(mine + sum(theirs))
        if v.schnapsen:
            total += v.marriage_in_hand()
        return total

    # -- talon open --------------------------------------------------------------------------
    def _follow_open(self, v: _View, plays: list[int]) -> list[tuple[float, int]]:
        lead, trump = v.lead, v.trump
        lead_bonus = 0.35 * v.marriage_in_hand()
        out = []
        for c in plays:
            pts = POINTS[lead] + POINTS[c]
            if _beats(lead, c, trump):
                score = pts + lead_bonus
                if v.my_gain_total(pts) >= 66:
                    score += _OUT
            else:
                score = -pts
                if v.opp_gain_total(pts) >= 66:
                    score -= _OUT
            out.append((score - v.keep(c), c))
        return out

    def _lead_open(self, v: _View, plays: list[int]) -> list[tuple[float, int]]:
        trump = v.trump
        tmask = SUIT_MASK[trump]
        out = []
        for c in plays:
            s = c // 6
            p = POINTS[c]
            sm = SUIT_MASK[s]
            higher = v.pool & sm & ((1 << c) - 1)
            p_same = v.p_opp_holds(higher)
            if s != trump and p >= 10:
                p_trump = v.p_opp_holds(v.pool & tmask)
            else:
                p_trump = 0.0
            p_lose = p_same + (1.0 - p_same) * p_trump
            # What the opponent gains with: its cheapest higher card of the suit, or a low trump.
            beat_pts = min((POINTS[x] for x in cards_of(higher)), default=3) if higher else 3
            win = p + 1.0
            lose = p + 0.5 * beat_pts
            score = (1.0 - p_lose) * win - p_lose * lose
            if v.my_gain_total(p + 1) >= 66:
                score += (1.0 - p_lose) * _OUT
            if v.opp_gain_total(p + beat_pts) >= 66:
                score -= p_lose * _OUT
            out.append((score - v.keep(c), c))
        return out

    # -- talon closed or exhausted ------------------------------------------------------------
    def _follow_strict(self, v: _View, plays: list[int]) -> list[tuple[float, int]]:
        lead, trump = v.lead, v.trump
        out = []
        for c in plays:
            pts = POINTS[lead] + POINTS[c]
            if _beats(lead, c, trump):
                # Win with the cheapest card that does it: a weaker card keeps the stronger.
                score = 100.0 + pts - 20.0 * _rank_strength(v, c)
                if v.my_gain_total(pts) >= 66:
                    score += _OUT
            else:
                score = -pts - v.keep(c)
            out.append((score, c))
        return out

    def _lead_strict(self, v: _View, plays: list[int]) -> list[tuple[float, int]]:
        trump = v.trump
        tmask = SUIT_MASK[trump]
        sure = set(v.sure_winners(v.hand))
        opp_may_trump = bool(v.pool & tmask)
        out = []
        for c in plays:
            s = c // 6
            p = POINTS[c]
            if c in sure:
                # Sure winners first: trumps (highest first) while the opponent may hold one.
                reply = self._cheapest_reply(v, c)
                score = 1000.0 + p + reply
                if s == trump and opp_may_trump:
                    score += 500.0 + (6 - c % 6)
                if v.my_gain_total(p + reply) >= 66:
                    score += 2000.0
                out.append((score, c))
                continue
            if v.exact:
                opp_hand = v.pool
                replies = _strict_replies(opp_hand, c, trump)
                winners = [x for x in cards_of(replies) if _beats(c, x, trump)]
                if winners:
                    x = min(winners, key=lambda y: (POINTS[y], -y))
                    pts = p + POINTS[x]
                    score = -pts
                    if v.opp_gain_total(pts) >= 66:
                        score -= _OUT
                else:
                    x = min(cards_of(replies), key=lambda y: (POINTS[y], -y))
                    pts = p + POINTS[x]
                    score = pts
                    if v.my_gain_total(pts) >= 66:
                        score += _OUT
            else:
                sm = SUIT_MASK[s]
                higher = v.pool & sm & ((1 << c) - 1)
                p_same = v.p_opp_holds(higher)
                p_void = v.p_opp_none(v.pool & sm) if s != trump else 0.0
                p_trump = v.p_opp_holds(v.pool & tmask) if s != trump else 0.0
                p_lose = min(1.0, p_same + p_void * p_trump)
                beat_pts = min((POINTS[x] for x in cards_of(higher)), default=3) if higher else 3
                score = (1.0 - p_lose) * (p + 1.0) - p_lose * (p + beat_pts)
                if v.opp_gain_total(p + beat_pts) >= 66:
                    score -= p_lose * _OUT
            out.append((score - 0.5 * v.keep(c), c))
        return out

    @staticmethod
    def _cheapest_reply(v: _View, c: int) -> int:
        """Fewest points the opponent can give to a trick led with ``c``."""
        if v.exact:
            replies = _strict_replies(v.pool, c, v.trump)
            return min((POINTS[x] for x in cards_of(replies)), default=0)
        return 0


def _rank_strength(v: _View, c: int) -> float:
    """How strong a card is, 0..1: the share of the suit's live cards it beats."""
    s = c // 6
    live = (v.pool | v.hand) & SUIT_MASK[s]
    lower = live & ~((1 << (c + 1)) - 1)
    base = _bits(lower) / max(1, _bits(live))
    return base + (0.5 if s == v.trump else 0.0)


#: The rules `close_by_rule` applies (they use no randomness).
_RULES = HeuristicStrategy(0)
