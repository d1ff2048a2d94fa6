"""Three- and four-handed deals without a talon: the forms of RULES.md sections 3, 4 and 7.

A `TableState` is one deal of ``pagat`` (F3.1 with three seats, F4.1 with four),
``cutthroat`` (F3.2, M9), ``kreuzmariage`` (F4.2, M7) or ``bidding`` (F4.3, M8), with the
same interface as the two-handed `arena.game.state.State`: `current_player`, sorted
`legal_actions`, `apply_action` (checked), `apply_legal` (trusting), `is_over`, `result`,
`returns`, `clone`. Seats go clockwise (``seat + 1`` is the left-hand neighbour); in the
four-handed forms partners sit opposite and the team of seat ``s`` is ``s & 1``. Per-seat
facts are lists indexed by seat, per-team facts lists indexed by team (in the three-handed
forms a seat is its own team).

Phases:

- ``bid``: F4.3 and F3.2. From the dealer's left each seat bids once (``bid:N`` higher
  than the last bid) or passes; the highest bidder leads, and the first card led sets
  trumps. ``bid:5`` is the moon: the bidder's partner sits out.
- ``name``: F3.1. The dealer's left has seen its first three cards and may ``trump:S`` or
  ``pass`` (then the first card of its second batch is turned up and sets trumps); the
  rest of the deal follows the decision.
- ``lead``: ``marry:S`` where the form allows it (one per lead), ``declare`` (F4.1: claim
  66 for the team), then ``play``.
- ``meld``: F4.1. After every lead the leader's partner may ``marry:S`` or ``pass`` (the
  phase comes whether or not he holds a marriage, so it tells the table nothing).
- ``follow``: the other seats in turn, by M3: follow suit and beat the trick's winning
  card if possible (if it has been trumped, any card of the led suit), else trump,
  over-trumping if possible (``undertrump``), else any card.
- ``last``: F4.1. The winner of the last trick may ``declare`` 66 or ``pass``.
- ``over``: `result` holds a `TableResult`.

Nothing here reads a clock, a file or global random state: a deal is a pure function of
(variant, seed, dealer) or of an explicit card placement (`arena.game.table_deal`), and
its action list replays it.
"""

from __future__ import annotations

import dataclasses

from .actions import (
    BID,
    DECLARE,
    MARRY,
    MOON,
    PASS,
    PLAY_LOW,
    TRUMP,
    ActionError,
    action_str,
    parse_action,
)
from .cards import (
    _SUIT_TABLES,
    KING,
    POINTS_32,
    SUIT_MASK_32,
    SUIT_OF,
    TEN,
    card_str,
    cards_of_32,
)
from .state import IllegalActionError

BIDDING, NAMING, LEAD, MELD, FOLLOW, LAST, OVER = range(7)
TABLE_PHASES = ("bid", "name", "lead", "meld", "follow", "last", "over")
TERMINAL = -1
PAGAT, CUTTHROAT, KREUZ, BIDFORM = range(4)
_FORMS = {"pagat": PAGAT, "cutthroat": CUTTHROAT, "kreuzmariage": KREUZ, "bidding": BIDFORM}

#: Why a table deal ended (`TableResult.reason`).
TABLE_REASONS = (
    "played-out",  # F3.1: every card played, the top scorer takes stakes; F4.2: higher total
    "drawn",  # equal points: nobody scores (F4.2 65-65 carries a point; F3.1 all tied)
    "out",  # F4.1: a correct claim of 66
    "false-claim",  # F4.1: a claim with fewer than 66
    "more-points",  # F4.1: nobody claimed; the team with more points scores 1
    "made",  # F4.3, F3.2: the bidder made the bid
    "set",  # F4.3, F3.2: the bidder was set
    "all-pass",  # F4.3, F3.2: nobody bid; the same dealer deals again
)

_T0, _T1, _T2, _T3 = _SUIT_TABLES
#: The four kings (a marriage is a king with the next bit, its queen, also set).
_KINGS = sum(1 << (s * 6 + KING) for s in range(4))
#: Cards of the low and high 12 bits of a hand (clubs and diamonds; hearts and spades).
_LO = tuple(tuple(c for c in range(12) if m >> c & 1) for m in range(4096))
_HI = tuple(tuple(12 + c for c in range(12) if m >> c & 1) for m in range(4096))
#: Play actions of the 8s and 7s in the high byte of a hand (ids 33..40).
_HIGH_ACTS = tuple(tuple(33 + b for b in range(8) if m >> b & 1) for m in range(256))


@dataclasses.dataclass(frozen=True, slots=True)
class TableResult:
    """How a table deal ended.

    ``scores`` are the game points (stakes, marks) each side gains, one entry per team
    (per seat in the three-handed forms); they may be negative (a set bid, stakes paid).
    ``winner`` is the side that won the hand, or None. ``points`` and ``tricks`` are per
    side: card points with credited marriages (and a last-trick 10 where the form has
    one), and tricks taken. ``bidder`` and ``bid`` are the contract (bidding forms).
    """

    winner: int | None
    scores: tuple[int | float, ...]
    reason: str
    points: tuple[int, ...]
    tricks: tuple[int, ...]
    declarer: int | None = None
    bidder: int | None = None
    bid: int = 0

    @property
    def game_points(self) -> int | float:
        """The winner's gain (0 without a winner): the two-handed `DealResult` field."""
        return self.scores[self.winner] if self.winner is not None else 0

    def to_dict(self) -> dict:
        """JSON-ready: tuples become lists."""
        return {
            "winner": self.winner,
            "scores": list(self.scores),
            "reason": self.reason,
            "points": list(self.points),
            "tricks": list(self.tricks),
            "declarer": self.declarer,
            "bidder": self.bidder,
            "bid": self.bid,
        }


class TableState:
    """One three- or four-handed deal in progress. Create with
    `arena.game.table_deal.new_table_deal` or `table_from_cards` (or `arena.game.new_deal`
    / `deal_from_cards`, which hand a table variant on to them)."""

    __slots__ = (
        "variant", "form", "players", "teams", "seed", "dealer", "score", "carry", "deal_no",
        "order", "hand", "trump", "turn_card", "turn_owner", "widow", "widow_taken",
        "phase", "to_act", "leader", "trick", "win_seat", "win_card", "active", "nxt", "n_active",
        "bids", "bidder", "bid", "marriage_suit", "melded", "lead_married", "may_marry", "may_claim", "trick_pts",
        "relaxed", "under_free",
        "tricks", "points", "melds", "n_tricks", "trick_log", "events", "history", "result",
    )  # fmt: skip

    # -- queries ------------------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to act, or `TERMINAL` (-1) once the deal is over."""
        return self.to_act

    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def phase_name(self) -> str:
        return TABLE_PHASES[self.phase]

    def team_of(self, seat: int) -> int:
        """The side a seat scores for: ``seat & 1`` with four players, else the seat."""
        return seat & 1 if self.players == 4 else seat

    def team_tricks(self, team: int) -> int:
        if self.players == 4:
            return self.tricks[team] + self.tricks[team + 2]
        return self.tricks[team]

    def count(self, team: int) -> int:
        """A side's card points with its marriages, which count once it has a trick."""
        if self.players == 4:
            pts = self.points[team] + self.points[team + 2]
            tr = self.tricks[team] + self.tricks[team + 2]
        else:
            pts = self.points[team]
            tr = self.tricks[team]
        return pts + self.melds[team] if tr else pts

    def returns(self) -> tuple[int | float, ...]:
        """Each seat's gain in game points (its side's); zeros until the end."""
        r = self.result
        if r is None:
            return (0,) * self.players
        return tuple(r.scores[self.team_of(s)] for s in range(self.players))

    def legal_actions(self) -> list[int]:
        """The legal action ids for the seat to act, ascending; empty once over."""
        ph = self.phase
        if ph == FOLLOW:
            # RULES.md M3: follow suit and beat the winning card (unless the trick has been
            # trumped, or, under head_partner = false, it is the partner's); void: trump,
            # over-trump if possible, else any trump (undertrump = required) or anything.
            s = self.to_act
            m = self.hand[s]
            wc = self.win_card
            ls = SUIT_OF[self.trick[0][1]]
            same = m & SUIT_MASK_32[ls]
            relaxed = self.relaxed and (self.win_seat ^ s) == 2
            if same:
                # Stronger cards of a suit sit on lower bits; a trumped trick: any of the suit.
                m = same if SUIT_OF[wc] != ls or relaxed else same & ((1 << wc) - 1) or same
            elif self.trump >= 0:
                tr = m & SUIT_MASK_32[self.trump]
                if tr:
                    if SUIT_OF[wc] == self.trump and not relaxed:
                        m = tr & ((1 << wc) - 1) or (m if self.under_free else tr)
                    else:
                        m = tr
            if m >> 24:
                return [*_LO[m & 4095], *_HI[m >> 12 & 4095], *_HIGH_ACTS[m >> 24]]
            return [*_LO[m & 4095], *_HI[m >> 12 & 4095]]
        if ph == LEAD:
            return self._lead_actions()
        if ph == BIDDING:
            return self._bid_actions()
        if ph == MELD:
            return [MARRY + s for s in self._marriages(self.to_act)] + [PASS]
        if ph == NAMING:
            return [PASS, TRUMP, TRUMP + 1, TRUMP + 2, TRUMP + 3]
        if ph == LAST:
            return [DECLARE, PASS]
        return []

    def legal_action_strings(self) -> list[str]:
        return [action_str(a) for a in self.legal_actions()]

    def _marriages(self, s: int) -> list[int]:
        """Suits of the marriages seat ``s`` holds and has not declared yet."""
        h = self.hand[s]
        # A king whose queen (the next bit) is in hand too, not yet declared.
        kings = h & (h >> 1) & _KINGS & ~self.melded[s]
        return [
            SUIT_OF[c] for c in _T0[kings & 63] + _T1[kings >> 6 & 63] + _T2[kings >> 12 & 63] + _T3[kings >> 18 & 63]
        ]

    def _lead_actions(self) -> list[int]:
        s = self.to_act
        ms = self.marriage_suit
        if ms >= 0 and self.lead_married:
            acts = [ms * 6 + KING, ms * 6 + KING + 1]
        else:
            m = self.hand[s]
            acts = [*_LO[m & 4095], *_HI[m >> 12 & 4095]]
            if m >> 24:
                acts += _HIGH_ACTS[m >> 24]
            if ms < 0 and self.may_marry and m & (m >> 1) & _KINGS & ~self.melded[s]:
                acts += [MARRY + suit for suit in self._marriages(s)]
                if m >> 24:
                    acts.sort()  # plays of 8s and 7s (33..40) come after the marriages
        if self.may_claim and self.team_tricks(s & 1):
            acts.append(DECLARE)
        return acts

    def _bid_actions(self) -> list[int]:
        top = 4 if self.form == CUTTHROAT or self.variant.moon == "none" else MOON
        acts = [BID + b - 1 for b in range(self.bid + 1, top + 1)]
        last = self.to_act == self.dealer
        if not (last and self.bid == 0 and self.variant.all_pass == "dealer_forced"):
            acts.insert(0, PASS)
        return acts

    # -- transitions --------------------------------------------------------------------
    def apply_action(self, action: int | str) -> None:
        """Apply an action given as id or string, after checking that it is legal.

        Raises `ActionError` for a malformed string and `IllegalActionError` (naming the
        action, the seat and the legal set) for an illegal one; the state is then unchanged.
        """
        a = parse_action(action) if isinstance(action, str) else action
        if type(a) is not int:
            raise ActionError(f"malformed action {action!r}: expected an action string or id")
        legal = self.legal_actions()
        if a not in legal:
            shown = action_str(a) if 0 <= a < TRUMP + 4 else f"id {a}"
            seat = "nobody (the deal is over)" if self.phase == OVER else f"seat {self.to_act}"
            raise IllegalActionError(
                f"illegal action {shown} for {seat} in phase {self.phase_name}; "
                f"legal: {' '.join(map(action_str, legal)) or 'none'}"
            )
        self.apply_legal(a)

    def apply_legal(self, a: int) -> None:
        """Apply an action id known to be legal (from `legal_actions`); no check."""
        self.history.append(a)
        s = self.to_act
        ph = self.phase
        if a < MARRY or PLAY_LOW <= a < BID:
            c = a if a < MARRY else a - 9
            if ph == LEAD:
                self._lead(s, c)
            else:
                self._follow(s, c)
        elif a < MARRY + 4:
            self._marry(s, a - MARRY)
        elif a == PASS:
            if ph == BIDDING:
                self.bids[s] = 0
                self.events.append(("bid", s, 0))
                self._next_bidder()
            elif ph == MELD:
                self._after_meld()
            elif ph == NAMING:
                self._deal_rest(-1)
            else:  # LAST: no claim, scored on points (M6)
                self._settle_unclaimed()
        elif a == DECLARE:
            self._declare(s)
        elif BID <= a < TRUMP:
            b = a - BID + 1
            self.bids[s] = b
            self.bid = b
            self.bidder = s
            self.events.append(("bid", s, b))
            self._next_bidder()
        elif TRUMP <= a < TRUMP + 4:
            self._deal_rest(a - TRUMP)
        else:  # pragma: no cover - guarded by apply_action
            raise IllegalActionError(f"unknown action id {a}")

    def _next_bidder(self) -> None:
        s = self.to_act
        if s != self.dealer:
            self.to_act = (s + 1) % self.players
            return
        if self.bid == 0:
            self._finish(None, (0,) * self.teams, "all-pass")
            return
        b = self.bidder
        if self.bid == MOON:
            self.active = tuple(x for x in range(self.players) if x != (b ^ 2))
            self.n_active = 3
            self.nxt = tuple(self._next_seat(x) for x in range(self.players))
        self.phase = LEAD
        self.leader = self.to_act = b

    def _deal_rest(self, named: int) -> None:
        """F3.1: after the trump decision, deal the second and third batches."""
        n, d, order = 3, self.dealer, self.order
        fh = (d + 1) % n
        pos = 9
        for size in (2, 3):
            for k in range(n):
                seat = (fh + k) % n
                for c in order[pos : pos + size]:
                    self.hand[seat] |= 1 << c
                pos += size
        if named < 0:
            tc = order[9]
            self.turn_card = tc
            self.turn_owner = fh
            self.trump = SUIT_OF[tc]
        else:
            self.trump = named
        self.events.append(("trump", fh, self.trump, named >= 0))
        self.phase = LEAD
        self.to_act = self.leader = fh

    def _marry(self, s: int, suit: int) -> None:
        trump = self.trump
        pts = 40 if suit == trump or trump < 0 else 20
        self.melds[self.team_of(s)] += pts
        self.melded[s] |= 1 << (suit * 6 + KING)
        self.events.append(("marriage", s, suit, pts, self.n_tricks))
        if self.phase == MELD:
            self._after_meld()
        else:
            self.marriage_suit = suit

    def _after_meld(self) -> None:
        self.phase = FOLLOW
        self.to_act = self.nxt[self.leader]

    def _next_seat(self, s: int) -> int:
        s = (s + 1) % self.players
        if self.active is not None and s not in self.active:
            s = (s + 1) % self.players
        return s

    def _lead(self, s: int, c: int) -> None:
        self.hand[s] ^= 1 << c
        if self.trump < 0:  # F4.3, F3.2: the first card led sets trumps
            self.trump = SUIT_OF[c]
            self.events.append(("trump", s, self.trump, False))
        self.trick = [(s, c)]
        self.trick_pts = POINTS_32[c]
        self.win_seat = s
        self.win_card = c
        self.marriage_suit = -1
        if self.may_claim:  # F4.1: the partner may show a marriage
            self.phase = MELD
            self.to_act = s ^ 2
        else:
            self.phase = FOLLOW
            self.to_act = self.nxt[s]

    def _follow(self, s: int, c: int) -> None:
        self.hand[s] ^= 1 << c
        self.trick.append((s, c))
        self.trick_pts += POINTS_32[c]
        wc = self.win_card
        if SUIT_OF[c] == SUIT_OF[wc]:
            if c < wc:
                self.win_card = c
                self.win_seat = s
        elif SUIT_OF[c] == self.trump:
            self.win_card = c
            self.win_seat = s
        if len(self.trick) < self.n_active:
            self.to_act = self.nxt[s]
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        w = self.win_seat
        trick = self.trick
        pts = self.trick_pts
        if self.n_tricks == 0 and self.widow:
            pts += sum(POINTS_32[c] for c in cards_of_32(self.widow))
            self.widow_taken = w
        self.n_tricks += 1
        last = not self.hand[w]
        if last and (self.form == KREUZ or self.may_claim):  # F4.1, F4.2: the last trick counts 10
            pts += 10
        self.points[w] += pts
        self.tricks[w] += 1
        self.trick_log.append((self.trick[0][0], tuple(trick), w))
        self.trick = []
        self.win_card = -1
        self.win_seat = -1
        self.leader = self.to_act = w
        if not last:
            self.phase = LEAD
        elif self.may_claim:
            self.phase = LAST
        else:
            self._settle()

    # -- scoring ------------------------------------------------------------------------
    def _scale(self, team: int) -> int:
        """1, 2 or 3 from a losing side's tricks and points (F1.17)."""
        if not self.team_tricks(team):
            return 3
        return 2 if self.count(team) < self.variant.schneider_at else 1

    def _declare(self, s: int) -> None:
        t = s & 1
        o = t ^ 1
        if self.count(t) >= 66:
            self._finish(t, _pair(t, self._scale(o)), "out", s)
        else:
            gp = 2 if self.variant.false_claim == "two" or self.team_tricks(o) else 3
            self._finish(o, _pair(o, gp), "false-claim", s)

    def _settle_unclaimed(self) -> None:
        a, b = self.count(0), self.count(1)
        if a == b:
            self._finish(None, (0, 0), "drawn")
        else:
            w = 0 if a > b else 1
            self._finish(w, _pair(w, 1), "more-points")

    def _settle(self) -> None:
        form = self.form
        if form == PAGAT:
            self._settle_stakes()
        elif form == KREUZ:
            self._settle_kreuz()
        else:
            self._settle_bid()

    def _settle_stakes(self) -> None:
        """F3.1 and M4: the top scorer takes 1, 2 or 3 stakes from each opponent."""
        counts = [self.count(s) for s in range(3)]
        top = max(counts)
        winners = [s for s in range(3) if counts[s] == top]
        scores: list[int | float] = [0, 0, 0]
        if len(winners) == 1 or self.variant.three_tie == "share" and len(winners) == 2:
            for s in range(3):
                if s in winners:
                    continue
                stake = 1 if counts[s] >= self.variant.schneider_at else 2 if self.tricks[s] else 3
                scores[s] -= stake
                for w in winners:
                    scores[w] += stake / len(winners) if len(winners) > 1 else stake
        if len(winners) == 1:
            self._finish(winners[0], tuple(scores), "played-out")
        else:
            self._finish(None, tuple(_whole(x) for x in scores), "drawn" if not any(scores) else "played-out")

    def _settle_kreuz(self) -> None:
        """F4.2 and M7: 1 at 66, 2 at 100, 3 for all eight tricks; 65-65 scores nothing."""
        a, b = self.count(0), self.count(1)
        scores = [0, 0]
        winner = None
        if a != b:
            winner = 0 if a > b else 1
            pts = max(a, b)
            scores[winner] = 3 if self.team_tricks(winner ^ 1) == 0 else 2 if pts >= 100 else 1
        if self.variant.ten_of_trumps:
            ten = self.trump * 6 + TEN
            for _, cards, w in self.trick_log:
                if any(c == ten for _, c in cards):
                    scores[w & 1] += 1
        self._finish(winner, tuple(scores), "played-out" if winner is not None else "drawn")

    def _settle_bid(self) -> None:
        """F4.3, F3.2, M8, M9: marks of 33; the set bidder loses the bid; the moon is 5."""
        b = self.bidder
        bt = self.team_of(b)
        if self.bid == MOON:
            made = self.tricks[b] == self.n_tricks
            scores = [0, 0]
            scores[bt] = 5 if made else -5
            self._finish(bt if made else bt ^ 1, tuple(scores), "made" if made else "set")
            return
        scores = [self.count(t) // 33 for t in range(self.teams)]
        made = self.count(bt) >= 33 * self.bid
        if not made:
            scores[bt] = -self.bid
        best = max(range(self.teams), key=lambda t: (self.count(t), t == bt))
        self._finish(best, tuple(scores), "made" if made else "set")

    def _finish(self, winner: int | None, scores: tuple, reason: str, declarer: int | None = None) -> None:
        self.result = TableResult(
            winner=winner,
            scores=tuple(scores),
            reason=reason,
            points=tuple(self.count(t) for t in range(self.teams)),
            tricks=tuple(self.team_tricks(t) for t in range(self.teams)),
            declarer=declarer,
            bidder=self.bidder if self.bidder >= 0 else None,
            bid=self.bid,
        )
        self.phase = OVER
        self.to_act = TERMINAL

    # -- copying and comparing ------------------------------------------------------------
    def clone(self) -> TableState:
        """An independent copy for search."""
        c = object.__new__(TableState)
        for f in TableState.__slots__:
            v = getattr(self, f)
            setattr(c, f, v[:] if isinstance(v, list) else v)
        return c

    def _key(self) -> tuple:
        return tuple(
            tuple(getattr(self, f)) if isinstance(getattr(self, f), list) else getattr(self, f)
            for f in TableState.__slots__
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TableState) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(card_str(c) for c in cards_of_32(h)) for h in self.hand)
        tr = "CDHS"[self.trump] if self.trump >= 0 else "-"
        return (
            f"<TableState {self.variant.name} {self.phase_name} to_act={self.to_act} trump={tr} "
            f"hands=[{hands}] points={self.points} tricks={self.tricks}>"
        )


def _pair(team: int, gp: int) -> tuple[int, int]:
    return (gp, 0) if team == 0 else (0, gp)


def _whole(x: int | float) -> int | float:
    return int(x) if x == int(x) else x
