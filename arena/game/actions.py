"""Actions: small ints inside the engine, short strings on the wire.

Action grammar (version 1). Every action is one ASCII string; compare them as strings.

    action   = play / marry / "exchange" / "close" / "declare" / "draw" / "pass"
    play     = "play:" card        ; lead or follow with this card, e.g. "play:TH"
    marry    = "marry:" suit       ; show the K and Q of this suit (20, or 40 in trumps)
    card     = rank suit           ; rank one of A T K Q J 9, suit one of C D H S
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

The legal list the referee sends is sorted in the order of the int ids below: plays by
card id (clubs, diamonds, hearts, spades; A T K Q J 9 within a suit), then marriages
C D H S, then exchange, close, declare, draw, pass.
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
N_ACTIONS = 33

_WORDS = {EXCHANGE: "exchange", CLOSE: "close", DECLARE: "declare", DRAW: "draw", PASS: "pass"}
_WORD_IDS = {w: a for a, w in _WORDS.items()}
_STRINGS = tuple(
    f"play:{card_str(a)}" if a < MARRY else f"marry:{SUITS[a - MARRY]}" if a < EXCHANGE else _WORDS[a]
    for a in range(N_ACTIONS)
)
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
        elif sep and kind == "marry":
            parse_suit(arg)
        else:
            raise ActionError(
                f"malformed action {text!r}: expected play:<card>, marry:<suit>, exchange, close, declare, draw or pass"
            )
    except CardError as e:
        raise ActionError(f"malformed action {text!r}: {e}") from None
    raise AssertionError("unreachable")  # pragma: no cover - every valid string is in the table


def is_play(action: int) -> bool:
    return action < MARRY
