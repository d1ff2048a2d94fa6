"""What one seat of a three- or four-handed deal may know: its information set as a dict.

The seat's own hand and everything public, remembered perfectly: the seats, teams and
partner; the bids and the contract; how trumps were set and the trump card while it is
in its owner's hand (F3.1's turned card, F4.1's cut card, F4.2's turn-up); every trick
with each card and who played it; the marriages (the shown card left in hand stays
known); the widow once the first trick has taken it (F3.2); each side's points and
tricks, which follow from the tricks; the match score. Never the other hands' unseen
cards, the undealt cards of F3.1's trump decision, the widow before it is taken, or
the seed.
"""

from __future__ import annotations

from typing import Any

from .cards import KING, QUEEN, SUITS, card_str, cards_str
from .table import TABLE_PHASES, TableState


def table_observation(state: TableState, seat: int) -> dict[str, Any]:
    """The information set of ``seat`` in a `TableState` (any phase, also when over)."""
    n = state.players
    shown = [0] * n
    marriages = []
    bids = []
    trump_by = None
    for ev in state.events:
        kind = ev[0]
        if kind == "marriage":
            _, who, suit, pts, at = ev
            team = state.team_of(who)
            marriages.append(
                {"seat": who, "suit": SUITS[suit], "points": pts, "trick": at,
                 "credited": state.team_tricks(team) > 0}
            )  # fmt: skip
            shown[who] |= (1 << (suit * 6 + KING)) | (1 << (suit * 6 + QUEEN))
        elif kind == "bid":
            bids.append({"seat": ev[1], "bid": ev[2] or None})
        elif kind == "trump":
            trump_by = {"seat": ev[1], "named": ev[3]}
    if state.turn_card >= 0:
        shown[state.turn_owner] |= 1 << state.turn_card
    tricks = [
        {"leader": lead, "cards": [[s, card_str(c)] for s, c in cards], "winner": w}
        for lead, cards, w in state.trick_log
    ]
    current = None
    if state.trick:
        current = {
            "leader": state.trick[0][0],
            "cards": [[s, card_str(c)] for s, c in state.trick],
            "winning": state.win_seat,
        }
    turn = None
    if state.turn_owner >= 0:
        turn = {"seat": state.turn_owner, "card": card_str(state.turn_card)}
    known = [cards_str(shown[s] & state.hand[s]) if s != seat else [] for s in range(n)]
    four = n == 4
    return {
        "seat": seat,
        "to_act": state.to_act if state.to_act >= 0 else None,
        "phase": TABLE_PHASES[state.phase],
        "variant": state.variant.name,
        "players": n,
        "team": state.team_of(seat),
        "teams": [state.team_of(s) for s in range(n)],
        "partner": seat ^ 2 if four else None,
        "dealer": state.dealer,
        "leader": state.leader,
        "hand": cards_str(state.hand[seat]),
        "hand_sizes": [state.hand[s].bit_count() for s in range(n)],
        "trump": SUITS[state.trump] if state.trump >= 0 else None,
        "trump_set_by": trump_by,
        "turn_card": turn,
        "bids": bids,
        "bidder": state.bidder if state.bidder >= 0 else None,
        "bid": state.bid,
        "sitting_out": next((s for s in range(n) if s not in state.active), None) if state.active else None,
        "current_trick": current,
        "marriage_lead": SUITS[state.marriage_suit] if state.marriage_suit >= 0 else None,
        "tricks": tricks,
        "marriages": marriages,
        "known_cards": known,
        "widow": cards_str(state.widow) if state.widow_taken >= 0 else None,
        "widow_taken": state.widow_taken if state.widow_taken >= 0 else None,
        "points": [state.count(t) for t in range(state.teams)],
        "trick_counts": list(state.tricks),
        "score": list(state.score),
        "carry": state.carry,
        "deal": state.deal_no,
        "result": state.result.to_dict() if state.result is not None else None,
    }
