"""Sequential test on duplicate pairs (arena.stats.sprt): the GSPRT LLR against an independent primal
maximisation and against numbers from fishtest's own code, the trinomial as a pentanomial,
Wald bounds, error rates and stopping by simulation, Elo/LOS estimates and their coverage,
the fixed-number summary and the margin diagnostic."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.stats import sprt_plan
from arena.stats.sprt import (
    PENTANOMIAL_VALUES,
    SPRT,
    Z95,
    elo_estimate,
    elo_text,
    estimate_text,
    fixed_games_summary,
    gsprt_llr,
    llr_pairs,
    llr_pentanomial,
    los_text,
    margin_diagnostic,
    mle_given_t,
    normal_cdf,
    normal_quantile,
    run_sprt,
    score_to_elo,
    sprt_bounds,
)
from arena.tournament.compare import DEFAULTS

LN10 = math.log(10.0)
FAST = settings(max_examples=30, deadline=None)


# -- an independent reference: the constrained likelihood maximised in the primal ----------------


def ref_score(elo):
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def ref_regularize(counts):
    # fishtest's rule, written out again: an empty cell counts 1e-3
    return np.array([c if c != 0 else 1e-3 for c in counts], dtype=float)


def tilted_start(values, s):
    """A strictly positive distribution on ``values`` with mean ``s`` (exponential tilt, the
    tilt found by bisection): a feasible interior starting point."""
    lo, hi = -200.0, 200.0
    for _ in range(200):
        th = (lo + hi) / 2
        w = np.exp(th * (values - values.mean()))
        if (w * values).sum() / w.sum() < s:
            lo = th
        else:
            hi = th
    w = np.exp((lo + hi) / 2 * (values - values.mean()))
    return w / w.sum()


def primal_mle(counts, values, s):
    """max sum c_i log p_i subject to sum p_i = 1 and sum p_i v_i = s: Newton's method on the
    free coordinates (null space of the constraints) with a backtracking line search. Shares
    nothing with the Lagrange-multiplier solution in arena.stats.sprt."""
    c = np.asarray(counts, dtype=float)
    v = np.asarray(values, dtype=float)
    a_mat = np.vstack([np.ones_like(v), v])
    z = np.linalg.svd(a_mat)[2][2:].T  # basis of {d : sum d = 0, sum d v = 0}
    p = tilted_start(v, s)

    def obj(q):
        return float((c * np.log(q)).sum())

    for _ in range(200):
        g = z.T @ (c / p)
        h = z.T @ ((c / p**2)[:, None] * z)  # minus the Hessian, positive definite
        dy = np.linalg.solve(h, g)
        dp = z @ dy
        dec = float(g @ dy)
        if dec < 1e-22 * max(1.0, c.sum()):
            break
        t = 1.0
        while np.any(p + t * dp <= 0) or obj(p + t * dp) < obj(p) + 0.25 * t * dec:
            t /= 2
            if t < 1e-30:
                break
        p = p + t * dp
    assert abs(p.sum() - 1) < 1e-12 and abs((p * v).sum() - s) < 1e-12
    return p


def ref_llr(counts, elo0, elo1, values=PENTANOMIAL_VALUES):
    c = ref_regularize(counts)
    p0 = primal_mle(c, values, ref_score(elo0))
    p1 = primal_mle(c, values, ref_score(elo1))
    return float((c * np.log(p1 / p0)).sum())


def dual_golden_llr(counts, elo0, elo1, values=PENTANOMIAL_VALUES):
    """Second reference: a derivative-free 1-D search (golden section) for the Lagrange
    multiplier x maximising the concave dual sum q_i log(1 + x a_i)."""
    c = ref_regularize(counts)
    q = c / c.sum()
    v = np.asarray(values, dtype=float)

    def mle(s):
        a = v - s
        lo, hi = -1 / a.max() + 1e-15, -1 / a.min() - 1e-15
        r = (math.sqrt(5) - 1) / 2

        def h(x):
            return float((q * np.log1p(x * a)).sum())

        x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
        h1, h2 = h(x1), h(x2)
        for _ in range(300):
            if h1 < h2:
                lo, x1, h1 = x1, x2, h2
                x2 = lo + r * (hi - lo)
                h2 = h(x2)
            else:
                hi, x2, h2 = x2, x1, h1
                x1 = hi - r * (hi - lo)
                h1 = h(x1)
        x = (lo + hi) / 2
        return q / (1 + x * a)

    p0, p1 = mle(ref_score(elo0)), mle(ref_score(elo1))
    return float((c * np.log(p1 / p0)).sum())


CASES = [
    ([1000, 4000, 6000, 4000, 1000], 0.0, 2.0),
    ([500, 2000, 3000, 2500, 1000], 0.0, 2.0),
    ([10789, 19328, 33806, 19402, 10543], -3.0, 1.0),
    ([1187, 7410, 13475, 7378, 1164], -3.0, 1.0),
    ([39, 2226, 31451, 2412, 40], 0.2, 0.9),
    ([10, 20, 40, 20, 10], 0.0, 5.0),
    ([0, 0, 3, 5, 12], -5.0, 15.0),
    ([120, 40, 10, 0, 0], 0.0, 10.0),
    ([300, 0, 400, 0, 330], 0.0, 20.0),
    ([1, 0, 0, 0, 0], 0.0, 20.0),
    ([3, 1, 4, 1, 5], -50.0, 50.0),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1"), CASES)
def test_llr_matches_primal_reference(counts, elo0, elo1):
    ref = ref_llr(counts, elo0, elo1)
    assert llr_pentanomial(counts, elo0, elo1) == pytest.approx(ref, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize(("counts", "elo0", "elo1"), CASES[:5])
def test_the_two_references_agree(counts, elo0, elo1):
    # guards the references themselves: primal Newton and a derivative-free dual search
    assert dual_golden_llr(counts, elo0, elo1) == pytest.approx(ref_llr(counts, elo0, elo1), rel=1e-6)


@FAST
@given(
    st.lists(st.integers(0, 3000), min_size=5, max_size=5).filter(lambda c: sum(c) > 0),
    st.floats(-60, 60),
    st.floats(0.5, 40),
)
def test_llr_matches_reference_on_random_counts(counts, elo0, gap):
    ref = ref_llr(counts, elo0, elo0 + gap)
    assert llr_pentanomial(counts, elo0, elo0 + gap) == pytest.approx(ref, rel=1e-6, abs=1e-8)


# Reference values from fishtest's own code. They were computed once (not typed from memory) by
# running official-stockfish/fishtest server/fishtest/stats/LLRcalc.py, functions LLR_logistic
# and LLR_normalized (the stored copy at commit 0753fcc6222e70a11a7e9a90a4fd549654338a45),
# with scipy.optimize.brentq replaced by a bisection to machine precision because scipy is not
# installed here (brentq's own tolerance, 2e-12 in the multiplier, moves these by < 1e-9
# relative). Three-cell lists are fishtest's trinomial (values 0, 1/2, 1), i.e. our pairs.
FISHTEST_LOGISTIC = [
    ([1000, 4000, 6000, 4000, 1000], 0, 2, -1.0603210628854498),
    ([500, 2000, 3000, 2500, 1000], 0, 2, 14.392356451259245),
    ([10789, 19328, 33806, 19402, 10543], -3, 1, 2.131067811785043),
    ([1187, 7410, 13475, 7378, 1164], -3, 1, 2.8615271805921605),
    ([39, 2226, 31451, 2412, 40], 0.2, 0.9, 2.1625425800500317),
    ([10, 20, 40, 20, 10], 0, 5, -0.03450685095168554),
    ([0, 0, 3, 5, 12], -5, 15, 1.1346917189821013),
    ([120, 40, 10, 0, 0], 0, 10, -4.963391403752251),
    ([300, 0, 400, 0, 330], 0, 20, 0.03469735068368685),
]
FISHTEST_LOGISTIC_TRINOMIAL = [
    ([300, 400, 330], 0, 20, 0.03470272620067265),
    ([12, 30, 25], 0, 20, 1.1625922939466709),
    ([65804, 56553, 65388], -3, 1, 2.049042617981811),
]
FISHTEST_NORMALIZED = [
    ([39, 2226, 31451, 2412, 40], 0.764, 3.439, 2.1629408695841628),
    ([1000, 4000, 6000, 4000, 1000], 0, 2, -0.530185418745388),
    ([500, 2000, 3000, 2500, 1000], 0, 2, 11.044585662306263),
    ([10789, 19328, 33806, 19402, 10543], -3, 1, 0.3008697854891586),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "expected"), FISHTEST_LOGISTIC)
def test_llr_matches_fishtest_logistic(counts, elo0, elo1, expected):
    assert llr_pentanomial(counts, elo0, elo1) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(("counts", "elo0", "elo1", "expected"), FISHTEST_LOGISTIC_TRINOMIAL)
def test_llr_pairs_matches_fishtest_trinomial(counts, elo0, elo1, expected):
    assert llr_pairs(*counts, elo0, elo1) == pytest.approx(expected, rel=1e-6)
    assert ref_llr(counts, elo0, elo1, values=[0.0, 0.5, 1.0]) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(("counts", "elo0", "elo1", "expected"), FISHTEST_NORMALIZED)
def test_llr_matches_fishtest_normalized(counts, elo0, elo1, expected):
    assert llr_pentanomial(counts, elo0, elo1, model="normalized") == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("counts", [c for c, *_ in FISHTEST_NORMALIZED])
def test_t_constrained_mle_is_a_constrained_stationary_point(counts):
    # Independent of the fixed-point iteration: the result meets the t-value constraint and the
    # log-likelihood gradient c/p lies in the span of the constraints' gradients (Lagrange).
    c = ref_regularize(counts)
    v = PENTANOMIAL_VALUES
    t = 0.05
    p = mle_given_t(c, v, 0.5, t)
    mu = (p * v).sum()
    sigma = math.sqrt((p * (v - mu) ** 2).sum())
    assert p.sum() == pytest.approx(1, abs=1e-12)
    assert (mu - 0.5) / sigma == pytest.approx(t, abs=1e-10)
    grad_g = v - t * (v**2 - 2 * mu * v) / (2 * sigma)  # d/dp of mu - 1/2 - t * sigma
    basis = np.vstack([np.ones_like(v), grad_g]).T
    target = c / p
    coef = np.linalg.lstsq(basis, target, rcond=None)[0]
    assert np.abs(basis @ coef - target).max() <= 1e-8 * np.abs(target).max()


def test_vectorised_llr_equals_scalar():
    counts = np.array([c for c, *_ in CASES[:8]], dtype=float)
    many = llr_pentanomial(counts, 0.0, 10.0)
    assert many.shape == (8,)
    for row, value in zip(counts, many, strict=True):
        assert value == pytest.approx(llr_pentanomial(row, 0.0, 10.0), rel=1e-12, abs=1e-12)
    ls, hs, ws = np.array([[5, 9], [100, 20]]), np.array([[7, 0], [300, 20]]), np.array([[6, 12], [90, 25]])
    grid = llr_pairs(ls, hs, ws, 0.0, 20.0)
    assert grid.shape == (2, 2)
    assert grid[1, 0] == pytest.approx(llr_pairs(100, 300, 90, 0.0, 20.0), rel=1e-12)


def test_llr_basic_properties():
    assert llr_pentanomial([0, 0, 0, 0, 0], 0, 5) == 0.0
    assert llr_pairs(0, 0, 0, 0, 5) == 0.0
    c = [40, 150, 260, 170, 50]
    assert llr_pentanomial(c, 0, 5) == pytest.approx(-llr_pentanomial(c, 5, 0), rel=1e-12)
    assert llr_pentanomial(c, 3, 3) == 0.0
    # mirror symmetry: swapping NEW and OLD reverses the counts and the Elo signs
    assert llr_pentanomial(c, -2, 6) == pytest.approx(llr_pentanomial(c[::-1], 2, -6), rel=1e-10)
    # a better result gives a larger LLR
    assert llr_pairs(30, 40, 31, 0, 20) < llr_pairs(30, 40, 32, 0, 20) < llr_pairs(29, 40, 33, 0, 20)


def test_llr_rejects_bad_input():
    with pytest.raises(ValueError):
        llr_pentanomial([1, 2, 3], 0, 5)
    with pytest.raises(ValueError):
        llr_pentanomial([1, -2, 3, 4, 5], 0, 5)
    with pytest.raises(ValueError):
        llr_pentanomial([1, 2, 3, 4, 5], 0, 5, model="bayeselo")
    with pytest.raises(ValueError):
        llr_pentanomial([1, 2, 3, 4, 5], 0, math.inf)
    with pytest.raises(ValueError):  # unregularized: all pairs won, H0's mean is unreachable
        llr_pairs(0, 0, 10, 0, 5, regularize=False)
    with pytest.raises(ValueError):  # unregularized: the empty 0 cell would need mass
        llr_pentanomial([0, 5, 0, 5, 0], 0, 100, regularize=False)


# -- the trinomial is the pentanomial with empty 1/4 and 3/4 cells ---------------------------------


@pytest.mark.parametrize("model", ["logistic", "normalized"])
@pytest.mark.parametrize(("lo", "h", "w"), [(300, 400, 330), (12, 30, 25), (7, 1, 3), (1000, 3000, 1100)])
def test_trinomial_equals_pentanomial_with_empty_cells(model, lo, h, w):
    tri = llr_pairs(lo, h, w, 0.0, 20.0, model=model, regularize=False)
    penta = llr_pentanomial([lo, 0, h, 0, w], 0.0, 20.0, model=model, regularize=False)
    assert tri == pytest.approx(penta, rel=1e-10, abs=1e-12)
    # with fishtest's regularization the two phantom cells (1e-3 each) shift it only slightly
    reg = llr_pentanomial([lo, 0, h, 0, w], 0.0, 20.0, model=model)
    assert reg == pytest.approx(llr_pairs(lo, h, w, 0.0, 20.0, model=model), rel=2e-3, abs=1e-5)
    assert gsprt_llr([lo, h, w], [0.0, 0.5, 1.0], ref_score(0.0), ref_score(20.0)) == pytest.approx(
        llr_pairs(lo, h, w, 0.0, 20.0), rel=1e-12
    )


# -- bounds ------------------------------------------------------------------------------------------


def test_bounds():
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-math.log(19), rel=1e-14)
    assert upper == pytest.approx(math.log(19), rel=1e-14)
    assert upper == pytest.approx(2.9444389791664403, rel=1e-14)
    lower, upper = sprt_bounds(0.05, 0.10)
    assert lower == pytest.approx(math.log(0.10 / 0.95))
    assert upper == pytest.approx(math.log(0.90 / 0.05))
    for bad in [(0, 0.05), (0.05, 1), (0.6, 0.5), (-0.1, 0.1)]:
        with pytest.raises(ValueError):
            sprt_bounds(*bad)


# -- the SPRT object --------------------------------------------------------------------------------


def test_sprt_path_counts_and_sticky_decision():
    test = SPRT(0, 20)
    assert (test.llr, test.status, test.counts, test.llr_path) == (0.0, "continue", (0, 0, 0), [])
    scores = [1, 0.5, 0, 1, 1, 0.5] * 3
    for k, s in enumerate(scores, start=1):
        test.add(s)
        losses = scores[:k].count(0)
        halves = scores[:k].count(0.5)
        wins = scores[:k].count(1)
        assert test.counts == (losses, halves, wins)
        assert test.llr_path[-1] == pytest.approx(llr_pairs(losses, halves, wins, 0, 20), rel=1e-12)
    assert len(test.llr_path) == len(scores)
    # all pairs won: H1 soon; the decision then stays although later pairs are recorded
    test = SPRT(0, 20)
    while test.status == "continue":
        test.add(1)
    assert test.status == "H1" and test.llr >= test.upper and test.decided_at == test.pairs
    decided = test.decided_at
    for _ in range(40):
        test.add(0)
    assert test.status == "H1" and test.decided_at == decided and test.llr < test.upper
    assert len(test.llr_path) == test.pairs
    # all pairs lost: H0
    test = run_sprt([0] * 500, 0, 20)
    assert test.status == "H0" and test.llr <= test.lower and test.pairs == test.decided_at < 500


def test_sprt_cap_stops_an_undecided_test():
    # mean score 1/2 = H0's mean: the LLR drifts down by ~0.0025 a pair, far from -2.94 at 200
    test = SPRT(0, 20, max_pairs=200)
    status = test.extend([1, 0, 0.5] * 1000)
    assert status == "cap" and test.pairs == 200 and test.decided_at == 200
    assert test.lower < test.llr < test.upper
    assert "cap" in test.line() and "LLR" in test.line()
    # with stop=False later pairs are still recorded, the status stays
    test.extend([1] * 10, stop=False)
    assert test.pairs == 210 and test.status == "cap"


def test_sprt_validation_and_scores():
    with pytest.raises(ValueError):
        SPRT(5, 5)
    with pytest.raises(ValueError):
        SPRT(0, 5, alpha=0.6, beta=0.6)
    with pytest.raises(ValueError):
        SPRT(0, 5, max_pairs=0)
    test = SPRT(0, 5)
    for bad in [0.25, 2, -1, "x", None, math.nan]:
        with pytest.raises(ValueError):
            test.add(bad)
    assert test.pairs == 0 and test.llr_path == []
    test.add(0.5)
    test.add(1.0)
    test.add(0)
    assert test.counts == (1, 1, 1)
    summary = test.summary()
    assert summary["pairs"] == 3 and summary["status"] == "continue" and summary["elo"] == pytest.approx(0.0)
    assert (summary["lower"], summary["upper"]) == test.bounds


def trinomial_probs(elo, p_half=0.4):
    s = ref_score(elo)
    p_win = s - p_half / 2
    return np.array([1 - p_half - p_win, p_half, p_win])


def simulate(true_elo, runs, seed, elo0=0.0, elo1=20.0, alpha=0.05, beta=0.05, cap=20_000, block=400):
    """Many SPRTs at once: LLRs of every prefix from the vectorised llr_pairs. Returns the
    decisions (-1 for H0, +1 for H1, 0 for none before the cap) and the stopping times."""
    rng = np.random.default_rng(seed)
    probs = trinomial_probs(true_elo)
    lower, upper = sprt_bounds(alpha, beta)
    decision = np.zeros(runs, dtype=int)
    stop = np.full(runs, cap)
    counts = np.zeros((runs, 3))
    active = np.arange(runs)
    start = 0
    while start < cap and active.size:
        steps = min(block, cap - start)
        draws = rng.choice(3, size=(active.size, steps), p=probs)
        cum = counts[active][:, None, :] + np.cumsum(draws[..., None] == np.arange(3), axis=1)
        llr = llr_pairs(cum[..., 0], cum[..., 1], cum[..., 2], elo0, elo1)
        hit = (llr >= upper) | (llr <= lower)
        done = hit.any(axis=1)
        first = hit.argmax(axis=1)
        rows = active[done]
        decision[rows] = np.where(llr[done, first[done]] >= upper, 1, -1)
        stop[rows] = start + first[done] + 1
        counts[active] = cum[:, -1, :]
        active = active[~done]
        start += steps
    return decision, stop


def test_simulated_error_rates_and_stopping():
    runs = 800
    decision, stop = simulate(0.0, runs, seed=1)  # H0 true
    false_h1 = np.mean(decision == 1)
    assert 0.01 <= false_h1 <= 0.09, false_h1
    assert np.mean(decision != 0) >= 0.995  # stops on its own, practically always
    assert 300 < np.median(stop) < 3000
    decision, stop = simulate(20.0, runs, seed=2)  # H1 true
    false_h0 = np.mean(decision == -1)
    assert 0.01 <= false_h0 <= 0.09, false_h0
    assert np.mean(decision != 0) >= 0.995
    # far from both hypotheses the test is quick and practically always right
    decision, stop = simulate(60.0, 200, seed=3)
    assert np.mean(decision == 1) >= 0.99 and np.median(stop) < 400


def test_simulation_helper_agrees_with_the_sprt_object():
    rng = np.random.default_rng(7)
    for true_elo in (0.0, 20.0, 40.0):
        scores = rng.choice([0.0, 0.5, 1.0], size=3000, p=trinomial_probs(true_elo))
        test = run_sprt(list(scores), 0.0, 20.0)
        k = np.arange(1, test.pairs + 1)
        prefix = np.stack([np.cumsum(scores[: test.pairs] == v) for v in (0.0, 0.5, 1.0)])
        path = llr_pairs(prefix[0], prefix[1], prefix[2], 0.0, 20.0)
        np.testing.assert_allclose(test.llr_path, path, rtol=1e-10, atol=1e-12)
        assert len(k) == test.pairs
        if test.status in ("H0", "H1"):
            inside = (path[:-1] > test.lower) & (path[:-1] < test.upper)
            assert inside.all()  # it stopped at the first crossing
            assert (test.status == "H1") == (path[-1] >= test.upper)


def test_sprt_with_cap_always_stops():
    rng = np.random.default_rng(11)
    for _ in range(5):
        scores = rng.choice([0.0, 0.5, 1.0], size=10_000, p=trinomial_probs(10.0))
        test = run_sprt(list(scores), 0.0, 20.0, max_pairs=150)
        assert test.finished and test.pairs <= 150
        assert test.status in ("H0", "H1") or test.pairs == 150


# -- estimates ------------------------------------------------------------------------------------


def test_elo_estimate_by_hand():
    est = elo_estimate(20, 40, 40)  # mean pair score 0.6
    assert est.pairs == 100 and est.mean == pytest.approx(0.6)
    assert est.elo == pytest.approx(400 * math.log10(1.5), rel=1e-12)  # 70.437...
    var = (20 * 0.6**2 + 40 * 0.1**2 + 40 * 0.4**2) / 99  # = 14 / 99
    se = math.sqrt(var / 100)
    assert est.sd == pytest.approx(math.sqrt(var), rel=1e-12)
    assert est.se == pytest.approx(se, rel=1e-12)
    elo_se = se * 400 / (LN10 * 0.6 * 0.4)
    assert est.elo_se == pytest.approx(elo_se, rel=1e-12)
    assert est.ci_low == pytest.approx(est.elo - 1.959963984540054 * elo_se, rel=1e-12)
    assert est.ci_high == pytest.approx(est.elo + 1.959963984540054 * elo_se, rel=1e-12)
    assert est.error == pytest.approx(1.959963984540054 * elo_se, rel=1e-12)
    assert est.los == pytest.approx(0.5 * math.erfc(-(0.1 / se) / math.sqrt(2)), rel=1e-12)
    assert est.nelo == pytest.approx(0.1 / (math.sqrt(2) * math.sqrt(var)) * 800 / LN10, rel=1e-12)
    mirrored = elo_estimate(40, 40, 20)
    assert mirrored.elo == pytest.approx(-est.elo) and mirrored.los == pytest.approx(1 - est.los)
    even = elo_estimate(30, 40, 30)
    assert even.elo == pytest.approx(0.0, abs=1e-12) and even.los == pytest.approx(0.5)
    narrow = elo_estimate(20, 40, 40, confidence=0.5)
    assert narrow.error == pytest.approx(normal_quantile(0.75) * elo_se, rel=1e-9)
    # normalized Elo's interval is the mean's on its scale: its half-width depends only on n
    half = Z95 * 800 / LN10 / math.sqrt(2 * 100)
    assert est.nelo_high - est.nelo == pytest.approx(half, rel=1e-12)
    assert est.nelo - est.nelo_low == pytest.approx(half, rel=1e-12)
    text = estimate_text(est, "normalized")
    assert text.startswith(f"nElo {est.nelo:+.1f} [{est.nelo_low:+.1f}, {est.nelo_high:+.1f}], Elo +70.4 [")
    assert estimate_text(est, "logistic") == elo_text(est)


def test_elo_estimate_edge_cases():
    empty = elo_estimate(0, 0, 0)
    assert empty.pairs == 0 and math.isnan(empty.elo) and math.isnan(empty.los)
    one = elo_estimate(0, 0, 1)
    assert one.pairs == 1 and one.elo == math.inf and math.isnan(one.ci_low)
    sweep = elo_estimate(0, 0, 12)
    assert sweep.elo == math.inf and sweep.los == 1.0 and math.isnan(sweep.elo_se)
    halves = elo_estimate(0, 9, 0)
    assert halves.elo == 0.0 and halves.los == 0.5 and halves.elo_se == 0.0


def test_normal_helpers():
    assert normal_quantile(0.975) == pytest.approx(Z95, rel=1e-12)
    assert normal_cdf(Z95) == pytest.approx(0.975, rel=1e-12)
    assert normal_quantile(0.5) == pytest.approx(0.0, abs=1e-12)
    for p in (1e-9, 0.01, 0.3, 0.9, 1 - 1e-9):
        assert normal_cdf(normal_quantile(p)) == pytest.approx(p, rel=1e-9)
    with pytest.raises(ValueError):
        normal_quantile(1.0)


def test_every_pair_one_way_gives_an_exact_one_sided_bound():
    """All pairs won: the interval is [the Elo of the Clopper-Pearson lower limit, +inf);
    all lost is its mirror image. Fewer than two pairs give no interval."""
    sweep = elo_estimate(0, 0, 207)
    bound = score_to_elo(0.025 ** (1 / 207))
    assert sweep.ci_low == pytest.approx(bound) and sweep.ci_high == math.inf and 690 < bound < 710
    lost = elo_estimate(12, 0, 0)
    assert lost.ci_high == pytest.approx(-score_to_elo(0.025 ** (1 / 12))) and lost.ci_low == -math.inf
    assert elo_text(sweep) == f"Elo > +{bound:.0f} (every pair won: 95% lower bound; no upper bound)"
    assert elo_text(lost).startswith("Elo < -") and "every pair lost" in elo_text(lost)
    # the bound holds: with a true chance p of winning a pair, all n won has probability p**n,
    # so the limit exceeds p (a wrong bound) in at most 2.5% of such runs
    rng = np.random.default_rng(3)
    for p in (0.9, 0.97):
        n = 40
        sweeps = np.sum(rng.random((200_000, n)) < p, axis=1) == n
        wrong = score_to_elo(0.025 ** (1 / n)) > score_to_elo(p)
        assert not wrong or sweeps.mean() <= 0.025
    assert fixed_games_summary(0, 0, 30).verdict.startswith("NEW is stronger: it won every pair (30)")
    assert fixed_games_summary(3, 0, 0).verdict.startswith("inconclusive: NEW lost every pair, but only 3")


def test_the_elo_and_los_texts_are_always_finite():
    for counts in [(0, 0, 0), (0, 0, 1), (1, 0, 0), (0, 5, 0), (0, 0, 2), (3, 0, 0), (2, 3, 4), (0, 1, 9)]:
        est = elo_estimate(*counts)
        text = f"{elo_text(est)} {los_text(est)}"
        assert "inf" not in text and "nan" not in text, (counts, text)
    assert los_text(elo_estimate(0, 0, 50)) == "> 99.9%" and los_text(elo_estimate(50, 0, 0)) == "< 0.1%"
    split = elo_estimate(0, 5, 0)  # every pair split 1-1: no spread, so no interval, not one of width 0
    assert elo_text(split).startswith("Elo n/a (every pair split 1-1: no spread") and "no evidence" in elo_text(split)
    assert math.isnan(split.ci_low) and math.isnan(split.ci_high) and split.elo == 0.0
    assert "-0.0" not in estimate_text(split, "normalized")
    assert fixed_games_summary(0, 30, 0).verdict.startswith("inconclusive: every pair split 1-1")


def test_elo_interval_coverage_by_simulation():
    rng = np.random.default_rng(5)
    true_elo, pairs, experiments = 40.0, 300, 2000
    counts = rng.multinomial(pairs, trinomial_probs(true_elo), size=experiments)
    ests = [elo_estimate(*map(int, c)) for c in counts]
    covered = np.mean([e.ci_low <= true_elo <= e.ci_high for e in ests])
    assert 0.93 <= covered <= 0.97, covered
    assert np.mean([e.elo for e in ests]) == pytest.approx(true_elo, abs=2.0)
    # LOS is calibrated: under no difference it is roughly uniform
    null = rng.multinomial(pairs, trinomial_probs(0.0), size=experiments)
    los = np.array([elo_estimate(*map(int, c)).los for c in null])
    assert 0.45 < los.mean() < 0.55 and 0.03 < np.mean(los > 0.95) < 0.07


def test_fixed_games_summary():
    strong = fixed_games_summary(100, 100, 300)
    assert strong.verdict.startswith("NEW is stronger") and strong.estimate.ci_low > 0
    assert strong.estimate == elo_estimate(100, 100, 300)
    assert (strong.losses, strong.halves, strong.wins) == (100, 100, 300)
    weak = fixed_games_summary(300, 100, 100)
    assert weak.verdict.startswith("NEW is weaker") and weak.estimate.ci_high < 0
    unclear = fixed_games_summary(100, 100, 110)
    assert unclear.verdict.startswith("inconclusive") and unclear.estimate.ci_low < 0 < unclear.estimate.ci_high
    assert fixed_games_summary(0, 0, 0).verdict == "no pairs played"
    assert "every pair" in fixed_games_summary(0, 0, 5).verdict
    assert "p-value" not in strong.verdict and "p =" not in strong.verdict


# -- the margin diagnostic -----------------------------------------------------------------------


def test_margin_diagnostic_by_hand():
    margins = [3, -1, 4, 0, 2, -2, 5, 1]  # mean 1.5, sample variance 42 / 7 = 6
    d = margin_diagnostic(margins, margin0=0, margin1=1)
    assert d.pairs == 8 and d.mean == pytest.approx(1.5)
    assert d.sd == pytest.approx(statistics.stdev(margins)) and d.sd == pytest.approx(math.sqrt(6))
    assert d.se == pytest.approx(math.sqrt(0.75))
    assert d.ci_low == pytest.approx(1.5 - Z95 * math.sqrt(0.75))
    assert d.ci_high == pytest.approx(1.5 + Z95 * math.sqrt(0.75))
    assert d.z == pytest.approx(math.sqrt(3))
    assert d.llr == pytest.approx(8 * 1 * (2 * 1.5 - 0 - 1) / (2 * 6))  # 4/3
    assert "diagnostic" in d.label
    assert math.isnan(margin_diagnostic(margins).llr)
    wide = margin_diagnostic(margins, confidence=0.99)
    assert wide.ci_high - wide.ci_low > d.ci_high - d.ci_low


def test_margin_diagnostic_edge_cases():
    assert math.isnan(margin_diagnostic([]).mean)
    single = margin_diagnostic([4])
    assert single.mean == 4 and math.isnan(single.ci_low)
    flat = margin_diagnostic([2, 2, 2])
    assert flat.z == math.inf and flat.ci_low == flat.ci_high == 2
    assert math.isnan(margin_diagnostic([0, 0]).z)
    with pytest.raises(ValueError):
        margin_diagnostic([1, math.nan])


# -- planning: the operating characteristics by simulation (arena.stats.sprt_plan) -----------------------


def test_the_fast_llr_equals_llr_pairs():
    """The closed-form (logistic) and one-dimensional Newton (normalized) fits of the plan's
    simulation give the LLR that arena.stats.sprt computes, empty cells and extreme counts included."""
    rng = np.random.default_rng(4)
    counts = np.vstack([
        rng.integers(0, 40, size=(200, 3)),
        [[0, 0, 7], [7, 0, 0], [0, 9, 0], [1, 0, 0], [0, 0, 1], [3, 0, 3], [0, 0, 0]],
        rng.multinomial(5000, [0.15, 0.7, 0.15], size=30),
        rng.multinomial(20000, [0.01, 0.95, 0.04], size=10),
    ]).astype(float)  # fmt: skip
    for model in ("logistic", "normalized"):
        for elo0, elo1 in ((0, 10), (-30, 30), (0, 100), (5, 6), (-150, 200)):
            ref = llr_pairs(counts[:, 0], counts[:, 1], counts[:, 2], elo0, elo1, model=model)
            fast = sprt_plan.llr(counts, elo0, elo1, model)
            np.testing.assert_allclose(fast, ref, rtol=1e-9, atol=1e-9, err_msg=f"{model} {elo0} {elo1}")
    assert sprt_plan.llr(counts[:6].reshape(2, 3, 3), 0, 10, "normalized").shape == (2, 3)


@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_the_trinomial_has_the_gain_and_the_split_share_asked_for(model):
    for elo in (-40.0, 0.0, 10.0, 60.0):
        for split in (0.0, 0.5, 0.8):
            p0, ph, p1 = sprt_plan.trinomial(elo, split, model)
            assert ph == split and p0 + ph + p1 == pytest.approx(1.0) and min(p0, p1) >= 0
            mean = ph / 2 + p1
            if model == "logistic":
                assert score_to_elo(mean) == pytest.approx(elo, abs=1e-9)
            else:  # the per-game t-value, fishtest's normalized Elo
                sd = math.sqrt(p0 * mean**2 + ph * (0.5 - mean) ** 2 + p1 * (1 - mean) ** 2)
                assert (mean - 0.5) / (math.sqrt(2) * sd) * 800 / LN10 == pytest.approx(elo, abs=1e-9)
    with pytest.raises(ValueError):
        sprt_plan.trinomial(0.0, 1.0, model)
    if model == "logistic":
        with pytest.raises(ValueError, match="impossible"):
            sprt_plan.trinomial(400.0, 0.9, model)  # a mean of 0.91 needs more than 10% of pairs won


@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_the_simulation_stops_where_the_sprt_object_stops(model):
    """Each simulated test, fed again pair by pair to arena.stats.sprt.SPRT from the same uniform
    numbers, ends with the same verdict at the same pair (a cap included)."""
    runs, true_elo, split = 12, 20.0, 0.6
    settings = dict(elo0=0.0, elo1=40.0, alpha=0.05, beta=0.05, max_pairs=300, model=model)
    [sim] = sprt_plan.simulate([(true_elo, split)], runs=runs, seed=9, **settings)
    p0, ph, _ = sprt_plan.trinomial(true_elo, split, model)
    blocks = -(-settings["max_pairs"] // sprt_plan.BLOCK)
    u = np.hstack([sprt_plan.uniforms(9, k, runs) for k in range(blocks)])
    scores = np.where(u < p0, 0.0, np.where(u < p0 + ph, 0.5, 1.0))
    seen = set()
    for r in range(runs):
        test = SPRT(0.0, 40.0, 0.05, 0.05, max_pairs=300, model=model)
        test.extend(scores[r])
        assert test.pairs == sim.pairs[r]
        assert {"H1": 1, "H0": -1, "cap": 0}[test.status] == sim.decision[r]
        seen.add(test.status)
    assert {"H0", "H1"} <= seen


def test_operating_characteristics_at_the_defaults():
    """The defaults (normalized Elo [0, 10], alpha = beta = 0.05, at most 20,000 pairs), 2,000
    seeded tests per true gain: P(H1) at elo0 within 1.5 points of alpha (three standard errors
    of 2,000 tests), at elo1 within 1.5 points of 1 - beta, hardly ever the cap; and the same
    at split shares from 0.5 to 0.9: the normalized model barely depends on them."""
    d = DEFAULTS
    kw = dict(elo0=d["elo0"], elo1=d["elo1"], alpha=d["alpha"], beta=d["beta"], max_pairs=d["max_pairs"],
              model=d["model"], runs=2000, seed=3)  # fmt: skip
    assert (d["model"], d["elo0"], d["elo1"], d["max_pairs"]) == ("normalized", 0.0, 10.0, 20_000)
    sims = sprt_plan.simulate([(e, h) for h in (0.5, 0.7, 0.9) for e in (d["elo0"], d["elo1"])], **kw)
    for at0, at1 in zip(sims[::2], sims[1::2], strict=True):
        assert abs(at0.h1 - d["alpha"]) <= 0.015, (at0.split, at0.h1)
        assert abs(at1.h1 - (1 - d["beta"])) <= 0.015, (at1.split, at1.h1)
        assert at0.cap <= 0.005 and at1.cap <= 0.005
        assert 2500 < at0.mean_pairs < 4000 and 2500 < at1.mean_pairs < 4000
    # the logistic model at the old defaults ([0, 5] Elo) did depend on the split share
    old = dict(kw, elo1=5.0, model="logistic", runs=300)
    loose, tight = sprt_plan.simulate([(5.0, 0.5), (5.0, 0.9)], **old)
    assert loose.h1 < 0.9 < tight.h1 and loose.cap > 0.05


def test_a_plan_says_what_it_assumed_and_is_reproducible():
    plan = sprt_plan.make_plan(0.0, 40.0, 0.05, 0.05, 2000, "normalized", runs=300, others=(0.5, 0.9))
    assert [p.elo for p in plan.points] == [0.0, 20.0, 40.0] and plan.split == sprt_plan.DEFAULT_SPLIT
    again = sprt_plan.make_plan(0.0, 40.0, 0.05, 0.05, 2000, "normalized", runs=300)
    assert [p.h1 for p in again.points] == [p.h1 for p in plan.points]  # others= does not change them
    text = sprt_plan.plan_text(plan)
    assert "70% of pairs split 1-1" in text and "300 tests per true gain (seed 1)" in text
    assert "elo0 = 0 nElo" in text and "midway = 20 nElo" in text and "elo1 = 40 nElo" in text
    assert "50% split: P(H1)" in text and "barely depends on it" in text
    assert sprt_plan.plan_line(plan).startswith("planned (simulated, 70% of pairs split): P(H1) ")
    # a test of very many pairs is planned with fewer runs, so that a plan stays quick
    assert sprt_plan.auto_runs(0, 10, 0.05, 0.05, 20_000, "normalized", 0.7) == 1000
    assert sprt_plan.auto_runs(0, 2, 0.05, 0.05, 20_000, "normalized", 0.7) == sprt_plan.MIN_RUNS
