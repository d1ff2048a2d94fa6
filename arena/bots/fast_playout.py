"""The playout in C (`arena/bots/_cplayout.c`): a deal played by the default playout
policy (`playout.policy_action`) for both seats, with the same moves as the pure-Python
loops and tens of times faster; `run_open` until the deal is over or the exact solver can
take over (`endgame.fast_ok`), as `reference` does, and `play_out` to the end of the deal,
through the strict phase, as `reference_out` does.

`run_open` packs a `State` for the kernel and returns a tuple: ``(0, winner,
game_points, count0, count1)`` for a deal that ended (winner -1 for a drawn hand), else
``(1, phase, leader, lead_card, h0, h1, count0, count1, t0, t1, mpending0, mpending1, ms,
closed_by, ct0, ct1, cp0, cp1)`` at the point where `fast_ok` holds (``ms`` as the
solver reads it: the marriage suit, else -1 before a marriage this lead or -2 after one;
``ct``/``cp`` the close tricks and counts, zeros when the talon ran out unclosed).

`play_out` returns ``(winner, game_points, count0, count1)``: the finished deal's
`State.result` (winner -1 for a drawn hand; the counts are ``result.points``, the
last-trick 10 included). `play_out_lookahead` returns the same for a deal played by
`lookahead_action` instead of the policy (each open-phase card chosen by playing out its
candidates, one to three levels deep), as `reference_lookahead` does in Python.

The kernel models two-handed variants of `endgame._fast_variant` only; `rules_for` gives
None for any other (and when the extension is not built), and `run_open` and `play_out`
then play the Python loops. The flags it reads are `RULE_FLAGS`; the others cannot change
a move or a result in these loops: ``forced_marriage`` and ``exchange_timing`` only remove cards from
or add an exchange to legal sets the policy never picks from, ``deck`` and
``exchange_rank`` come in with the cards (the talon, ``ex_card``), and the match flags
(``target``, ``draw_carry``, ...) do not touch a deal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..game.actions import MARRY
from ..game.cards import KING, MARRIAGE_BITS, QUEEN, cards_of
from ..game.state import FOLLOW, LEAD, OVER, State
from ..game.variant import Variant
from .endgame import _fast_variant, fast_ok, lead_ms
from .playout import policy_action, result_value

try:
    from . import _cplayout  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler at install): `run_open` plays the Python loop
    _cplayout = None

__all__ = [
    "AVAILABLE",
    "LOOKAHEAD_US",
    "RULE_FLAGS",
    "USE_C",
    "deep_search",
    "lookahead_action",
    "play_out",
    "play_out_lookahead",
    "reference",
    "reference_lookahead",
    "reference_out",
    "rule_flags",
    "rules_for",
    "run_open",
    "supported",
]

#: Whether the C kernel imported.
AVAILABLE: bool = _cplayout is not None

#: Whether `run_open` and `play_out` use the kernel (set False to force the Python loops,
#: as `endgame.USE_C` does for the solver; bench/search.py and `expert` read it).
USE_C: bool = AVAILABLE

#: The flags `_cplayout.Rules` takes, in order, each as a small int: a bool as 0/1, a
#: number as itself, a choice as its index in the tuple given here.
RULE_FLAGS: tuple[tuple[str, tuple | None], ...] = (
    ("closing", None),
    ("close_before_draw", None),
    ("close_min_talon", None),
    ("close_on_first_lead", None),
    ("exchange_needs_trick", None),
    ("exchange_min_talon", None),
    ("exchange_on_first_lead", None),
    ("exchange_on_close", ("none", "opponent")),
    ("marriage_needs_trick", ("to_count", "to_declare")),
    ("marriage_after_close", None),
    ("marriage_lead", ("either", "king_only")),
    ("strict_must_head", None),
    ("strict_must_trump", None),
    ("auto_out", None),
    ("schneider_at", None),
    ("close_score_basis", ("end", "at_close")),
    ("failed_close", ("two_or_three", "three", "by_closer_count")),
    ("beaten_closer", ("two_or_three", "two")),
    ("false_claim", ("two_or_three", "two")),
    ("exhausted_rule", ("higher_total", "last_trick_wins")),
)


def supported(variant: Variant) -> bool:
    """Whether the kernel models ``variant``: two-handed, and `endgame._fast_variant`."""
    return variant.form == "two_handed" and variant.players == 2 and _fast_variant(variant)


def rule_flags(variant: Variant) -> tuple[int, ...]:
    """``variant``'s `RULE_FLAGS` as the ints `_cplayout.Rules` takes (for a supported variant)."""
    out = []
    for name, choices in RULE_FLAGS:
        value = getattr(variant, name)
        out.append(choices.index(value) if choices is not None else int(value))
    return tuple(out)


#: `rules_for`'s cache: id of a variant -> (the variant, kept alive so the id stays its
#: own, and its rules or None).
_RULES: dict[int, tuple[Variant, object | None]] = {}
_RULES_LIMIT = 256


def rules_for(variant: Variant) -> object | None:
    """The kernel's `Rules` for ``variant``, built once per variant; None if the kernel
    is not built or does not model the variant (the caller plays the Python loop)."""
    hit = _RULES.get(id(variant))
    if hit is not None and hit[0] is variant:
        return hit[1]
    rules = _cplayout.Rules(rule_flags(variant)) if AVAILABLE and supported(variant) else None
    if len(_RULES) >= _RULES_LIMIT:
        _RULES.clear()
    _RULES[id(variant)] = (variant, rules)
    return rules


def _result(st: State) -> tuple[int, int, int, int]:
    """A finished deal's ``(winner, game_points, count0, count1)``, winner -1 for a drawn hand."""
    r = st.result
    return (-1 if r.winner is None else r.winner, r.game_points, r.points[0], r.points[1])


def _over(st: State) -> tuple:
    return (0, *_result(st))


def _pack(st: State) -> tuple:
    """The result tuple of a state that is over or where `fast_ok` holds."""
    if st.phase == OVER:
        return _over(st)
    ms = lead_ms(st)
    ct = st.close_tricks or (0, 0)
    cp = st.close_points or (0, 0)
    h, t, mp = st.hand, st.tricks, st.mpending
    return (1, st.phase, st.leader, st.lead_card, h[0], h[1], st.count(0), st.count(1), t[0], t[1], mp[0], mp[1],
            ms, st.closed_by, ct[0], ct[1], cp[0], cp[1])  # fmt: skip


def reference(st: State) -> tuple:
    """`run_open`'s tuple from the pure-Python loop: a clone of ``st`` played by
    `policy_action` until it is over or `fast_ok` holds. ``st`` is unchanged."""
    st = st.clone()
    apply = st.apply_legal
    while st.phase != OVER and not fast_ok(st):
        apply(policy_action(st))
    return _pack(st)


def run_open(st: State) -> tuple:
    """Play a copy of ``st`` as `reference` does, in C when `USE_C` and `rules_for` gives
    rules (else by `reference`); the same tuple. ``st`` is unchanged."""
    rules = rules_for(st.variant) if USE_C else None
    if rules is None or st.phase == OVER:
        return reference(st)
    out = _cplayout.run(*_deal_args(rules, st))
    if st.closed_by >= 0 and out[0] == 1:
        # Closed before the call: the kernel is not told the close facts (it only stops,
        # after the opponent's exchange at most), so they come from the state.
        out = out[:14] + st.close_tricks + st.close_points
    return out


def reference_out(st: State) -> tuple[int, int, int, int]:
    """`play_out`'s tuple from the pure-Python loop: a clone of ``st`` played by
    `policy_action` to the end of the deal. ``st`` is unchanged."""
    return _played_out(st, policy_action)


def _played_out(st: State, choose: Callable[[State], int]) -> tuple[int, int, int, int]:
    """`_result` of a clone of ``st`` played to the end of the deal by ``choose``."""
    st = st.clone()
    apply = st.apply_legal
    while st.phase != OVER:
        apply(choose(st))
    return _result(st)


def play_out(st: State) -> tuple[int, int, int, int]:
    """Play a copy of ``st`` to the end of the deal as `reference_out` does, in C when
    `USE_C` and `rules_for` gives rules (else by `reference_out`): ``(winner,
    game_points, count0, count1)``, winner -1 for a drawn hand. ``st`` may be anywhere in
    the deal (a deal already over gives its result). ``st`` is unchanged."""
    rules = rules_for(st.variant) if USE_C else None
    if rules is None or st.phase == OVER:
        return reference_out(st)
    return _cplayout.run_to_end(*_end_args(rules, st))


#: Plain game points, -3..3, as the lookahead values a deal's end (`result_value`).
_PLAIN = tuple(float(g) for g in range(-3, 4))


def lookahead_action(st: State, level: int = 1, width: int = 0) -> int:
    """The playout policy with lookahead, in a world where every card is known: while the
    talon is open, a card to lead or follow is chosen by playing each candidate out to the
    end of the deal, with `policy_action` (``level`` 1, `reference_out`) or with lookahead a
    level down (`reference_lookahead`), and keeping the best result for the seat to act
    (`result_value` in plain game points, the count margin breaking ties; the policy's own
    card first, then the others in card order, a later one only if strictly better).
    Leading, a marriage's king and queen are not candidates (the policy declares a marriage
    it may). Every other decision is `policy_action`'s. It sees every card of the world,
    the talon's order too. A ``width`` above 0 prunes at levels 2 and 3: only the
    policy's card and the ``width`` - 1 others with the best results played out by the
    policy (`reference_out`; the earlier card first among equals) are looked at."""
    a0 = policy_action(st)
    if st.strict or a0 >= MARRY or st.phase not in (LEAD, FOLLOW) or (st.phase == LEAD and st.marriage_suit >= 0):
        return a0
    s = st.to_act
    h = st.hand[s]
    cands = h & ~(1 << a0)
    if st.phase == LEAD:
        pairs = (h >> KING) & (h >> QUEEN) & MARRIAGE_BITS
        cands &= ~((pairs << KING) | (pairs << QUEEN))
    others = list(cards_of(cands))
    if width > 0 and level >= 2:
        ranked = sorted(others, key=lambda c: -_card_value(st, c, 0, 0))  # stable: card order among equals
        others = sorted(ranked[: width - 1])
    best, best_v = a0, None
    for c in (a0, *others):
        v = _card_value(st, c, level - 1, width)
        if best_v is None or v > best_v:
            best, best_v = c, v
    return best


def _card_value(st: State, c: int, level: int, width: int) -> float:
    """What playing ``c`` in ``st`` and the rest of the deal at ``level`` (0: the policy)
    is worth to the seat to act, in plain game points (the count margin breaking ties)."""
    nxt = st.clone()
    nxt.apply_legal(c)
    winner, g, c0, c1 = reference_out(nxt) if level <= 0 else reference_lookahead(nxt, level, width)
    return result_value(winner, g, (c0, c1), st.to_act, _PLAIN)


def reference_lookahead(st: State, level: int = 1, width: int = 0) -> tuple[int, int, int, int]:
    """`play_out_lookahead`'s tuple from the pure-Python loop: a clone of ``st`` played to
    the end of the deal by `lookahead_action` at ``level`` (and ``width``) for both seats.
    ``st`` is unchanged."""
    return _played_out(st, lambda x: lookahead_action(x, level, width))


def play_out_lookahead(st: State, level: int = 1, width: int = 0) -> tuple[int, int, int, int]:
    """Play a copy of ``st`` to the end of the deal as `reference_lookahead` does (each
    open-phase card by lookahead at ``level``, 1 to 3, pruned to ``width`` candidates at
    levels 2 and 3 when above 0), in C when `USE_C` and `rules_for` gives rules;
    `play_out`'s tuple. Each level costs some ten times the one below."""
    if not 1 <= level <= 3:
        raise ValueError(f"play_out_lookahead: level must be 1, 2 or 3, got {level!r}")
    if not 0 <= width <= 32:
        raise ValueError(f"play_out_lookahead: width must be 0 (no pruning) to 32, got {width!r}")
    rules = rules_for(st.variant) if USE_C else None
    if rules is None or st.phase == OVER:
        return reference_lookahead(st, level, width)
    return _cplayout.run_lookahead(*_end_args(rules, st), level, width)


#: What one playout costs in the kernel (µs) for each kind of lookahead, ``(level,
#: width)`` (width 0: every candidate), by the deck's size: the medians of `python
#: bench/lookahead.py --levels 0,1,2,3,2w2,2w3,3w2` on the 2-core machine the agents are
#: measured on ((3, 2): its ratio to (2, 0) and (2, 2) in one run of all, on a day the
#: machine ran slower). The expert picks a decision's lookahead by them (`deep_search`),
#: so it follows the work a budget buys, not the clock.
LOOKAHEAD_US: dict[int, dict[tuple[int, int], float]] = {
    24: {(0, 0): 1.6, (1, 0): 12.5, (2, 0): 148.2, (2, 3): 82.8, (2, 2): 54.4, (3, 2): 211.0, (3, 0): 1701.8},
    20: {(0, 0): 1.4, (1, 0): 7.1, (2, 0): 54.8, (2, 3): 37.1, (2, 2): 24.2, (3, 2): 74.0, (3, 0): 435.7},
}


def deep_search(
    variant: Variant, budget_ms: float, playouts: float, searches: Sequence[tuple[int, int]]
) -> tuple[int, int]:
    """The first of ``searches`` (``(level, width)`` pairs, best first) whose playouts
    ``budget_ms`` affords ``playouts`` of, by `LOOKAHEAD_US` for the variant's deck;
    ``(0, 0)`` (plain playouts) if none, or if the kernel does not model the variant or is
    off (a Python lookahead would cost a hundred times more)."""
    cost = LOOKAHEAD_US.get(variant.deck)
    if cost is None or not USE_C or rules_for(variant) is None:
        return (0, 0)
    for level, width in searches:
        if budget_ms * 1000.0 >= playouts * cost[level, width]:
            return (level, width)
    return (0, 0)


def _end_args(rules: object, st: State) -> tuple:
    """`run_to_end`'s 29 arguments: `_deal_args`, then the close facts (zeros unless closed)."""
    ct = st.close_tricks or (0, 0)
    cp = st.close_points or (0, 0)
    return (*_deal_args(rules, st), ct[0], ct[1], cp[0], cp[1])


def _deal_args(rules: object, st: State) -> tuple:
    """``st`` as the kernel's 25 deal arguments (`run`'s; `run_to_end` adds the close facts)."""
    h, t, p, mc, mp = st.hand, st.tricks, st.points, st.mcredit, st.mpending
    return (
        rules, st.trump, st.ex_card, h[0], h[1], st.stock, st.stock_pos, st.turn_up, st.strict, st.phase,
        st.to_act, st.leader, st.lead_card, st.step, st.marriage_suit, st.closed_by,
        t[0], t[1], p[0], p[1], mc[0], mc[1], mp[0], mp[1], st.n_tricks,
    )  # fmt: skip
