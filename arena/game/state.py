"""The state of one deal and its transitions: the rules of RULES.md, pure and fast.

A `State` is one node of the game tree, in the spirit of OpenSpiel: `current_player`,
sorted `legal_actions`, `apply_action` (checked) and `apply_legal` (trusting, for search),
`is_over`, `result`, `returns` and `clone`. It never reads a clock, a file or global
random state: a deal is a pure function of (variant, seed, dealer) or of an explicit card
order, and the same action list replays it exactly.

Turn structure (RULES.md section 6, E1). A deal moves through these phases:

- ``lead``: the leader may, in this order and each at most once, ``exchange``,
  ``marry:S``, ``close``, ``declare``, and must then ``play`` a card (unless out).
  Under ``closing = false`` nobody may close (nor is a ``draw`` decision offered); under
  ``forced_marriage = true`` a K or Q whose partner is in hand may be led only after
  ``marry`` of its suit, whenever that marriage may be declared.
- ``follow``: the other seat answers the led card (free while the talon is open, the
  follow/head/trump rules once it is closed or exhausted).
- ``draw``: after a trick in the open phase, when the winner may close before drawing
  (Sixty-Six), the winner chooses ``close``, ``declare`` or ``draw``; otherwise both
  draw automatically and the winner is in ``lead``.
- ``close-offer``: under ``exchange_on_close = opponent``, the closer's opponent may
  ``exchange`` or ``pass`` at the moment of the close; then the closer's turn goes on.
- ``over``: the deal is settled; `result` holds winner, game points and the reason.

Seats are indices ``0..players-1``; per-seat facts are lists indexed by seat. The rules
implemented here are the two-player ones, where the opponent of seat ``s`` is ``s ^ 1``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .actions import (
    CLOSE,
    DECLARE,
    DRAW,
    EXCHANGE,
    MARRY,
    PASS,
    ActionError,
    action_str,
    parse_action,
)
from .cards import KING, N_CARDS, NINES, POINTS, SUIT_MASK, CardError, card_str, cards_of, parse_card
from .shuffle import deck_order
from .variant import Variant, get_variant

LEAD, FOLLOW, DRAW_PENDING, CLOSE_OFFER, OVER = range(5)
PHASES = ("lead", "follow", "draw", "close-offer", "over")
TERMINAL = -1

#: Cards of each pack, in card-id order.
PACK_24 = tuple(range(N_CARDS))
PACK_20 = tuple(c for c in range(N_CARDS) if not NINES >> c & 1)

#: Why a deal ended (`DealResult.reason`), as stable kebab-case codes.
REASONS = (
    "out",  # a correct claim of 66 (F1.16), or the closer taking the last trick with 66 (E4)
    "false-claim",  # a claim with fewer than 66 (F1.18)
    "failed-close",  # the closer did not make 66, or claimed falsely (F1.14, E4, E5)
    "beaten-closer",  # the closer's opponent went out first (F1.14)
    "higher-total",  # played out, unclosed, higher total with the last-trick 10 (F1.19)
    "last-trick",  # played out, unclosed, Schnapsen: the last trick wins 1 (F2.9)
    "drawn",  # played out with equal totals: no game points (F1.19)
)


class IllegalActionError(ValueError):
    """An action that is well formed but not legal in this state (the state is unchanged)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DealResult:
    """How a deal ended. ``winner`` is None for a drawn hand (then ``game_points`` is 0).

    ``points`` are each seat's final card points (tricks, credited marriages and the
    last-trick 10); ``tricks`` each seat's tricks; ``declarer`` the seat that claimed 66,
    if any.
    """

    winner: int | None
    game_points: int
    reason: str
    points: tuple[int, ...]
    tricks: tuple[int, ...]
    declarer: int | None = None

    def to_dict(self) -> dict:
        """JSON-ready: tuples become lists, so a JSON round trip gives back an equal dict."""
        return {
            "winner": self.winner,
            "game_points": self.game_points,
            "reason": self.reason,
            "points": list(self.points),
            "tricks": list(self.tricks),
            "declarer": self.declarer,
        }


class State:
    """One deal in progress. Create with `new_deal` or `deal_from_cards`."""

    __slots__ = (
        "variant", "players", "seed", "dealer", "score", "carry", "deal_no",
        "trump", "ex_card", "hand", "stock", "stock_pos", "turn_up", "strict",
        "phase", "to_act", "leader", "lead_card", "step", "marriage_suit",
        "closed_by", "close_tricks", "close_points", "tricks", "points", "mcredit", "mpending",
        "n_tricks", "trick_log", "events", "history", "result",
    )  # fmt: skip

    # -- queries ------------------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to act, or `TERMINAL` (-1) once the deal is over."""
        return self.to_act

    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def phase_name(self) -> str:
        return PHASES[self.phase]

    def talon_size(self) -> int:
        """Cards left in the talon: the face-down ones plus the turn-up if still there."""
        return len(self.stock) - self.stock_pos + (self.turn_up >= 0)

    def count(self, seat: int) -> int:
        """The seat's card points for going out: tricks plus credited marriages."""
        return self.points[seat] + self.mcredit[seat]

    def returns(self) -> tuple[int, ...]:
        """Game points won, zero-sum: ``(+g, -g)`` for the winner; zeros until the end."""
        r = self.result
        if r is None or r.winner is None:
            return (0,) * self.players
        return tuple(r.game_points if s == r.winner else -r.game_points for s in range(self.players))

    def legal_actions(self) -> list[int]:
        """The legal action ids for the seat to act, ascending; empty once over."""
        ph = self.phase
        s = self.to_act
        v = self.variant
        if ph == FOLLOW:
            h = self.hand[s]
            if self.strict:
                lc = self.lead_card
                same = h & SUIT_MASK[lc // 6]
                if same:
                    if v.strict_must_head:
                        # Stronger cards of a suit sit on lower bits.
                        h = same & ((1 << lc) - 1) or same
                    else:
                        h = same
                elif v.strict_must_trump and h & SUIT_MASK[self.trump]:
                    h &= SUIT_MASK[self.trump]
            acts = list(cards_of(h))
            if v.exchange_timing == "any_time" and self._can_exchange(s):
                acts.append(EXCHANGE)
            if v.out_timing == "any_time" and self.tricks[s]:
                acts.append(DECLARE)
            return acts
        if ph == LEAD:
            h = self.hand[s]
            ms = self.marriage_suit
            if ms >= 0:
                k = ms * 6 + KING
                acts = [k] if v.marriage_lead == "king_only" else [k, k + 1]
            else:
                acts = list(cards_of(h))
                step = self.step
                if (
                    step <= 1
                    and (not self.strict or v.marriage_after_close)
                    and (self.tricks[s] or v.marriage_needs_trick == "to_count")
                ):
                    for suit in range(4):
                        if h >> (suit * 6 + KING) & 3 == 3:
                            acts.append(MARRY + suit)
                            if v.forced_marriage:
                                # A married K or Q may be led only after its announcement.
                                acts.remove(suit * 6 + KING)
                                acts.remove(suit * 6 + KING + 1)
                if step == 0 and self._can_exchange(s):
                    acts.append(EXCHANGE)
            if self.step <= 2 and self._can_close():
                acts.append(CLOSE)
            if self.tricks[s]:
                acts.append(DECLARE)
            return acts
        if ph == DRAW_PENDING:
            return [CLOSE, DECLARE, DRAW]
        if ph == CLOSE_OFFER:
            return [EXCHANGE, PASS]
        return []

    def legal_action_strings(self) -> list[str]:
        return [action_str(a) for a in self.legal_actions()]

    def _can_exchange(self, s: int) -> bool:
        v = self.variant
        if self.turn_up < 0 or not self.hand[s] >> self.ex_card & 1:
            return False
        if len(self.stock) - self.stock_pos + 1 < v.exchange_min_talon:
            return False
        if self.closed_by >= 0 and v.exchange_on_close != "any_with_trick":
            return False
        if v.exchange_needs_trick or self.closed_by >= 0:
            if not self.tricks[s]:
                return False
        if not v.exchange_on_first_lead and self.n_tricks == 0:
            return False
        return True

    def _can_close(self) -> bool:
        v = self.variant
        if self.strict:  # closed already, or exhausted
            return False
        if self.talon_size() < v.close_min_talon:
            return False
        return v.closing and (v.close_on_first_lead or self.n_tricks > 0)

    # -- transitions --------------------------------------------------------------------
    def apply_action(self, action: int | str) -> None:
        """Apply an action given as id or string, after checking that it is legal.

        Raises `arena.game.ActionError` for a malformed string and `IllegalActionError`
        (naming the action, the seat and the legal set) for an illegal one; in both
        cases the state is unchanged.
        """
        a = parse_action(action) if isinstance(action, str) else action
        if type(a) is not int:
            raise ActionError(f"malformed action {action!r}: expected an action string or id")
        legal = self.legal_actions()
        if a not in legal:
            shown = action_str(a) if 0 <= a <= PASS else f"id {a}"
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
        if a < MARRY:
            if self.phase == LEAD:
                self.hand[s] ^= 1 << a
                self.lead_card = a
                self.step = 0
                self.marriage_suit = -1
                self.phase = FOLLOW
                self.to_act = s ^ 1
            else:
                self._finish_trick(s, a)
        elif a < EXCHANGE:
            suit = a - MARRY
            pts = 40 if suit == self.trump else 20
            if self.tricks[s]:
                self.mcredit[s] += pts
            else:
                self.mpending[s] += pts
            self.marriage_suit = suit
            self.step = 2
            self.events.append(("marriage", s, suit, pts, self.n_tricks))
            if self.variant.auto_out:
                self._auto_out()
        elif a == EXCHANGE:
            ex, tu = self.ex_card, self.turn_up
            self.hand[s] ^= (1 << ex) | (1 << tu)
            self.turn_up = ex
            self.events.append(("exchange", s, ex, tu, self.n_tricks))
            if self.phase == LEAD:
                self.step = 1
            elif self.phase == CLOSE_OFFER:
                self._resume_closer()
        elif a == CLOSE:
            self._close(s)
        elif a == DECLARE:
            self._declare(s)
        elif a == DRAW:
            self._draw(s)
            self.phase = LEAD
            if self.variant.auto_out:
                self._auto_out()
        elif a == PASS:
            self._resume_closer()
        else:  # pragma: no cover - guarded by apply_action
            raise IllegalActionError(f"unknown action id {a}")

    def _finish_trick(self, f: int, c: int) -> None:
        lead = self.leader
        lc = self.lead_card
        self.hand[f] ^= 1 << c
        if c // 6 == lc // 6:
            w = lead if lc < c else f
        elif c // 6 == self.trump:
            w = f
        else:
            w = lead
        tricks = self.tricks
        self.points[w] += POINTS[lc] + POINTS[c]
        tricks[w] += 1
        if tricks[w] == 1 and self.mpending[w]:
            self.mcredit[w] += self.mpending[w]
            self.mpending[w] = 0
        self.n_tricks += 1
        self.trick_log.append((lead, lc, c, w))
        self.lead_card = -1
        self.leader = self.to_act = w
        if not self.hand[w]:
            self._settle_played_out(w)
            return
        self.phase = LEAD
        if not self.strict:
            v = self.variant
            if v.close_before_draw and v.closing and self.talon_size() > 2 and self.talon_size() >= v.close_min_talon:
                self.phase = DRAW_PENDING
            else:
                self._draw(w)
        if self.variant.auto_out:
            self._auto_out()

    def _draw(self, w: int) -> None:
        stock, pos, hand = self.stock, self.stock_pos, self.hand
        hand[w] |= 1 << stock[pos]
        if pos + 1 < len(stock):
            hand[w ^ 1] |= 1 << stock[pos + 1]
            self.stock_pos = pos + 2
        else:
            tu = self.turn_up
            hand[w ^ 1] |= 1 << tu
            self.events.append(("turn_up_drawn", w ^ 1, tu, self.n_tricks))
            self.turn_up = -1
            self.stock_pos = pos + 1
            self.strict = True

    def _close(self, s: int) -> None:
        before_draw = self.phase == DRAW_PENDING
        self.closed_by = s
        self.strict = True
        self.close_tricks = tuple(self.tricks)
        self.close_points = tuple(self.count(seat) for seat in range(self.players))
        self.events.append(("close", s, self.n_tricks, before_draw))
        self.phase = LEAD
        self.step = 3
        v = self.variant
        o = s ^ 1
        if (
            v.exchange_on_close == "opponent"
            and self.turn_up >= 0
            and self.hand[o] >> self.ex_card & 1
            and self.talon_size() >= v.exchange_min_talon
        ):
            self.phase = CLOSE_OFFER
            self.to_act = o

    def _resume_closer(self) -> None:
        self.phase = LEAD
        self.to_act = self.closed_by

    def _auto_out(self) -> None:
        s = self.to_act
        if self.phase in (LEAD, DRAW_PENDING) and self.tricks[s] and self.count(s) >= 66:
            self._declare(s)

    # -- scoring ------------------------------------------------------------------------
    def _scale(self, tricks: int, points: int) -> int:
        """Game points from the loser's tricks and card points (F1.17)."""
        if not tricks:
            return 3
        return 2 if points < self.variant.schneider_at else 1

    def _closer_out(self, c: int, reason: str, declarer: int | None) -> None:
        o = c ^ 1
        if self.variant.close_score_basis == "at_close":
            gp = self._scale(self.close_tricks[o], self.close_points[o])
        else:
            gp = self._scale(self.tricks[o], self.count(o))
        self._finish(c, gp, reason, declarer)

    def _failed_close(self, c: int, declarer: int | None) -> None:
        o = c ^ 1
        rule = self.variant.failed_close
        if rule == "three" or not self.close_tricks[o]:
            gp = 3
        elif rule == "by_closer_count":
            gp = 1 if self.count(c) >= self.variant.schneider_at else 2
        else:
            gp = 2
        self._finish(o, gp, "failed-close", declarer)

    def _declare(self, s: int) -> None:
        o = s ^ 1
        c = self.closed_by
        if self.count(s) >= 66:
            if c < 0:
                self._finish(s, self._scale(self.tricks[o], self.count(o)), "out", s)
            elif c == s:
                self._closer_out(s, "out", s)
            else:
                two = self.variant.beaten_closer == "two" or self.close_tricks[s]
                self._finish(s, 2 if two else 3, "beaten-closer", s)
        elif c == s:
            self._failed_close(s, s)
        else:
            two = self.variant.false_claim == "two" or self.tricks[o]
            self._finish(o, 2 if two else 3, "false-claim", s)

    def _settle_played_out(self, w: int) -> None:
        """Every card has been played (E3, E4, F1.19, F2.9)."""
        c = self.closed_by
        if c >= 0:
            if w == c and self.count(c) >= 66:
                self._closer_out(c, "out", None)
            else:
                self._failed_close(c, None)
        elif self.variant.exhausted_rule == "last_trick_wins":
            self._finish(w, 1, "last-trick", None)
        else:
            self.points[w] += 10
            a, b = self.count(w), self.count(w ^ 1)
            if a == b:
                self._finish(None, 0, "drawn", None)
            else:
                winner = w if a > b else w ^ 1
                loser = winner ^ 1
                self._finish(winner, self._scale(self.tricks[loser], self.count(loser)), "higher-total", None)

    def _finish(self, winner: int | None, gp: int, reason: str, declarer: int | None) -> None:
        self.result = DealResult(
            winner=winner,
            game_points=gp,
            reason=reason,
            points=tuple(self.count(s) for s in range(self.players)),
            tricks=tuple(self.tricks),
            declarer=declarer,
        )
        self.phase = OVER
        self.to_act = TERMINAL

    # -- copying and comparing ------------------------------------------------------------
    def clone(self) -> State:
        """An independent copy, cheap enough for search (a few microseconds)."""
        c = object.__new__(State)
        c.variant = self.variant
        c.players = self.players
        c.seed = self.seed
        c.dealer = self.dealer
        c.score = self.score
        c.carry = self.carry
        c.deal_no = self.deal_no
        c.trump = self.trump
        c.ex_card = self.ex_card
        c.hand = self.hand[:]
        c.stock = self.stock
        c.stock_pos = self.stock_pos
        c.turn_up = self.turn_up
        c.strict = self.strict
        c.phase = self.phase
        c.to_act = self.to_act
        c.leader = self.leader
        c.lead_card = self.lead_card
        c.step = self.step
        c.marriage_suit = self.marriage_suit
        c.closed_by = self.closed_by
        c.close_tricks = self.close_tricks
        c.close_points = self.close_points
        c.tricks = self.tricks[:]
        c.points = self.points[:]
        c.mcredit = self.mcredit[:]
        c.mpending = self.mpending[:]
        c.n_tricks = self.n_tricks
        c.trick_log = self.trick_log[:]
        c.events = self.events[:]
        c.history = self.history[:]
        c.result = self.result
        return c

    def _key(self) -> tuple:
        return tuple(
            getattr(self, f) if not isinstance(getattr(self, f), list) else tuple(getattr(self, f))
            for f in State.__slots__
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(card_str(c) for c in cards_of(h)) for h in self.hand)
        tu = card_str(self.turn_up) if self.turn_up >= 0 else "-"
        return (
            f"<State {self.variant.name} {self.phase_name} to_act={self.to_act} trump={'CDHS'[self.trump]} "
            f"turn_up={tu} talon={self.talon_size()} closed_by={self.closed_by} hands=[{hands}] "
            f"points={self.points} tricks={self.tricks}>"
        )


# -- construction ------------------------------------------------------------------------
def _blank(variant: Variant, dealer: int, score: Sequence[int], carry: int, deal_no: int) -> State:
    n = variant.players
    if type(dealer) is not int or not 0 <= dealer < n:
        raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
    if len(score) != n:
        raise ValueError(f"score must have one entry per seat ({n}), got {score!r}")
    st = object.__new__(State)
    st.variant = variant
    st.players = n
    st.seed = None
    st.dealer = dealer
    st.score = tuple(score)
    st.carry = carry
    st.deal_no = deal_no
    st.strict = False
    st.phase = LEAD
    st.leader = st.to_act = (dealer + 1) % n
    st.lead_card = -1
    st.step = 0
    st.marriage_suit = -1
    st.closed_by = -1
    st.close_tricks = st.close_points = None
    st.tricks = [0] * n
    st.points = [0] * n
    st.mcredit = [0] * n
    st.mpending = [0] * n
    st.n_tricks = 0
    st.trick_log = []
    st.events = []
    st.history = []
    st.result = None
    return st


def pack_of(variant: Variant) -> tuple[int, ...]:
    """The card ids of the variant's pack, ascending."""
    return PACK_24 if variant.deck == 24 else PACK_20


def new_deal(
    variant: Variant | str = "sixty-six",
    seed: int = 0,
    dealer: int = 0,
    *,
    score: Sequence[int] | None = None,
    carry: int = 0,
    deal_no: int = 0,
) -> State:
    """Shuffle the pack from ``seed`` and deal it in the fixed order.

    A three- or four-handed variant gives a `arena.game.table.TableState` instead (see
    `arena.game.table.new_table_deal`); F3.3 (``dealer_sits_out``) deals a two-handed
    hand of its `Variant.hand_variant`.

    Sixty-Six: 3 cards to the forehand (the non-dealer), 3 to the dealer, 3 and 3 again,
    the turn-up, then the talon (the next card is the top of the talon). Schnapsen: 3 and
    3, the turn-up, 2 and 2, then the talon. ``score``, ``carry`` and ``deal_no`` are the
    match context the seats are shown; they do not change the rules of the deal.
    """
    variant = get_variant(variant)
    if variant.form != "two_handed":
        if variant.is_table:
            from .table_deal import new_table_deal

            return new_table_deal(variant, seed, dealer, score=score, carry=carry, deal_no=deal_no)  # type: ignore[return-value]
        variant = variant.hand_variant
    if type(seed) is not int or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    st = _blank(variant, dealer, (0, 0) if score is None else score, carry, deal_no)
    order = deck_order(pack_of(variant), seed)
    fh = st.to_act
    hands = [0] * st.players
    if variant.deck == 24:
        batches, tu_at = (3, 3), 12
    else:
        batches, tu_at = (3, 2), 6
    pos = 0
    for size in batches:
        for seat in (fh, dealer):
            for c in order[pos : pos + size]:
                hands[seat] |= 1 << c
            pos += size
            if pos == tu_at:
                pos += 1  # the turn-up's place in the order
    st.hand = hands
    st.turn_up = order[tu_at]
    st.stock = tuple(order[2 * variant.hand_size + 1 :])
    st.stock_pos = 0
    st.trump = st.turn_up // 6
    st.ex_card = st.trump * 6 + variant.exchange_rank_index
    st.seed = seed
    return st


def _card_id(x: int | str, pack: tuple[int, ...], where: str) -> int:
    try:
        c = parse_card(x) if isinstance(x, str) else x
    except CardError as e:
        raise CardError(f"{where}: {e}") from None
    if type(c) is not int or c not in pack:
        raise CardError(f"{where}: card {x!r} is not in this variant's pack")
    return c


def deal_from_cards(
    variant: Variant | str,
    hands: Sequence[Sequence[int | str]],
    turn_up: int | str | None,
    talon: Sequence[int | str] = (),
    dealer: int = 0,
    *,
    trump: str | None = None,
    leader: int | None = None,
    tricks: Sequence[int] | None = None,
    points: Sequence[int] | None = None,
    score: Sequence[int] | None = None,
) -> State:
    """A deal from an explicit card placement, for tests, puzzles and replays.

    For a three- or four-handed variant this is `arena.game.table.table_from_cards`:
    ``hands`` in the order each seat is dealt its cards, ``talon`` the F3.2 widow, and
    ``turn_up`` must be None (the trump card is part of a hand there); with ``trump`` it
    is an endgame (any equal hand sizes, ``leader``, ``tricks``, ``points``).

    ``hands`` per seat and ``talon`` (the face-down cards, top first) take cards as ids or
    strings. With a ``turn_up`` the talon is open: hands are full and the face-down talon
    has an odd number of cards. With ``turn_up=None`` the talon is exhausted: give
    ``trump`` (a suit letter), and optionally the ``leader`` and the ``tricks`` and card
    ``points`` each seat has already won, to start an endgame. Cards in no hand and not in
    the talon count as played.
    """
    variant = get_variant(variant)
    if variant.is_table:
        from .table_deal import table_from_cards

        if turn_up is not None:
            raise ValueError("turn_up: a three- or four-handed deal has no turn-up (its trump card is in a hand)")
        return table_from_cards(  # type: ignore[return-value]
            variant, hands, talon, dealer, score=score, trump=trump, leader=leader, tricks=tricks, points=points
        )
    variant = variant.hand_variant
    st = _blank(variant, dealer, (0, 0) if score is None else score, 0, 0)
    pack = pack_of(variant)
    n = st.players
    if len(hands) != n:
        raise ValueError(f"hands: expected {n} hands, got {len(hands)}")
    seen: dict[int, str] = {}

    def take(x: int | str, where: str) -> int:
        c = _card_id(x, pack, where)
        if c in seen:
            raise CardError(f"{where}: card {card_str(c)} appears twice (also in {seen[c]})")
        seen[c] = where
        return c

    masks = []
    for seat, h in enumerate(hands):
        m = 0
        for x in h:
            m |= 1 << take(x, f"hands[{seat}]")
        masks.append(m)
    sizes = {len(h) for h in hands}
    if len(sizes) != 1 or not 1 <= len(hands[0]) <= variant.hand_size:
        raise ValueError(f"hands: every hand must hold the same number of cards, 1..{variant.hand_size}")
    stock = tuple(take(x, "talon") for x in talon)
    if turn_up is not None:
        tu = take(turn_up, "turn_up")
        if len(hands[0]) != variant.hand_size or len(stock) % 2 != 1:
            raise ValueError(
                f"with a turn-up, hands must be full ({variant.hand_size} cards) and the "
                "face-down talon must hold an odd number of cards"
            )
        st.trump = tu // 6
        if trump is not None and trump != "CDHS"[st.trump]:
            raise ValueError(f"trump {trump!r} disagrees with the turn-up {card_str(tu)}")
    else:
        if stock:
            raise ValueError("talon: without a turn-up the talon must be empty (exhausted)")
        if trump is None or trump not in ("C", "D", "H", "S"):
            raise ValueError(f"trump: a suit letter C, D, H or S is needed without a turn-up, got {trump!r}")
        tu = -1
        st.trump = "CDHS".index(trump)
        st.strict = True
    st.hand = masks
    st.turn_up = tu
    st.stock = stock
    st.stock_pos = 0
    st.ex_card = st.trump * 6 + variant.exchange_rank_index
    if leader is not None:
        if type(leader) is not int or not 0 <= leader < n:
            raise ValueError(f"leader must be a seat 0..{n - 1}, got {leader!r}")
        st.leader = st.to_act = leader
    for name, values in (("tricks", tricks), ("points", points)):
        if values is not None:
            if len(values) != n or any(type(x) is not int or x < 0 for x in values):
                raise ValueError(f"{name}: expected {n} non-negative integers, got {values!r}")
            setattr(st, name, list(values))
    st.n_tricks = sum(st.tricks)
    return st
