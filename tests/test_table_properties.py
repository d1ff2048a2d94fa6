"""Properties of every three- and four-handed preset over 10,000 seeded random deals each.

Each deal is played by a seeded random policy (half of the deals never claim 66 and bid
low, so they are played out and bids are made). At every decision the legal set is
checked against an independent statement of the rules (M3 follow rule, the lead, the
bidding); at the end cards are conserved, every trick is complete and won by the right
card, and the result is recomputed from the trick record. Every deal is replayed from
its action history to an equal state. On a sample of decision points the information
set is checked: permuting the cards a seat cannot see leaves its observation unchanged
and no hidden card is named in it.
"""

from __future__ import annotations

import json
import random

import pytest

from arena.game import Match, State, TableState, card_str, get_variant, new_deal, observation, parse_card
from arena.game.cards import POINTS_32, SUIT_OF

TABLE = ["three-pagat", "three-cutthroat", "four-pagat", "kreuzmariage", "four-bidding"]
DEALS = 10_000
ORDER = "ATKQJ987"


def strength(c: int) -> int:
    """Rank index in A T K Q J 9 8 7 (lower is stronger), from the card's name."""
    return ORDER.index(card_str(c)[0])


def beats(c: int, w: int, trump: int) -> bool:
    """Whether ``c`` played later beats the trick's current winner ``w`` (F1.5)."""
    if SUIT_OF[c] == SUIT_OF[w]:
        return strength(c) < strength(w)
    return SUIT_OF[c] == trump


def ref_winner(trick, trump: int) -> tuple[int, int]:
    ws, wc = trick[0]
    for s, c in trick[1:]:
        if beats(c, wc, trump):
            ws, wc = s, c
    return ws, wc


def ref_follow(st: TableState, me: int) -> set[int]:
    """M3, stated directly: follow and beat, else any of the suit; trump, over-trump."""
    v = st.variant
    hand = [c for c in range(32) if st.hand[me] >> c & 1]
    ls = SUIT_OF[st.trick[0][1]]
    trump = st.trump
    ws, wc = ref_winner(st.trick, trump)
    relaxed = st.players == 4 and ws == (me + 2) % 4 and not v.head_partner
    same = [c for c in hand if SUIT_OF[c] == ls]
    if same:
        if SUIT_OF[wc] != ls or relaxed:
            return set(same)
        return {c for c in same if beats(c, wc, trump)} or set(same)
    trumps = [c for c in hand if SUIT_OF[c] == trump]
    if not trumps:
        return set(hand)
    if SUIT_OF[wc] == trump and not relaxed:
        over = {c for c in trumps if beats(c, wc, trump)}
        return over or (set(trumps) if v.undertrump == "required" else set(hand))
    return set(trumps)


def check_legal(st: TableState, legal: list[str]) -> None:
    ids = st.legal_actions()
    assert ids == sorted(set(ids)) and len(ids) == len(legal)
    me = st.current_player()
    plays = {parse_card(a[5:]) for a in legal if a.startswith("play:")}
    ph = st.phase_name
    if ph == "follow":
        assert plays == ref_follow(st, me) and len(plays) == len(legal)
    elif ph == "lead":
        hand = {c for c in range(32) if st.hand[me] >> c & 1}
        ms = st.marriage_suit
        four_pagat = st.form == 0 and st.players == 4
        if ms >= 0 and not four_pagat:
            assert plays == {ms * 6 + 2, ms * 6 + 3}
        else:
            assert plays == hand
        marries = {a for a in legal if a.startswith("marry:")}
        if marries:
            assert ms < 0 and st.variant.form != "kreuzmariage" or st.variant.marriages
            for a in marries:
                s = "CDHS".index(a[-1])
                assert {s * 6 + 2, s * 6 + 3} <= hand
        assert ("declare" in legal) == (four_pagat and st.team_tricks(me & 1) > 0)
    elif ph == "bid":
        bids = [int(a[4:]) for a in legal if a.startswith("bid:")]
        top = 4 if st.variant.form == "cutthroat" or st.variant.moon == "none" else 5
        assert bids == list(range(st.bid + 1, top + 1))
    elif ph == "name":
        assert legal == ["pass", "trump:C", "trump:D", "trump:H", "trump:S"]
    elif ph == "meld":  # F4.1: the leader's partner, every lead, whatever he holds
        assert me == st.trick[0][0] ^ 2 and legal[-1] == "pass"
        shown = {(e[1], e[2]) for e in st.events if e[0] == "marriage"}
        held = {s for s in range(4) if st.hand[me] >> (s * 6 + 2) & 3 == 3 and (me, s) not in shown}
        assert {"CDHS".index(a[-1]) for a in legal[:-1]} == held
    elif ph == "last":
        assert legal == ["declare", "pass"] and not any(st.hand)


def check_end(st: TableState) -> None:
    v = st.variant
    n = st.players
    r = st.result
    if r.reason == "all-pass":
        assert st.n_tricks == 0 and set(r.scores) == {0}
        return
    pack = (1 << (32 if v.deck == 32 else 24)) - 1
    played = 0
    pts = [0] * n
    for lead, cards, w in st.trick_log:
        assert cards[0][0] == lead and len(cards) == (3 if st.active or n == 3 else 4)
        assert len({s for s, _ in cards}) == len(cards)
        trump = st.trump
        assert ref_winner(list(cards), trump)[0] == w
        for _, c in cards:
            assert not played >> c & 1
            played |= 1 << c
            pts[w] += POINTS_32[c]
    if st.widow:
        pts[st.trick_log[0][2]] += sum(POINTS_32[c] for c in range(32) if st.widow >> c & 1)
    out = st.hand[st.active and next(s for s in range(n) if s not in st.active)] if st.active else 0
    rest = st.hand[0] | st.hand[1] | st.hand[2] | (st.hand[3] if n == 4 else 0)
    assert played | st.widow | rest == pack and not played & (st.widow | rest)
    played_out = not (rest & ~out)
    if played_out and (v.form == "kreuzmariage" or v.form == "pagat" and n == 4):
        pts[st.trick_log[-1][2]] += 10
    assert pts == st.points
    teams = 2 if n == 4 else n
    side_tricks = [sum(st.tricks[s] for s in range(n) if st.team_of(s) == t) for t in range(teams)]
    counts = [sum(pts[s] for s in range(n) if st.team_of(s) == t) + (st.melds[t] if side_tricks[t] else 0)
              for t in range(teams)]  # fmt: skip
    assert list(r.points) == counts and list(r.tricks) == side_tricks
    if played_out and v.form != "pagat" or v.form == "pagat" and n == 3:
        base = (130 if v.form == "kreuzmariage" else 120) - sum(POINTS_32[c] for c in range(32) if out >> c & 1)
        credited = sum(st.melds[t] for t in range(teams) if side_tricks[t])
        assert sum(counts) == base + credited
    form = v.form
    if form == "pagat" and n == 3:
        assert sum(r.scores) == 0
        top = max(counts)
        if counts.count(top) == 1:
            w = counts.index(top)
            for s in range(3):
                if s != w:
                    assert r.scores[s] == -(1 if counts[s] >= 33 else 2 if side_tricks[s] else 3)
    elif form == "pagat":
        if r.reason == "out":
            t = r.declarer & 1
            assert counts[t] >= 66 and r.scores[t] in (1, 2, 3) and r.scores[t ^ 1] == 0
        elif r.reason == "false-claim":
            assert counts[r.declarer & 1] < 66 and r.scores[r.declarer & 1] == 0
        else:
            assert r.reason in ("more-points", "drawn") and sum(r.scores) == (counts[0] != counts[1])
    elif form == "kreuzmariage":
        a, b = counts
        if a == b:
            assert r.winner is None
        else:
            w = 0 if a > b else 1
            want = 3 if side_tricks[w ^ 1] == 0 else 2 if counts[w] >= 100 else 1
            assert r.scores[w] == want
    else:
        bt = st.team_of(st.bidder)
        if st.bid == 5:
            assert r.scores[bt] == (5 if st.tricks[st.bidder] == st.n_tricks else -5)
            assert all(r.scores[t] == 0 for t in range(teams) if t != bt)
        else:
            for t in range(teams):
                if t == bt and counts[t] < 33 * st.bid:
                    assert r.scores[t] == -st.bid and r.reason == "set"
                else:
                    assert r.scores[t] == counts[t] // 33


def hidden_places(st: TableState, me: int) -> tuple[list[int], list[tuple[str, int, int]]]:
    """The cards ``me`` cannot see and their places: (seat, count) of hands, order, widow."""
    obs = observation(st, me)
    cards: list[int] = []
    places: list[tuple[str, int, int]] = []
    for s in range(st.players):
        if s == me:
            continue
        known = 0
        for name in obs["known_cards"][s]:
            known |= 1 << parse_card(name)
        h = st.hand[s] & ~known
        cs = [c for c in range(32) if h >> c & 1]
        cards += cs
        places.append(("hand", s, len(cs)))
    if st.phase_name == "name":  # the undealt cards of F3.1
        cs = list(st.order[9:])
        cards += cs
        places.append(("order", 9, len(cs)))
    if st.widow and st.widow_taken < 0:
        cs = [c for c in range(32) if st.widow >> c & 1]
        cards += cs
        places.append(("widow", 0, len(cs)))
    return cards, places


def check_information_set(st: TableState, me: int, rng: random.Random) -> None:
    obs = observation(st, me)
    cards, places = hidden_places(st, me)
    text = json.dumps(obs)
    for c in cards:
        assert f'"{card_str(c)}"' not in text, (card_str(c), me, text)
    shuffled = cards[:]
    rng.shuffle(shuffled)
    twin = st.clone()
    pos = 0
    for kind, where, k in places:
        part = shuffled[pos : pos + k]
        pos += k
        m = sum(1 << c for c in part)
        if kind == "hand":
            twin.hand[where] = (st.hand[where] & ~sum(1 << c for c in cards)) | m
        elif kind == "order":
            twin.order = st.order[:9] + tuple(part)
        else:
            twin.widow = m
    assert observation(twin, me) == obs


def choose(st: TableState, rng: random.Random, careful: bool) -> int:
    acts = st.legal_actions()
    if careful:
        if st.phase_name == "bid":
            acts = [a for a in acts if a in (32, 41)] or acts  # pass or bid:1
        elif st.phase_name == "lead":
            acts = [a for a in acts if a != 30] or acts  # never claim on lead
    return acts[int(rng.random() * len(acts))]


@pytest.mark.parametrize("preset", TABLE)
def test_random_deals_keep_the_rules_and_replay(preset: str) -> None:
    v = get_variant(preset)
    rng = random.Random(preset)
    reasons: dict[str, int] = {}
    for k in range(DEALS):
        dealer = k % v.players
        st = new_deal(v, k, dealer)
        sample = rng.random() < 0.05
        at = int(rng.random() * 30)
        step = 0
        while not st.is_over():
            if st.phase_name != "over":
                check_legal(st, st.legal_action_strings())
            if sample and step == at:
                for me in range(st.players):
                    check_information_set(st, me, rng)
            st.apply_legal(choose(st, rng, careful=k & 1 == 1))
            step += 1
        check_end(st)
        if sample:
            for me in range(st.players):
                check_information_set(st, me, rng)
        twin = new_deal(v, k, dealer)
        for a in st.history:
            twin.apply_legal(a)
        assert twin == st
        reasons[st.result.reason] = reasons.get(st.result.reason, 0) + 1
    assert len(reasons) >= 2, reasons  # the deals end in more than one way


@pytest.mark.parametrize("preset", TABLE + ["three-sitout"])
def test_seeded_matches_replay_and_end_with_the_right_kind_of_result(preset: str) -> None:
    v = get_variant(preset)
    for seed in range(40):
        results = []
        for _ in range(2):
            rng = random.Random(seed)
            m = Match(v, seed)
            while not m.is_over():
                st = m.new_deal()
                while not st.is_over():
                    st.apply_legal(choose(st, rng, careful=True) if isinstance(st, TableState) else
                                   st.legal_actions()[int(rng.random() * len(st.legal_actions()))])  # fmt: skip
                m.finish_deal()
            results.append((m.result, [s.history for s in m.deals]))
        assert results[0] == results[1]
        r = results[0][0]
        assert r.kind == ("order" if preset == "three-sitout" else "team" if v.players == 4 else "winner")
        if r.kind == "order":
            assert sorted(r.order) == [0, 1, 2] and r.order[0] == r.winner
        else:
            assert r.score[r.winner] >= v.target


def test_sitout_deals_show_each_seat_its_information_set_only() -> None:
    """F3.3 deals are two-handed: the same permutation test over 10,000 seeded deals."""
    v = get_variant("three-sitout")
    rng = random.Random(3)
    for k in range(DEALS):
        st: State = new_deal(v, k, 1)
        at = int(rng.random() * 12)
        for _ in range(at):
            if st.is_over():
                break
            acts = st.legal_actions()
            st.apply_legal(acts[int(rng.random() * len(acts))])
        if k % 10:
            continue
        me = k // 10 % 2
        opp = me ^ 1
        obs = observation(st, me)
        known = sum(1 << parse_card(c) for c in obs["known_cards"][opp])
        hid_opp = [c for c in range(24) if (st.hand[opp] & ~known) >> c & 1]
        talon = list(st.stock[st.stock_pos :])
        cards = hid_opp + talon
        rng.shuffle(cards)
        twin = st.clone()
        twin.hand[opp] = (st.hand[opp] & known) | sum(1 << c for c in cards[: len(hid_opp)])
        twin.stock = st.stock[: st.stock_pos] + tuple(cards[len(hid_opp) :])
        assert observation(twin, me) == obs


@pytest.mark.parametrize("preset", TABLE + ["three-sitout"])
def test_selfplay_covers_every_table_preset(preset: str) -> None:
    from arena.play.selfplay import selfplay

    rep = selfplay(preset, ["random", "greedy"], 4, 2)
    assert sum(t.matches_won for t in rep.tallies) == 4 and rep.deals >= 4
    if preset != "three-sitout":  # F3.3 deals are two-handed: every strategy plays them
        with pytest.raises(ValueError, match="'expert-oracle' plays only the two-handed games"):
            selfplay(preset, ["random", "expert-oracle"], 1, 2)
