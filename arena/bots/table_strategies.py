"""Strategies for the three- and four-handed games: table greedy and table heuristic.

Both see what an agent on the wire sees: the table observation of
`arena.game.table_observation` and the legal action strings. An observation of the
two-handed kind (``three-sitout`` deals one hand at a time between the dealer's
neighbours) is passed to the two-handed strategy of the same name
(`arena.bots.strategies.GreedyStrategy`, `arena.bots.heuristic.HeuristicStrategy`), made
from the same seed, so a two-handed game is played exactly as that strategy plays it.

`TableGreedy` takes points now. `TableHeuristic` counts cards: it knows what has been
played, which seats have shown a void (and so may trump), and from that the chance that
each card still wins a trick; it scores every legal card by what the trick is worth to
its side (its partner's tricks count as its own) against what the card would be worth
later, and bids and names trumps from an estimate of the points its hand will take.

What it infers is only what the rules force (RULES.md M3): a seat that did not follow
suit holds none of it, and none of the trumps if it did not trump an untrumped trick; a
seat that did not beat the winning card with a card of its suit (or a trump over a trump)
holds nothing higher there. The one exception, a partner's trick under
``head_partner = false``, is left out of the inference in any variant but the presets.
"""

from __future__ import annotations

import random
from math import comb
from typing import Any

from ..game.cards import POINTS_32, SUIT_MASK_32, SUIT_OF, card_str, parse_card
from .strategies import GreedyStrategy, Strategy

_SUITS = "CDHS"
_PACK_24 = (1 << 24) - 1
_PACK_32 = (1 << 32) - 1


def _two_handed(obs: dict[str, Any]) -> bool:
    """A two-handed observation (a ``three-sitout`` deal) has no ``players`` field."""
    return "players" not in obs


def _beats(c: int, w: int, trump: int) -> bool:
    """Whether ``c`` beats the trick's winning card ``w`` (lower id: stronger in a suit)."""
    if SUIT_OF[c] == SUIT_OF[w]:
        return c < w
    return SUIT_OF[c] == trump


def _name(c: int) -> str:
    return card_str(c)


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _none(k: int, m: int, h: int) -> float:
    """The chance that ``h`` cards drawn from ``m`` hold none of ``k`` given ones among them
    (all of them when the counts do not add up: a hand bigger than what it may hold)."""
    if k <= 0:
        return 1.0
    if h > m or k > m:
        return 0.0
    return comb(m - k, h) / comb(m, h)


def _mask(cards: list[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_card(c)
    return m


class TableGreedy:
    """Short-sighted table play: claims 66 when its side has it, shows every marriage,
    bids 1 with two aces, names its longest suit; wins a trick worth 10 with its cheapest
    winning card, else throws its cheapest card; leads its cheapest card. A two-handed
    observation goes to `GreedyStrategy`."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.two = GreedyStrategy(seed)

    def __call__(self, obs: dict[str, Any], legal: list[str]) -> str:
        if _two_handed(obs):
            return self.two(obs, legal)
        phase = obs["phase"]
        hand = [parse_card(c) for c in obs["hand"]]
        if phase == "bid":
            aces = sum(c < 24 and c % 6 == 0 for c in hand)
            return "bid:1" if aces >= 2 and "bid:1" in legal else legal[0] if "pass" not in legal else "pass"
        if phase == "name":
            longest = max(range(4), key=lambda s: sum(SUIT_OF[c] == s for c in hand))
            return f"trump:{'CDHS'[longest]}"
        if "declare" in legal and obs["points"][obs["team"]] >= 66:
            return "declare"
        marriages = [a for a in legal if a.startswith("marry:")]
        if marriages:
            return marriages[-1]
        if phase in ("meld", "last"):
            return "pass"
        cards = [parse_card(a[5:]) for a in legal if a.startswith("play:")]

        def cheap(c: int) -> tuple[int, int]:
            return (POINTS_32[c], -c)

        trick = obs["current_trick"]
        if trick is None:
            return "play:" + _name(min(cards, key=cheap))
        worth = sum(POINTS_32[parse_card(c)] for _, c in trick["cards"]) >= 10
        mine = obs["teams"][trick["winning"]] == obs["team"]
        winning = parse_card(next(c for s, c in trick["cards"] if s == trick["winning"]))
        trump = "CDHS".index(obs["trump"]) if obs["trump"] else SUIT_OF[parse_card(trick["cards"][0][1])]
        beat = [c for c in cards if _beats(c, winning, trump)]
        if worth and beat and not mine:
            return "play:" + _name(min(beat, key=cheap))
        return "play:" + _name(min(cards, key=cheap))


class TableFacts:
    """The facts of one table observation: bitmasks of cards, voids, who plays after whom."""

    def __init__(self, obs: dict[str, Any]):
        self.n = n = obs["players"]
        self.me = me = obs["seat"]
        self.team = obs["team"]
        self.teams = obs["teams"]
        self.partner = obs["partner"]
        self.trump = _SUITS.index(obs["trump"]) if obs["trump"] else -1
        self.hand = _mask(obs["hand"])
        self.sizes = obs["hand_sizes"]
        self.bidding = bool(obs["bids"])
        self.known = [_mask(k) for k in obs["known_cards"]]
        self.out = obs["sitting_out"]
        played = 0
        self.void = [0] * n  # bit s: the seat has shown it holds no card of suit s
        self.led_by = [0] * n  # suits each seat has led an ace or ten of
        self.excl = [0] * n  # cards each seat has shown it does not hold
        # A four-handed preset makes everyone head a partner's trick too; a custom variant may not.
        relaxed = n == 4 and obs["variant"] not in ("four-pagat", "kreuzmariage", "four-bidding")
        cur = obs["current_trick"]
        tricks = [*obs["tricks"], *([cur] if cur else [])]
        for t in tricks:
            cards = [(s, parse_card(c)) for s, c in t["cards"]]
            lead_suit = SUIT_OF[cards[0][1]]
            if cards[0][1] % 6 in (0, 1) and cards[0][1] < 24:
                self.led_by[cards[0][0]] |= 1 << lead_suit
            win, win_seat = cards[0][1], cards[0][0]
            trump = self.trump if self.trump >= 0 else lead_suit
            for s, c in cards:
                played |= 1 << c
                if s == cards[0][0]:
                    continue
                beats = _beats(c, win, trump)
                if SUIT_OF[c] != lead_suit:
                    self.void[s] |= 1 << lead_suit
                    if SUIT_OF[c] != trump and SUIT_OF[win] != trump:
                        self.void[s] |= 1 << trump  # it had to trump an untrumped trick
                # M3: a card that does not beat the winning one, where beating was a must
                # (its own suit, or a trump over a trump), says it held nothing higher.
                # Only a partner's trick may be let be (head_partner = false).
                if not beats and (not relaxed or (s ^ win_seat) != 2):
                    if SUIT_OF[c] == SUIT_OF[win] or SUIT_OF[win] == trump != SUIT_OF[c] != lead_suit:
                        self.excl[s] |= SUIT_MASK_32[SUIT_OF[win]] & ((1 << win) - 1)
                if beats:
                    win, win_seat = c, s
        if obs.get("widow"):
            played |= _mask(obs["widow"])
        self.played = played
        total = sum(self.sizes) + played.bit_count()
        self.pack = _PACK_32 if total > 24 else _PACK_24
        self.widow_out = n == 3 and not obs["tricks"] and total == 21  # F3.2: the first trick takes it
        self.unseen = self.pack & ~self.hand & ~played
        self.last_bonus = n == 4 and not self.bidding  # F4.1, F4.2: the last trick counts 10
        unseen = _cards(self.unseen)
        self.avg = sum(POINTS_32[c] for c in unseen) / len(unseen) if unseen else 0.0
        self.cur = cur
        if cur:
            self.trick = [(s, parse_card(c)) for s, c in cur["cards"]]
            self.leader = cur["leader"]
        else:
            self.trick = []
            self.leader = me
        # Seats still to play after me in this trick, in order.
        self.after: list[int] = []
        s = me
        for _ in range(n - 1):
            s = (s + 1) % n
            if s == self.out:
                continue
            if s == self.leader:
                break
            self.after.append(s)

    def ours(self, seat: int) -> bool:
        """Whether ``seat`` is on my side (me or my partner)."""
        return self.teams[seat] == self.team

    def possible(self, seat: int) -> tuple[int, int]:
        """The cards ``seat`` may hold unseen (not known elsewhere, not of its void suits),
        and how many unknown cards it holds."""
        pool = self.unseen
        for s in range(self.n):
            if s != seat:
                pool &= ~self.known[s]
        pool &= ~self.known[seat] & ~self.excl[seat]
        for suit in range(4):
            if self.void[seat] >> suit & 1:
                pool &= ~SUIT_MASK_32[suit]
        return pool, max(0, self.sizes[seat] - self.known[seat].bit_count())

    def p_beats(self, seat: int, w: int, lead_suit: int) -> float:
        """The chance that ``seat`` (to play after me) holds a card beating ``w``."""
        if seat == self.out:
            return 0.0
        pool, h = self.possible(seat)
        held = self.known[seat] & self.unseen
        size = pool.bit_count()
        trump = self.trump if self.trump >= 0 else lead_suit
        lead_cards = SUIT_MASK_32[lead_suit]
        stronger_same = SUIT_MASK_32[SUIT_OF[w]] & ((1 << w) - 1)
        if held & lead_cards:  # it must follow with the cards it holds
            if SUIT_OF[w] == lead_suit and held & stronger_same:
                return 1.0
        elif any(_beats(c, w, trump) for c in _cards(held)):
            return 1.0
        if h == 0 or size == 0:
            return 0.0
        lead_in = (pool & lead_cards).bit_count()
        t = (pool & SUIT_MASK_32[trump]).bit_count()
        k = (pool & stronger_same).bit_count()
        # Void in the led suit (it holds none of the led suit's cards it may hold), and then
        # a beating trump among the rest of its hand.
        p_void = 0.0 if held & lead_cards else _none(lead_in, size, h)
        if SUIT_OF[w] == lead_suit:
            p = 1.0 - _none(k, size, h)
            if lead_suit != trump:
                p += p_void * (1.0 - _none(t, size - lead_in, h))
            return min(1.0, p)
        # w is a trump on a trick led in another suit: a higher trump from a void seat
        return min(1.0, p_void * (1.0 - _none(k, size - lead_in, h)))

    def p_wins(self, w: int, lead_suit: int, seats: list[int]) -> float:
        """The chance that ``w`` holds the trick against the opponents among ``seats``.

        A higher card of ``w``'s own suit is looked for in the opponents' hands together
        (if one lacks it another is likelier to hold it); a trump from a void seat, seat by
        seat."""
        opps = [s for s in seats if not self.ours(s) and s != self.out]
        if not opps:
            return 1.0
        trump = self.trump if self.trump >= 0 else lead_suit
        own = SUIT_OF[w] == lead_suit or SUIT_OF[w] == trump == lead_suit
        stronger = SUIT_MASK_32[SUIT_OF[w]] & ((1 << w) - 1)
        located = 0
        for s in range(self.n):
            located |= self.known[s]
        anywhere = self.unseen & ~located  # the cards nobody is known to hold
        slots = sum(self.possible(s)[1] for s in range(self.n) if s != self.me and s != self.out)
        p = 1.0
        if own:
            union = 0
            opp_slots = 0
            for s in opps:
                pool, h = self.possible(s)
                union |= pool & stronger
                opp_slots += h
                held = self.known[s] & self.unseen
                if held & stronger and (held & SUIT_MASK_32[lead_suit] or SUIT_OF[w] != lead_suit):
                    return 0.0
            # of the unlocated cards, the opponents' unknown slots hold a share
            p = _none(union.bit_count(), max(anywhere.bit_count(), slots), opp_slots)
        if SUIT_OF[w] == lead_suit and lead_suit == trump:
            return p
        for s in opps:
            p *= 1.0 - self.p_ruff(s, w, lead_suit)
        return p

    def p_ruff(self, seat: int, w: int, lead_suit: int) -> float:
        """The chance that ``seat`` is void in the led suit and trumps ``w`` (overtrumps it)."""
        pool, h = self.possible(seat)
        held = self.known[seat] & self.unseen
        trump = self.trump if self.trump >= 0 else lead_suit
        if held & SUIT_MASK_32[lead_suit] or h == 0:
            return 0.0
        size = pool.bit_count()
        lead_in = (pool & SUIT_MASK_32[lead_suit]).bit_count()
        trumps = pool & SUIT_MASK_32[trump]
        if SUIT_OF[w] == trump:
            trumps &= (1 << w) - 1
        return _none(lead_in, size, h) * (1.0 - _none(trumps.bit_count(), size - lead_in, h))

    def stronger_unseen(self, c: int) -> int:
        """How many cards that beat ``c`` in its suit are out (not mine, not played)."""
        return (self.unseen & SUIT_MASK_32[SUIT_OF[c]] & ((1 << c) - 1)).bit_count()


class TableHeuristic:
    """Card-counting table play: see the module docstring. A two-handed observation goes
    to `HeuristicStrategy`."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.seed = seed
        self._two: Strategy | None = None

    def __call__(self, obs: dict[str, Any], legal: list[str]) -> str:
        if _two_handed(obs):
            if self._two is None:
                from .heuristic import HeuristicStrategy

                self._two = HeuristicStrategy(self.seed)
            return self._two(obs, legal)
        try:
            action = self._choose(obs, legal)
        except (KeyError, ValueError, TypeError, IndexError, ZeroDivisionError):  # a malformed observation
            action = None
        if action in legal:
            return action
        plays = [a for a in legal if a.startswith("play:")]
        return plays[0] if plays else "pass" if "pass" in legal else legal[0]

    # -- decisions ------------------------------------------------------------------------
    def _choose(self, obs: dict[str, Any], legal: list[str]) -> str | None:
        phase = obs["phase"]
        if phase == "bid":
            return self._bid(obs, legal)
        if phase == "name":
            return self._name_trump(obs)
        if "declare" in legal and obs["points"][obs["team"]] >= 66:
            return "declare"
        if phase == "last":
            return "pass"
        v = TableFacts(obs)
        marriages = [a for a in legal if a.startswith("marry:")]
        cards = [parse_card(a[5:]) for a in legal if a.startswith("play:")]
        if v.trump < 0 and not v.trick:
            # F4.3, F3.2: the first card led sets trumps: the best suit, its marriage (40
            # before trumps are set) shown first, else its top card
            suit = max(range(4), key=lambda s: _suit_value(v.hand, s, v.n, True))
            if f"marry:{_SUITS[suit]}" in marriages:
                return f"marry:{_SUITS[suit]}"
            mine = [c for c in cards if SUIT_OF[c] == suit] or cards
            return "play:" + _name(min(mine))
        if marriages:  # the trump marriage first
            trump = [a for a in marriages if v.trump >= 0 and a[-1] == _SUITS[v.trump]]
            return (trump or marriages)[0]
        if phase == "meld":
            return "pass"
        scored = [(self._value(v, c), c) for c in cards]
        best = max(s for s, _ in scored)
        ties = [c for s, c in scored if s >= best - 1e-9]
        return "play:" + _name(ties[0] if len(ties) == 1 else ties[int(self.rng.random() * len(ties))])

    def _value(self, v: TableFacts, c: int) -> float:
        """What playing ``c`` now is worth to my side: the trick's points, signed by the
        chance my side takes it, less what ``c`` would be worth kept."""
        trump = v.trump
        if v.trick:
            lead_suit = SUIT_OF[v.trick[0][1]]
            win_seat = v.cur["winning"]
            wc = next(x for s, x in v.trick if s == win_seat)
            on_table = sum(POINTS_32[x] for _, x in v.trick)
            if _beats(c, wc, trump if trump >= 0 else lead_suit):
                p_us = v.p_wins(c, lead_suit, v.after)
            elif v.ours(win_seat):
                p_us = v.p_wins(wc, lead_suit, v.after)
            else:
                # a partner still to play may take it back (and keep it, at even odds)
                p_us = 0.0
                for i, s in enumerate(v.after):
                    if v.ours(s):
                        p_us = v.p_beats(s, wc, lead_suit) * 0.5 * v.p_wins(wc, lead_suit, v.after[i + 1 :])
        else:
            lead_suit = SUIT_OF[c]
            on_table = 0
            p_us = v.p_wins(c, lead_suit, v.after)
        # Partners still to play add points to a trick they see us win; opponents little.
        adds = sum((v.avg + 3 * p_us) if v.ours(s) else v.avg * 0.8 for s in v.after)
        worth = on_table + POINTS_32[c] + adds
        if v.widow_out:
            worth += 3 * v.avg
        if v.last_bonus and v.hand.bit_count() == 1:
            worth += 10
        now = (2 * p_us - 1) * worth
        return now - self._kept(v, c) + self._lead_bonus(v, c)

    def _kept(self, v: TableFacts, c: int) -> float:
        """What ``c`` is worth if kept: its points when it should win a trick later, a loss
        of its points when it should not, and the trick it may take."""
        k = v.stronger_unseen(c)
        pts = POINTS_32[c]
        if SUIT_OF[c] == v.trump:  # a trump kept takes a rich trick later, when it chooses
            fw = max(0.0, 1.0 - 0.3 * k)
            return fw * (pts + 4 * v.avg + 20) - (1 - fw) * pts * 0.5
        left = (v.unseen & SUIT_MASK_32[SUIT_OF[c]]).bit_count()
        fw = (0.85 if left >= 2 else 0.6) if k == 0 else 0.25 if k == 1 else 0.05  # the fewer left, the likelier a ruff
        if k == 0 and v.trump >= 0 and not v.unseen & SUIT_MASK_32[v.trump]:
            fw = 1.0  # no trump left out: a top card is a sure trick
        return fw * (pts + 2 * v.avg + 3) - (1 - fw) * pts * 0.5

    def _lead_bonus(self, v: TableFacts, c: int) -> float:
        """Leading: draw trumps when long in them; lead to a partner's known strength."""
        if v.trick:
            return 0.0
        bonus = 0.0
        suit = SUIT_OF[c]
        if suit == v.trump:
            mine = (v.hand & SUIT_MASK_32[suit]).bit_count()
            out = (v.unseen & SUIT_MASK_32[suit]).bit_count()
            if mine >= 3 and out and v.stronger_unseen(c) == 0:
                bonus += 6.0
        elif v.partner is not None and v.partner != v.out:
            p = v.partner
            if v.known[p] & SUIT_MASK_32[suit] or v.led_by[p] >> suit & 1:  # a marriage shown, an ace led
                bonus += 4.0
            if v.void[p] >> suit & 1 and not v.void[p] >> v.trump & 1 and v.trump >= 0:
                bonus += 5.0  # the partner may trump it
        return bonus

    # -- bids and trumps ------------------------------------------------------------------
    def _bid(self, obs: dict[str, Any], legal: list[str]) -> str:
        return bid_choice(_mask(obs["hand"]), obs["players"], obs["bidder"], obs["partner"], legal)

    def _name_trump(self, obs: dict[str, Any]) -> str:
        """F3.1: name a suit only when the three cards seen make it good (two with the ace,
        or with ten and king, or three with a king); else let the turned card decide."""
        hand = [parse_card(c) for c in obs["hand"]]
        best, score = None, 0.0
        for s in range(4):
            mine = [c for c in hand if SUIT_OF[c] == s]
            val = len(mine) + sum({0: 2.0, 1: 1.5, 2: 1.0, 3: 0.5}.get(c % 6, 0) for c in mine)
            if val > score:
                best, score = s, val
        return f"trump:{_SUITS[best]}" if best is not None and score >= 4 else "pass"


def bid_choice(hand: int, n: int, bidder: int | None, partner: int | None, legal: list[str]) -> str:
    """The heuristic's bid from its hand (a card mask) at a table of ``n``: the lowest legal
    bid its estimate of the points it will take (its best suit's, and 22 for a partner's
    share) covers, never the moon; a pass over its partner's bid."""
    mine = max(_suit_points(hand, s, n) for s in range(4))
    if n == 4:
        est = mine + 22  # the partner's share
        if bidder is not None and bidder == partner:
            return "pass" if "pass" in legal else legal[0]
    else:
        est = mine
    level = int((est - 6) // 33)
    bids = sorted(int(a[4:]) for a in legal if a.startswith("bid:") and a != "bid:5")
    ok = [b for b in bids if b <= level]
    if ok:
        return f"bid:{ok[0]}"
    if "pass" in legal:
        return "pass"
    return f"bid:{bids[0]}" if bids else legal[0]


def _suit_value(hand: int, suit: int, n: int, marriage: bool) -> float:
    """How good ``suit`` is as trumps for this hand (bids and the first lead)."""
    return _suit_points(hand, suit, n) + (1.0 if marriage and _has_marriage(hand, suit) else 0.0)


def _has_marriage(hand: int, suit: int) -> bool:
    return bool(hand >> (suit * 6 + 2) & 1 and hand >> (suit * 6 + 3) & 1)


def _suit_points(hand: int, suit: int, n: int) -> float:
    """The card points a hand should take leading with ``suit`` as trumps: its trump tricks
    (top trumps and length), side aces and tens, and its marriages."""
    per_trick = n * 5 + 3
    trumps = [c for c in _cards(hand & SUIT_MASK_32[suit])]
    top = 0
    for rank in range(6):
        if suit * 6 + rank in trumps:
            top += 1
        else:
            break
    tricks = top + 0.5 * max(0, len(trumps) - top - 2)  # length wins late, once trumps are drawn
    for s in range(4):
        if s == suit:
            continue
        if hand >> (s * 6) & 1:
            tricks += 0.8 if n == 3 else 0.7
            if hand >> (s * 6 + 1) & 1:
                tricks += 0.5
    melds = sum((40 if s == suit else 20) for s in range(4) if _has_marriage(hand, s))
    return tricks * per_trick + melds
