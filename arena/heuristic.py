"""A reference strategy of sound rules: card counting, safe closing, cheap winning.

`HeuristicStrategy(seed)` is a callable ``(observation, legal) -> action`` like the
strategies of `arena.strategies`, in pure Python and without search (a decision takes
tens of microseconds). From the public history in the observation it counts which cards
are unseen, which the opponent is known to hold and how many points each side has, and
then plays by rules:

- goes out (``declare``) as soon as its count is 66 or more, and never otherwise; shows
  a marriage that takes it to 66 and then goes out;
- exchanges the trump 9 (Schnapsen: the jack) whenever it may, shows the best marriage
  (40 before 20);
- closes the talon (also before drawing) only when the tricks it is sure to win (top
  trumps, then the top cards of each suit once the opponent can have no trump left)
  bring it to 66 even if the opponent throws its cheapest cards;
- talon open: follows by weighing the trick's points against what the card spent is
  worth keeping (trump honours, marriage halves, the card to exchange), so it takes aces
  and tens cheaply and throws low cards on low leads; leads the card with the best
  expected return against the unseen cards (low non-trumps, no marriage halves, aces
  once the opponent's trumps are gone);
- talon closed or exhausted: plays out sure winners (highest trumps first while the
  opponent may hold a trump), else leads and follows to win the most points: takes a
  trick with its cheapest winning card, gives the fewest points when it cannot.

Only legal actions are returned, and a decision depends only on the observation and a
`random.Random` seeded at construction, used to break exact ties.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from .game.cards import ACE, JACK, KING, NINE, NINES, POINTS, QUEEN, SUIT_MASK, TEN, card_str, cards_of, parse_card

__all__ = ["HeuristicStrategy"]

_SUITS = "CDHS"
_PACK_24 = (1 << 24) - 1
_PACK_20 = _PACK_24 & ~NINES
#: Bonus for a trick that lets a seat go out at once (and the penalty mirrored).
_OUT = 200.0
#: What keeping a trump of each rank is worth while the talon is open (A T K Q J 9).
_TRUMP_KEEP = (18.0, 15.0, 7.0, 7.0, 6.5, 6.0)
#: The same for the other suits.
_PLAIN_KEEP = (3.0, 2.0, 0.5, 0.5, 0.0, 0.0)


def _bits(m: int) -> int:
    return m.bit_count()


def _beats(lead: int, card: int, trump: int) -> bool:
    """Whether ``card`` played second beats ``lead`` (F1.5)."""
    if card // 6 == lead // 6:
        return card < lead
    return card // 6 == trump


def _p_any(x: int, u: int, m: int) -> float:
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
        "lead", "schnapsen", "ex_card", "declared", "last_open", "marriage_lead",
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
        self.last_open = self.talon == 2 and not self.strict
        n_hand = _bits(hand)
        total = 2 * n_hand + self.talon + 2 * len(tricks)
        name = str(obs.get("variant", ""))
        self.schnapsen = name.startswith("schnapsen")
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
        self.known = known & pool
        self.pool = pool | self.known
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
        return _p_any(_bits(cards & self.unknown), _bits(self.unknown), m)

    def p_opp_none(self, cards: int) -> float:
        """Chance that the opponent holds none of ``cards``."""
        return 1.0 - self.p_opp_holds(cards)

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
    def sure_winners(self, hand: int) -> list[int]:
        """Cards of ``hand`` that win whatever the opponent holds, led in this order, once the
        talon is closed: the unbroken top trumps, then, if that leaves the opponent no trump
        it could hold, every other trump and the unbroken top cards of each suit."""
        trump, pool = self.trump, self.pool
        plan = []
        tmask = SUIT_MASK[trump]
        for c in cards_of(hand & tmask):
            if pool & tmask & ((1 << c) - 1):
                break
            plan.append(c)
        if _bits(pool & tmask) <= len(plan):
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


class HeuristicStrategy:
    """Sound rules with card counting; see the module docstring."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    # -- entry point ------------------------------------------------------------------------
    def __call__(self, obs: dict[str, Any], legal: Sequence[str]) -> str:
        try:
            action = self._choose(obs, legal)
        except (KeyError, ValueError, TypeError, IndexError):  # a malformed observation: play safe
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
        """Close only when sure tricks make 66 against the opponent's cheapest cards."""
        plan = v.sure_winners(v.hand)
        if not plan:
            return False
        # The lead may be bound to a marriage just shown: that card must win at once.
        if v.marriage_lead >= 0 and not any(v.wins_now(v.marriage_lead * 6 + r) for r in (KING, QUEEN)):
            return False
        k = min(len(plan), v.opp_n)
        mine = sum(POINTS[c] for c in plan[:k])
        theirs = sorted(POINTS[c] for c in cards_of(v.pool))[:k]
        total = v.my_gain_total(mine + sum(theirs))
        if v.schnapsen:
            total += v.marriage_in_hand()
        return total >= 66

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
