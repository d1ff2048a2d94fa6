"""One test per fact of RULES.md F4.1-F4.3 and M2, M3, M6-M8 (four-handed), on hand-built deals.

Hands are listed in the order each seat is dealt its cards; with ``trump=`` a deal is an
endgame. The dealer is seat 0, so seat 1 is the dealer's left; partners sit opposite
(team 0 is seats 0 and 2).
"""

from __future__ import annotations

import pytest

from arena.game import Match, VariantError, deal_from_cards, get_variant, new_deal, observation, table_from_cards
from arena.game.cards import SUIT_OF


def do(st, actions: str):
    for a in actions.split():
        st.apply_action(a)
    return st


def legal(st) -> list[str]:
    return st.legal_action_strings()


def variant(name: str, **flags):
    return get_variant(name).with_flags(**flags) if flags else get_variant(name)


def end4(name: str, hands: str, trump: str = "S", leader: int = 0, tricks=None, points=None, contract=None, **flags):
    """An endgame: ``hands`` is four hands separated by ``|``."""
    return table_from_cards(variant(name, **flags), [h.split() for h in hands.split("|")], dealer=3, trump=trump,
                            leader=leader, tricks=tricks, points=points, contract=contract)  # fmt: skip


# -- F4.1 pagat four-handed ------------------------------------------------------------------
P4 = "four-pagat"
P4_HANDS = ["AC TC KC QC JC 9H", "KD QD AD TD JD 9D", "AH TH KH QH JH 9C", "KS QS AS TS JS 9S"]


def p4():
    return deal_from_cards(P4, [h.split() for h in P4_HANDS], None, dealer=0)


def test_f4_1_partners_opposite_and_the_cut_card_is_the_dealers_and_sets_trumps():
    st = p4()
    assert "CDHS"[st.trump] == "H"
    obs = observation(st, 1)
    assert obs["partner"] == 3 and obs["teams"] == [0, 1, 0, 1]
    assert obs["turn_card"] == {"seat": 0, "card": "9H"} and obs["known_cards"][0] == ["9H"]


def test_f4_1_six_each_in_threes_partner_left_right_then_dealer():
    st = p4()
    h = [c.split() for c in P4_HANDS]
    want = h[2][:3] + h[1][:3] + h[3][:3] + h[0][:3] + h[2][3:] + h[1][3:] + h[3][3:] + h[0][3:]
    from arena.game import card_str

    assert [card_str(c) for c in st.order] == want
    st = new_deal(P4, 9, 2)
    assert [x.bit_count() for x in st.hand] == [6, 6, 6, 6] and st.turn_card == st.order[-1]
    assert st.hand[2] >> st.order[-1] & 1 and SUIT_OF[st.order[-1]] == st.trump


def test_m2_the_dealers_left_leads():
    st = p4()
    assert st.current_player() == 1 and st.phase_name == "lead" and "declare" not in legal(st)


def test_m6_leader_then_partner_may_each_show_a_marriage_not_played():
    st = do(p4(), "marry:D")
    assert "play:9D" in legal(st) and "marry:D" not in legal(st)  # shown, not played: any lead
    do(st, "play:9D")
    assert st.phase_name == "meld" and st.current_player() == 3 and legal(st) == ["marry:S", "pass"]
    do(st, "marry:S")
    assert st.phase_name == "follow" and st.current_player() == 2
    assert st.melds == [0, 40]


def test_m6_marriages_count_once_the_team_has_a_trick():
    st = do(p4(), "marry:D play:9D pass play:JH play:9S play:9H")  # seat 0 must under-trump: 9H
    assert st.trick_log[0][2] == 2 and st.count(1) == 0 and st.melds[1] == 20
    assert observation(st, 0)["marriages"][0]["credited"] is False


@pytest.mark.parametrize("head_partner, expected", [(True, ["play:AH"]), (False, ["play:AH", "play:9H"])])
def test_m3_head_partner_flag(head_partner, expected):
    st = do(end4(P4, "KH 9C|JC TC|AH 9H|JD TD", head_partner=head_partner), "play:KH pass play:JC")
    assert legal(st) == expected


def test_m6_the_last_trick_counts_ten_and_its_winner_may_declare():
    st = do(
        end4(P4, "AH|9H|9C|9D", tricks=[1, 1, 2, 1], points=[40, 20, 20, 10]), "play:AH pass play:9H play:9C play:9D"
    )
    assert st.points[0] == 40 + 11 + 10
    assert st.phase_name == "last" and st.current_player() == 0 and legal(st) == ["declare", "pass"]
    do(st, "declare")
    assert st.result.reason == "out" and st.result.scores == (2, 0)  # 30 with tricks: 2


@pytest.mark.parametrize(
    "points, result", [([40, 20, 20, 10], ((1, 0), "more-points")), ([20, 50, 20, 11], ((0, 0), "drawn"))]
)
def test_m6_nobody_declares_the_team_with_more_points_scores_1(points, result):
    st = end4(P4, "AH|9H|9C|9D", tricks=[1, 1, 2, 1], points=points)
    do(st, "play:AH pass play:9H play:9C play:9D pass")
    assert (st.result.scores, st.result.reason) == result


def test_f4_1_a_correct_claim_on_lead_wins_1_2_or_3():
    st = do(end4(P4, "AH 9C|9H JC|TC KC|9D JD", tricks=[2, 1, 0, 1], points=[50, 10, 20, 10]), "declare")
    assert st.result.reason == "out" and st.result.scores == (2, 0) and st.result.declarer == 0
    st = do(end4(P4, "AH 9C|9H JC|TC KC|9D JD", tricks=[2, 0, 2, 0], points=[50, 0, 20, 0]), "declare")
    assert st.result.scores == (3, 0)


@pytest.mark.parametrize("rule, opp_tricks, gp", [("two_or_three", 1, 2), ("two_or_three", 0, 3), ("two", 0, 2)])
def test_m6_a_false_claim_scores_as_f1_18_for_the_other_team(rule, opp_tricks, gp):
    st = end4(P4, "AH 9C|9H JC|TC KC|9D JD", tricks=[2, opp_tricks, 1, 0], points=[10, 5, 10, 0], false_claim=rule)
    do(st, "declare")
    assert st.result.reason == "false-claim" and st.result.scores == (0, gp)


def test_f4_1_match_to_seven_won_by_a_team():
    m = Match(P4, 4)
    while not m.is_over():
        st = m.new_deal()
        while not st.is_over():
            st.apply_legal(st.legal_actions()[0])
        m.finish_deal()
    r = m.result
    assert r.kind == "team" and r.score[r.winner] >= 7 and len(r.score) == 2


# -- F4.2 Kreuzmariage -------------------------------------------------------------------------
K = "kreuzmariage"


def test_f4_2_thirty_two_cards_eight_each_the_last_card_is_the_dealers_trump():
    st = new_deal(K, 21, 1)
    assert [h.bit_count() for h in st.hand] == [8, 8, 8, 8]
    assert st.hand[0] | st.hand[1] | st.hand[2] | st.hand[3] == (1 << 32) - 1
    assert st.hand[1] >> st.order[-1] & 1 and st.trump == SUIT_OF[st.order[-1]]
    assert observation(st, 2)["turn_card"]["seat"] == 1 and st.current_player() == 2


def test_f4_2_dealt_three_two_three_from_the_dealers_left():
    hands = ["AC TC KC QC JC 9C 8C 7C", "AD TD KD QD JD 9D 8D 7D", "AH TH KH QH JH 9H 8H 7H",
             "AS TS KS QS JS 9S 8S 7S"]  # fmt: skip
    st = deal_from_cards(K, [h.split() for h in hands], None, dealer=0)
    from arena.game import card_str

    names = [card_str(c) for c in st.order]
    assert names[:3] == ["AD", "TD", "KD"] and names[9:12] == ["AC", "TC", "KC"] and names[-1] == "7C"
    assert "CDHS"[st.trump] == "C"


def test_f4_2_must_win_the_trick_even_a_partners():
    st = do(end4(K, "KH 9C|7C 8C|AH 9H|7D 8D"), "play:KH play:7C")
    assert legal(st) == ["play:AH"]
    with pytest.raises(VariantError, match="'head_partner' must be true in form 'kreuzmariage'"):
        variant(K, head_partner=False)


def test_f4_2_trump_or_over_trump_when_void_and_the_7_and_8_rank_below_the_9():
    st = do(end4(K, "KH 9C|9S 8C|TS 7S|7D 8D"), "play:KH play:9S")
    assert legal(st) == ["play:TS"]
    st = do(end4(K, "9H 9C|8H 8C|7H 9D|7D 8D", trump="C"), "play:9H play:8H")
    assert legal(st) == ["play:7H"] and st.win_seat == 0


@pytest.mark.parametrize("marriages", [False, True])
def test_m7_marriages_flag(marriages):
    st = end4(K, "KH QH|7C 8C|AH 9H|7D 8D", marriages=marriages)
    assert ("marry:H" in legal(st)) is marriages


LAST = "AH|9H|7C|8C"


@pytest.mark.parametrize(
    "tricks, points, scores",
    [
        ([2, 2, 2, 1], [25, 32, 20, 32], (1, 0)),  # 66
        ([2, 2, 2, 1], [50, 15, 29, 15], (2, 0)),  # 100
        ([4, 0, 3, 0], [60, 0, 49, 0], (3, 0)),  # every trick
        ([2, 2, 2, 1], [24, 32, 20, 33], (0, 0)),  # 65-65
    ],
)
def test_f4_2_game_points_at_66_100_and_every_trick_and_the_last_trick_10(tricks, points, scores):
    st = do(end4(K, LAST, tricks=tricks, points=points), "play:AH play:9H play:7C play:8C")
    assert st.result.scores == scores
    assert st.count(0) + st.count(1) == 130


def test_f4_2_a_65_65_hand_carries_a_point_to_the_next_hands_winners():
    m = Match(K, 2, first_dealer=3)
    m.new_deal()
    m.deals[-1] = do(end4(K, LAST, tricks=[2, 2, 2, 1], points=[24, 32, 20, 33]), "play:AH play:9H play:7C play:8C")
    m.finish_deal()
    assert m.score == [0, 0] and m.carry == 1
    m.new_deal()
    m.deals[-1] = do(end4(K, LAST, tricks=[2, 2, 2, 1], points=[25, 32, 20, 32]), "play:AH play:9H play:7C play:8C")
    m.finish_deal()
    assert m.score == [2, 0] and m.carry == 0


@pytest.mark.parametrize("ten, scores", [(False, (0, 0)), (True, (1, 0))])
def test_m7_ten_of_trumps_flag_also_on_a_65_65_hand(ten, scores):
    st = end4(K, "TS|9S|7C|8C", tricks=[2, 2, 2, 1], points=[25, 32, 20, 33], ten_of_trumps=ten)
    do(st, "play:TS play:9S play:7C play:8C")
    assert st.count(0) == st.count(1) == 65 and st.result.scores == scores


# -- F4.3 North-American partnership with bidding -------------------------------------------
B = "four-bidding"
B_HANDS = ["AC TC KC QC JC 9C", "AD TD KD QD JD 9D", "AH TH KH QH JH 9H", "AS TS KS QS JS 9S"]


def bid4(**flags):
    return deal_from_cards(variant(B, **flags), [h.split() for h in B_HANDS], None, dealer=0)


def test_f4_3_bidding_once_round_from_the_dealers_left_each_higher():
    st = bid4()
    assert st.phase_name == "bid" and st.current_player() == 1
    assert legal(st) == ["pass", "bid:1", "bid:2", "bid:3", "bid:4", "bid:5"]
    do(st, "bid:2")
    assert legal(st) == ["pass", "bid:3", "bid:4", "bid:5"]
    do(st, "pass bid:3 pass")
    assert st.bidder == 3 and st.bid == 3 and st.current_player() == 3 and st.phase_name == "lead"
    assert [b["bid"] for b in observation(st, 0)["bids"]] == [2, None, 3, None]


def test_f4_3_the_first_card_led_sets_trumps_and_a_marriage_on_it_is_40():
    st = do(bid4(), "pass pass bid:1 pass marry:S")
    assert legal(st) == ["play:KS", "play:QS"] and st.melds == [0, 40]
    do(st, "play:QS")
    assert "CDHS"[st.trump] == "S"


def test_f4_3_follow_play_higher_trump_if_void():
    st = do(end4(B, "QH 9C|KH 9D|AH 9S|TS 9H", trump="S", contract=(0, 1)), "play:QH")
    assert legal(st) == ["play:KH"]
    st = do(end4(B, "QH 9C|KD 9D|AH 9S|TS JS", trump="S", contract=(0, 1)), "play:QH play:KD play:AH")
    assert legal(st) == ["play:TS", "play:JS"]


def test_f4_3_a_marriage_counts_only_if_the_team_wins_a_trick():
    st = end4(B, "KH QH|AH 9D|9C JD|TH TD", trump="S", tricks=[0, 2, 0, 2], points=[0, 40, 0, 40], contract=(1, 1))
    do(st, "marry:H play:QH play:AH play:9C play:TH")
    assert st.melds[0] == 20 and st.count(0) == 0


@pytest.mark.parametrize(
    "contract, scores, reason",
    [((0, 2), (2, 1), "made"), ((0, 3), (-3, 1), "set"), ((1, 1), (2, 1), "made"), ((1, 2), (2, -2), "set")],
)
def test_f4_3_marks_of_33_the_set_bidder_loses_the_bid_no_last_trick_bonus(contract, scores, reason):
    st = end4(B, "AH|9H|9C|9D", trump="S", tricks=[2, 1, 2, 0], points=[40, 20, 20, 15], contract=contract)
    do(st, "play:AH play:9H play:9C play:9D")
    assert st.count(0) == 71 and st.count(1) == 35  # 11 for the cards, no bonus
    assert st.result.scores == scores and st.result.reason == reason


def test_f4_3_moon_the_partner_sits_out_and_the_other_three_play():
    st = do(bid4(), "bid:5")
    assert legal(st) == ["pass"]
    do(st, "pass pass pass")
    assert st.bidder == 1 and st.active == (0, 1, 2)
    assert observation(st, 0)["sitting_out"] == 3
    do(st, "play:9D")
    assert st.current_player() == 2
    do(st, "play:9H")
    assert st.current_player() == 0
    do(st, "play:9C")
    assert st.trick_log[0][2] == 1 and st.current_player() == 1


@pytest.mark.parametrize("tricks, scores", [([5, 0, 0, 0], (5, 0)), ([4, 1, 0, 0], (-5, 0))])
def test_m8_moon_takes_every_trick_for_5_or_loses_5_the_opponents_mark_nothing(tricks, scores):
    st = end4(B, "AH|9H|KC|9D", trump="S", tricks=tricks, points=[90, 10, 0, 0], contract=(0, 5))
    do(st, "play:AH play:9H play:9D")
    assert st.result.scores == scores


@pytest.mark.parametrize("moon", ["all_tricks_5", "none"])
def test_m8_moon_flag(moon):
    assert ("bid:5" in legal(bid4(moon=moon))) is (moon == "all_tricks_5")


@pytest.mark.parametrize("all_pass", ["redeal", "dealer_forced"])
def test_m8_all_four_pass(all_pass):
    st = do(bid4(all_pass=all_pass), "pass pass pass")
    if all_pass == "redeal":
        do(st, "pass")
        assert st.result.reason == "all-pass" and st.returns() == (0, 0, 0, 0)
    else:
        assert "pass" not in legal(st)


@pytest.mark.parametrize("target", [10, 15])
@pytest.mark.parametrize("goes_out, winner", [(True, 1), (False, 0)])
def test_m8_target_and_bidder_goes_out(target, goes_out, winner):
    v = variant(B, target=target, bidder_goes_out=goes_out)
    m = Match(v, 1, first_dealer=3)
    m.score = [target - 1, target - 1]
    m.new_deal()
    st = end4(B, "AH|9H|9C|9D", trump="S", tricks=[2, 1, 2, 0], points=[40, 20, 20, 15], contract=(1, 1),
              target=target, bidder_goes_out=goes_out)  # fmt: skip
    m.deals[-1] = do(st, "play:AH play:9H play:9C play:9D")
    m.finish_deal()
    assert m.score == [target + 1, target] and m.result.winner == winner and m.result.kind == "team"


@pytest.mark.parametrize("preset", ["three-pagat", "three-cutthroat", "four-pagat", "kreuzmariage", "four-bidding"])
def test_an_illegal_or_malformed_action_changes_nothing(preset):
    from arena.game import ActionError, IllegalActionError

    st = new_deal(preset, 3, 1)
    before = st.clone()
    with pytest.raises(IllegalActionError, match=f"for seat {st.current_player()} in phase {st.phase_name}; legal: "):
        st.apply_action("bid:1" if st.phase_name != "bid" else "trump:C")
    for bad in ("bid:9", "play:XX", None, 3.0, 99):
        with pytest.raises((ActionError, IllegalActionError)):
            st.apply_action(bad)
    assert st == before
