"""Cards as small ints, hands as bitmasks, and their two-character text form.

A card is ``suit * 6 + rank`` with suits ``C D H S`` (0..3) and ranks ``A T K Q J 9``
(0..5, strongest first), so within a suit a lower bit is a stronger card: the highest
card of a suit in a hand is its lowest set bit (``m & -m``). A set of cards is an int
with bit ``card`` set. The text form is rank then suit: ``"TH"`` is the ten of hearts.

The 32-card pack of Kreuzmariage (RULES.md F4.2) adds the 8 and the 7 of each suit at
ids ``24 + 2*suit`` and ``25 + 2*suit``: ids 0..23 keep their meaning, and within a suit
a lower bit is still a stronger card (A T K Q J 9 8 7). The ``*32`` tables below cover
that pack; the 24-card tables and functions are unchanged.

Everything here is a constant or a pure function; nothing reads a clock or a file.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "CDHS"
RANKS = "ATKQJ9"
#: Card points by rank index: A 11, 10 10, K 4, Q 3, J 2, 9 0 (120 in a 24-card pack).
RANK_POINTS = (11, 10, 4, 3, 2, 0)
ACE, TEN, KING, QUEEN, JACK, NINE = range(6)

N_CARDS = 24
ALL_CARDS = (1 << N_CARDS) - 1
#: Bitmask of each suit's six cards.
SUIT_MASK = tuple(0b111111 << (6 * s) for s in range(4))
#: Card points of each card id.
POINTS = tuple(RANK_POINTS[c % 6] for c in range(N_CARDS))
#: Bitmask of all nines (absent from the 20-card Schnapsen pack).
NINES = sum(1 << (s * 6 + NINE) for s in range(4))
#: Bit ``6 * s`` of ``(h >> KING) & (h >> QUEEN) & MARRIAGE_BITS`` is set when hand ``h``
#: holds both the king and the queen of suit ``s`` (a marriage).
MARRIAGE_BITS = sum(1 << (s * 6) for s in range(4))


class CardError(ValueError):
    """A card string or card set that is malformed or not in the pack being used."""


def card(rank: int, suit: int) -> int:
    """The card id of a rank index and a suit index."""
    return suit * 6 + rank


def suit_of(c: int) -> int:
    return c // 6


def rank_of(c: int) -> int:
    return c % 6


_NAMES = tuple(RANKS[c % 6] + SUITS[c // 6] for c in range(N_CARDS)) + tuple(
    "87"[c & 1] + SUITS[(c - 24) // 2] for c in range(24, 32)
)
_IDS = {name: i for i, name in enumerate(_NAMES)}


def card_str(c: int) -> str:
    """The wire form of a card id: ``card_str(14) == "KH"``."""
    return _NAMES[c]


def parse_card(text: str) -> int:
    """Parse a two-character card such as ``"TH"``; raise `CardError` naming the input."""
    try:
        return _IDS[text]
    except (KeyError, TypeError):
        raise CardError(
            f"malformed card {text!r}: expected rank {'/'.join(RANKS)} (or 8/7 in a 32-card pack) then suit "
            f"{'/'.join(SUITS)}, e.g. 'TH' for the ten of hearts"
        ) from None


def parse_suit(text: str) -> int:
    """Parse a one-letter suit (``C D H S``); raise `CardError` naming the input."""
    if isinstance(text, str) and len(text) == 1 and text in SUITS:
        return SUITS.index(text)
    raise CardError(f"malformed suit {text!r}: expected one of C, D, H, S")


#: The 32-card pack: 8s and 7s (0 points each) after the 24 cards.
N_CARDS_32 = 32
ALL_CARDS_32 = (1 << N_CARDS_32) - 1
SUIT_MASK_32 = tuple(SUIT_MASK[s] | (3 << (24 + 2 * s)) for s in range(4))
POINTS_32 = POINTS + (0,) * 8
#: Suit of each card id of the 32-card pack.
SUIT_OF = tuple(c // 6 for c in range(24)) + tuple((c - 24) // 2 for c in range(24, 32))
EIGHT_SEVENS = ALL_CARDS_32 ^ ALL_CARDS


def _table(shift: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(shift + r for r in range(6) if m >> r & 1) for m in range(64))


_SUIT_TABLES = tuple(_table(6 * s) for s in range(4))
_T0, _T1, _T2, _T3 = _SUIT_TABLES


def cards_of(mask: int) -> tuple[int, ...]:
    """The card ids in a bitmask, ascending (clubs first, strongest first in a suit)."""
    return _T0[mask & 63] + _T1[mask >> 6 & 63] + _T2[mask >> 12 & 63] + _T3[mask >> 18 & 63]


_HIGH = tuple(tuple(24 + b for b in range(8) if m >> b & 1) for m in range(256))


def cards_of_32(mask: int) -> tuple[int, ...]:
    """The card ids in a bitmask of the 32-card pack, ascending (the 8s and 7s last)."""
    return _T0[mask & 63] + _T1[mask >> 6 & 63] + _T2[mask >> 12 & 63] + _T3[mask >> 18 & 63] + _HIGH[mask >> 24]


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def mask_points(mask: int) -> int:
    """Card points of every card in a bitmask."""
    return sum(POINTS[c] for c in cards_of(mask & ALL_CARDS))


def cards_str(mask: int) -> list[str]:
    """The wire form of every card in a bitmask, in card-id order."""
    return [_NAMES[c] for c in (cards_of(mask) if mask <= ALL_CARDS else cards_of_32(mask))]
