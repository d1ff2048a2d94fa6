"""The two-handed flags of issue 16 (``closing``, ``forced_marriage``), each in both settings."""

from __future__ import annotations

import pytest
from helpers import do, legal, make

from arena.game import SIXTY_SIX, get_variant

H0 = "AH TH KH QH JH 9C"
H1 = "AC TC KC QC JC 9H"


def var(name: str = "sixty-six", **flags):
    return get_variant(name).with_flags(**flags)


@pytest.mark.parametrize("variant", ["sixty-six", "schnapsen"])
@pytest.mark.parametrize("closing", [True, False])
def test_closing_flag_allows_or_forbids_closing_for_both_sides(variant, closing):
    h0, h1 = ("AH TH KH QH JH", "AC TC KC QC JC") if variant == "schnapsen" else (H0, H1)
    st = make(h0, h1, "AS" if variant == "schnapsen" else "9S", var(variant, closing=closing))
    assert ("close" in legal(st)) is closing
    do(st, "play:JH play:AC")  # seat 1 wins and leads next
    if variant == "sixty-six":
        assert st.phase_name == ("draw" if closing else "lead")  # no close-before-draw decision
    assert ("close" in legal(st)) is closing


def test_closing_defaults_keep_todays_behaviour_and_wire_form():
    assert SIXTY_SIX.closing is True and SIXTY_SIX.forced_marriage is False
    assert "closing" not in SIXTY_SIX.to_dict() and "forced_marriage" not in SIXTY_SIX.to_dict()
    assert var(closing=False).to_dict()["closing"] is False


@pytest.mark.parametrize("forced", [False, True])
def test_forced_marriage_a_married_k_or_q_is_led_only_after_the_announcement(forced):
    st = make(H0, H1, "9S", var(forced_marriage=forced))
    plays = [a for a in legal(st) if a.startswith("play:")]
    assert ("play:KH" in plays) is not forced and ("play:QH" in plays) is not forced
    assert "play:AH" in plays and "marry:H" in legal(st)
    do(st, "marry:H")
    assert legal(st)[:2] == ["play:KH", "play:QH"]


@pytest.mark.parametrize("forced", [False, True])
def test_forced_marriage_does_not_bind_when_the_marriage_may_not_be_declared(forced):
    st = do(make(H0, H1, "9S", var(forced_marriage=forced)), "close")  # no marriage after closing
    assert "marry:H" not in legal(st) and "play:KH" in legal(st)
    st = make(H0, H1, "9S", var(forced_marriage=forced, marriage_needs_trick="to_declare"))
    assert "marry:H" not in legal(st) and "play:KH" in legal(st)
