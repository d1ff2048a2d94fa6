"""Information sets and worlds: full engine states consistent with what one seat knows.

`InfoSet` reads an observation; `state_from_observation` builds the world for one
assignment of the hidden cards (`Hidden`); `sample_worlds` draws assignments uniformly
among those consistent with every public fact. Deterministic given the rng passed in.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..game.cards import KING, POINTS, QUEEN, SUIT_MASK, SUITS, cards_of, parse_card
from ..game.state import CLOSE_OFFER, LEAD, PHASES, DealResult, State, pack_of
from ..game.variant import Variant, get_variant

__all__ = ["Hidden", "InfoSet", "hidden_of", "sample_worlds", "state_from_observation"]


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


class Worlds:
    """Cheap worlds for one observation: a template state, cloned and filled per sample.

    With ``weight`` (a world's likelihood given what the opponent did, at most 1; see
    `arena.bots.playout.lead_likelihood`), worlds are drawn in proportion to it by
    rejection: a uniform draw is kept with probability ``weight(world)``, up to ``tries``
    draws, after which the likeliest of them is kept. So the search sees worlds weighted by
    a model of the opponent's play and still averages them equally. ``by_hand``: the weight
    turns on the opponent's hand alone (the rest of a world is public or the talon's
    order), so it is computed once per hand (the same draws, fewer evaluations)."""

    #: Whether every sample is the same world (an oracle's true world is; sampled ones are not).
    fixed = False

    def __init__(
        self, info: InfoSet, weight: Callable[[State], float] | None = None, tries: int = 16, *, by_hand: bool = False
    ):
        self.info = info
        self.template = _build_state(info, Hidden(info.known, ()))
        self.weight = weight
        self.tries = tries
        self._memo: dict[int, float] | None = {} if by_hand else None

    def make(self, hidden: Hidden) -> State:
        st = self.template.clone()
        st.hand[self.info.opp] = hidden.opp_hand
        st.stock = hidden.talon
        return st

    def sample(self, rng: random.Random) -> State:
        if self.weight is None:
            return self.make(self.info.sample(rng))
        best, best_w = None, -1.0
        memo = self._memo
        for _ in range(self.tries):
            hidden = self.info.sample(rng)
            st = self.make(hidden)
            if memo is None:
                w = self.weight(st)
            else:
                w = memo.get(hidden.opp_hand)
                if w is None:
                    w = memo[hidden.opp_hand] = self.weight(st)
            if w >= 1.0 or rng.random() < w:
                return st
            if w > best_w:
                best, best_w = st, w
        assert best is not None
        return best


def sample_worlds(obs: dict[str, Any], variant: Variant | str, n: int, rng: random.Random) -> list[State]:
    """``n`` worlds drawn independently and uniformly among the hidden-card assignments
    consistent with the seat's information (see `InfoSet`), each a full `State`."""
    worlds = Worlds(InfoSet(obs, variant))
    return [worlds.sample(rng) for _ in range(n)]
