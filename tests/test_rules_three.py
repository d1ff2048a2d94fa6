"""One test per fact of RULES.md F3.1-F3.3 and M2-M5, M9 (three-handed), on hand-built deals.

Hands are listed in the order each seat is dealt its cards (`deal_from_cards` lays them
into the deck order by the form's deal pattern); with ``trump=`` a deal is an endgame.
The dealer is seat 0 unless given, so seat 1 is the dealer's left.
"""

from __future__ import annotations

import pytest

from arena.game import DealResult, Match, deal_from_cards, get_variant, new_deal, observation, table_from_cards
from arena.game.cards import POINTS_32, parse_card
from arena.game.state import OVER


def tdeal(variant, *hands: str, widow: str = "", dealer: int = 0, **kw):
    v = get_variant(variant) if isinstance(variant, str) else variant
    return deal_from_cards(v, [h.split() for h in hands], None, widow.split(), dealer, **kw)


def do(st, actions: str):
    for a in actions.split():
        st.apply_action(a)
    return st


def legal(st) -> list[str]:
    return st.legal_action_strings()


P3 = "three-pagat"
# Dealer 0: seat 1 (the dealer's left) gets KD QD JD first, then 9D (turned on a pass).
PAGAT_HANDS = ("AC TC KC QC JC 9C AD TD", "KD QD JD 9D AH TH KH QH", "JH 9H AS TS KS QS JS 9S")


# -- F3.1 the deal and the trump decision ------------------------------------------------
def test_f3_1_dealers_left_sees_three_cards_and_may_name_trumps():
    st = tdeal(P3, *PAGAT_HANDS)
    assert st.phase_name == "name" and st.current_player() == 1
    assert legal(st) == ["pass", "trump:C", "trump:D", "trump:H", "trump:S"]
    obs = observation(st, 1)
    assert obs["hand"] == ["KD", "QD", "JD"] and obs["hand_sizes"] == [3, 3, 3] and obs["trump"] is None


def test_f3_1_named_trumps_then_eight_cards_each_no_talon_and_the_namer_leads():
    st = do(tdeal(P3, *PAGAT_HANDS), "trump:S")
    assert st.trump == 3 and [h.bit_count() for h in st.hand] == [8, 8, 8]
    assert st.phase_name == "lead" and st.current_player() == 1  # M2: the namer leads
    assert observation(st, 0)["trump_set_by"] == {"seat": 1, "named": True}


def test_f3_1_a_pass_turns_the_first_card_of_the_second_batch_for_trumps():
    st = do(tdeal(P3, *PAGAT_HANDS), "pass")
    assert "CDHS"[st.trump] == "D"
    obs = observation(st, 2)
    assert obs["turn_card"] == {"seat": 1, "card": "9D"} and obs["known_cards"][1] == ["9D"]
    do(st, "play:9D")  # once played it is no longer "known in hand"
    assert observation(st, 2)["known_cards"][1] == []


def test_f3_1_new_deal_gives_eight_each_from_the_seeded_order():
    st = new_deal(P3, 77, 2)
    assert st.current_player() == 0 and st.hand[0].bit_count() == 3
    do(st, "trump:H")
    assert [h.bit_count() for h in st.hand] == [8, 8, 8]
    assert st.hand[0] | st.hand[1] | st.hand[2] == (1 << 24) - 1


# -- M3 the follow rule --------------------------------------------------------------------
def end3(h0: str, h1: str, h2: str, trump: str = "S", tricks=None, points=None, **flags):
    v = get_variant(P3).with_flags(**flags) if flags else get_variant(P3)
    return deal_from_cards(
        v, [h0.split(), h1.split(), h2.split()], None, trump=trump, leader=0, tricks=tricks, points=points
    )


def test_m3_follow_suit_and_beat_the_winning_card_if_possible():
    st = do(end3("KH 9C", "AH 9H", "QH AS"), "play:KH")
    assert legal(st) == ["play:AH"]
    do(st, "play:AH")
    assert legal(st) == ["play:QH"]  # cannot beat the ace: any heart


def test_m3_void_must_trump_and_over_trump():
    st = do(end3("KH 9C", "AH 9H", "TS 9S"), "play:KH play:AH")
    assert legal(st) == ["play:TS", "play:9S"]  # untrumped: any trump
    st = do(end3("KH 9C", "JS JC", "TS AC"), "play:KH play:JS")
    assert legal(st) == ["play:TS"]  # over-trump


@pytest.mark.parametrize("undertrump, expected", [("required", ["play:9S"]), ("free", ["play:AC", "play:9S"])])
def test_m3_undertrump_flag(undertrump, expected):
    st = do(end3("KH 9C", "TS JC", "9S AC", undertrump=undertrump), "play:KH play:TS")
    assert legal(st) == expected


def test_m3_a_trumped_trick_lets_any_card_of_the_led_suit_follow():
    st = do(end3("KH 9C", "9S JC", "AH 9H"), "play:KH play:9S")
    assert legal(st) == ["play:AH", "play:9H"]


def test_m3_void_without_trumps_plays_anything():
    st = do(end3("KH 9C", "AC JC", "AD 9D"), "play:KH")
    assert legal(st) == ["play:AC", "play:JC"]


# -- F3.1 / M4 marriages, no going out, no last-trick bonus ----------------------------------
def test_f3_1_marriage_before_leading_a_card_of_it_one_per_lead():
    st = end3("KH QH KC QC", "AH 9H AD 9D", "JH TH JD TD")
    assert "marry:H" in legal(st) and "marry:C" in legal(st)
    do(st, "marry:H")
    assert legal(st) == ["play:KH", "play:QH"]
    assert observation(st, 1)["marriages"][0]["points"] == 20


def test_m4_marriage_counts_only_once_the_declarer_wins_a_trick():
    st = do(end3("KH QH 9C", "AH 9H AC", "JH TH AD", trump="C"), "marry:H play:KH play:AH play:TH")
    assert st.tricks[0] == 0 and st.count(0) == 0 and st.melds[0] == 20
    assert observation(st, 2)["marriages"][0]["credited"] is False
    assert observation(st, 2)["known_cards"][0] == ["QH"]  # the shown partner card


def test_f3_1_forty_in_trumps():
    st = do(end3("KH QH 9C", "AH 9H AC", "JH TH AD", trump="H"), "marry:H")
    assert st.melds[0] == 40


def test_m4_no_going_out_and_no_last_trick_bonus():
    st = end3("AH", "9H", "9C", tricks=[3, 3, 1], points=[40, 40, 29])
    assert "declare" not in legal(st)
    do(st, "play:AH play:9H play:9C")
    assert st.points == [51, 40, 29]  # 11 for the cards, nothing for the last trick


# -- F3.1 scoring: stakes from each opponent -------------------------------------------------
def test_f3_1_top_scorer_wins_1_2_or_3_from_each_opponent():
    st = do(end3("AH", "9H", "9C", tricks=[3, 3, 1], points=[40, 40, 29]), "play:AH play:9H play:9C")
    assert st.result.winner == 0 and st.result.scores == (3, -1, -2)  # 40: 1; 29 with a trick: 2
    st = do(end3("AH", "9H", "9C", tricks=[4, 3, 0], points=[60, 49, 0]), "play:AH play:9H play:9C")
    assert st.result.scores == (4, -1, -3)  # trickless: 3
    assert st.returns() == (4, -1, -3)


@pytest.mark.parametrize("tie, expected", [("share", (1, 1, -2)), ("none", (0, 0, 0))])
def test_m4_tie_for_most_points(tie, expected):
    st = end3("AH", "9H", "9C", tricks=[3, 3, 1], points=[40, 51, 18], three_tie=tie)
    do(st, "play:AH play:9H play:9C")
    assert st.count(0) == st.count(1) == 51
    assert st.result.scores == expected and st.result.winner is None


def test_m4_a_shared_odd_stake_is_split_in_halves():
    st = do(end3("AH", "9H", "9C", tricks=[3, 3, 1], points=[40, 51, 40]), "play:AH play:9H play:9C")
    assert st.result.scores == (0.5, 0.5, -1)


def test_m4_the_deal_passes_left():
    m = Match(P3, 5, first_dealer=0)
    st = m.new_deal()
    while not st.is_over():
        st.apply_legal(st.legal_actions()[0])
    m.finish_deal()
    assert m.dealer == 1 and sum(m.score) == 0  # stakes are zero-sum


# -- F3.2 / M9 cutthroat -------------------------------------------------------------------
CUT = "three-cutthroat"
CUT_HANDS = ("AC TC KC QC JC 9C AD", "TD KD QD JD 9D AH TH", "KH QH JH 9H AS TS KS")
WIDOW = "QS JS 9S"


def test_f3_2_seven_cards_each_and_a_three_card_widow():
    st = tdeal(CUT, *CUT_HANDS, widow=WIDOW)
    assert [h.bit_count() for h in st.hand] == [7, 7, 7] and st.widow.bit_count() == 3
    st = new_deal(CUT, 3, 1)
    assert [h.bit_count() for h in st.hand] == [7, 7, 7] and st.widow.bit_count() == 3


def test_m9_bidding_once_each_from_the_dealers_left_higher_no_moon():
    st = tdeal(CUT, *CUT_HANDS, widow=WIDOW)
    assert st.phase_name == "bid" and st.current_player() == 1
    assert legal(st) == ["pass", "bid:1", "bid:2", "bid:3", "bid:4"]
    do(st, "bid:2")
    assert legal(st) == ["pass", "bid:3", "bid:4"]
    do(st, "pass pass")
    assert st.phase_name == "lead" and st.current_player() == 1 and st.bidder == 1 and st.bid == 2  # M2


def test_m9_the_first_card_led_sets_trumps():
    st = do(tdeal(CUT, *CUT_HANDS, widow=WIDOW), "bid:1 pass pass")
    assert st.trump == -1 and observation(st, 0)["trump"] is None
    do(st, "play:9D")
    assert "CDHS"[st.trump] == "D"


def test_m9_the_widow_counts_for_the_first_tricks_winner_and_is_then_shown():
    st = do(tdeal(CUT, *CUT_HANDS, widow=WIDOW), "bid:1 pass pass")
    assert observation(st, 1)["widow"] is None
    do(st, "play:TD")  # diamonds are trumps; seat 2 is void, seat 0 must beat: AD
    assert legal(st) == ["play:KH", "play:QH", "play:JH", "play:9H", "play:AS", "play:TS", "play:KS"]
    do(st, "play:AS play:AD")
    assert st.trick_log[0][2] == 0
    widow_pts = sum(POINTS_32[parse_card(c)] for c in WIDOW.split())
    assert st.points[0] == 10 + 11 + 11 + widow_pts
    assert observation(st, 1)["widow"] == ["QS", "JS", "9S"] and observation(st, 1)["widow_taken"] == 0


def cut_end(contract, points, tricks, **kw):
    v = get_variant(CUT).with_flags(**kw) if kw else get_variant(CUT)
    return table_from_cards(v, [["AH"], ["9H"], ["9C"]], dealer=2, trump="S", leader=0, tricks=tricks,
                            points=points, contract=contract)  # fmt: skip


def test_m9_marks_one_per_full_33_and_a_set_bidder_loses_the_bid():
    st = do(cut_end((0, 2), [60, 35, 14], [3, 2, 1]), "play:AH play:9H play:9C")
    assert st.count(0) == 71 and st.result.reason == "made" and st.result.scores == (2, 1, 0)
    st = do(cut_end((0, 3), [60, 35, 14], [3, 2, 1]), "play:AH play:9H play:9C")
    assert st.result.reason == "set" and st.result.scores == (-3, 1, 0)


@pytest.mark.parametrize("all_pass", ["redeal", "dealer_forced"])
def test_m8_all_pass_flag(all_pass):
    v = get_variant(CUT).with_flags(all_pass=all_pass)
    st = do(tdeal(v, *CUT_HANDS, widow=WIDOW), "pass pass")
    if all_pass == "redeal":
        do(st, "pass")
        assert st.is_over() and st.result.reason == "all-pass" and st.result.scores == (0, 0, 0)
        m = Match(v, 1, first_dealer=0)
        m.deals.append(st)
        m.finish_deal()
        assert m.dealer == 0  # the same dealer deals again
    else:
        assert legal(st) == ["bid:1", "bid:2", "bid:3", "bid:4"]  # the dealer must bid


@pytest.mark.parametrize("goes_out, winner", [(True, 0), (False, 1)])
def test_m9_to_15_and_bidder_goes_out(goes_out, winner):
    v = get_variant(CUT).with_flags(bidder_goes_out=goes_out)
    assert v.target == 15
    m = Match(v, 1, first_dealer=2)
    m.score = [14, 14, 0]
    m.new_deal()
    st = do(cut_end((0, 1), [30, 70, 0], [2, 4, 0], bidder_goes_out=goes_out), "play:AH play:9H play:9C")
    m.deals[-1] = st
    m.finish_deal()
    assert m.score == [15, 16, -0] and m.result.winner == winner and m.result.kind == "winner"


# -- F3.3 / M5 dealer sits out ---------------------------------------------------------------
SIT = "three-sitout"


def finished(st, winner: int | None, gp: int):
    st.result = DealResult(winner, gp, "out" if winner is not None else "drawn", (0, 0), (0, 0))
    st.phase, st.to_act = OVER, -1


def test_f3_3_the_dealer_sits_out_and_the_others_play_two_handed():
    m = Match(SIT, 3, first_dealer=0)
    st = m.new_deal()
    assert st.players == 2 and m.seats == (1, 2)  # deal seat 0 is match seat 1, the dealer's left
    assert st.current_player() == 0 and st.hand[0].bit_count() == 6 and st.talon_size() == 12  # M2


def test_f3_3_the_dealer_scores_what_the_winner_scores_and_the_deal_passes_left():
    m = Match(SIT, 3, first_dealer=0)
    finished(m.new_deal(), 1, 2)
    m.finish_deal()
    assert m.score == [2, 0, 2] and m.dealer == 1
    assert m.new_deal() is m.deals[-1] and m.seats == (2, 0)


def test_f3_3_the_dealer_cannot_score_beyond_six_on_his_deal():
    m = Match(SIT, 3, first_dealer=0)
    m.score = [5, 0, 0]
    finished(m.new_deal(), 0, 3)
    m.finish_deal()
    assert m.score == [6, 3, 0]


def test_m5_a_drawn_hand_scores_nothing_for_the_dealer_either():
    m = Match(SIT, 3, first_dealer=0)
    finished(m.new_deal(), None, 0)
    m.finish_deal()
    assert m.score == [0, 0, 0] and m.dealer == 1


def test_m5_first_to_seven_finishes_first_and_the_other_two_play_on():
    m = Match(SIT, 3, first_dealer=0)
    m.score = [4, 6, 5]
    finished(m.new_deal(), 0, 1)  # match seat 1 wins and reaches 7
    m.finish_deal()
    assert m.finished == [1] and not m.is_over() and m.score[0] == 5
    st = m.new_deal()
    assert set(m.seats) == {0, 2} and st.players == 2
    winner_local = m.seats.index(2)
    finished(st, winner_local, 2)
    m.finish_deal()
    r = m.result
    assert r.kind == "order" and r.order == (1, 2, 0) and r.places == (3, 1, 2) and r.winner == 1


@pytest.mark.parametrize("scores, places", [([3, 6, 5], (3, 1, 2)), ([4, 6, 5], (2, 1, 2))])
def test_m5_without_play_on_the_other_two_are_ranked_by_score(scores, places):
    m = Match(get_variant(SIT).with_flags(play_on=False), 3, first_dealer=0)
    m.score = scores
    finished(m.new_deal(), 0, 1)
    m.finish_deal()
    assert m.is_over() and m.result.places == places and m.result.order[0] == 1


def test_f3_3_a_whole_match_ends_with_an_order_of_finish():
    m = Match(SIT, 11)
    while not m.is_over():
        st = m.new_deal()
        while not st.is_over():
            st.apply_legal(st.legal_actions()[-1 if st.phase_name == "lead" else 0])
        m.finish_deal()
    r = m.result
    assert sorted(r.order) == [0, 1, 2] and r.score[r.order[0]] >= 7 and r.score[r.order[1]] >= 7
