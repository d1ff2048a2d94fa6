"""Variants as data: presets, validation and the one-line errors."""

from __future__ import annotations

import dataclasses

import pytest

from arena.game import PRESETS, SCHNAPSEN, SIXTY_SIX, Variant, VariantError, get_variant
from arena.game.variant import FLAG_VALUES


def test_presets_hold_the_defaults_of_rules_section_5():
    assert SIXTY_SIX.deck == 24 and SIXTY_SIX.hand_size == 6 and SIXTY_SIX.exchange_rank == "9"
    assert SIXTY_SIX.close_score_basis == "end" and SIXTY_SIX.exhausted_rule == "higher_total"
    assert SCHNAPSEN.deck == 20 and SCHNAPSEN.hand_size == 5 and SCHNAPSEN.exchange_rank == "J"
    assert SCHNAPSEN.exchange_needs_trick is False and SCHNAPSEN.close_before_draw is False
    assert SCHNAPSEN.marriage_after_close is True and SCHNAPSEN.close_score_basis == "at_close"
    assert SCHNAPSEN.exhausted_rule == "last_trick_wins"
    # Every flag of the register has both presets' values in its allowed set.
    for flag in FLAG_VALUES:
        for v in PRESETS.values():
            assert getattr(v, flag) in FLAG_VALUES[flag]


def test_variant_is_frozen_and_hashable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SIXTY_SIX.target = 11  # type: ignore[misc]
    assert {SIXTY_SIX: 1}[get_variant("sixty-six")] == 1


def test_from_dict_overrides_a_base_and_names_it():
    v = Variant.from_dict({"base": "schnapsen", "close_min_talon": 4})
    assert v.close_min_talon == 4 and v.deck == 20 and v.name == "schnapsen+custom"
    assert Variant.from_dict({"base": "schnapsen"}) == SCHNAPSEN
    assert Variant.from_dict({"target": 11, "name": "santase-ish"}).name == "santase-ish"
    assert Variant.from_dict(SIXTY_SIX.to_dict()) == SIXTY_SIX  # round trip


@pytest.mark.parametrize(
    "data, message",
    [
        ({"colour": "red"}, "unknown variant flag 'colour'"),
        ({"exchange_min_talon": 3}, "variant flag 'exchange_min_talon' must be one of 2, 4; got 3"),
        ({"auto_out": "yes"}, "variant flag 'auto_out' must be one of false, true; got 'yes'"),
        ({"auto_out": 1}, "variant flag 'auto_out'"),
        ({"close_min_talon": True}, "variant flag 'close_min_talon'"),
        ({"target": 0}, "variant flag 'target' must be a whole number 1..99"),
        ({"players": 3}, "variant flag 'players' must be one of 2"),
        ({"base": "skat"}, "unknown variant 'skat'; presets: sixty-six, schnapsen"),
        ({"base": "schnapsen", "exchange_rank": "9"}, "a 20-card deck has no nines"),
    ],
)
def test_bad_variants_are_one_line_errors_naming_the_flag(data, message):
    with pytest.raises(VariantError) as e:
        Variant.from_dict(data)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_with_flags_validates():
    assert SIXTY_SIX.with_flags(target=11).target == 11
    with pytest.raises(VariantError, match="unknown variant flag 'trump_colour'"):
        SIXTY_SIX.with_flags(trump_colour="red")


# -- the three- and four-handed presets (RULES.md sections 3, 4 and 7) ------------------------
def test_table_presets_hold_the_section_7_defaults():
    from arena.game import ALL_PRESETS, TABLE_PRESETS

    assert list(ALL_PRESETS)[:2] == ["sixty-six", "schnapsen"] and set(PRESETS) == {"sixty-six", "schnapsen"}
    forms = {name: (v.form, v.players, v.deck, v.target) for name, v in TABLE_PRESETS.items()}
    assert forms == {
        "three-pagat": ("pagat", 3, 24, 7),
        "three-cutthroat": ("cutthroat", 3, 24, 15),
        "three-sitout": ("dealer_sits_out", 3, 24, 7),
        "four-pagat": ("pagat", 4, 24, 7),
        "kreuzmariage": ("kreuzmariage", 4, 32, 7),
        "four-bidding": ("bidding", 4, 24, 10),
    }
    k = TABLE_PRESETS["kreuzmariage"]
    assert k.marriages is False and k.ten_of_trumps is False and k.head_partner is True
    b = TABLE_PRESETS["four-bidding"]
    assert b.all_pass == "redeal" and b.moon == "all_tricks_5" and b.bidder_goes_out is True
    p = TABLE_PRESETS["three-pagat"]
    assert p.three_tie == "share" and p.undertrump == "required" and p.hand_size == 8
    assert TABLE_PRESETS["three-sitout"].play_on is True
    for v in ALL_PRESETS.values():
        assert Variant.from_dict(v.to_dict()) == v
        for flag in FLAG_VALUES:
            assert getattr(v, flag) in FLAG_VALUES[flag]


def test_two_handed_wire_form_is_unchanged_by_the_table_flags():
    assert "form" not in SIXTY_SIX.to_dict() and "undertrump" not in SCHNAPSEN.to_dict()
    assert get_variant("four-bidding").to_dict()["moon"] == "all_tricks_5"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"base": "three-pagat", "players": 2}, "variant flag 'players' must be one of 3, 4 for form 'pagat'"),
        ({"base": "kreuzmariage", "deck": 24}, "variant flag 'deck' must be one of 32 for form 'kreuzmariage'"),
        ({"base": "kreuzmariage", "head_partner": False}, "variant flag 'head_partner' must be true"),
        ({"base": "four-bidding", "moon": "sometimes"}, "variant flag 'moon' must be one of 'all_tricks_5', 'none'"),
        ({"form": "bridge"}, "variant flag 'form' must be one of"),
        ({"base": "four-bidding", "target": 0}, "variant flag 'target' must be a whole number 1..99"),
    ],
)
def test_bad_table_variants_are_one_line_errors_naming_the_flag(data, message):
    with pytest.raises(VariantError) as e:
        Variant.from_dict(data)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_sitout_form_plays_its_deals_with_a_two_handed_variant():
    v = get_variant("three-sitout")
    h = v.hand_variant
    assert h.players == 2 and h.form == "two_handed" and h.deck == 24 and h is v.hand_variant
    assert get_variant("sixty-six").hand_variant is SIXTY_SIX and v.is_table is False
