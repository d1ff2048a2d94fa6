"""Actions: small ints inside the engine, short strings on the wire.

Action grammar (version 1). Every action is one ASCII string; compare them as strings.

    action   = play / marry / bid / name / "exchange" / "close" / "declare" / "draw" / "pass"
    play     = "play:" card        ; lead or follow with this card, e.g. "play:TH"
    marry    = "marry:" suit       ; show the K and Q of this suit (20, or 40 in trumps)
    bid      = "bid:" ("1" / "2" / "3" / "4" / "5")   ; 33, 66, 99, 132 points; 5 = moon
    name     = "trump:" suit       ; name the trump suit (three-handed pagat, F3.1)
    card     = rank suit           ; rank one of A T K Q J 9 (8 7 in a 32-card pack), suit one of C D H S
    suit     = "C" / "D" / "H" / "S"

Meaning, for the seat to act:

- ``play:XY``  put card XY on the trick. As leader any card in hand (after ``marry:S``
  only the K or Q of S, or only the K under ``marriage_lead = king_only``); as follower
  any card while the talon is open, the follow/head/trump rules once it is closed or
  exhausted.
- ``marry:S``  declare the marriage in suit S before leading; at most one per lead. The
  points are pending until the declarer has won a trick. The lead must then be the K or
  Q of S (unless the declarer goes out first with ``declare``).
- ``exchange`` swap the trump exchange card (9 in Sixty-Six, J in Schnapsen) in hand for
  the turn-up. Comes before ``marry`` and ``close`` on the same lead.
- ``close``    close the talon: no more drawing, strict rules from the next card on.
- ``declare``  claim 66 ("out"). The deal ends at once: a true claim wins it, a false
  one loses it with the penalty of the variant.
- ``draw``     in Sixty-Six, the trick winner may close before drawing; ``draw`` declines
  and lets both players draw. Offered only when closing before the draw is legal.
- ``pass``     decline an offer that is not your turn to lead (the closer's opponent's
  exchange at the moment of closing, under ``exchange_on_close = opponent``).

In the three- and four-handed games (`arena.game.table`) the same words mean:

- ``bid:N``    bid N (one bid or pass each, higher than the last bid; 5 is the moon, a
  lone hand with the partner sitting out). ``pass`` declines to bid.
- ``trump:S``  name S as trumps (F3.1, the dealer's left after seeing three cards);
  ``pass`` lets the next card dealt to that seat set trumps.
- ``marry:S``  on lead, show a marriage (F3.1, F4.2 with marriages, F4.3: then lead its K
  or Q). In F4.1 the leader and then the leader's partner may each show one (the partner
  answers ``marry:S`` or ``pass``); no card of it need be led.
- ``declare``  F4.1: claim 66 for the team (on lead, or after the last trick); ``pass``
  after the last trick lets the hand be scored on points.

The legal list the referee sends is sorted in the order of the int ids below: plays by
card id (clubs, diamonds, hearts, spades; A T K Q J 9 within a suit), then marriages
C D H S, then exchange, close, declare, draw, pass; then (only in the 32-card pack) the
plays of 8s and 7s, then bids 1..5 and trump names C D H S.
"""

from __future__ import annotations

from .cards import SUITS, CardError, card_str, parse_card, parse_suit

#: Int ids. 0..23 are ``play:<card>`` with the card id; 24..27 ``marry:<suit>``.
MARRY = 24
EXCHANGE = 28
CLOSE = 29
DECLARE = 30
DRAW = 31
PASS = 32
#: 33..40 play the 8s and 7s (card ids 24..31, ``action = card + 9``).
PLAY_LOW = 33
#: 41..45 ``bid:1`` .. ``bid:5``.
BID = 41
MOON = 5
#: 46..49 ``trump:C`` .. ``trump:S``.
TRUMP = 46
N_ACTIONS = 50

_WORDS = {EXCHANGE: "exchange", CLOSE: "close", DECLARE: "declare", DRAW: "draw", PASS: "pass"}
_WORD_IDS = {w: a for a, w in _WORDS.items()}


def _string(a: int) -> str:
    if a < MARRY:
        return f"play:{card_str(a)}"
    if a < EXCHANGE:
        return f"marry:{SUITS[a - MARRY]}"
    if a <= PASS:
        return _WORDS[a]
    if a < BID:
        return f"play:{card_str(a - 9)}"
    if a < TRUMP:
        return f"bid:{a - BID + 1}"
    return f"trump:{SUITS[a - TRUMP]}"


_STRINGS = tuple(_string(a) for a in range(N_ACTIONS))
_STRING_IDS = {s: a for a, s in enumerate(_STRINGS)}


class ActionError(ValueError):
    """An action string that does not follow the grammar."""


def action_str(action: int) -> str:
    """The wire form of an action id: ``action_str(14) == "play:KH"``."""
    return _STRINGS[action]


def parse_action(text: str) -> int:
    """Parse an action string into its id; `ActionError` names the bad input and why."""
    a = _STRING_IDS.get(text) if isinstance(text, str) else None
    if a is not None:
        return a
    if not isinstance(text, str):
        raise ActionError(f"malformed action {text!r}: expected a string")
    kind, sep, arg = text.partition(":")
    try:
        if sep and kind == "play":
            parse_card(arg)
        elif sep and kind in ("marry", "trump"):
            parse_suit(arg)
        elif sep and kind == "bid":
            raise ActionError(f"malformed action {text!r}: a bid is 1, 2, 3, 4 or 5")
        else:
            raise ActionError(
                f"malformed action {text!r}: expected play:<card>, marry:<suit>, bid:<n>, trump:<suit>, "
                "exchange, close, declare, draw or pass"
            )
    except CardError as e:
        raise ActionError(f"malformed action {text!r}: {e}") from None
    raise AssertionError("unreachable")  # pragma: no cover - every valid string is in the table


def is_play(action: int) -> bool:
    """Whether the action plays a card (of the 24-card pack; `play_card` covers all 32)."""
    return action < MARRY


def play_action(c: int) -> int:
    """The action id that plays card ``c`` (ids 0..23 for the 24 cards, 33..40 for 8s and 7s)."""
    return c if c < MARRY else c + 9


def play_card(a: int) -> int:
    """The card a play action puts down, or -1 if the action is not a play."""
    if a < MARRY:
        return a
    if PLAY_LOW <= a < BID:
        return a - 9
    return -1
