"""The playout's C kernel (`arena/bots/_cplayout.c`, via `arena.bots.fast_playout`)
against the pure-Python loops it replaces, the open-phase one (`run_open`) and the one to
the end of the deal (`play_out`): the same final tuple, state by state, for both presets
and for every rule flag the loops can reach; and its errors."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from arena.bots import fast_playout as F
from arena.bots.endgame import fast_ok
from arena.bots.playout import playout, policy_action, result_value
from arena.game.actions import CLOSE, DECLARE
from arena.game.cards import KING
from arena.game.state import CLOSE_OFFER, DRAW_PENDING, FOLLOW, LEAD, OVER, deal_from_cards, new_deal
from arena.game.variant import FLAG_VALUES, PRESETS, get_variant

_cplayout = pytest.importorskip("arena.bots._cplayout", reason="the C kernel is not built (no C compiler at install)")

SIXTY_SIX = get_variant("sixty-six")
SCHNAPSEN = get_variant("schnapsen")

#: Each rule flag the loop reads, flipped from a preset (a few flips share a variant);
#: the last ones change what the loop cannot see, to show they do not matter.
FLIPS = [
    SIXTY_SIX.with_flags(closing=False),
    SIXTY_SIX.with_flags(close_before_draw=False, close_on_first_lead=False),
    SIXTY_SIX.with_flags(close_min_talon=4, exchange_min_talon=4),
    SIXTY_SIX.with_flags(exchange_needs_trick=False, exchange_on_first_lead=False),
    SIXTY_SIX.with_flags(exchange_on_close="opponent"),
    SIXTY_SIX.with_flags(marriage_needs_trick="to_declare", marriage_lead="king_only"),
    SIXTY_SIX.with_flags(strict_must_head=False, strict_must_trump=False),
    SIXTY_SIX.with_flags(strict_must_head=False, auto_out=True, schneider_at=31),
    SIXTY_SIX.with_flags(deck=20, exchange_rank="J"),
    SIXTY_SIX.with_flags(close_score_basis="at_close", failed_close="three", beaten_closer="two", false_claim="two"),
    SIXTY_SIX.with_flags(exhausted_rule="last_trick_wins", failed_close="by_closer_count"),
    SIXTY_SIX.with_flags(forced_marriage=True, exchange_timing="any_time", marriage_after_close=True),
    SCHNAPSEN.with_flags(exchange_on_close="opponent", exchange_min_talon=4),
    SCHNAPSEN.with_flags(close_before_draw=True, auto_out=True),
    SCHNAPSEN.with_flags(deck=24, exchange_rank="9", exchange_needs_trick=True, exhausted_rule="higher_total"),
    SCHNAPSEN.with_flags(marriage_lead="king_only", strict_must_trump=False, close_on_first_lead=False),
]

#: Flags a random variant draws (every two-handed rule but the unsupported values).
_DRAWN = [f for f, _ in F.RULE_FLAGS] + ["forced_marriage", "exchange_timing"]


def random_variant(rng: random.Random):
    flags = {}
    for f in _DRAWN:
        values = [x for x in FLAG_VALUES[f] if x != "any_with_trick"]
        flags[f] = rng.choice(values)
    if rng.random() < 0.5:
        flags.update(deck=20, exchange_rank="J")
    return SIXTY_SIX.with_flags(**flags)


VARIANTS = [*(get_variant(p) for p in PRESETS), *FLIPS, *(random_variant(random.Random(i)) for i in range(6))]
IDS = [*PRESETS, *(f"flips{i}" for i in range(len(FLIPS))), *(f"random{i}" for i in range(6))]


def _move(st, rng: random.Random) -> int:
    """A move that mixes the policy with random legal moves that seldom close or claim, so
    deals reach the last cards of the talon, draw decisions, close offers and weak closes."""
    acts = st.legal_actions()
    a = policy_action(st) if rng.random() < 0.5 else rng.choice(acts)
    if a not in acts or (a in (CLOSE, DECLARE) and rng.random() < 0.8):
        a = rng.choice([x for x in acts if x not in (CLOSE, DECLARE)] or acts)
    if CLOSE in acts and rng.random() < 0.04:
        a = CLOSE
    return a


def states(v, rng: random.Random, deals: int):
    """Every state of ``deals`` real deals up to the solver's point (a few past it too,
    and some over), played by `_move`."""
    out = []
    for _ in range(deals):
        st = new_deal(v, rng.randrange(1 << 30), rng.randint(0, 1))
        while True:
            done = st.phase == OVER or fast_ok(st)
            if not done or rng.random() < 0.3:
                out.append(st.clone())
            if done:
                break
            st.apply_legal(_move(st, rng))
    return out


def all_states(v, rng: random.Random, deals: int):
    """Every state of ``deals`` real deals played by `_move` to the end, the strict phase
    included (the final state too, now and then)."""
    out = []
    for _ in range(deals):
        st = new_deal(v, rng.randrange(1 << 30), rng.randint(0, 1))
        while st.phase != OVER:
            out.append(st.clone())
            st.apply_legal(_move(st, rng))
        if rng.random() < 0.3:
            out.append(st)
    return out


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
def test_the_c_playout_plays_exactly_as_the_python_loop(v):
    assert F.rules_for(v) is not None
    rng = random.Random(VARIANTS.index(v))
    kinds, phases, talons, closes = Counter(), Counter(), Counter(), Counter()
    for st in states(v, rng, 40):
        before = st.clone()
        got = F.run_open(st)
        assert got == F.reference(st), st
        assert st == before  # neither changes the state
        kinds[got[0]] += 1
        phases[st.phase] += 1
        talons[min(st.talon_size(), 3)] += 1  # 2: the last draw is next
        closes[got[13] >= 0 if got[0] else None] += 1
    # Both outcomes, both phases of the policy's plays, the last cards of the talon.
    assert kinds[0] and kinds[1] > kinds[0], kinds
    assert phases[LEAD] and phases[FOLLOW], phases
    assert talons[2] and talons[3], talons
    if v.close_before_draw and v.closing:
        assert phases[DRAW_PENDING], phases
    if v.exchange_on_close == "opponent" and v.closing:
        assert phases[CLOSE_OFFER], phases
    assert closes[False], closes  # the talon runs out
    assert bool(closes[True]) == v.closing, closes  # the policy closes, where closing is allowed


def test_the_policy_never_closes_where_closing_is_off():
    # With closing off the policy must not close (the close would be illegal there), in C
    # as in Python; with it on, it does from the same states.
    rng = random.Random(5)
    off = SIXTY_SIX.with_flags(closing=False)
    results = [(F.run_open(st), F.reference(st)) for st in states(off, rng, 30)]
    assert all(c == p and not (c[0] == 1 and c[13] >= 0) for c, p in results)
    closed = [F.run_open(st) for st in states(SIXTY_SIX, random.Random(5), 30)]
    assert any(r[0] == 1 and r[13] >= 0 for r in closed)


@pytest.mark.parametrize("rule", ["higher_total", "last_trick_wins"])
def test_a_deal_played_out_with_the_talon_open_is_settled_alike(rule):
    # Not reachable from a real deal (hands refill while the talon is open), but the
    # kernel settles it as State._settle_played_out does: one card each, then the lead.
    v = SIXTY_SIX.with_flags(exhausted_rule=rule)
    rng = random.Random(9)
    results = set()
    for _ in range(200):
        st = new_deal(v, rng.randrange(1 << 30), rng.randint(0, 1))
        lead, other = rng.sample([c for c in range(24) if (st.hand[0] | st.hand[1]) >> c & 1], 2)
        st.hand = [0, 0]
        st.hand[st.to_act] = 1 << lead
        st.hand[st.to_act ^ 1] = 1 << other
        st.stock = st.stock[: rng.choice([1, 3, 5])]
        st.points = [rng.randint(0, 60), rng.randint(0, 60)]
        st.tricks = [rng.randint(0, 5) for _ in range(2)]
        st.apply_legal(lead)
        got = F.run_open(st)
        assert got == F.reference(st), st
        assert F.play_out(st) == F.reference_out(st) == got[1:], st
        results.add(got)
    assert {r[0] for r in results} == {0} and len({r[1] for r in results}) >= 2


def test_the_kernel_is_used_and_rules_are_cached():
    assert F.AVAILABLE
    r = F.rules_for(SIXTY_SIX)
    assert isinstance(r, _cplayout.Rules) and F.rules_for(SIXTY_SIX) is r
    assert r.flags == F.rule_flags(SIXTY_SIX) and len(r.flags) == len(F.RULE_FLAGS)
    assert F.rules_for(SCHNAPSEN).flags != r.flags


def test_unsupported_variants_get_no_rules_and_play_the_python_loop():
    any_time = SIXTY_SIX.with_flags(out_timing="any_time")
    for v in (any_time, SIXTY_SIX.with_flags(exchange_on_close="any_with_trick"), get_variant("three-pagat")):
        assert F.rules_for(v) is None
    st = new_deal(any_time, 3)
    assert F.run_open(st) == F.reference(st)
    assert F.play_out(st) == F.reference_out(st)


def test_use_c_false_plays_the_python_loops(monkeypatch):
    st = new_deal(SIXTY_SIX, 8)
    want = F.run_open(st), F.play_out(st)
    monkeypatch.setattr(F, "USE_C", False)
    monkeypatch.setattr(F, "_cplayout", None)  # not reached
    assert (F.run_open(st), F.play_out(st)) == want == (F.reference(st), F.reference_out(st))


def _args(st):
    h, t, p, mc, mp = st.hand, st.tricks, st.points, st.mcredit, st.mpending
    return [F.rules_for(st.variant), st.trump, st.ex_card, h[0], h[1], st.stock, st.stock_pos, st.turn_up,
            int(st.strict), st.phase, st.to_act, st.leader, st.lead_card, st.step, st.marriage_suit, st.closed_by,
            t[0], t[1], p[0], p[1], mc[0], mc[1], mp[0], mp[1], st.n_tricks]  # fmt: skip


def test_bad_arguments_raise():
    flags = F.rule_flags(SIXTY_SIX)
    with pytest.raises(ValueError, match="tuple of 20 ints"):
        _cplayout.Rules(flags[:-1])
    with pytest.raises(ValueError, match="exchange_on_close"):
        _cplayout.Rules(flags[:7] + (2,) + flags[8:])
    with pytest.raises(TypeError):
        _cplayout.Rules(list(flags))
    st = new_deal(SIXTY_SIX, 1)
    args = _args(st)
    assert _cplayout.run(*args) == F.reference(st)
    with pytest.raises(TypeError):
        _cplayout.run(*args[:-1])
    with pytest.raises(TypeError, match="Rules"):
        _cplayout.run(flags, *args[1:])

    def bad(i, value, match):
        with pytest.raises(ValueError, match=match):
            _cplayout.run(*args[:i], value, *args[i + 1 :])

    bad(5, tuple(range(24)) + (0,), "at most 24")
    bad(5, (1, 2, 24), "stock card")
    bad(1, 4, "trump")
    bad(3, 1 << 24, "h0")
    bad(3, 1 << 80, "h0")
    bad(6, len(st.stock) + 1, "stock_pos")
    bad(6, 1, "odd number")  # an even talon
    bad(9, OVER, "over")
    bad(10, st.to_act ^ 1, "leader")
    bad(4, st.hand[1] | 1 << st.stock[0], "as many cards")
    no_pair = next(s for s in range(4) if st.hand[st.to_act] >> (6 * s + KING) & 3 != 3)
    bad(14, no_pair, "marriage")


def test_a_deal_closed_before_the_call_keeps_its_close_facts():
    v = SIXTY_SIX.with_flags(exchange_on_close="opponent")
    rng = random.Random(4)
    seen = Counter()
    for st in states(v, rng, 60):
        if st.closed_by >= 0 and st.phase != OVER:
            got = F.run_open(st)
            assert got == F.reference(st)
            assert got[14:] == st.close_tricks + st.close_points
            seen[st.phase] += 1
    assert seen[CLOSE_OFFER] and seen[LEAD], seen


# -- play_out: to the end of the deal ---------------------------------------------------------


def _result(st) -> tuple:
    r = st.result
    return (-1 if r.winner is None else r.winner, r.game_points, *r.points)


def _start(st) -> str:
    """Where a call starts: the talon open, closed before the call, or exhausted."""
    if not st.strict:
        return "open"
    return "closed" if st.closed_by >= 0 else "exhausted"


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
def test_the_c_playout_plays_to_the_end_as_the_python_loop(v):
    rng = random.Random(100 + VARIANTS.index(v))
    starts, phases, winners, points, marriages = Counter(), Counter(), Counter(), Counter(), Counter()
    for st in all_states(v, rng, 40):
        before = st.clone()
        got = F.play_out(st)
        assert got == F.reference_out(st), st
        assert st == before  # neither changes the state
        starts[_start(st)] += 1
        phases[st.phase] += 1
        winners[got[0]] += 1
        points[got[1]] += 1
        marriages["shown"] += st.marriage_suit >= 0 and st.phase == LEAD  # its card is to be led
        marriages["pending"] += any(st.mpending)  # shown before a first trick
        if st.phase == OVER:  # the result as it stands
            assert got == _result(st)
    # Calls from every part of a deal (a few over), won by either seat.
    assert starts["open"] and starts["exhausted"], starts
    if v.closing:
        assert starts["closed"], starts
    assert phases[LEAD] and phases[FOLLOW] and phases[OVER], phases
    if v.close_before_draw and v.closing:
        assert phases[DRAW_PENDING], phases
    if v.exchange_on_close == "opponent" and v.closing:
        assert phases[CLOSE_OFFER], phases
    assert winners[0] and winners[1], winners
    assert points[1] and points[2], points
    assert marriages["shown"], marriages
    if v.marriage_needs_trick == "to_count":
        assert marriages["pending"], marriages


def test_play_out_reaches_every_kind_of_ending():
    # The reason a deal ends is not in the tuple: `playout` (the same loop) tells it.
    reasons, kinds, strict_marriages = Counter(), Counter(), 0
    for i, v in enumerate(VARIANTS):
        for st in all_states(v, random.Random(200 + i), 6):
            end = playout(st.clone())
            got = F.play_out(st)
            assert got == _result(end), st
            reasons[end.result.reason] += 1
            kinds[got[:2]] += 1
            if st.strict and any(e[0] == "marriage" for e in end.events[len(st.events) :]):
                strict_marriages += 1  # marriage_after_close: shown in the strict phase, in the kernel's run
    assert {"out", "failed-close", "beaten-closer", "higher-total", "last-trick", "drawn"} <= set(reasons), reasons
    assert {(w, g) for w in (0, 1) for g in (1, 2, 3)} | {(-1, 0)} <= set(kinds), kinds
    assert strict_marriages, "no marriage declared in the strict phase"


@pytest.mark.parametrize("v", [SIXTY_SIX, *FLIPS[9:11]], ids=["sixty-six", "at-close", "by-closer-count"])
def test_a_deal_closed_before_the_call_is_scored_by_its_close_facts(v):
    rng = random.Random(7)
    closed = [st for st in all_states(v, rng, 120) if st.closed_by >= 0 and st.phase != OVER]
    changed = 0
    for st in closed:
        got = F.play_out(st)
        assert got == F.reference_out(st), st
        # The close facts are read: zeros (the closer's opponent had no trick at the close)
        # score some of these deals otherwise.
        args = _args(st) + [0, 0, 0, 0]
        changed += _cplayout.run_to_end(*args) != got
    assert len(closed) > 300 and changed, (len(closed), changed)


@pytest.mark.parametrize("rule, want", [("higher_total", (-1, 0, 65, 65)), ("last_trick_wins", (0, 1, 55, 65))])
def test_the_last_trick_settles_an_exhausted_deal(rule, want):
    # One card each: the last trick's 10 makes 65 all (a drawn hand) where the totals count.
    v = SIXTY_SIX.with_flags(exhausted_rule=rule)
    st = deal_from_cards(v, [["AS"], ["9S"]], None, trump="C", leader=0, tricks=[5, 5], points=[44, 65])
    assert F.play_out(st) == F.reference_out(st) == want


def test_run_to_end_bad_arguments_raise():
    rng = random.Random(3)
    st = next(s for s in all_states(SIXTY_SIX, rng, 20) if s.closed_by >= 0 and s.phase == LEAD and s.turn_up >= 0)
    facts = [*st.close_tricks, *st.close_points]
    args = _args(st) + facts
    assert _cplayout.run_to_end(*args) == F.reference_out(st)
    with pytest.raises(TypeError, match="run_to_end.. takes 29"):
        _cplayout.run_to_end(*args[:-1])
    with pytest.raises(TypeError, match="run_to_end.. takes 29"):
        _cplayout.run_to_end(*args, 0)
    with pytest.raises(TypeError, match="run_to_end: rules"):
        _cplayout.run_to_end(None, *args[1:])
    with pytest.raises(TypeError):
        _cplayout.run_to_end(*args[:-1], "0")
    with pytest.raises(TypeError, match="run_to_end: stock must be a tuple of card ids, got int"):
        _cplayout.run_to_end(*args[:5], 5, *args[6:])

    def bad(i, value, match):
        with pytest.raises(ValueError, match=match):
            _cplayout.run_to_end(*args[:i], value, *args[i + 1 :])

    bad(25, -1, "run_to_end: ct0 must be in 0..99")
    bad(26, 100, "ct1 must be in")
    bad(27, 1000, "cp0 must be in 0..999")
    bad(28, 1 << 80, "cp1 is out of range")
    bad(9, OVER, "run_to_end: the deal is over")
    bad(5, (1, 2, 24), "run_to_end: a stock card")
    no_pair = next(s for s in range(4) if st.hand[st.to_act] >> (6 * s + KING) & 3 != 3)
    bad(14, no_pair, "marriage")  # checked in the strict phase too

    # Close facts belong to a closed deal.
    open_st = new_deal(SIXTY_SIX, 1)
    open_args = _args(open_st) + [0, 0, 0, 0]
    assert _cplayout.run_to_end(*open_args) == F.reference_out(open_st)
    with pytest.raises(ValueError, match="must be 0 in a deal not closed"):
        _cplayout.run_to_end(*open_args[:-1], 1)
    # A strict deal that is neither closed nor exhausted, an open one that is closed.
    with pytest.raises(ValueError, match="closed or have an exhausted talon"):
        _cplayout.run_to_end(*args[:15], -1, *args[16:25], 0, 0, 0, 0)
    with pytest.raises(ValueError, match="a closed deal must be strict"):
        _cplayout.run_to_end(*open_args[:15], 0, *open_args[16:])


# -- lookahead (`fast_playout.lookahead_action`, the kernel's `run_lookahead`) -----------------


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
def test_the_lookahead_playout_plays_as_the_python_loop(v):
    rng = random.Random(300 + VARIANTS.index(v))
    starts = Counter()
    for st in all_states(v, rng, 3):
        before = st.clone()
        got = F.play_out_lookahead(st)
        assert got == F.reference_lookahead(st), st
        assert st == before
        starts[_start(st)] += 1
    assert starts["open"] and len(starts) > 1, starts  # and calls after the talon's open phase


@pytest.mark.parametrize("v", [SIXTY_SIX, SCHNAPSEN], ids=["sixty-six", "schnapsen"])
def test_two_levels_of_lookahead_play_as_the_python_loop(v):
    rng = random.Random(7)
    sts = [st for st in states(v, rng, 4) if st.phase != OVER][::3]
    assert len(sts) > 10
    for st in sts:
        assert F.play_out_lookahead(st, 2) == F.reference_lookahead(st, 2), st


@pytest.mark.parametrize("v", [SIXTY_SIX, SCHNAPSEN], ids=["sixty-six", "schnapsen"])
def test_pruned_lookahead_plays_as_the_python_loop(v):
    """A ``width`` prunes levels 2 and 3 to the policy's card and the best others by the
    policy's playouts: the kernel and its Python twin agree at each width; width 1 keeps
    the policy's card alone (so it plays as the policy), and a width past the hand's size
    prunes nothing."""
    rng = random.Random(8)
    sts = [st for st in states(v, rng, 4) if st.phase != OVER][::4]
    assert len(sts) > 8
    pruned = 0
    for st in sts:
        full = F.play_out_lookahead(st, 2)
        assert F.play_out_lookahead(st, 2, 7) == full
        assert F.play_out_lookahead(st, 2, 1) == F.play_out(st)  # the policy's card alone: the policy
        for w in (2, 3):
            got = F.play_out_lookahead(st, 2, w)
            assert got == F.reference_lookahead(st, 2, w), (st, w)
            pruned += got != full
    assert pruned  # it changes some playouts
    for st in sts[:3]:  # three levels pruned to two (docs/agents-strength.md, at 1,000 ms)
        assert F.play_out_lookahead(st, 3, 2) == F.reference_lookahead(st, 3, 2), st
    # Width 2 plays the policy's card or the one other card that plays out best by the policy.
    looked = 0
    for st in sts:
        a0 = policy_action(st)
        if st.strict or st.phase not in (LEAD, FOLLOW) or a0 >= 24:
            continue
        by_policy = {}
        for c in st.legal_actions():
            if c < 24 and c != a0:
                nxt = st.clone()
                nxt.apply_legal(c)
                winner, g, c0, c1 = F.reference_out(nxt)
                by_policy[c] = result_value(winner, g, (c0, c1), st.to_act, range(-3, 4))
        if not by_policy:
            continue
        top = max(by_policy.values())
        assert F.lookahead_action(st, 2, 2) in {a0} | {c for c, x in by_policy.items() if x == top}
        looked += 1
    assert looked


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
def test_lookahead_chooses_a_legal_card_no_worse_than_the_policy(v):
    """Its choice is legal (a marriage's halves are never led, so forced marriages hold),
    differs from the policy's only on open-phase cards, and plays out at least as well
    for the seat to act as the policy's card (it is the best of the candidates)."""
    rng = random.Random(400 + VARIANTS.index(v))
    changed = 0
    for st in states(v, rng, 6):
        if st.phase == OVER:
            continue
        a, a0 = F.lookahead_action(st), policy_action(st)
        assert a in st.legal_actions(), st
        if a != a0:
            changed += 1
            assert not st.strict and st.phase in (LEAD, FOLLOW) and a < 24 and a0 < 24
            ends = []
            for card in (a, a0):
                nxt = st.clone()
                nxt.apply_legal(card)
                winner, g, c0, c1 = F.reference_out(nxt)
                ends.append(result_value(winner, g, (c0, c1), st.to_act, range(-3, 4)))
            assert ends[0] > ends[1]
    assert changed  # it does change moves


def test_lookahead_bad_arguments_raise():
    st = new_deal(SIXTY_SIX, 4)
    args = _args(st) + [0, 0, 0, 0]
    assert _cplayout.run_lookahead(*args, 1) == F.reference_lookahead(st)
    with pytest.raises(TypeError, match=r"run_lookahead\(\) takes 30 or 31 arguments \(29 given\)"):
        _cplayout.run_lookahead(*args)
    with pytest.raises(TypeError, match=r"run_lookahead\(\) takes 30 or 31 arguments \(32 given\)"):
        _cplayout.run_lookahead(*args, 2, 2, 2)
    for width in (-1, 33):
        with pytest.raises(ValueError, match="run_lookahead: width must be in 0..32"):
            _cplayout.run_lookahead(*args, 2, width)
        with pytest.raises(ValueError, match="play_out_lookahead: width must be 0 .no pruning. to 32"):
            F.play_out_lookahead(st, 2, width)
    assert _cplayout.run_lookahead(*args, 2, 0) == _cplayout.run_lookahead(*args, 2) == F.reference_lookahead(st, 2)
    for level in (0, 4):
        with pytest.raises(ValueError, match="run_lookahead: level must be in 1..3"):
            _cplayout.run_lookahead(*args, level)
        with pytest.raises(ValueError, match="play_out_lookahead: level must be 1, 2 or 3"):
            F.play_out_lookahead(st, level)
    with pytest.raises(ValueError, match="run_lookahead: the deal is over"):
        _cplayout.run_lookahead(*args[:9], OVER, *args[10:], 1)


def test_lookahead_without_the_kernel_plays_the_python_loop(monkeypatch):
    st = new_deal(SCHNAPSEN, 9)
    want = F.play_out_lookahead(st)
    monkeypatch.setattr(F, "USE_C", False)
    monkeypatch.setattr(F, "_cplayout", None)  # not reached
    assert F.play_out_lookahead(st) == want == F.reference_lookahead(st)


def test_deep_search_is_the_first_lookahead_the_budget_affords(monkeypatch):
    """`deep_search`: the first of the ``(level, width)`` lookaheads whose playouts, at
    `LOOKAHEAD_US`'s cost for the deck, the budget affords the asked number of; plain
    playouts, ``(0, 0)``, where none fits or the kernel does not play the variant."""
    cost = F.LOOKAHEAD_US
    assert set(cost) == {24, 20}
    for c in cost.values():  # each level dearer than the one below, pruning cheaper than none
        assert c[0, 0] < c[1, 0] < c[2, 2] < c[2, 3] < c[2, 0] < c[3, 2] < c[3, 0]
    full, pruned, three = (2, 0), (2, 2), (3, 0)
    for v in (SIXTY_SIX, SCHNAPSEN):
        c = cost[v.deck]
        assert F.deep_search(v, 100.5 * c[full] / 1000, 100, [full]) == full  # affords 100 playouts, not 101
        assert F.deep_search(v, 99.5 * c[full] / 1000, 100, [full]) == (0, 0)
        assert F.deep_search(v, 99.5 * c[full] / 1000, 100, [full, pruned]) == pruned
        assert F.deep_search(v, 100.5 * c[three] / 1000, 100, [three, full]) == three
        assert F.deep_search(v, 99.5 * c[three] / 1000, 100, [three, full]) == full
        assert F.deep_search(v, 10_000, 100, ()) == (0, 0)
        assert F.deep_search(v, 100.5 * c[3, 2] / 1000, 100, [[3, 2], [2, 0]]) == (3, 2)  # pairs as JSON gives them
    assert F.deep_search(SCHNAPSEN, 32, 450, [full]) == full and F.deep_search(SIXTY_SIX, 32, 450, [full]) == (0, 0)
    assert F.deep_search(get_variant("four-pagat"), 10_000, 1, [full]) == (0, 0)  # not the kernel's
    assert F.deep_search(SIXTY_SIX.with_flags(out_timing="any_time"), 10_000, 1, [full]) == (0, 0)
    monkeypatch.setattr(F, "USE_C", False)
    assert F.deep_search(SIXTY_SIX, 10_000, 1, [full]) == (0, 0)
