"""Dealing the three- and four-handed forms: the fixed deal patterns, seeded and explicit deals.

`new_table_deal` shuffles the variant's pack from a seed (`arena.game.shuffle`) and lays
it out by `deal_pattern`; `table_from_cards` builds the same deal from hands written out
(or an endgame from part-played hands), for tests, puzzles and replays.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from .actions import MOON
from .cards import SUIT_OF, CardError, card_str, parse_card
from .shuffle import deck_order
from .table import _FORMS, BIDDING, KREUZ, LEAD, NAMING, PAGAT, TableState
from .variant import Variant, get_variant

PACK_32 = tuple(range(32))
PACK_24 = tuple(range(24))


def table_pack(variant: Variant) -> tuple[int, ...]:
    """The card ids of a table variant's pack, ascending."""
    return PACK_32 if variant.deck == 32 else PACK_24


@functools.lru_cache(maxsize=256)
def _owners(variant: Variant, dealer: int) -> tuple[int, ...]:
    """The seat (-1: the widow) that gets each position of the deck order."""
    return tuple(seat for seat, size in deal_pattern(variant, dealer) for _ in range(size))


def deal_pattern(variant: Variant, dealer: int) -> list[tuple[int, int]]:
    """The fixed deal order as (seat, count) batches; seat -1 is the widow (F3.2).

    F3.1: 3-2-3 from the dealer's left (the trump decision after the first round). F4.1:
    3-3 to the dealer's partner, left, right, then the dealer (the last card, the cut
    card, is the dealer's and sets trumps). F4.2: 3-2-3 from the dealer's left (the last
    card, the dealer's, is turned for trumps). F4.3: 3-3 from the dealer's left. F3.2: 3
    each from the dealer's left, the 3-card widow, then 4 each.
    """
    n = variant.players
    left = [(dealer + k) % n for k in range(1, n + 1)]
    form = variant.form
    if form == "pagat" and n == 4:
        seats = [(dealer + 2) % 4, (dealer + 1) % 4, (dealer + 3) % 4, dealer]
        return [(s, 3) for s in seats] * 2
    if form in ("pagat", "kreuzmariage"):
        return [(s, size) for size in (3, 2, 3) for s in left]
    if form == "cutthroat":
        return [(s, 3) for s in left] + [(-1, 3)] + [(s, 4) for s in left]
    return [(s, 3) for s in left] * 2


@functools.lru_cache(maxsize=64)
def _constants(variant: Variant) -> tuple:
    """What a variant fixes for every deal: form code, sides, marriage and claim rules."""
    n = variant.players
    form = _FORMS[variant.form]
    return (
        form,
        variant.teams,
        form != PAGAT or n == 3,  # a marriage's K or Q must be led (F4.1 only shows it)
        form != KREUZ or variant.marriages,
        form == PAGAT and n == 4,  # F4.1: partner's meld, claims, the last-trick phase
        tuple((x + 1) % n for x in range(n)),
    )


def _blank(variant: Variant, dealer: int, score: Sequence, carry: int, deal_no: int) -> TableState:
    n = variant.players
    if type(dealer) is not int or not 0 <= dealer < n:
        raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
    form, teams, lead_married, may_marry, may_claim, nxt = _constants(variant)
    if len(score) != teams:
        raise ValueError(f"score must have one entry per side ({teams}), got {score!r}")
    st = object.__new__(TableState)
    st.variant = variant
    st.form = form
    st.players = n
    st.teams = teams
    st.seed = None
    st.dealer = dealer
    st.score = tuple(score)
    st.carry = carry
    st.deal_no = deal_no
    st.order = ()
    st.hand = [0] * n
    st.trump = st.turn_card = st.turn_owner = st.widow_taken = st.bidder = st.marriage_suit = -1
    st.win_seat = st.win_card = -1
    st.widow = st.bid = st.trick_pts = st.n_tricks = 0
    st.leader = st.to_act = (dealer + 1) % n
    st.trick = []
    st.active = None
    st.nxt = nxt
    st.n_active = n
    st.bids = [-1] * n
    st.melded = [0] * n
    st.lead_married = lead_married
    st.may_marry = may_marry
    st.may_claim = may_claim
    st.relaxed = n == 4 and not variant.head_partner  # M3: no need to beat the partner
    st.under_free = variant.undertrump == "free"
    st.tricks = [0] * n
    st.points = [0] * n
    st.melds = [0] * teams
    st.trick_log = []
    st.events = []
    st.history = []
    st.result = None
    return st


def _deal(st: TableState, order: Sequence[int]) -> TableState:
    """Place the cards of ``order`` by the form's deal pattern and open the first phase."""
    v = st.variant
    st.order = tuple(order)
    owners = _owners(v, st.dealer)
    fh = (st.dealer + 1) % st.players
    dealt = len(order)
    if v.form == "pagat" and st.players == 3:
        dealt = 9  # the rest waits for the trump decision
        st.phase = NAMING
    elif v.form in ("bidding", "cutthroat"):
        st.phase = BIDDING
    else:
        st.phase = LEAD
    hand = st.hand
    widow = 0
    for i in range(dealt):
        seat = owners[i]
        if seat < 0:
            widow |= 1 << order[i]
        else:
            hand[seat] |= 1 << order[i]
    st.widow = widow
    if v.form in ("kreuzmariage",) or v.form == "pagat" and st.players == 4:
        st.turn_card = order[-1]
        st.turn_owner = st.dealer
        st.trump = SUIT_OF[order[-1]]
        st.events.append(("trump", st.dealer, st.trump, False))
    st.leader = st.to_act = fh
    return st


def new_table_deal(
    variant: Variant | str,
    seed: int = 0,
    dealer: int = 0,
    *,
    score: Sequence | None = None,
    carry: int = 0,
    deal_no: int = 0,
) -> TableState:
    """Shuffle the variant's pack from ``seed`` and deal it by `deal_pattern`."""
    variant = get_variant(variant)
    if type(seed) is not int or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    st = _blank(variant, dealer, score if score is not None else (0,) * variant.teams, carry, deal_no)
    _deal(st, deck_order(table_pack(variant), seed))
    st.seed = seed
    return st


def table_from_cards(
    variant: Variant | str,
    hands: Sequence[Sequence[int | str]],
    widow: Sequence[int | str] = (),
    dealer: int = 0,
    *,
    score: Sequence | None = None,
    trump: str | None = None,
    leader: int | None = None,
    tricks: Sequence[int] | None = None,
    points: Sequence[int] | None = None,
    contract: tuple[int, int] | None = None,
) -> TableState:
    """A deal from an explicit placement: each seat's cards in the order it is dealt them.

    The cards are laid into a deck order by `deal_pattern`, so the deal is exactly what
    `new_table_deal` makes of that order: F3.1's first three cards of the dealer's left
    are what it sees before naming trumps (and its fourth is turned up if it passes);
    F4.1's and F4.2's dealer's last card is the trump card. ``widow`` is F3.2's widow.

    With ``trump`` (a suit letter) it is an endgame instead: hands of any equal size, the
    ``leader`` on lead, and optionally the ``tricks`` and card ``points`` each seat has
    won and the ``contract`` (bidder, bid) of a bidding form. Cards in no hand count as
    played.
    """
    variant = get_variant(variant)
    pack = table_pack(variant)
    n = variant.players
    if len(hands) != n:
        raise ValueError(f"hands: expected {n} hands, got {len(hands)}")
    seen: dict[int, str] = {}
    lists: dict[int, list[int]] = {}
    for seat, h in [*enumerate(hands), (-1, widow)]:
        where = f"hands[{seat}]" if seat >= 0 else "widow"
        ids = []
        for x in h:
            try:
                c = parse_card(x) if isinstance(x, str) else x
            except CardError as e:
                raise CardError(f"{where}: {e}") from None
            if type(c) is not int or c not in pack:
                raise CardError(f"{where}: card {x!r} is not in this variant's pack")
            if c in seen:
                raise CardError(f"{where}: card {card_str(c)} appears twice (also in {seen[c]})")
            seen[c] = where
            ids.append(c)
        lists[seat] = ids
    if trump is not None:
        return _endgame(variant, lists, dealer, score, trump, leader, tricks, points, contract)
    want_widow = 3 if variant.form == "cutthroat" else 0
    if len(lists[-1]) != want_widow:
        raise ValueError(f"widow: expected {want_widow} cards, got {len(lists[-1])}")
    if any(len(lists[s]) != variant.hand_size for s in range(n)):
        raise ValueError(f"hands: every hand must hold {variant.hand_size} cards")
    st = _blank(variant, dealer, score if score is not None else (0,) * variant.teams, 0, 0)
    order: list[int] = []
    taken = dict.fromkeys(lists, 0)
    for seat, size in deal_pattern(variant, dealer):
        order += lists[seat][taken[seat] : taken[seat] + size]
        taken[seat] += size
    return _deal(st, order)


def _endgame(
    variant: Variant,
    lists: dict[int, list[int]],
    dealer: int,
    score: Sequence | None,
    trump: str,
    leader: int | None,
    tricks: Sequence[int] | None,
    points: Sequence[int] | None,
    contract: tuple[int, int] | None,
) -> TableState:
    n = variant.players
    sizes = {len(lists[s]) for s in range(n)}
    if len(sizes) != 1 or not 1 <= min(sizes) <= variant.hand_size:
        raise ValueError(f"hands: every hand must hold the same number of cards, 1..{variant.hand_size}")
    if trump not in ("C", "D", "H", "S"):
        raise ValueError(f"trump: a suit letter C, D, H or S, got {trump!r}")
    st = _blank(variant, dealer, score if score is not None else (0,) * variant.teams, 0, 0)
    for seat in range(n):
        for c in lists[seat]:
            st.hand[seat] |= 1 << c
    st.trump = "CDHS".index(trump)
    st.phase = LEAD
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
    if contract is not None:
        st.bidder, st.bid = contract
        if st.bid == MOON:
            st.active = tuple(x for x in range(n) if x != (st.bidder ^ 2))
            st.n_active = 3
            st.nxt = tuple(st._next_seat(x) for x in range(n))
    return st
