"""Card and action text forms, and the errors for malformed ones."""

from __future__ import annotations

import pytest

from arena.game import (
    PASS,
    ActionError,
    CardError,
    action_str,
    card_str,
    deal_from_cards,
    parse_action,
    parse_card,
)
from arena.game.cards import cards_of, mask_of


def test_every_card_round_trips():
    names = [card_str(c) for c in range(24)]
    assert names[:6] == ["AC", "TC", "KC", "QC", "JC", "9C"] and names[-1] == "9S"
    assert all(parse_card(n) == c for c, n in enumerate(names))
    assert cards_of(mask_of([23, 0, 7])) == (0, 7, 23)


def test_every_action_round_trips():
    strings = [action_str(a) for a in range(PASS + 1)]
    assert strings[14] == "play:KH" and strings[24:] == [
        "marry:C", "marry:D", "marry:H", "marry:S", "exchange", "close", "declare", "draw", "pass",
    ]  # fmt: skip
    assert [parse_action(s) for s in strings] == list(range(PASS + 1))


@pytest.mark.parametrize("text", ["1H", "AX", "ah", "", "A", "AHH", None, 5])
def test_malformed_cards(text):
    with pytest.raises(CardError, match="malformed card"):
        parse_card(text)


@pytest.mark.parametrize(
    "text, message",
    [
        ("play:1H", "malformed action 'play:1H': malformed card '1H'"),
        ("marry:X", "malformed action 'marry:X': malformed suit 'X'"),
        ("marry:KH", "malformed suit 'KH'"),
        ("Play:AH", "expected play:<card>, marry:<suit>"),
        ("fold", "malformed action 'fold'"),
        ("", "malformed action ''"),
        (None, "malformed action None: expected a string"),
    ],
)
def test_malformed_actions(text, message):
    with pytest.raises(ActionError) as e:
        parse_action(text)
    assert message in str(e.value)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(hands=[["AH"], ["AH"]], turn_up=None, trump="S"), "card AH appears twice"),
        (
            dict(hands=[["9H"], ["AH"]], turn_up=None, trump="S", variant="schnapsen"),
            "not in this variant's pack",
        ),
        (dict(hands=[["XX"], ["AH"]], turn_up=None, trump="S"), "hands[0]: malformed card 'XX'"),
        (dict(hands=[["AH"], ["KH", "QH"]], turn_up=None, trump="S"), "same number of cards"),
        (dict(hands=[["AH"], ["KH"]], turn_up=None), "trump: a suit letter"),
        (dict(hands=[["AH"], ["KH"]], turn_up="QH"), "hands must be full"),
        (dict(hands=[["AH"], ["KH"]], turn_up=None, trump="S", talon=["QH"]), "talon must be empty"),
        (dict(hands=[["AH"], ["KH"]], turn_up=None, trump="S", leader=2), "leader must be a seat 0..1"),
    ],
)
def test_bad_explicit_deals(kwargs, message):
    variant = kwargs.pop("variant", "sixty-six")
    with pytest.raises(ValueError) as e:
        deal_from_cards(variant, **kwargs)
    assert message in str(e.value)


def test_apply_action_rejects_non_actions_and_leaves_state():
    st = deal_from_cards("sixty-six", [["AH"], ["KH"]], None, trump="S")
    before = st.clone()
    for bad in (3.0, None, True, -1, 99):
        with pytest.raises(ValueError):
            st.apply_action(bad)
    assert st == before
