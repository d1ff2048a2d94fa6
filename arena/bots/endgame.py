"""The exact endgame solver: alpha-beta with a transposition table on a world whose hidden
cards are all placed, once the talon is closed, exhausted or down to its last two cards.

`solve(state, seat)` gives the value in game points and the best action; `minimax` is the
brute-force reference it must agree with.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..game.cards import KING, POINTS, SUIT_MASK, cards_of
from ..game.state import FOLLOW, LEAD, OVER, State
from ..game.variant import Variant

__all__ = ["minimax", "solve", "solve_actions", "worth"]


_INF = 99


def _fast_variant(v: Variant) -> bool:
    """Whether the strict phase of ``v`` has only plays, marriages and declarations by the
    leader (true of both presets): what the fast solver models."""
    return v.out_timing != "any_time" and v.exchange_on_close != "any_with_trick"


def fast_ok(st: State) -> bool:
    return st.strict and (st.phase == LEAD or st.phase == FOLLOW) and _fast_variant(st.variant)


class _Solver:
    """Alpha-beta on the strict phase of one deal, for fixed close facts.

    Values are game points for seat 0 (+g if seat 0 wins the deal, -g if it loses, 0 for a
    drawn hand). The position travels in the arguments: leader ``L``, hands ``h0 h1``,
    counts ``p0 p1`` (trick points plus credited marriages), tricks ``t0 t1`` and pending
    marriage points ``m0 m1``. Lead nodes are cached in a transposition table of bounds.
    """

    def __init__(self, v: Variant, trump: int, closer: int, ct: tuple | None, cp: tuple | None):
        self.count = [0]  # nodes visited
        self._build(v, trump, closer, ct or (0, 0), cp or (0, 0))

    def nodes(self) -> int:
        """Nodes visited so far."""
        return self.count[0]

    def size(self) -> int:
        """Entries in the transposition table."""
        return len(self.tt)

    def clear(self) -> None:
        self.tt.clear()
        self.order_cache.clear()

    def _build(self, v: Variant, trump: int, closer: int, ct: tuple, cp: tuple) -> None:  # noqa: C901
        sch = v.schneider_at
        at_close = v.close_score_basis == "at_close"
        failed_rule = v.failed_close
        beaten_two = v.beaten_closer == "two"
        false_two = v.false_claim == "two"
        last_trick_wins = v.exhausted_rule == "last_trick_wins"
        head = v.strict_must_head
        must_trump = v.strict_must_trump
        mar_ok = v.marriage_after_close
        mar_needs_trick = v.marriage_needs_trick == "to_declare"
        king_only = v.marriage_lead == "king_only"
        # Declaring with 66 at once is at least as good as playing on, unless the closer's
        # opponent would score more from a failed close than from beating the closer.
        weird = failed_rule == "three" or beaten_two
        forced = v.auto_out
        tmask = SUIT_MASK[trump]
        smask = SUIT_MASK
        count = self.count
        pts = POINTS
        tt: dict[int, tuple[int, int, int]] = {}
        self.tt = tt
        ct0, ct1 = ct
        cp0, cp1 = cp
        # Lead order: sure-looking high cards first, then cheap ones. Follow order: winners
        # cheapest first, then discards cheapest first (the lists are rebuilt per node).
        lead_key = [0] * 24
        for c in range(24):
            lead_key[c] = (-pts[c] * 2 - (8 if c // 6 == trump else 0), c)
        lead_order_cache: dict[int, tuple[int, ...]] = {}
        self.order_cache = lead_order_cache

        def lead_order(h: int) -> tuple[int, ...]:
            r = lead_order_cache.get(h)
            if r is None:
                r = tuple(sorted(cards_of(h), key=lead_key.__getitem__))
                lead_order_cache[h] = r
            return r

        def scale(t: int, p: int) -> int:
            if not t:
                return 3
            return 2 if p < sch else 1

        def closer_out(c: int, p0: int, p1: int, t0: int, t1: int) -> int:
            if c == 0:
                return scale(ct1, cp1) if at_close else scale(t1, p1)
            return -(scale(ct0, cp0) if at_close else scale(t0, p0))

        def failed(p0: int, p1: int) -> int:
            # The closer failed: its opponent wins.
            cto = ct1 if closer == 0 else ct0
            if failed_rule == "three" or not cto:
                g = 3
            elif failed_rule == "by_closer_count":
                g = 1 if (p0 if closer == 0 else p1) >= sch else 2
            else:
                g = 2
            return -g if closer == 0 else g

        def declare(s: int, p0: int, p1: int, t0: int, t1: int) -> int:
            ps = p0 if s == 0 else p1
            if ps >= 66:
                if closer < 0:
                    g = scale(t1, p1) if s == 0 else scale(t0, p0)
                elif closer == s:
                    return closer_out(s, p0, p1, t0, t1)
                else:
                    g = 2 if beaten_two or (ct0 if s == 0 else ct1) else 3
                return g if s == 0 else -g
            if closer == s:
                return failed(p0, p1)
            g = 2 if false_two or (t1 if s == 0 else t0) else 3
            return -g if s == 0 else g

        def played_out(w: int, p0: int, p1: int, t0: int, t1: int) -> int:
            if closer >= 0:
                if w == closer and (p0 if w == 0 else p1) >= 66:
                    return closer_out(w, p0, p1, t0, t1)
                return failed(p0, p1)
            if last_trick_wins:
                return 1 if w == 0 else -1
            if w == 0:
                p0 += 10
            else:
                p1 += 10
            if p0 == p1:
                return 0
            if p0 > p1:
                return scale(t1, p1)
            return -scale(t0, p0)

        def follow_mask(h: int, c: int) -> int:
            same = h & smask[c // 6]
            if same:
                if head:
                    return same & ((1 << c) - 1) or same
                return same
            if must_trump and h & tmask:
                return h & tmask
            return h

        def follow(L, c, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta):
            # L led c (already out of its hand); the other seat answers.
            count[0] += 1
            cs = c // 6
            cp_ = pts[c]
            if L == 0:
                hf = h1
                maxi = False
            else:
                hf = h0
                maxi = True
            legal = follow_mask(hf, c)
            # winners first, cheapest first
            win = []
            lose = []
            for f in cards_of(legal):
                fs = f // 6
                if (fs == cs and f < c) or (fs != cs and fs == trump):
                    win.append(f)
                else:
                    lose.append(f)
            if len(win) > 1:
                win.sort(key=pts.__getitem__)
            if len(lose) > 1:
                lose.sort(key=pts.__getitem__)
            best = -_INF if maxi else _INF
            for f in win + lose:
                g = cp_ + pts[f]
                fs = f // 6
                if (fs == cs and f < c) or (fs != cs and fs == trump):
                    w = L ^ 1
                else:
                    w = L
                if L == 0:
                    n0, n1 = h0, h1 ^ (1 << f)
                else:
                    n0, n1 = h0 ^ (1 << f), h1
                if w == 0:
                    q0, q1, u0, u1, k0, k1 = p0 + g, p1, t0 + 1, t1, m0, m1
                    if t0 == 0 and m0:
                        q0 += m0
                        k0 = 0
                else:
                    q0, q1, u0, u1, k0, k1 = p0, p1 + g, t0, t1 + 1, m0, m1
                    if t1 == 0 and m1:
                        q1 += m1
                        k1 = 0
                if not (n0 | n1):
                    val = played_out(w, q0, q1, u0, u1)
                else:
                    val = lead(w, n0, n1, q0, q1, u0, u1, k0, k1, alpha, beta, -1)
                if maxi:
                    if val > best:
                        best = val
                        if val > alpha:
                            alpha = val
                            if alpha >= beta or val >= 3:
                                break
                else:
                    if val < best:
                        best = val
                        if val < beta:
                            beta = val
                            if alpha >= beta or val <= -3:
                                break
            return best

        def lead(L, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta, ms):
            """Value of seat L leading. ``ms``: -1 a normal lead; -2 no marriage on this
            lead (after a close); a suit: that marriage was just declared."""
            count[0] += 1
            maxi = L == 0
            if L == 0:
                h, tl, pl = h0, t0, p0
                closer_other = closer == 1
            else:
                h, tl, pl = h1, t1, p1
                closer_other = closer == 0
            best = -_INF if maxi else _INF
            if tl:
                dv = declare(L, p0, p1, t0, t1)
                if pl >= 66 and (forced or not (weird and closer_other)):
                    return dv
                best = dv
                if maxi:
                    if dv > alpha:
                        alpha = dv
                elif dv < beta:
                    beta = dv
                if alpha >= beta:
                    return best
            if ms >= 0:
                k = ms * 6 + KING
                cards = (k,) if king_only else (k, k + 1)
                for c in cards:
                    if L == 0:
                        val = follow(0, c, h0 ^ (1 << c), h1, p0, p1, t0, t1, m0, m1, alpha, beta)
                    else:
                        val = follow(1, c, h0, h1 ^ (1 << c), p0, p1, t0, t1, m0, m1, alpha, beta)
                    if maxi:
                        if val > best:
                            best = val
                            if val > alpha:
                                alpha = val
                    elif val < best:
                        best = val
                        if val < beta:
                            beta = val
                    if alpha >= beta:
                        break
                return best
            key = 0
            bm = -1
            if ms == -1:
                key = (
                    h0
                    | h1 << 24
                    | L << 48
                    | p0 << 49
                    | p1 << 58
                    | ((m0 + 1) if not t0 else 0) << 67
                    | ((m1 + 1) if not t1 else 0) << 75
                    | (1 if t0 else 0) << 83
                    | (1 if t1 else 0) << 84
                )
                e = tt.get(key)
                if e is not None:
                    lo, hi, bm = e
                    if lo >= beta:
                        return lo
                    if hi <= alpha:
                        return hi
                    if lo == hi:
                        return lo
                    if lo > alpha:
                        alpha = lo
                    if hi < beta:
                        beta = hi
            a0, b0 = alpha, beta
            bmove = -1
            # Marriages (only when the variant allows them in the strict phase).
            if ms == -1 and mar_ok and (tl or not mar_needs_trick):
                for s in range(4):
                    if h >> (s * 6 + KING) & 3 == 3:
                        mp = 40 if s == trump else 20
                        if tl:
                            q0, q1, k0, k1 = (p0 + mp, p1, m0, m1) if L == 0 else (p0, p1 + mp, m0, m1)
                        else:
                            q0, q1, k0, k1 = (p0, p1, m0 + mp, m1) if L == 0 else (p0, p1, m0, m1 + mp)
                        val = lead(L, h0, h1, q0, q1, t0, t1, k0, k1, alpha, beta, s)
                        if maxi:
                            if val > best:
                                best = val
                                bmove = 100 + s
                                if val > alpha:
                                    alpha = val
                        elif val < best:
                            best = val
                            bmove = 100 + s
                            if val < beta:
                                beta = val
                        if alpha >= beta:
                            break
            if alpha < beta:
                order = lead_order(h)
                if bm >= 0 and bm < 24 and bm in order:
                    order = (bm,) + tuple(c for c in order if c != bm)
                for c in order:
                    if L == 0:
                        val = follow(0, c, h0 ^ (1 << c), h1, p0, p1, t0, t1, m0, m1, alpha, beta)
                    else:
                        val = follow(1, c, h0, h1 ^ (1 << c), p0, p1, t0, t1, m0, m1, alpha, beta)
                    if maxi:
                        if val > best:
                            best = val
                            bmove = c
                            if val > alpha:
                                alpha = val
                                if alpha >= beta or val >= 3:
                                    break
                    elif val < best:
                        best = val
                        bmove = c
                        if val < beta:
                            beta = val
                            if alpha >= beta or val <= -3:
                                break
            if ms == -1:
                lo, hi = -_INF, _INF
                e = tt.get(key)
                if e is not None:
                    lo, hi = e[0], e[1]
                if best <= a0:
                    hi = min(hi, best)
                elif best >= b0:
                    lo = max(lo, best)
                else:
                    lo = hi = best
                tt[key] = (lo, hi, bmove)
            return best

        self.lead = lead
        self.follow = follow

    def value(self, st: State, alpha: int = -_INF, beta: int = _INF) -> int:
        """The value for seat 0 of a strict-phase `State` (phase lead or follow)."""
        return _state_value(self, st, alpha, beta)


def lead_ms(st: State) -> int:
    """The solver's ``ms`` for ``st``'s lead: the suit of the marriage just shown, else -1
    (a marriage may still be shown on this lead) or -2 (not: after a close)."""
    ms = st.marriage_suit
    return ms if ms >= 0 else (-1 if st.step <= 1 else -2)


def _state_value(solver: _Solver | _CSolver, st: State, alpha: int, beta: int) -> int:
    h0, h1 = st.hand
    t0, t1 = st.tricks
    m0, m1 = st.mpending
    return packed_value(
        solver, st.phase, st.leader, st.lead_card, h0, h1, st.count(0), st.count(1), t0, t1, m0, m1, lead_ms(st),
        alpha, beta,
    )  # fmt: skip


def packed_value(
    solver: _Solver | _CSolver, phase: int, leader: int, lead_card: int, h0: int, h1: int, p0: int, p1: int,
    t0: int, t1: int, m0: int, m1: int, ms: int, alpha: int = -_INF, beta: int = _INF,
) -> int:  # fmt: skip
    """The value for seat 0 of a strict-phase position given by its facts (``p``: counts,
    ``m``: pending marriage points), as a `State` or the C playout gives them."""
    if phase == FOLLOW:
        return solver.follow(leader, lead_card, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta)
    return solver.lead(leader, h0, h1, p0, p1, t0, t1, m0, m1, alpha, beta, ms)


_FAILED_RULES = {"two_or_three": 0, "three": 1, "by_closer_count": 2}


def c_rules(v: Variant) -> tuple[int, ...]:
    """``v``'s rules as `_csolve.Solver` reads them (the flags `_Solver._build` reads)."""
    return (
        v.schneider_at,
        int(v.close_score_basis == "at_close"),
        _FAILED_RULES[v.failed_close],
        int(v.beaten_closer == "two"),
        int(v.false_claim == "two"),
        int(v.exhausted_rule == "last_trick_wins"),
        int(v.strict_must_head),
        int(v.strict_must_trump),
        int(v.marriage_after_close),
        int(v.marriage_needs_trick == "to_declare"),
        int(v.marriage_lead == "king_only"),
        int(v.auto_out),
    )


class _CSolver:
    """`_Solver`'s search in C (`arena/bots/_csolve.c`): the same moves in the same order,
    the same values, tens of times faster. Its table is bounded and replaces old entries
    when full, so it needs no clearing."""

    def __init__(self, v: Variant, trump: int, closer: int, ct: tuple | None, cp: tuple | None):
        ct = ct or (0, 0)
        cp = cp or (0, 0)
        self._c = _csolve.Solver(c_rules(v), trump, closer, ct[0], ct[1], cp[0], cp[1])
        self.lead = self._c.lead
        self.follow = self._c.follow

    def nodes(self) -> int:
        return self._c.nodes

    def size(self) -> int:
        return self._c.size

    def clear(self) -> None:
        self._c.clear()

    def value(self, st: State, alpha: int = -_INF, beta: int = _INF) -> int:
        """The value for seat 0 of a strict-phase `State` (phase lead or follow)."""
        return _state_value(self, st, alpha, beta)


try:
    from . import _csolve  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler at install): the Python solver plays the same
    _csolve = None

#: Whether `solver_for` gives the C solver (set False to force the Python one, as tests do).
USE_C = _csolve is not None

#: Solvers by their constants, shared by every search: a transposition-table entry holds
#: the whole position (both hands), so entries stay valid across worlds and decisions.
_SOLVERS: dict[tuple, _Solver | _CSolver] = {}
_TT_LIMIT = 150_000


def solver_for(st: State) -> _Solver | _CSolver:
    """The solver of ``st``'s strict phase (by its rules, trump and close facts), shared."""
    return solver_of(st.variant, st.trump, st.closed_by, st.close_tricks, st.close_points)


def solver_of(v: Variant, trump: int, closer: int, ct: tuple | None, cp: tuple | None) -> _Solver | _CSolver:
    """The shared solver of a strict phase given by its facts (``ct``, ``cp``: the close
    tricks and counts, None or zeros when nobody closed)."""
    use_c = USE_C
    key = (v, trump, closer, ct or (0, 0), cp or (0, 0), use_c)
    s = _SOLVERS.get(key)
    if s is None:
        if len(_SOLVERS) >= 64:
            _SOLVERS.clear()
        s = _SOLVERS[key] = (_CSolver if use_c else _Solver)(v, trump, closer, ct, cp)
    elif not use_c and s.size() > _TT_LIMIT:
        s.clear()
    return s


class Search:
    """Exact values of perfect-information states: the fast solver from the strict phase
    on, the engine's own moves (with alpha-beta) above it."""

    def __init__(self) -> None:
        self.nodes = 0

    def value(self, st: State, alpha: int = -_INF, beta: int = _INF) -> int:
        """Value for seat 0."""
        if st.phase == OVER:
            r = st.result
            if r.winner is None:
                return 0
            return r.game_points if r.winner == 0 else -r.game_points
        if fast_ok(st):
            s = solver_for(st)
            n = s.nodes()
            v = s.value(st, alpha, beta)
            self.nodes += s.nodes() - n
            return v
        self.nodes += 1
        maxi = st.to_act == 0
        best = -_INF if maxi else _INF
        for a in st.legal_actions():
            child = st.clone()
            child.apply_legal(a)
            v = self.value(child, alpha, beta)
            if maxi:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            elif v < best:
                best = v
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        return best

    def action_values(self, st: State, actions: Sequence[int] | None = None) -> list[tuple[int, int]]:
        """Exact value for seat 0 of each action (all legal ones by default)."""
        out = []
        for a in st.legal_actions() if actions is None else actions:
            child = st.clone()
            child.apply_legal(a)
            out.append((a, self.value(child)))
        return out


def _check_solvable(state: State) -> None:
    if state.phase == OVER:
        return
    if not state.strict and state.talon_size() > 2:
        raise ValueError(
            "solve: the talon is open with more than two cards; the exact search starts once it is "
            "closed, exhausted or down to its last two cards"
        )


def worth(util: Sequence[float], val: int, seat: int) -> float:
    """What a solved result ``val`` (game points for seat 0, as `Search` gives them) is
    worth to ``seat`` under ``util`` (by game points -3..3)."""
    return util[(val if seat == 0 else -val) + 3]


def solve_actions(state: State, seat: int) -> list[tuple[int, int]]:
    """The exact value for ``seat`` of every legal action of ``state``, in legal order.

    ``state`` is a perfect-information position (every hidden card placed, as in a
    world from `sample_worlds`) whose talon is closed, exhausted or down to two cards.
    """
    _check_solvable(state)
    sign = 1 if seat == 0 else -1
    return [(a, sign * v) for a, v in Search().action_values(state)]


def solve(state: State, seat: int) -> tuple[int, int | None]:
    """Exact alpha-beta: ``(value, best_action)`` for ``seat``.

    The value is in game points: +g if ``seat`` wins the deal with best play by both
    sides, -g if it loses, 0 for a drawn hand. ``best_action`` is an engine action id
    (`arena.game.action_str` gives its string), the first legal one of the best when
    several tie, or None if ``seat`` is not to act (or the deal is over). Declarations
    are searched like any action (a false claim loses), and so are marriages after a
    close where the variant allows them. See `solve_actions` for the positions accepted.
    """
    _check_solvable(state)
    search = Search()
    sign = 1 if seat == 0 else -1
    if state.phase == OVER or state.to_act != seat:
        return sign * search.value(state), None
    best, best_a = -_INF, None
    for a, v in search.action_values(state):
        if sign * v > best:
            best, best_a = sign * v, a
    return best, best_a


def minimax(state: State, seat: int) -> int:
    """Plain minimax over the engine's own moves, no pruning: the reference for `solve`."""
    if state.phase == OVER:
        return state.returns()[seat]
    vals = []
    for a in state.legal_actions():
        child = state.clone()
        child.apply_legal(a)
        vals.append(minimax(child, seat))
    return max(vals) if state.to_act == seat else min(vals)
