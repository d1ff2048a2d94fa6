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
