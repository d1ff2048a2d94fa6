"""The exact solver's C kernel (`arena/bots/_csolve.c`) against the Python solver it
replaces: the same values and the same nodes, position by position, for both presets and
for the rule flags the solver reads; and its errors."""

import random

import pytest
from test_expert import closed_from_play, endgame

from arena.bots import endgame as E
from arena.game.variant import PRESETS, get_variant

_csolve = pytest.importorskip("arena.bots._csolve", reason="the C kernel is not built (no C compiler at install)")

#: Every strict-phase rule the solver reads, each flipped from a preset.
VARIANTS = [
    *PRESETS,
    get_variant("sixty-six").with_flags(marriage_after_close=True, marriage_needs_trick="to_declare"),
    get_variant("sixty-six").with_flags(strict_must_head=False, strict_must_trump=False, auto_out=True),
    get_variant("sixty-six").with_flags(failed_close="three", beaten_closer="two", false_claim="two"),
    get_variant("sixty-six").with_flags(failed_close="by_closer_count", close_score_basis="at_close", schneider_at=31),
    get_variant("schnapsen").with_flags(exhausted_rule="higher_total", marriage_lead="king_only"),
    get_variant("schnapsen").with_flags(marriage_after_close=True, close_score_basis="end"),
]


def positions(variant, rng: random.Random, n: int):
    """Strict-phase positions: dealt endgames and real deals closed at random."""
    v = get_variant(variant)
    for i in range(n):
        if i % 2:
            yield endgame(v, rng, rng.randint(1, v.hand_size))
        else:
            yield closed_from_play(v, rng, v.hand_size)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v if isinstance(v, str) else f"flags{VARIANTS.index(v)}")
def test_the_c_solver_searches_exactly_as_the_python_one(variant):
    rng = random.Random(7)
    closed = set()
    values = set()
    for st in positions(variant, rng, 120):
        # Half with the whole window, half with a narrow one: fail-soft bounds must agree too.
        alpha, beta = (-99, 99) if rng.random() < 0.5 else sorted(rng.sample(range(-4, 5), 2))
        facts = (st.variant, st.trump, st.closed_by, st.close_tricks, st.close_points)
        py, c = E._Solver(*facts), E._CSolver(*facts)
        got = c.value(st, alpha, beta)
        assert got == py.value(st, alpha, beta), st
        assert c.nodes() == py.nodes() > 0, st
        assert c.size() <= py.size()  # a full probe sequence replaces an entry
        closed.add(st.closed_by >= 0)
        values.add(got)
    assert closed == {True, False}
    assert len(values) >= 4  # wins and losses of several sizes, not one answer


def test_solver_for_shares_c_solvers_and_can_be_told_to_use_python(monkeypatch):
    st = closed_from_play("sixty-six", random.Random(2), 5)
    s = E.solver_for(st)
    assert isinstance(s, E._CSolver) and E.solver_for(st) is s
    monkeypatch.setattr(E, "USE_C", False)
    p = E.solver_for(st)
    assert isinstance(p, E._Solver)
    assert p.value(st) == s.value(st)


def test_the_table_is_bounded_and_keeps_values_exact_when_full():
    # One solver over many positions of the same deal facts fills its table past its
    # size; entries replaced must not change a value.
    rng = random.Random(11)
    v = get_variant("sixty-six")
    c = E._CSolver(v, 0, -1, None, None)
    for _ in range(300):
        st = endgame(v, rng, 6)
        st.trump = 0
        py = E._Solver(v, 0, -1, None, None)
        assert c.value(st) == py.value(st)
    assert 0 < c.size() <= 1 << 17
    c.clear()
    assert c.size() == 0


def test_bad_arguments_are_refused_with_a_message():
    rules = E.c_rules(get_variant("sixty-six"))
    with pytest.raises(ValueError, match="rules must be a tuple of 12 ints"):
        _csolve.Solver(rules[:5], 0, -1, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="trump must be 0..3"):
        _csolve.Solver(rules, 4, -1, 0, 0, 0, 0)
    s = _csolve.Solver(rules, 0, -1, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="disjoint 24-bit masks"):
        s.lead(0, 3, 1, 0, 0, 1, 1, 0, 0, -99, 99, -1)
    with pytest.raises(ValueError, match="bad position"):
        s.follow(0, 30, 1, 2, 0, 0, 1, 1, 0, 0, -99, 99)
    with pytest.raises(TypeError):
        s.lead(0, 1, 2)


@pytest.mark.parametrize("solve_tail", [False, True])
@pytest.mark.parametrize("variant", PRESETS)
def test_the_expert_plays_the_same_with_and_without_its_c_kernels(variant, solve_tail, monkeypatch):
    # At fixed work the kernels change the speed, never a move: the same match, move for
    # move, with the solver and the playouts in C and in Python (playouts to the end, the
    # agent's; or to where the solver takes over, ``solve_tail``).
    from arena.bots import fast_playout
    from arena.bots.expert import ExpertStrategy
    from arena.bots.heuristic import HeuristicStrategy
    from arena.play.selfplay import play_match

    def moves(c: bool) -> list:
        monkeypatch.setattr(E, "USE_C", c)
        monkeypatch.setattr(fast_playout, "USE_C", c)
        E._SOLVERS.clear()
        expert = ExpertStrategy(3, variant=variant, infer=True, lead_model="value")
        expert.solve_tail = solve_tail
        match = play_match(variant, 77, [expert, HeuristicStrategy(3)])
        return [list(d.history) for d in match.deals]

    with_c = moves(True)
    assert fast_playout.AVAILABLE and with_c == moves(False)
    assert sum(len(h) for h in with_c) > 60
