"""What one seat may know: its information set as a JSON-ready dict.

`observation(state, seat)` is the only way the engine shows a state to a player. It holds
the seat's own hand and everything public (RULES.md F1.21), remembered perfectly: every
trick, marriage, exchange and close, the card points and tricks that follow from them,
and the cards of the other hand that have been shown (a marriage's partner card, a
turn-up taken by exchange or by the last draw). It also states two counts every
searching agent would otherwise derive: each hand's size, and how many face-down talon
cards a close has put out of play (their number only: which cards they are stays
hidden, among the cards the seat has not seen). It never holds the other hand's unseen
cards, the identity or order of the face-down talon, or the seed. The protocol sends
this dict as it is; `protocol/SPEC.md` documents every field.
"""

from __future__ import annotations

from typing import Any

from .cards import KING, QUEEN, SUITS, card_str, cards_str
from .state import PHASES, State
from .table import TableState
from .table_observation import table_observation


def observation(state: State | TableState, seat: int) -> dict[str, Any]:
    """The information set of ``seat`` in ``state`` (valid in any phase, also when over).
    Three- and four-handed deals: see `arena.game.table_observation`."""
    if type(seat) is not int or not 0 <= seat < state.players:
        raise ValueError(f"seat must be 0..{state.players - 1}, got {seat!r}")
    if type(state) is TableState:
        return table_observation(state, seat)
    n = state.players
    tricks = [
        {"leader": lead, "cards": [card_str(lc), card_str(fc)], "winner": w} for lead, lc, fc, w in state.trick_log
    ]
    marriages = []
    exchanges = []
    close = None
    shown = [0] * n  # cards each seat is known to hold or to have held
    for ev in state.events:
        kind, who = ev[0], ev[1]
        if kind == "marriage":
            _, _, suit, pts, at = ev
            marriages.append({"seat": who, "suit": SUITS[suit], "points": pts, "trick": at})
            shown[who] |= (1 << (suit * 6 + KING)) | (1 << (suit * 6 + QUEEN))
        elif kind == "exchange":
            _, _, gave, took, at = ev
            exchanges.append({"seat": who, "gave": card_str(gave), "took": card_str(took), "trick": at})
            shown[who] |= 1 << took
        elif kind == "turn_up_drawn":
            shown[who] |= 1 << ev[2]
        elif kind == "close":
            _, _, at, before_draw = ev
            close = {"seat": who, "trick": at, "before_draw": before_draw}
    # A marriage is credited once its declarer has a trick (F1.10).
    for m in marriages:
        m["credited"] = state.tricks[m["seat"]] > 0
    current = None
    if state.lead_card >= 0:
        current = {"leader": state.leader, "card": card_str(state.lead_card)}
    known = [cards_str(shown[s] & state.hand[s]) if s != seat else [] for s in range(n)]
    obs: dict[str, Any] = {
        "seat": seat,
        "to_act": state.to_act if state.to_act >= 0 else None,
        "phase": PHASES[state.phase],
        "variant": state.variant.name,
        "hand": cards_str(state.hand[seat]),
        "trump": SUITS[state.trump],
        "turn_up": card_str(state.turn_up) if state.turn_up >= 0 else None,
        "talon_size": state.talon_size(),
        "closed": close,
        # Public counts: cards never leave a hand unseen, and a closed talon is never drawn.
        "hand_sizes": [state.hand[s].bit_count() for s in range(n)],
        "out_of_play": len(state.stock) - state.stock_pos if close is not None else 0,
        "dealer": state.dealer,
        "leader": state.leader,
        "current_trick": current,
        "marriage_lead": SUITS[state.marriage_suit] if state.marriage_suit >= 0 else None,
        "tricks": tricks,
        "marriages": marriages,
        "exchanges": exchanges,
        "known_cards": known,
        "points": [state.count(s) for s in range(n)],
        "pending": list(state.mpending),
        "trick_counts": list(state.tricks),
        "score": list(state.score),
        "carry": state.carry,
        "deal": state.deal_no,
        "result": state.result.to_dict() if state.result is not None else None,
    }
    return obs
