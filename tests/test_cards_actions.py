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


# -- the 32-card pack and the actions of the three- and four-handed forms ----------------------
def test_the_32_card_pack_keeps_ids_0_to_23_and_puts_8s_and_7s_after_them():
    from arena.game.cards import POINTS_32, SUIT_MASK_32, SUIT_OF, cards_of_32

    names = [card_str(c) for c in range(32)]
    assert names[:24] == [card_str(c) for c in range(24)]
    assert names[24:] == ["8C", "7C", "8D", "7D", "8H", "7H", "8S", "7S"]
    assert all(parse_card(n) == c for c, n in enumerate(names))
    assert sum(POINTS_32) == 120 and POINTS_32[24:] == (0,) * 8
    for s in range(4):
        ids = list(cards_of_32(SUIT_MASK_32[s]))
        assert [card_str(c)[0] for c in ids] == list("ATKQJ987")  # a lower id is a stronger card
        assert ids == sorted(ids) and all(SUIT_OF[c] == s for c in ids)


def test_every_table_action_round_trips_and_keeps_the_two_handed_ids():
    from arena.game.actions import BID, N_ACTIONS, TRUMP, play_action, play_card

    strings = [action_str(a) for a in range(N_ACTIONS)]
    assert strings[:33] == [action_str(a) for a in range(PASS + 1)]
    assert strings[33:41] == ["play:8C", "play:7C", "play:8D", "play:7D", "play:8H", "play:7H", "play:8S", "play:7S"]
    assert strings[BID : BID + 5] == ["bid:1", "bid:2", "bid:3", "bid:4", "bid:5"]
    assert strings[TRUMP:] == ["trump:C", "trump:D", "trump:H", "trump:S"]
    assert [parse_action(s) for s in strings] == list(range(N_ACTIONS))
    assert all(play_card(play_action(c)) == c for c in range(32)) and play_card(BID) == -1


@pytest.mark.parametrize(
    "text, message",
    [("bid:6", "a bid is 1, 2, 3, 4 or 5"), ("trump:X", "malformed suit 'X'"), ("play:6C", "malformed card")],
)
def test_malformed_table_actions(text, message):
    with pytest.raises(ActionError) as e:
        parse_action(text)
    assert message in str(e.value)


@pytest.mark.parametrize(
    "variant, hands, kwargs, message",
    [
        ("three-pagat", [["AH"], ["KH"], ["QH"]], {}, "every hand must hold 8 cards"),
        ("kreuzmariage", [["AH"], ["KH"], ["QH"], ["AH"]], {"trump": "S"}, "card AH appears twice"),
        ("four-pagat", [["8H"], ["KH"], ["QH"], ["AH"]], {"trump": "S"}, "not in this variant's pack"),
        ("three-cutthroat", [["AH"], ["KH"], ["QH"]], {"turn_up": "9H"}, "has no turn-up"),
    ],
)
def test_bad_table_deals(variant, hands, kwargs, message):
    turn_up = kwargs.pop("turn_up", None)
    with pytest.raises(ValueError) as e:
        deal_from_cards(variant, hands, turn_up, **kwargs)
    assert message in str(e.value)
