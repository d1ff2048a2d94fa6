"""One test per fact and flag of RULES.md, on hand-built positions.

Positions come from `helpers.make`: seat 0 is the forehand (on lead) unless a leader is
given; hands, the turn-up and the top of the talon are spelled out as card strings.
Fact numbers (F1.x, F2.x, E.x) refer to ../shared/RULES.md.
"""

from __future__ import annotations

import itertools

import pytest
from helpers import do, legal, make

from arena.game import (
    IllegalActionError,
    card_str,
    deck_order,
    new_deal,
    observation,
    pack_of,
    parse_card,
)
from arena.game.cards import POINTS

BOTH = ["sixty-six", "schnapsen"]
RANK_ORDER = {"sixty-six": "ATKQJ9", "schnapsen": "ATKQJ"}


def variant_of(name: str, **flags):
    from arena.game import get_variant

    return get_variant(name).with_flags(**flags) if flags else get_variant(name)


def plays(state) -> list[str]:
    return [a for a in legal(state) if a.startswith("play:")]


def trick_winner(lead: str, follow: str, trump: str, variant: str = "sixty-six") -> int:
    st = make(lead, follow, None, variant, trump=trump, leader=0)
    do(st, f"play:{lead} play:{follow}")
    return st.trick_log[-1][3]


# -- F1.1 / F2.1 cards -------------------------------------------------------------------
@pytest.mark.parametrize("variant", BOTH)
def test_f1_1_pack_and_points(variant):
    pack = pack_of(variant_of(variant))
    assert len(pack) == (24 if variant == "sixty-six" else 20)
    assert sum(POINTS[c] for c in pack) == 120
    assert [POINTS[parse_card(r + "H")] for r in "ATKQJ9"] == [11, 10, 4, 3, 2, 0]
    if variant == "schnapsen":
        assert not any(card_str(c)[0] == "9" for c in pack)


@pytest.mark.parametrize("variant", BOTH)
def test_f1_1_rank_order_a_10_k_q_j_9(variant):
    ranks = RANK_ORDER[variant]
    for hi, lo in itertools.combinations(ranks, 2):  # hi ranks above lo
        assert trick_winner(f"{lo}C", f"{hi}C", "H", variant) == 1
        assert trick_winner(f"{hi}C", f"{lo}C", "H", variant) == 0


# -- F1.5 trick winner -------------------------------------------------------------------
@pytest.mark.parametrize("variant", BOTH)
def test_f1_5_trump_beats_any_non_trump_and_led_suit_beats_other_suits(variant):
    ranks = RANK_ORDER[variant]
    for r1, r2 in itertools.product(ranks, repeat=2):
        assert trick_winner(f"{r1}C", f"{r2}H", "H", variant) == 1  # follower trumps
        assert trick_winner(f"{r1}H", f"{r2}C", "H", variant) == 0  # trump led, club thrown
        assert trick_winner(f"{r1}C", f"{r2}D", "H", variant) == 0  # off-suit: led card wins


# -- F1.2 / F2.2 / F1.3 / F1.4 the deal -----------------------------------------------------
@pytest.mark.parametrize("variant", BOTH)
def test_f1_3_fixed_deal_order(variant):
    v = variant_of(variant)
    seed = 12345
    order = deck_order(pack_of(v), seed)
    st = new_deal(v, seed, dealer=1)  # seat 0 is forehand
    if variant == "sixty-six":
        fore, deal, tu, stock = order[0:3] + order[6:9], order[3:6] + order[9:12], order[12], order[13:]
    else:
        fore, deal, tu, stock = order[0:3] + order[7:9], order[3:6] + order[9:11], order[6], order[11:]
    assert st.hand[0] == sum(1 << c for c in fore)
    assert st.hand[1] == sum(1 << c for c in deal)
    assert st.turn_up == tu and st.trump == tu // 6
    assert list(st.stock) == stock
    assert st.talon_size() == (12 if variant == "sixty-six" else 10)
    assert st.current_player() == 0  # F1.4: the forehand leads
    st0 = new_deal(v, seed, dealer=0)
    assert st0.current_player() == 1 and st0.hand[1] == st.hand[0]


def test_f1_4_winner_leads_next():
    st = make("KC QD JD 9D TD AD", "AC 9C JC QC TC KD", "AH")
    do(st, "play:KC play:AC draw")
    assert st.current_player() == 1 and st.phase_name == "lead"


# -- F1.6 open phase, F1.7 / F2.3 drawing ---------------------------------------------------
@pytest.mark.parametrize("variant", BOTH)
def test_f1_6_free_play_while_talon_open(variant):
    if variant == "sixty-six":
        st = make("AC KC QC JC TC 9C", "KD QD JD TD 9D AD", "AH")
    else:
        st = make("AC KC QC JC TC", "KD QD JD TD AD", "AH", variant)
    do(st, "play:KC")  # the follower holds no club and keeps every option, trumps or not
    assert len(plays(st)) == st.hand[1].bit_count()
    st = (
        make("AC KC QC JC 9D JS", "TC 9C AD KD QD 9S", "AH")
        if variant == "sixty-six"
        else make("AC KC QC JD TD", "TC JC AD KD QD", "AH", variant)
    )
    do(st, "play:KC")
    assert len(plays(st)) == st.hand[1].bit_count()  # may follow, need not: free


@pytest.mark.parametrize("variant", BOTH)
def test_f1_7_drawing_order_and_the_turn_up_goes_last(variant):
    st = new_deal(variant, 99, dealer=1)
    tricks_with_talon = 6 if variant == "sixty-six" else 5
    sizes = []
    for trick in range(tricks_with_talon):
        sizes.append(st.talon_size())
        pos = st.stock_pos
        do(st, plays(st)[0])
        do(st, plays(st)[0])
        winner = st.trick_log[-1][3]
        if "draw" in legal(st):
            do(st, "draw")
        assert st.hand[winner] >> st.stock[pos] & 1  # the winner drew the top card
        if trick < tricks_with_talon - 1:
            assert st.hand[winner ^ 1] >> st.stock[pos + 1] & 1
    loser = st.trick_log[-1][3] ^ 1
    assert st.events[-1][0] == "turn_up_drawn" and st.events[-1][1] == loser
    assert st.talon_size() == 0 and st.turn_up == -1
    assert sizes == list(range(12 if variant == "sixty-six" else 10, 0, -2))
    assert bin(st.hand[0]).count("1") == bin(st.hand[1]).count("1") == (6 if variant == "sixty-six" else 5)


# -- F1.9 / F2.5 exchanging the trump nine / jack ----------------------------------------------
def test_f1_9_exchange_by_leader_with_a_trick():
    st = make("9H KC QC 9C JD QD", "TC AC TD AD KD 9D", "AH", out="AS TS", tricks=(1, 0))
    assert "exchange" in legal(st)
    do(st, "exchange")
    assert st.hand[0] >> parse_card("AH") & 1 and st.turn_up == parse_card("9H")
    assert "exchange" not in legal(st)
    assert observation(st, 1)["exchanges"] == [{"seat": 0, "gave": "9H", "took": "AH", "trick": 1}]
    assert observation(st, 1)["known_cards"][0] == ["AH"]


def test_f1_9_exchange_needs_a_trick_in_sixty_six_but_not_in_schnapsen():
    st = make("9H KC QC 9C JD QD", "TC AC TD AD KD 9D", "AH")
    assert "exchange" not in legal(st)
    v = variant_of("sixty-six", exchange_needs_trick=False)
    assert "exchange" in legal(make("9H KC QC 9C JD QD", "TC AC TD AD KD 9D", "AH", v))
    sch = make("JH KC QC AC TD", "TC KD QD AD JC", "AH", "schnapsen")
    assert "exchange" in legal(sch)  # F2.5: no trick needed, even on the opening lead


def test_f2_5_exchange_on_first_lead_flag():
    v = variant_of("schnapsen", exchange_on_first_lead=False)
    st = make("JH KC QC AC TD", "TC KD QD AD JC", "AH", v)
    assert "exchange" not in legal(st)
    st = make("JH KC QC AC TD", "TC KD QD AD JC", "AH", v, out="KS QS", tricks=(1, 0))
    assert "exchange" in legal(st)


def test_f1_9_exchange_timing_lead_only_or_any_time():
    h0, h1 = "AC KC QC 9C JD QD", "9H TC TD AD KD 9D"
    st = make(h0, h1, "AH", out="AS TS", tricks=(1, 1))
    do(st, "play:AC")
    assert "exchange" not in legal(st)  # the follower may not exchange by default
    v = variant_of("sixty-six", exchange_timing="any_time")
    st = make(h0, h1, "AH", v, out="AS TS", tricks=(1, 1))
    do(st, "play:AC exchange")
    assert st.hand[1] >> parse_card("AH") & 1  # FOSTER: then win the trick with it
    do(st, "play:AH")
    assert st.trick_log[-1][3] == 1


@pytest.mark.parametrize("min_talon, allowed", [(2, True), (4, False)])
def test_f1_9_exchange_min_talon(min_talon, allowed):
    v = variant_of("sixty-six", exchange_min_talon=min_talon)
    st = make(
        "9H KC QC 9C JD QD",
        "TC AC TD AD KD 9D",
        "AH",
        v,
        top="AS",
        out="TS KS QS JS 9S TH KH QH JH JC",
        tricks=(2, 3),
    )
    assert st.talon_size() == 2
    assert ("exchange" in legal(st)) is allowed


def test_f1_9_no_exchange_once_exhausted():
    st = make("9H KC QC", "TC AC TD", None, trump="H", tricks=(3, 3))
    assert "exchange" not in legal(st)


def test_f1_9_exchange_on_close_none_opponent_any_with_trick():
    h0, h1 = "AC KC QC JD QD KS", "9H TC TD AD KD 9D"
    # none (default): nobody exchanges once the talon is closed.
    st = make(h0, h1, "AH", out="AS TS", tricks=(1, 1))
    do(st, "close")
    assert st.phase_name == "lead" and st.current_player() == 0
    # opponent: the closer's opponent may exchange at the moment of closing, even trickless.
    v = variant_of("sixty-six", exchange_on_close="opponent")
    st = make(h0, h1, "AH", v, out="AS TS", tricks=(1, 0))
    do(st, "close")
    assert st.phase_name == "close-offer" and st.current_player() == 1
    assert legal(st) == ["exchange", "pass"]
    do(st, "exchange")
    assert st.hand[1] >> parse_card("AH") & 1 and st.current_player() == 0
    assert "marry:C" not in legal(st) and "declare" in legal(st)  # the closer's turn goes on
    st = make(h0, h1, "AH", v, out="AS TS", tricks=(1, 0))
    do(st, "close pass")
    assert st.hand[1] >> parse_card("9H") & 1 and st.current_player() == 0
    # any_with_trick: either player, with a won trick, on a later lead.
    v = variant_of("sixty-six", exchange_on_close="any_with_trick")
    st = make("9H KC QC JD QD KS", "AC TC TD AD KD 9D", "AH", v, out="AS TS", tricks=(1, 1))
    do(st, "close")
    assert "exchange" not in legal(st)  # E1: not after a close on the same lead
    do(st, "play:KS play:9D")  # 9D is a diamond: seat 0 led spades and keeps the trick
    assert st.current_player() == 0 and "exchange" in legal(st)


# -- F1.10 / F2.6 marriages ------------------------------------------------------------------
def test_f1_10_marriage_twenty_and_forty_and_must_lead_one_of_the_pair():
    st = make("KC QC KH QH 9D JD", "AC TC TD AD KD 9C", "AH", out="AS TS", tricks=(1, 0), points=(21, 0))
    assert {"marry:C", "marry:H"} <= set(legal(st))
    do(st, "marry:C")
    assert st.count(0) == 41
    assert plays(st) == ["play:KC", "play:QC"]
    assert "marry:H" not in legal(st)  # one marriage per lead
    st = make("KC QC KH QH 9D JD", "AC TC TD AD KD 9C", "AH", out="AS TS", tricks=(1, 0), points=(21, 0))
    do(st, "marry:H")
    assert st.count(0) == 61  # 40 in trumps
    assert observation(st, 1)["known_cards"][0] == ["KH", "QH"]
    do(st, "play:QH")
    assert observation(st, 1)["known_cards"][0] == ["KH"]  # the partner card stays known


def test_f1_10_only_the_leader_marries():
    st = make("AC 9C JC TD 9D JD", "KH QH KC QC AD KD", "AS")
    do(st, "play:AC")
    assert not any(a.startswith("marry:") for a in legal(st))


@pytest.mark.parametrize("variant", BOTH)
def test_f1_10_opening_marriage_is_pending_until_a_trick(variant):
    if variant == "sixty-six":
        st = make("KC QC 9H JD 9S JS", "AC TC TD AD KD 9C", "AH", top="AS TS")
    else:
        st = make("KC QC JH TD JD", "AC TC AD KD JC", "AH", variant, top="AS TS")
    do(st, "marry:C")
    assert st.count(0) == 0 and st.mpending[0] == 20
    do(st, "play:QC play:AC")
    if "draw" in legal(st):
        do(st, "draw")
    assert st.count(0) == 0 and observation(st, 1)["marriages"][0]["credited"] is False
    low = "9" if variant == "sixty-six" else "J"
    do(st, f"play:{low}C play:{low}H")  # seat 0 trumps: its first trick
    assert st.trick_log[-1][3] == 0
    assert st.count(0) == 20 + POINTS[parse_card(f"{low}C")] * 2 and st.mpending[0] == 0
    assert observation(st, 1)["marriages"][0]["credited"] is True


def test_f1_10_a_marriage_never_credited_scores_nothing():
    st = make("KC QC 9D", "AC TC TD", None, trump="H", tricks=(0, 3), points=(0, 60), leader=0)
    st.mpending[0] = 20  # declared earlier, seat 0 never won a trick
    do(st, "play:KC play:AC declare")
    assert st.result.points[0] == 0 and st.result.game_points == 3


def test_f1_10_marriage_needs_trick_to_declare_flag():
    v = variant_of("sixty-six", marriage_needs_trick="to_declare")
    st = make("KC QC 9D JD 9S JS", "AC TC TD AD KD 9C", "AH", v)
    assert "marry:C" not in legal(st)
    st = make("KC QC 9D JD 9S JS", "AC TC TD AD KD 9C", "AH", v, out="AS TS", tricks=(1, 0))
    assert "marry:C" in legal(st)


def test_f1_10_marriage_lead_king_only_flag():
    v = variant_of("sixty-six", marriage_lead="king_only")
    st = make("KC QC 9D JD 9S JS", "AC TC TD AD KD 9C", "AH", v)
    do(st, "marry:C")
    assert plays(st) == ["play:KC"]


def test_f1_10_no_marriage_once_closed_or_exhausted_in_sixty_six_but_yes_in_schnapsen():
    st = make("KC QC 9D JD 9S JS", "AC TC TD AD KD 9C", "AH", out="AS TS", tricks=(1, 0))
    do(st, "close")
    assert "marry:C" not in legal(st)
    st = make("KC QC 9D", "AC TC TD", None, trump="H", tricks=(3, 3))
    assert "marry:C" not in legal(st)
    st = make("KC QC TD", "AC TC AD", None, "schnapsen", trump="H", tricks=(3, 1))
    assert "marry:C" in legal(st)  # F2.6
    v = variant_of("sixty-six", marriage_after_close=True)
    assert "marry:C" in legal(make("KC QC 9D", "AC TC TD", None, v, trump="H", tricks=(3, 3)))


def test_f1_10_marriage_then_close_on_the_same_lead():
    st = make("KC QC 9D JD 9S JS", "AC TC TD AD KD 9C", "AH", out="AS TS", tricks=(1, 0))
    do(st, "marry:C close play:KC")
    assert st.closed_by == 0


def test_f1_10_going_out_on_a_marriage_without_leading():
    st = make("KC QC 9D JD 9S JS", "AC TC TD AD KD 9C", "AH", out="AS TS", tricks=(1, 1), points=(46, 21))
    do(st, "marry:C declare")
    r = st.result
    assert (r.winner, r.game_points, r.reason) == (0, 2, "out")  # loser 21 < 33 with a trick


# -- F1.11 / F2.3 strict phase ---------------------------------------------------------------
@pytest.mark.parametrize(
    "lead, follower, expected",
    [
        ("QH", "AH KH JH AS", ["AH", "KH"]),  # 1. head the led suit
        ("AH", "KH 9H AS 9C", ["KH", "9H"]),  # 2. else follow lower (and never trump)
        ("AH", "AS 9S KC QD", ["AS", "9S"]),  # 3. void: trump
        ("AH", "KC QD 9C JD", ["KC", "9C", "QD", "JD"]),  # 4. else anything
        ("QS", "KS JS AC TC", ["KS"]),  # a trump lead must be beaten by a higher trump
        ("AS", "KS JS AC TC", ["KS", "JS"]),
    ],
)
def test_f1_11_follow_head_trump(lead, follower, expected):
    leader_hand = " ".join([lead, "9D", "TD", "AD"][: len(follower.split())])
    st = make(leader_hand, follower, None, trump="S", leader=0)
    do(st, f"play:{lead}")
    got = sorted(plays(st), key=lambda a: parse_card(a[5:]))
    assert got == sorted((f"play:{c}" for c in expected), key=lambda a: parse_card(a[5:]))


def test_f1_11_leader_may_lead_anything():
    st = make("AH 9C KD TS", "KH 9H AS QD", None, trump="S", leader=0)
    assert plays(st) == ["play:9C", "play:KD", "play:AH", "play:TS"]


def test_f1_11_strict_flags():
    v = variant_of("sixty-six", strict_must_head=False)
    st = make("QH 9D TD AD", "AH KH JH AS", None, v, trump="S", leader=0)
    do(st, "play:QH")
    assert sorted(plays(st)) == ["play:AH", "play:JH", "play:KH"]
    v = variant_of("sixty-six", strict_must_trump=False)
    st = make("AH 9D TD AD", "AS 9S KC QD", None, v, trump="S", leader=0)
    do(st, "play:AH")
    assert len(plays(st)) == 4


def test_f1_11_strict_from_the_very_next_trick_after_a_close():
    st = make("AH KS QS JS 9S TS", "KH 9H AC TC KC QC", "AD", out="AS 9D", tricks=(1, 0))
    do(st, "play:AH")
    assert len(plays(st)) == 6  # open: anything
    st = make("AH KS QS JS 9S TS", "KH 9H AC TC KC QC", "AD", out="AS 9D", tricks=(1, 0))
    do(st, "close play:AH")
    assert plays(st) == ["play:KH", "play:9H"]


# -- F1.12 / F1.15 / F1.19 / E3 exhausted talon and playing out -----------------------------------
def test_f1_12_exhausted_talon_no_close_marriage_or_exchange():
    st = make("KH QH 9S", "AC TC TD", None, trump="S", tricks=(3, 3))
    assert legal(st) == ["play:KH", "play:QH", "play:9S", "declare"]


def test_f1_15_last_trick_ten_and_higher_total_wins():
    # 60 card points each so far; the last trick (A+K = 15) and its 10 decide.
    st = make("AC", "KC", None, trump="S", tricks=(5, 5), points=(50, 55))
    do(st, "play:AC play:KC")
    r = st.result
    assert st.points == [75, 55] and (r.winner, r.reason, r.game_points) == (0, "higher-total", 1)


def test_f1_19_equal_totals_are_a_drawn_hand():
    st = make("AC", "KC", None, trump="S", tricks=(5, 5), points=(40, 65))
    do(st, "play:AC play:KC")
    r = st.result
    assert st.points == [65, 65] and (r.winner, r.game_points, r.reason) == (None, 0, "drawn")
    assert st.returns() == (0, 0)


def test_f1_19_exhausted_rule_last_trick_wins():
    v = variant_of("sixty-six", exhausted_rule="last_trick_wins")
    st = make("AC", "KC", None, v, trump="S", tricks=(5, 5), points=(20, 85))
    do(st, "play:AC play:KC")
    assert (st.result.winner, st.result.game_points, st.result.reason) == (0, 1, "last-trick")


def test_e7_loser_total_includes_credited_marriages_and_the_last_trick():
    # Seat 1 has 13 in tricks + 20 credited marriage = 33, so the loser scores 1 not 2.
    st = make("AC TC", "KC QC", None, trump="S", tricks=(5, 1), points=(60, 13))
    st.mcredit[1] = 20  # a marriage declared earlier
    do(st, "play:AC play:QC play:TC play:KC")
    assert st.result.winner == 0 and st.result.points[1] == 33 and st.result.game_points == 1


def test_e3_the_last_trick_settles_without_a_declaration():
    st = make("AC", "KC", None, trump="S", tricks=(5, 5), points=(70, 30))
    do(st, "play:AC play:KC")
    assert st.is_over() and st.result.declarer is None and legal(st) == []


@pytest.mark.parametrize("variant", BOTH)
def test_f2_9_schnapsen_exhausted_talon_last_trick_wins_one_point(variant):
    st = make("AC", "KC", None, variant, trump="S", tricks=(4, 4), points=(15, 90))
    do(st, "play:AC play:KC")
    if variant == "schnapsen":
        assert (st.result.winner, st.result.game_points, st.result.reason) == (0, 1, "last-trick")
    else:
        assert (st.result.winner, st.result.reason) == (1, "higher-total")


# -- F1.13 / F2.7 closing ----------------------------------------------------------------------
def test_f1_13_close_before_or_after_the_draw():
    st = make("KC QD JD 9D TD AD", "AC 9C JC QC TC KD", "AH", top="AS TS")
    do(st, "play:QD play:KD")
    assert st.phase_name == "draw" and legal(st) == ["close", "declare", "draw"]
    do(st, "close")
    assert bin(st.hand[1]).count("1") == 5 and st.talon_size() == 12  # nobody drew
    assert observation(st, 0)["closed"] == {"seat": 1, "trick": 1, "before_draw": True}
    assert "exchange" not in legal(st)  # E2
    st = make("KC QD JD 9D TD AD", "AC 9C JC QC TC KD", "AH", top="AS TS")
    do(st, "play:QD play:KD draw close")
    assert observation(st, 0)["closed"]["before_draw"] is False and st.talon_size() == 10


def test_f1_13_forehand_may_close_before_the_first_trick_unless_flagged():
    assert "close" in legal(make("KC QD JD 9D TD AD", "AC 9C JC QC TC KD", "AH"))
    v = variant_of("sixty-six", close_on_first_lead=False)
    assert "close" not in legal(make("KC QD JD 9D TD AD", "AC 9C JC QC TC KD", "AH", v))


@pytest.mark.parametrize("min_talon", [2, 4])
def test_f1_13_last_chance_to_close_and_close_min_talon(min_talon):
    v = variant_of("sixty-six", close_min_talon=min_talon)
    # Talon of 2 (one face-down card and the turn-up) at the lead to the 6th trick.
    st = make(
        "KC QD JD 9D TD AD",
        "AC 9C JC QC TC KD",
        "AH",
        v,
        top="AS",
        out="TS KS QS JS 9S TH KH QH JH 9H",
        tricks=(2, 3),
    )
    assert ("close" in legal(st)) is (min_talon == 2)
    # After the 6th trick the last two cards must be drawn: no choice to close.
    do(st, "play:QD play:KD")
    assert st.phase_name == "lead" and st.talon_size() == 0


def test_f1_13_close_before_draw_flag_and_schnapsen_closes_only_after_drawing():
    v = variant_of("sixty-six", close_before_draw=False)
    st = make("KC QD JD 9D TD AD", "AC 9C JC QC TC KD", "AH", v, top="AS TS")
    do(st, "play:QD play:KD")
    assert st.phase_name == "lead" and bin(st.hand[1]).count("1") == 6
    st = make("KC QD JD TD AD", "AC TC JC QC KD", "AH", "schnapsen", top="AS TS")
    do(st, "play:QD play:KD")
    assert st.phase_name == "lead" and "close" in legal(st) and bin(st.hand[1]).count("1") == 5


def test_f1_13_closing_effects_no_draw_no_bonus():
    st = make("AS TS KS QS AH TH", "9C JC QC KC AC TC", "JS", out="9D JD", tricks=(1, 0), points=(2, 0))
    do(st, "close")
    for _ in range(6):
        do(st, plays(st)[0])
        do(st, plays(st)[0])
    # Seat 0 took every trick: its 2 earlier points plus the 12 cards, and no last-trick 10.
    assert (
        st.talon_size() == 10
        and st.result.reason == "out"
        and st.points[0] == 2 + sum(POINTS[parse_card(c)] for c in "AS TS KS QS AH TH 9C JC QC KC AC TC".split())
    )


# -- F1.14 / F2.9 / E4 / E5 scoring a closed hand ------------------------------------------------
CLOSE_H0, CLOSE_H1 = "AS TS KS AH 9C JD", "QS 9S JC QC KC AC"


@pytest.mark.parametrize("basis, game_points", [("end", 2), ("at_close", 3)])
def test_f1_14_closer_goes_out_scored_on_final_or_closing_totals(basis, game_points):
    v = variant_of("sixty-six", close_score_basis=basis)
    st = make(CLOSE_H0, CLOSE_H1, "JS", v, out="9D TD", tricks=(1, 0), points=(40, 0))
    do(st, "close play:9C")
    assert plays(st) == ["play:AC", "play:KC", "play:QC", "play:JC"]  # must head
    do(st, "play:AC play:JC play:AS play:TS play:QS")
    assert st.count(0) == 66 and st.tricks[1] == 1
    do(st, "declare")
    assert (st.result.winner, st.result.game_points, st.result.reason) == (0, game_points, "out")


def test_f2_9_schnapsen_successful_close_scored_at_the_moment_of_closing():
    st = make(
        "AS TS KS AH JD",
        "QS JS QC KC AC",
        "AD",
        "schnapsen",
        out="TC JC TD KD",
        tricks=(2, 0),
        points=(40, 0),
    )
    # trump is diamonds here: seat 1 holds none, seat 0 leads spades.
    do(st, "close play:JD")
    do(st, plays(st)[0])
    assert st.trick_log[-1][3] == 0  # JD is trump: seat 0 keeps the lead
    do(st, "play:AS play:QS play:TS play:JS declare")
    assert st.result.reason == "out" and st.result.game_points == 3  # trickless at the close


@pytest.mark.parametrize(
    "rule, opp_tricks, closer_extra, expected",
    [
        ("two_or_three", 1, 0, 2),
        ("two_or_three", 0, 0, 3),
        ("three", 1, 0, 3),
        ("by_closer_count", 1, 40, 1),
        ("by_closer_count", 1, 0, 2),
        ("by_closer_count", 0, 40, 3),
    ],
)
def test_f1_14_and_e5_failed_close_by_false_declaration(rule, opp_tricks, closer_extra, expected):
    v = variant_of("sixty-six", failed_close=rule)
    st = make(CLOSE_H0, CLOSE_H1, "JS", v, out="9D TD", tricks=(1, opp_tricks), points=(closer_extra, 0))
    do(st, "close declare")  # the closer claims with fewer than 66: a failed close (E5)
    assert (st.result.winner, st.result.game_points, st.result.reason) == (1, expected, "failed-close")


def test_e4_closer_loses_the_last_trick_fails_even_with_66():
    st = make("AS TS KS QS AH 9C", "9S JS AC TC KC QC", "JH", out="9D TD", tricks=(1, 1), points=(60, 10))
    do(st, "close play:AS play:9S play:TS play:JS play:KS")
    # Seat 1 is void in spades and trumps (hearts): any card.
    do(st, "play:QC play:QS play:KC play:AH play:TC")
    assert st.count(0) >= 66 and st.trick_log[-1][3] == 0
    do(st, "play:9C play:AC")
    assert st.trick_log[-1][3] == 1
    assert (st.result.winner, st.result.game_points, st.result.reason) == (1, 2, "failed-close")


def test_e4_closer_who_wins_the_last_trick_with_66_is_out():
    st = make("AS TS KS QS AH AC", "9S JS 9C TC KC QC", "JH", out="9D TD", tricks=(1, 1), points=(40, 10))
    do(st, "close play:AS play:9S play:TS play:JS play:KS play:QC play:QS play:KC play:AH play:TC")
    do(st, "play:AC play:9C")
    assert st.result.winner == 0 and st.result.reason == "out" and st.result.declarer is None


def test_f1_14_closers_opponent_goes_out_first_scoring():
    for rule, had_trick, expected in [
        ("two_or_three", True, 2),
        ("two_or_three", False, 3),
        ("two", False, 2),
    ]:
        v = variant_of("sixty-six", beaten_closer=rule)
        st = make(
            "AD TD QC KC AC TC",
            "AS TS 9H JD QD KD",
            "JS",
            v,
            out="9D 9C",
            tricks=(1 if had_trick else 0, 1),
            points=(55, 10),
            leader=1,
        )
        do(st, "close play:JD play:AD")  # seat 0 heads with AD: 11 + 2
        assert st.trick_log[-1][3] == 0 and st.count(0) == 68
        do(st, "declare")
        assert (st.result.winner, st.result.game_points, st.result.reason) == (0, expected, "beaten-closer")


def test_f1_14_false_claim_by_the_closers_opponent_is_a_plain_false_claim():
    st = make("AD TD QC KC AC TC", "AS TS 9H JD QD KD", "JS", out="9D 9C", tricks=(1, 1), points=(20, 10), leader=1)
    do(st, "close play:JD play:AD declare")
    assert (st.result.winner, st.result.game_points, st.result.reason) == (1, 2, "false-claim")


# -- F1.16 / F1.17 / F1.18 / E6 going out and the scale ----------------------------------------
@pytest.mark.parametrize("opp_tricks, opp_points, expected", [(0, 0, 3), (2, 32, 2), (2, 33, 1), (1, 0, 2)])
def test_f1_17_game_point_scale(opp_tricks, opp_points, expected):
    st = make("AC TC 9D", "KC QC JD", None, trump="H", tricks=(3, opp_tricks), points=(66, opp_points))
    do(st, "declare")
    assert (st.result.winner, st.result.game_points, st.result.reason) == (0, expected, "out")


@pytest.mark.parametrize("opp_points, expected", [(31, 1), (30, 2)])
def test_f1_17_schneider_at_flag(opp_points, expected):
    v = variant_of("sixty-six", schneider_at=31)
    st = make("AC TC 9D", "KC QC JD", None, v, trump="H", tricks=(3, 2), points=(66, opp_points))
    do(st, "declare")
    assert st.result.game_points == expected


def test_f1_17_a_trick_of_two_nines_is_not_schwarz():
    st = make("9C AH AS", "9D TH KS", None, trump="D", tricks=(3, 0), points=(66, 0), leader=0)
    do(st, "play:9C")
    assert plays(st) == ["play:9D"]  # void in clubs: must trump
    do(st, "play:9D play:TH play:AH declare")
    assert st.tricks[1] == 1 and st.result.game_points == 2


@pytest.mark.parametrize("variant", BOTH)
def test_f1_16_exactly_66_wins_even_against_more(variant):
    st = make("AC TC KD", "KC QC JD", None, variant, trump="H", tricks=(3, 2), points=(66, 70))
    do(st, "declare")
    assert st.result.winner == 0 and st.result.declarer == 0


def test_f1_16_reaching_66_does_nothing_until_declared_and_only_on_lead():
    st = make("AC TC 9D", "KC QC JD", None, trump="H", tricks=(3, 2), points=(60, 20), leader=1)
    assert "declare" in legal(st)  # the leader (seat 1) has tricks
    do(st, "play:KC")
    assert "declare" not in legal(st)  # seat 0 may not claim as follower
    do(st, "play:AC")
    assert st.count(0) == 75 and not st.is_over() and "declare" in legal(st)


def test_e6_the_opening_leader_can_never_declare():
    assert "declare" not in legal(make("KC QD JD 9D TD AD", "AC 9C JC QC TC KD", "AH"))
    st = make("KC QC 9D JD 9S JS", "AC TC TD AD KD 9C", "AH")
    do(st, "marry:C")
    assert "declare" not in legal(st)


def test_f1_16_out_timing_any_time_lets_the_follower_claim():
    v = variant_of("sixty-six", out_timing="any_time")
    st = make("AC TC 9D", "KC QC JD", None, v, trump="H", tricks=(3, 2), points=(70, 20), leader=1)
    do(st, "play:KC")
    assert "declare" in legal(st)
    do(st, "declare")
    assert st.result.winner == 0


def test_f1_16_auto_out_flag():
    v = variant_of("sixty-six", auto_out=True)
    st = make("AC TC 9D", "KC QC JD", None, v, trump="H", tricks=(3, 2), points=(60, 20), leader=1)
    do(st, "play:KC play:AC")
    assert st.is_over() and st.result.reason == "out" and st.result.winner == 0


@pytest.mark.parametrize("opp_tricks, rule, expected", [(1, "two_or_three", 2), (0, "two_or_three", 3), (0, "two", 2)])
def test_f1_18_false_declaration(opp_tricks, rule, expected):
    v = variant_of("sixty-six", false_claim=rule)
    st = make("AC TC 9D", "KC QC JD", None, v, trump="H", tricks=(3, opp_tricks), points=(65, 0))
    do(st, "declare")
    assert (st.result.winner, st.result.game_points, st.result.reason) == (1, expected, "false-claim")
    assert st.returns() == (-expected, expected)


# -- E1 the order of a leader's turn ----------------------------------------------------------
def test_e1_exchange_marry_close_declare_lead_in_that_order():
    st = make("9H KH QH KC QC 9C", "AC TC TD AD KD 9D", "AH", out="AS TS", tricks=(1, 0), points=(21, 0))
    assert legal(st)[-5:] == ["marry:C", "marry:H", "exchange", "close", "declare"]
    do(st, "exchange")
    assert legal(st)[-4:] == ["marry:C", "marry:H", "close", "declare"]
    do(st, "marry:H")
    assert legal(st) == ["play:KH", "play:QH", "close", "declare"]
    do(st, "close")
    assert legal(st) == ["play:KH", "play:QH", "declare"]
    st = make("9H KH QH KC QC 9C", "AC TC TD AD KD 9D", "AH", out="AS TS", tricks=(1, 0))
    do(st, "close")
    assert not any(a.startswith("marry") or a == "exchange" for a in legal(st))


# -- F1.20 / F2.10 / F1.2 / E8 the match ------------------------------------------------------
def _finish_with(match, winner, game_points):
    """Play the match's next deal to a chosen result by declaring from a doctored state."""
    st = match.new_deal()
    st.tricks[winner] = 1
    st.points[winner] = 66 if game_points else 0
    st.tricks[winner ^ 1] = 0 if game_points == 3 else 1
    st.points[winner ^ 1] = 40 if game_points == 1 else 10
    if game_points == 0:
        st._finish(None, 0, "drawn", None)
    else:
        st.leader = st.to_act = winner
        st.apply_action("declare")
        assert st.result.game_points == game_points
    match.finish_deal()


def test_f1_20_match_to_seven_and_dealer_alternates():
    from arena.game import Match

    m = Match("sixty-six", seed=3, first_dealer=0)
    dealers = []
    for winner, gp in [(0, 3), (1, 2), (0, 0), (0, 3), (1, 1), (0, 1)]:
        dealers.append(m.dealer)
        _finish_with(m, winner, gp)
    assert dealers == [0, 1, 0, 1, 0, 1]  # E8: the deal passes after a draw too
    assert m.is_over() and m.result.winner == 0 and m.result.score == (7, 3)
    with pytest.raises(RuntimeError):
        m.new_deal()


def test_f1_2_next_dealer_winner_and_draw_keeps_the_dealer():
    from arena.game import Match

    m = Match(variant_of("sixty-six", next_dealer="winner"), seed=3, first_dealer=0)
    dealers = []
    for winner, gp in [(1, 1), (0, 0), (0, 1)]:
        dealers.append(m.dealer)
        _finish_with(m, winner, gp)
    assert dealers == [0, 1, 1] and m.dealer == 0


def test_f1_19_draw_carry_and_target_and_shutout_double():
    from arena.game import Match

    m = Match(variant_of("sixty-six", draw_carry=1, target=3, shutout_double=True), seed=1, first_dealer=0)
    _finish_with(m, 0, 0)
    _finish_with(m, 1, 1)  # 1 + the carried point
    assert m.score == [0, 2] and not m.is_over()
    _finish_with(m, 1, 1)
    assert m.result.winner == 1 and m.result.value == 2  # 3-0: a shutout counts double


def test_f2_10_schnapsen_match_is_first_to_seven():
    from arena.game import Match

    m = Match("schnapsen", seed=5, first_dealer=1)
    for _ in range(3):
        _finish_with(m, 1, 3)
    assert m.result.winner == 1 and m.result.score == (0, 9)


# -- F1.22 irregularities: illegal actions are rejected --------------------------------------------
def test_f1_22_illegal_action_names_action_seat_and_legal_set_and_changes_nothing():
    st = make("KC QD JD 9D TD AD", "AC 9C JC QC TC KD", "AH")
    before = st.clone()
    with pytest.raises(IllegalActionError) as e:
        st.apply_action("play:AC")
    msg = str(e.value)
    assert "play:AC" in msg and "seat 0" in msg and "play:KC" in msg and "close" in msg
    assert st == before
    do(st, "play:KC")
    with pytest.raises(IllegalActionError, match="seat 1"):
        st.apply_action("declare")
    assert st.history == before.history + [parse_card("KC")]
